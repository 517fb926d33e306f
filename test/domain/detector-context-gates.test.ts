import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import "../helpers/property-seed.js";
import { VERSION_CUE, VERSION_CUE_LAST } from "../../src/domain/detectors/ip-address.js";
import { LABELLED, LABELLED_LAST } from "../../src/domain/detectors/phone.js";
import { mayEndWith } from "../../src/domain/detectors/spans.js";

/**
 * The quick check on a context's last characters (mayEndWith) stands in front of a context pattern
 * only to save its run: it must never refuse a context the pattern matches, or an IP address after
 * `version` or a phone number after `Order no.` would be redacted after all. A word added to a
 * pattern whose last letter the check does not know fails here.
 */
const GATES = [
  { name: "the IP address's version cue", re: VERSION_CUE, last: VERSION_CUE_LAST, trailing: " :=", max: 3 },
  { name: "the phone number's label", re: LABELLED, last: LABELLED_LAST, trailing: " .:#", max: 4 },
];

/** The words and signs of a context pattern `\b(?:a|b\.?|...)...$`, read from its source. */
function wordsOf(re: RegExp): string[] {
  return re.source
    .replace(/\[[^\]]*\]\{\d+,\d+\}\$$/, "")
    .replace(/\\b|\(\?:|\)|\?/g, " ")
    .replace(/\\(.)/g, "$1")
    .split(/[| ]+/)
    .filter((w) => w !== "");
}

describe("context checks on the last characters (docs/detectors.md#quick-checks)", () => {
  for (const g of GATES) {
    it(`never refuses a context that ${g.name} matches: each word, then any trailing separators`, () => {
      const words = wordsOf(g.re);
      assert.ok(words.length > 10);
      for (const word of words)
        for (let n = 0; n <= g.max; n++)
          for (const t of g.trailing) {
            const context = `see ${word}${t.repeat(n)}`;
            if (g.re.test(context)) assert.ok(mayEndWith(context, g.last, g.trailing, g.max), context);
          }
    });

    it(`never refuses a context that ${g.name} matches: random mixes of its words, letters and separators`, () => {
      const pieces = [...wordsOf(g.re), "no", "no.", "number", "to", "a", "x", "1", "é", "İ", ...g.trailing];
      fc.assert(
        fc.property(fc.array(fc.constantFrom(...pieces), { minLength: 1, maxLength: 6 }), (parts) => {
          const context = parts.join("").toLowerCase().slice(-28);
          return !g.re.test(context) || mayEndWith(context, g.last, g.trailing, g.max);
        }),
        { numRuns: 20_000 },
      );
    });
  }

  it("refuses the contexts it is there for: prose before a number", () => {
    const [version, label] = GATES as [(typeof GATES)[0], (typeof GATES)[0]];
    assert.equal(mayEndWith("and a request from ", version.last, version.trailing, version.max), false);
    assert.equal(mayEndWith("her callback number is ", label.last, label.trailing, label.max), false);
    assert.equal(mayEndWith("see version ", version.last, version.trailing, version.max), true);
    assert.equal(mayEndWith("order no.: ", label.last, label.trailing, label.max), true);
  });
});
