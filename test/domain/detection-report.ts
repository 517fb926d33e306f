import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { BUILTIN_SLUGS, builtinLabel } from "../../src/domain/content-filters.js";
import { DETECTORS } from "../../src/domain/detectors/index.js";
import { BUILTIN_RANK, type LabelledSpan, resolveOverlaps } from "../../src/domain/overlaps.js";

/**
 * What the detector measurements share (docs/detectors.md#prompt-injection,
 * docs/detectors.md#evaluation-on-generated-text): reading a labelled corpus, counting hits and
 * misses, the recall and precision those give, the tables printed, and the floors asserted.
 */

/** The lines of `<dir>/<part>.jsonl`, each one labelled example. */
export function loadJsonl<T>(dir: string, part: string): T[] {
  return readFileSync(join(dir, `${part}.jsonl`), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as T);
}

/** A classifier's counts on labelled examples (did the detector fire on this text or not). */
export interface Counts {
  positives: number;
  negatives: number;
  found: number;
  falsePositives: number;
}

export const emptyCounts = (): Counts => ({ positives: 0, negatives: 0, found: 0, falsePositives: 0 });

/** Counts one example, labelled `expect`, where the detector did or did not fire (`hit`), in each of `into`. */
export function tally(into: (Counts | undefined)[], expect: boolean, hit: boolean): void {
  for (const c of into) {
    if (!c) continue;
    if (expect) {
      c.positives++;
      if (hit) c.found++;
    } else {
      c.negatives++;
      if (hit) c.falsePositives++;
    }
  }
}

const ratio = (a: number, b: number) => (b === 0 ? 1 : a / b);
export const recallOf = (c: Counts): number => ratio(c.found, c.positives);
export const precisionOf = (c: Counts): number => ratio(c.found, c.found + c.falsePositives);

/** The column heads after the name of a `countsRow` table. */
export const COUNTS_HEADER = "positives  found  recall  negatives  false pos.  precision";

/** One line of a table of `Counts`, under `COUNTS_HEADER` after a 12-character name. */
export const countsRow = (name: string, c: Counts): string =>
  [
    name.padEnd(12),
    String(c.positives).padStart(9),
    String(c.found).padStart(6),
    recallOf(c).toFixed(3).padStart(7),
    String(c.negatives).padStart(10),
    String(c.falsePositives).padStart(10),
    precisionOf(c).toFixed(3).padStart(10),
  ].join(" ");

/** A measured span detector's line: values to find, found, and redactions that covered none. */
export interface SpanScore {
  name: string;
  values: number;
  found: number;
  predicted: number;
  falsePositives: number;
}

export const spanRecall = (s: SpanScore): number => ratio(s.found, s.values);
export const spanPrecision = (s: SpanScore): number =>
  s.predicted === 0 ? 1 : (s.predicted - s.falsePositives) / s.predicted;

/** The table of span scores, its first column headed `nameHead`. */
export function spanTable(title: string, nameHead: string, rows: SpanScore[]): string {
  return [
    title,
    `${nameHead.padEnd(12)}  values  found  false pos.  recall  precision`,
    ...rows.map((r) =>
      [
        r.name.padEnd(12),
        String(r.values).padStart(7),
        String(r.found).padStart(6),
        String(r.falsePositives).padStart(11),
        spanRecall(r).toFixed(3).padStart(7),
        spanPrecision(r).toFixed(3).padStart(10),
      ].join(" "),
    ),
  ].join("\n");
}

/** English titles and generational or degree suffixes: they identify nobody, so a name is found without them. */
export const NAME_AFFIXES: ReadonlySet<string> = new Set([
  "mr",
  "mrs",
  "ms",
  "miss",
  "dr",
  "jr",
  "sr",
  "i",
  "ii",
  "iii",
  "iv",
  "v",
  "md",
  "dds",
  "phd",
  "dvm",
  "prof",
]);

/**
 * Whether every word of the value at `start`..`end` of `text` is covered (`covers` its bounds),
 * affixes that identify nobody (titles, generational or degree suffixes) aside.
 */
export function wordsCovered(
  text: string,
  start: number,
  end: number,
  options: { word: RegExp; affixes: ReadonlySet<string>; covers: (start: number, end: number) => boolean },
): boolean {
  const words = new RegExp(options.word.source, "gu");
  const value = text.slice(start, end);
  for (let m = words.exec(value); m !== null; m = words.exec(value)) {
    if (options.affixes.has(m[0].toLowerCase())) continue;
    const a = start + m.index;
    if (!options.covers(a, a + m[0].length)) return false;
  }
  return true;
}

/** Asserts a measured figure reaches its floor; the message gives the figure, then `detail`. */
export function assertAtLeast(what: string, measured: number, floor: number, detail = ""): void {
  assert.ok(measured >= floor, `${what} ${measured.toFixed(3)}${detail}`);
}

/**
 * Every builtin detector's spans on `text`, labelled and with overlaps resolved as the gateway
 * resolves them (docs/detectors.md#evaluation-on-generated-text): what a guardrail redacting with
 * all of them would replace.
 */
export function redactAll(text: string): LabelledSpan[] {
  const spans = BUILTIN_SLUGS.flatMap((slug) =>
    DETECTORS[slug](text).map((s) => ({ ...s, label: builtinLabel(slug), rank: BUILTIN_RANK[slug] })),
  );
  return resolveOverlaps(spans);
}
