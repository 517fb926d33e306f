import "../helpers/property-seed.js";
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  AnswerHits,
  AnswerWindow,
  answerWindow,
  patternWindow,
  UNBOUNDED_WINDOW,
} from "../../src/domain/answer-window.js";
import type { ChatText } from "../../src/domain/chat-texts.js";
import type { FilterAction } from "../../src/domain/content-filters.js";
import { compileFilters, scanTexts } from "../../src/domain/content-scan.js";
import { DETECTORS } from "../../src/domain/detectors/index.js";

/** The values the answers carry: each must never reach the client, even in part, once decided. */
export const CARD = "4111 1111 1111 1111";
export const EMAIL = "jane.roe@example.com";
export const SECRET = "AKIAZ7Q3KXW9PLM2RT4V";
export const CUSTOM = "PRJ-4242";
const PATTERN = "PRJ-[0-9]{4}";

function filtersOf(action: FilterAction) {
  return compileFilters(
    {
      content_filter_builtins: [
        { slug: "credit-card", action },
        { slug: "email", action },
        { slug: "secrets", action },
      ],
      content_filters: [{ pattern: PATTERN, action, label: "[PROJECT]" }],
    },
    DETECTORS,
  );
}

/** The whole text redacted as a request's text is: what the streamed release must add up to. */
function wholeRedaction(filters: ReturnType<typeof filtersOf>, text: string): string {
  const t = { text, role: "assistant", message: 0, json: false, kind: "text" } as unknown as ChatText;
  return scanTexts(filters, [t]).replacements[0]?.value ?? text;
}

/** A text split at the given points (sorted, deduplicated), as the deltas of a stream. */
function split(text: string, points: number[]): string[] {
  const at = [...new Set(points.map((p) => p % (text.length + 1)))].sort((a, b) => a - b);
  const out: string[] = [];
  let from = 0;
  for (const p of at) {
    out.push(text.slice(from, p));
    from = p;
  }
  out.push(text.slice(from));
  return out;
}

const filler = fc.stringMatching(/^[a-z ,.]{0,400}$/);
const value = fc.constantFrom(CARD, EMAIL, SECRET, CUSTOM);
const answerText = fc
  .array(fc.tuple(filler, value), { minLength: 1, maxLength: 5 })
  .chain((parts) => filler.map((end) => parts.map(([f, v]) => `${f} ${v} `).join("") + end));

describe("the window of a streamed answer (docs/gateway.md#answer-streams)", () => {
  it("releases, over any split of the answer into deltas, exactly the whole text's redaction, and never a character that a later label replaces", () => {
    const filters = filtersOf("redact");
    const w = answerWindow(filters);
    fc.assert(
      fc.property(answerText, fc.array(fc.nat(), { maxLength: 60 }), (text, points) => {
        const expected = wholeRedaction(filters, text);
        const win = new AnswerWindow(filters, w, new AnswerHits(filters));
        let sent = "";
        for (const d of split(text, points)) {
          const step = win.push(d);
          assert.equal(step.block, null);
          sent += step.release;
          // Everything sent so far is final: a prefix of the whole redaction, so no value's
          // character went out before its label was decided.
          assert.ok(expected.startsWith(sent), `sent ${JSON.stringify(sent)} is no prefix`);
        }
        sent += win.finish().release;
        assert.equal(sent, expected);
        for (const v of [CARD, EMAIL, SECRET, CUSTOM]) assert.ok(!sent.includes(v));
      }),
      { numRuns: 150 },
    );
  });

  it("sends nothing of a blocked value, over any split: the channel stops before it", () => {
    const filters = filtersOf("block");
    const w = answerWindow(filters);
    fc.assert(
      fc.property(answerText, fc.array(fc.nat(), { maxLength: 60 }), (text, points) => {
        const win = new AnswerWindow(filters, w, new AnswerHits(filters));
        let sent = "";
        let blocked = false;
        for (const d of [...split(text, points), null]) {
          const step = d === null ? win.finish() : win.push(d);
          sent += step.release;
          if (step.block) {
            blocked = true;
            break;
          }
        }
        assert.ok(blocked);
        assert.ok(text.startsWith(sent));
        // The first value starts after all that was sent.
        const first = Math.min(
          ...[CARD, EMAIL, SECRET, CUSTOM].map((v) => text.indexOf(v)).filter((i) => i >= 0),
        );
        assert.ok(sent.length <= first, `sent ${sent.length} units, the first value starts at ${first}`);
      }),
      { numRuns: 100 },
    );
  });

  it("counts each match once for the answer's hits, whatever the split", () => {
    const filters = filtersOf("flag");
    const w = answerWindow(filters);
    const text = `a ${EMAIL} b ${CARD} c ${EMAIL} d`;
    for (const size of [1, 3, 7, 50, 1000]) {
      const hits = new AnswerHits(filters);
      const win = new AnswerWindow(filters, w, hits);
      let sent = "";
      for (let i = 0; i < text.length; i += size) sent += win.push(text.slice(i, i + size)).release;
      sent += win.finish().release;
      assert.equal(sent, text);
      assert.deepEqual(
        hits.hits().map((h) => [h.label, h.count]),
        [
          ["[CREDIT_CARD]", 1],
          ["[EMAIL]", 2],
        ],
      );
    }
  });

  it("holds no more than its window before releasing: text far from any value goes out as it comes", () => {
    const filters = filtersOf("redact");
    const w = answerWindow(filters);
    const win = new AnswerWindow(filters, w, new AnswerHits(filters));
    let sent = 0;
    let pushed = 0;
    for (let i = 0; i < 200; i++) {
      const d = "lorem ipsum dolor sit amet ".repeat(2);
      pushed += d.length;
      sent += win.push(d).release.length;
      assert.ok(pushed - sent <= w + w / 2 + d.length, `held ${pushed - sent} of a window of ${w}`);
    }
  });

  it("bounds a custom pattern's window by its positions, and an unbounded one by the documented 1 KB", () => {
    assert.equal(patternWindow("PRJ-[0-9]{4}"), 16);
    assert.equal(patternWindow("a.*b"), UNBOUNDED_WINDOW);
    assert.equal(patternWindow("x{3,}"), UNBOUNDED_WINDOW);
    assert.equal(patternWindow("[+*]x"), 4);
  });

  it("redacts JSON text with the label escaped, so tool arguments stay valid JSON", () => {
    const filters = compileFilters(
      {
        content_filter_builtins: [],
        content_filters: [{ pattern: PATTERN, action: "redact", label: 'a"b' }],
      },
      DETECTORS,
    );
    const win = new AnswerWindow(filters, answerWindow(filters), new AnswerHits(filters), true);
    const args = JSON.stringify({ q: `see ${CUSTOM} now` });
    const out = win.push(args).release + win.finish().release;
    assert.deepEqual(JSON.parse(out), { q: 'see a"b now' });
  });
});
