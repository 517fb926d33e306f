/**
 * The prompt-injection detector's cost on ordinary text does not depend on what it read before
 * (docs/detectors.md#injection-cost-cliff): long texts dense with attacks alternate with batches of
 * short ordinary texts; the prefilter's pass over each long text and each batch's whole detection
 * are bounded by a ratio to a plain scan of the same text, measured in the same test. Costs are CPU time of this process, so a pause
 * of the machine is not counted; no absolute duration is asserted.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { findPromptInjections, passesPrefilter } from "../../src/domain/detectors/regex-prompt-injection.js";

const corpus = ["dev", "held-out"].flatMap((name) =>
  readFileSync(new URL(`../fixtures/injection-corpus/${name}.jsonl`, import.meta.url), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as { text: string; expect: boolean }),
);
const attacks = corpus.filter((c) => c.expect).map((c) => c.text);

/** A fixed sequence, so every run reads the same texts. */
let state = 20261127;
function next(n: number): number {
  state = (state * 1103515245 + 12345) % 2147483648;
  return Math.floor((state / 2147483648) * n);
}

function longAttack(length: number): string {
  let text = "";
  while (text.length < length) text += `${attacks[next(attacks.length)]} `;
  return text;
}

const TOPICS = ["quarterly report", "refund request", "shipping delay", "login issue", "invoice", "roadmap"];
function shortBatch(round: number): string[] {
  return Array.from(
    { length: 48 },
    (_, i) =>
      `Ticket ${round * 100 + i}: please summarise the ${TOPICS[(round + i) % TOPICS.length]} for the board, ` +
      `list three risks and draft a polite reply to the customer about next steps. `.repeat(6),
  );
}

function plainScan(text: string): number {
  let n = 0;
  for (const m of text.matchAll(/[\p{L}\p{N}]+|[^\s\p{L}\p{N}]/gu)) n += m[0].length;
  return n;
}

function cpuMicros(work: () => void): number {
  const before = process.cpuUsage();
  work();
  const used = process.cpuUsage(before);
  return used.user + used.system;
}

interface Round {
  screen: number;
  batch: number;
}

/** One long attack text, then a batch of short texts: each cost over a plain scan of the same text. */
function round(n: number): Round {
  const long = longAttack(30_000);
  const plainLong = cpuMicros(() => plainScan(long));
  const screen = cpuMicros(() => assert.equal(passesPrefilter(long), true)) / Math.max(plainLong, 1);
  assert.ok(findPromptInjections(long).length > 0);
  const batch = shortBatch(n);
  const detector = cpuMicros(() => {
    for (const t of batch) assert.deepEqual(findPromptInjections(t), []);
  });
  findPromptInjections(longAttack(30_000));
  const plain = cpuMicros(() => {
    for (const t of batch) plainScan(t);
  });
  return { screen, batch: detector / Math.max(plain, 1) };
}

const BOUND = 20;

test("long attack texts and short ordinary texts alternate, each pass a bounded multiple of a plain scan (docs/detectors.md#injection-cost-cliff)", () => {
  // The first rounds build the automata's states and are not measured.
  for (let n = 0; n < 4; n++) round(90 + n);
  const rounds: Round[] = [];
  for (let n = 0; n < 8; n++) {
    let r = round(n);
    // A round over the bound is run once more, as the cost worker of detectors.test.ts does: a
    // pause of the machine (another process's burst, a collection) is not repeated, a cliff is.
    if (r.screen > BOUND || r.batch > BOUND) {
      const again = round(n);
      r = { screen: Math.min(r.screen, again.screen), batch: Math.min(r.batch, again.batch) };
    }
    rounds.push(r);
  }
  const show = (xs: number[]) => xs.map((x) => x.toFixed(1)).join(" ");
  const screens = rounds.map((r) => r.screen);
  const batches = rounds.map((r) => r.batch);
  // The screen of a long attack text stops at its first attack (it read the whole text, and cost
  // 17 to 122 plain scans, before docs/detectors.md#injection-cost-cliff).
  assert.ok(
    Math.max(...screens) <= BOUND,
    `screen of a long attack / plain scan per round: ${show(screens)}`,
  );
  assert.ok(Math.max(...batches) <= BOUND, `short batch / plain scan per round: ${show(batches)}`);
});
