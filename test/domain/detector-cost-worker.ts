/**
 * Runs every builtin detector over 100 KB adversarial texts in a worker thread, for
 * test/domain/detectors.test.ts: if a detector blows up on one of them, the test's time-out ends
 * the worker and fails, instead of the suite hanging. Before each run it posts which detector and
 * text it starts, so a time-out can name the culprit; after it, the detector's time beside a plain
 * scan of the same text, so the test can bound the ratio without any absolute duration.
 */
import { parentPort, workerData } from "node:worker_threads";
import { BUILTIN_SLUGS } from "../../src/domain/content-filters.js";
import { DETECTORS } from "../../src/domain/detectors/index.js";

export interface CostInput {
  name: string;
  unit: string;
  length: number;
}

export type CostMessage =
  | { kind: "start"; input: string; slug: string }
  | { kind: "cost"; input: string; slug: string; detectorMs: number; plainMs: number }
  | { kind: "done" };

/**
 * The plain scan a detector is compared with: one pass that splits the text into words and
 * punctuation, linear in its length, as any detector must at least read it.
 */
function plainScan(text: string): number {
  let n = 0;
  for (const m of text.matchAll(/[\p{L}\p{N}]+|[^\s\p{L}\p{N}]/gu)) n += m[0].length;
  return n;
}

function elapsedMs(work: () => unknown): number {
  const start = process.hrtime.bigint();
  work();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/** The fastest of a few runs: a pause of the machine only ever adds time, never removes it. */
function fastestMs(work: () => unknown, runs: number): number {
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < runs; i++) best = Math.min(best, elapsedMs(work));
  return best;
}

const { inputs, factor } = workerData as { inputs: CostInput[]; factor: number };
const post = (m: CostMessage) => parentPort?.postMessage(m);

for (const input of inputs) {
  const text = input.unit.repeat(Math.ceil(input.length / input.unit.length));
  const plainMs = fastestMs(() => plainScan(text), 3);
  for (const slug of BUILTIN_SLUGS) {
    post({ kind: "start", input: input.name, slug });
    let detectorMs = elapsedMs(() => DETECTORS[slug](text));
    // Measured again only when it looks costly, so a busy moment of the machine is not a failure.
    if (detectorMs > factor * plainMs)
      detectorMs = Math.min(
        detectorMs,
        fastestMs(() => DETECTORS[slug](text), 3),
      );
    post({ kind: "cost", input: input.name, slug, detectorMs, plainMs });
  }
}
post({ kind: "done" });
