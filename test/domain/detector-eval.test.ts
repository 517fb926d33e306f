import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { builtinLabel } from "../../src/domain/content-filters.js";
import type { LabelledSpan } from "../../src/domain/overlaps.js";
import {
  assertAtLeast,
  NAME_AFFIXES,
  spanPrecision as precisionOf,
  spanRecall as recallOf,
  redactAll,
  type SpanScore,
  spanTable,
  wordsCovered,
} from "./detection-report.js";
import { type Case, generate } from "./detector-eval/generate.js";
import { development, type EvalSlug, heldOut } from "./detector-eval/sentences.js";

/**
 * The builtin detectors on text that nobody here wrote the values of (docs/detectors.md,
 * "Evaluation on generated text"): our sentences filled with names, addresses, phone numbers,
 * cards, SSNs, addresses and keys from @faker-js/faker in seven locales, plus hard negatives. Every
 * builtin runs on `redact`, as in a dry run, and overlapping matches are labelled as the gateway
 * labels them (docs/detectors.md, "When two filters match the same text"). A value counts as found
 * only when every word of it is redacted under its own slug's label (a street left beside
 * `[ADDRESS]` is a miss); a redaction under a slug's label that covers no value of that slug is a
 * false positive. The development set was used while building the detectors; the held-out set
 * never was, and must meet the same floors.
 */

const SLUGS: EvalSlug[] = [
  "email",
  "phone",
  "ssn",
  "credit-card",
  "ip-address",
  "secrets",
  "person-name",
  "address",
];
const CONTEXTUAL: EvalSlug[] = ["person-name", "address"];
/** Names and addresses have no checksum: their floor is 0.90 recall, 0.95 precision (docs/detectors.md). */
const recallFloor = (slug: EvalSlug) => (CONTEXTUAL.includes(slug) ? 0.9 : 0.95);
const precisionFloor = (_slug: EvalSlug) => 0.95;
/** Words of a value that identify nobody: honorifics and generational or degree suffixes. */
const AFFIXES = new Set([
  ...NAME_AFFIXES,
  // The other locales' honorifics.
  "m",
  "mme",
  "mlle",
  "dott",
  "ing",
  "sig",
  "sra",
  "sta",
]);

interface Score extends SpanScore {
  slug: EvalSlug;
  misses: string[];
  wrong: string[];
}

function covered(spans: LabelledSpan[], label: string, start: number, end: number, text: string): boolean {
  return wordsCovered(text, start, end, {
    word: /[\p{L}\p{N}]+/u,
    affixes: AFFIXES,
    covers: (a, b) => spans.some((s) => s.label === label && s.start <= a && s.end >= b),
  });
}

function score(cases: Case[]): Score[] {
  const scores = new Map<EvalSlug, Score>(
    SLUGS.map((slug) => [
      slug,
      { slug, name: slug, values: 0, found: 0, predicted: 0, falsePositives: 0, misses: [], wrong: [] },
    ]),
  );
  for (const c of cases) {
    const spans = redactAll(c.text);
    for (const e of c.entities) {
      const s = scores.get(e.slug) as Score;
      s.values++;
      if (covered(spans, builtinLabel(e.slug), e.start, e.end, c.text)) s.found++;
      else s.misses.push(c.text);
    }
    for (const span of spans) {
      const slug = SLUGS.find((x) => builtinLabel(x) === span.label);
      if (slug === undefined) continue;
      const s = scores.get(slug) as Score;
      s.predicted++;
      const hit = c.entities.some((e) => e.slug === slug && e.start < span.end && span.start < e.end);
      if (!hit) {
        s.falsePositives++;
        s.wrong.push(`${c.text.slice(span.start, span.end)}  in  ${c.text}`);
      }
    }
  }
  return [...scores.values()];
}

for (const [name, sets, seed, rounds] of [
  ["development", development, 1, 3],
  ["held-out", heldOut, 20261124, 4],
] as const) {
  describe(`detectors on generated text, ${name} set (docs/detectors.md#evaluation-on-generated-text)`, () => {
    const rows = score(generate(sets, seed, rounds));
    it("prints recall and precision per slug", () => {
      console.log(`\n${spanTable(`${name} set`, "slug", rows)}\n`);
      assert.ok(rows.every((r) => r.values > 0));
    });
    for (const r of rows) {
      it(`${r.slug}: recall at least ${recallFloor(r.slug)}, precision at least ${precisionFloor(r.slug)}`, () => {
        assertAtLeast(
          "recall",
          recallOf(r),
          recallFloor(r.slug),
          `; missed, for example:\n${r.misses.slice(0, 15).join("\n")}`,
        );
        assertAtLeast(
          "precision",
          precisionOf(r),
          precisionFloor(r.slug),
          `; wrongly redacted, for example:\n${r.wrong.slice(0, 15).join("\n")}`,
        );
      });
    }
  });
}
