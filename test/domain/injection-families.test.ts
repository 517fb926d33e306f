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
 * The injection families beyond the phrase list, in nine languages (docs/detectors.md#injection-families):
 * instruction override, instructions hidden in quoted documents, prompt extraction, persona
 * jailbreaks and encoded payloads. `families-held-out.jsonl` was written and committed before the
 * rules for these families and is never tuned on; `families-dev.jsonl` is what they were written
 * against. Each part prints a table by family and by language and must reach the floors on its own.
 */

const DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "injection-corpus");
const PARTS = ["families-dev", "families-held-out"] as const;
const FAMILIES = ["override", "hidden", "extraction", "persona", "encoded"] as const;
const LANGUAGES = ["en", "fr", "de", "es", "it", "pt", "nl", "pl", "ru"] as const;
const RECALL_FLOOR = 0.8;
const PRECISION_FLOOR = 0.98;
const LANGUAGE_RECALL_FLOOR = 0.75;

type Family = (typeof FAMILIES)[number];
type Language = (typeof LANGUAGES)[number];
interface Example {
  text: string;
  expect: boolean;
  family: Family;
  lang: Language;
  note: string;
}

const load = (part: string) => loadJsonl<Example>(DIR, part);

interface Measured {
  byFamily: Map<string, Counts>;
  byLanguage: Map<string, Counts>;
  overall: Counts;
  errors: string[];
}

/** A positive is found when the detector returns a span; a negative is a false positive when it does. */
function measure(examples: Example[]): Measured {
  const byFamily = new Map<string, Counts>(FAMILIES.map((f) => [f, emptyCounts()]));
  const byLanguage = new Map<string, Counts>(LANGUAGES.map((l) => [l, emptyCounts()]));
  const overall = emptyCounts();
  const errors: string[] = [];
  for (const e of examples) {
    const hit = findPromptInjections(e.text).length > 0;
    tally([byFamily.get(e.family), byLanguage.get(e.lang), overall], e.expect, hit);
    if (e.expect && !hit) errors.push(`missed (${e.family}, ${e.lang}): ${JSON.stringify(e.text)}`);
    if (!e.expect && hit) errors.push(`false positive (${e.family}, ${e.lang}): ${JSON.stringify(e.text)}`);
  }
  return { byFamily, byLanguage, overall, errors };
}

function table(part: string, m: Measured): string {
  return [
    `prompt injection families, ${part}`,
    `family       ${COUNTS_HEADER}`,
    ...FAMILIES.map((f) => countsRow(f, m.byFamily.get(f) as Counts)),
    countsRow("overall", m.overall),
    `language     ${COUNTS_HEADER}`,
    ...LANGUAGES.map((l) => countsRow(l, m.byLanguage.get(l) as Counts)),
  ].join("\n");
}

const corpus = new Map(PARTS.map((p) => [p, load(p)]));

describe("prompt injection families by family and language (docs/detectors.md#injection-families)", () => {
  const measured = new Map(PARTS.map((p) => [p, measure(corpus.get(p) ?? [])]));

  it("prints recall and precision by family and by language for each part", () => {
    for (const p of PARTS) console.log(`\n${table(p, measured.get(p) as Measured)}\n`);
  });

  for (const p of PARTS) {
    it(`${p}: recall ≥ ${RECALL_FLOOR} and precision ≥ ${PRECISION_FLOOR} overall and in every family`, () => {
      const m = measured.get(p) as Measured;
      const detail = m.errors.join("\n");
      for (const [name, c] of [["overall", m.overall], ...m.byFamily] as [string, Counts][]) {
        assertAtLeast(`${name}: recall`, recallOf(c), RECALL_FLOOR, `\n${detail}`);
        assertAtLeast(`${name}: precision`, precisionOf(c), PRECISION_FLOOR, `\n${detail}`);
      }
    });

    it(`${p}: recall ≥ ${LANGUAGE_RECALL_FLOOR} in every language`, () => {
      const m = measured.get(p) as Measured;
      for (const [lang, c] of m.byLanguage) {
        assertAtLeast(`${lang}: recall`, recallOf(c), LANGUAGE_RECALL_FLOOR, `\n${m.errors.join("\n")}`);
      }
    });
  }

  it("each part has positives and benign look-alikes in every language and every family", () => {
    for (const p of PARTS) {
      const examples = corpus.get(p) ?? [];
      for (const lang of LANGUAGES) {
        const of = examples.filter((e) => e.lang === lang);
        assert.ok(of.filter((e) => e.expect).length >= 8, `${p} ${lang}: positives`);
        assert.ok(of.filter((e) => !e.expect).length >= 4, `${p} ${lang}: negatives`);
      }
      for (const family of FAMILIES) {
        const of = examples.filter((e) => e.family === family);
        assert.ok(of.filter((e) => e.expect).length >= 5, `${p} ${family}: positives`);
        assert.ok(of.filter((e) => !e.expect).length >= 4, `${p} ${family}: negatives`);
      }
    }
  });

  it("every line has a known family and language, a boolean label and a note, and no text is in both parts", () => {
    const seen = new Set<string>();
    for (const p of PARTS) {
      for (const e of corpus.get(p) ?? []) {
        assert.ok(FAMILIES.includes(e.family), `${p}: family ${e.family}`);
        assert.ok(LANGUAGES.includes(e.lang), `${p}: lang ${e.lang}`);
        assert.equal(typeof e.expect, "boolean", e.text);
        assert.ok(typeof e.note === "string" && e.note.length > 0, e.text);
        assert.ok(!seen.has(e.text), `duplicate: ${e.text}`);
        seen.add(e.text);
      }
    }
  });
});
