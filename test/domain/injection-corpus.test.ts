import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { findPromptInjections } from "../../src/domain/detectors/regex-prompt-injection.js";
import {
  assertAtLeast,
  COUNTS_HEADER,
  type Counts,
  countsRow,
  emptyCounts,
  loadJsonl,
  precisionOf,
  recallOf,
  tally,
} from "./detection-report.js";

/**
 * The prompt-injection detector against its own corpus (docs/detectors.md#prompt-injection): hand
 * written paraphrases per family and benign look-alikes, in two parts. `held-out.jsonl` was written
 * and committed before the detector was extended and is never tuned on; `dev.jsonl` is what the
 * detector was developed against. Both parts are measured and printed separately, and each must
 * reach the floors on its own.
 */

const DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "injection-corpus");
const PARTS = ["dev", "held-out"] as const;
const FAMILIES = ["override", "role", "extraction", "other"] as const;
const RECALL_FLOOR = 0.9;
const PRECISION_FLOOR = 0.98;

type Family = (typeof FAMILIES)[number];
interface Example {
  text: string;
  expect: boolean;
  family: Family;
  note: string;
}

const load = (part: string) => loadJsonl<Example>(DIR, part);

interface Measured {
  byFamily: Map<Family, Counts>;
  overall: Counts;
  errors: string[];
}

/** A positive is found when the detector returns a span; a negative is a false positive when it does. */
function measure(examples: Example[]): Measured {
  const byFamily = new Map<Family, Counts>(FAMILIES.map((f) => [f, emptyCounts()]));
  const overall = emptyCounts();
  const errors: string[] = [];
  for (const e of examples) {
    const hit = findPromptInjections(e.text).length > 0;
    tally([byFamily.get(e.family), overall], e.expect, hit);
    if (e.expect && !hit) errors.push(`missed (${e.family}): ${JSON.stringify(e.text)}`);
    if (!e.expect && hit) errors.push(`false positive (${e.family}): ${JSON.stringify(e.text)}`);
  }
  return { byFamily, overall, errors };
}

function table(part: string, m: Measured): string {
  return [
    `prompt injection, ${part} part`,
    `family       ${COUNTS_HEADER}`,
    ...FAMILIES.map((f) => countsRow(f, m.byFamily.get(f) as Counts)),
    countsRow("overall", m.overall),
  ].join("\n");
}

const corpus = new Map(PARTS.map((p) => [p, load(p)]));

describe("prompt injection on its corpus, development and held-out parts (docs/detectors.md#prompt-injection)", () => {
  const measured = new Map(PARTS.map((p) => [p, measure(corpus.get(p) ?? [])]));

  it("prints recall and precision per family and overall for each part", () => {
    for (const p of PARTS) console.log(`\n${table(p, measured.get(p) as Measured)}\n`);
  });

  for (const p of PARTS) {
    it(`${p}: recall of at least ${RECALL_FLOOR} and precision of at least ${PRECISION_FLOOR} overall`, () => {
      const m = measured.get(p) as Measured;
      const detail = m.errors.join("\n");
      assertAtLeast("recall", recallOf(m.overall), RECALL_FLOOR, `\n${detail}`);
      assertAtLeast("precision", precisionOf(m.overall), PRECISION_FLOOR, `\n${detail}`);
    });
  }

  it("the corpus holds 40+ positives for each main family, 150+ benign look-alikes, and a quarter of each held out", () => {
    const all = PARTS.flatMap((p) => corpus.get(p) ?? []);
    for (const family of ["override", "role", "extraction"] as const) {
      const positives = all.filter((e) => e.family === family && e.expect);
      assert.ok(positives.length >= 40, `${family}: ${positives.length} positives`);
      const heldOut = (corpus.get("held-out") ?? []).filter((e) => e.family === family && e.expect);
      assert.ok(heldOut.length >= positives.length * 0.2, `${family}: ${heldOut.length} held out`);
    }
    const negatives = all.filter((e) => !e.expect);
    assert.ok(negatives.length >= 150, `${negatives.length} negatives`);
    const heldOutNegatives = (corpus.get("held-out") ?? []).filter((e) => !e.expect);
    assert.ok(heldOutNegatives.length >= negatives.length * 0.2, `${heldOutNegatives.length} held out`);
  });

  it("every line has a known family, a boolean label and a note, and no text is in both parts", () => {
    const seen = new Set<string>();
    for (const p of PARTS) {
      for (const e of corpus.get(p) ?? []) {
        assert.ok(FAMILIES.includes(e.family), `${p}: family ${e.family}`);
        assert.equal(typeof e.expect, "boolean", e.text);
        assert.ok(typeof e.note === "string" && e.note.length > 0, e.text);
        assert.ok(!seen.has(e.text), `duplicate: ${e.text}`);
        seen.add(e.text);
      }
    }
  });
});
