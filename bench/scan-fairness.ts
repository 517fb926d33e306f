/**
 * Benchmark behind the scan pool's fair share (docs/gateway.md#fair-share): organization B's large
 * request alone and while organization A keeps the pool full of costly scans, in the same run; the
 * pool's threads and the process's memory while A's scans time out; and how long a 1 MiB body of
 * tiny texts holds the event loop, scanned in place (what the threshold chose before it counted
 * texts) and sent to a worker (what it chooses now). Prints; asserts nothing. Takes a minute or two.
 */
import { readdirSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { type ChatBody, collectTexts } from "../src/domain/chat-texts.js";
import { BUILTIN_SLUGS } from "../src/domain/content-filters.js";
import { compileFilters, scanTexts } from "../src/domain/content-scan.js";
import { DETECTORS } from "../src/domain/detectors/index.js";
import type { FilterSpec } from "../src/gateway/scan-pool.js";
import { Scanner, type ScanSettings } from "../src/gateway/scan-request.js";

let seed = 42;
/** Random a/b text: what makes a counted class's DFA states explode. */
function adversarial(n: number): string {
  let out = "";
  for (let i = 0; i < n; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    out += seed & 0x100 ? "a" : "b";
  }
  return out;
}

const now = () => performance.now();
const threads = () => readdirSync("/proc/self/task").length;
const rssMiB = () => Math.round(process.memoryUsage().rss / 2 ** 20);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

/** A's guardrail: a pattern at the cost bound and every builtin. */
const COSTLY: FilterSpec = {
  content_filter_builtins: BUILTIN_SLUGS.map((slug) => ({ slug, action: "flag" as const })),
  content_filters: [{ pattern: "a\\S{298}c", action: "block", label: null }],
};
/** B's guardrail: an ordinary one. */
const PLAIN: FilterSpec = {
  content_filter_builtins: [
    { slug: "email", action: "redact" },
    { slug: "secrets", action: "block" },
  ],
  content_filters: [],
};
const costly = compileFilters(COSTLY, DETECTORS);
const plain = compileFilters(PLAIN, DETECTORS);
const ask = (content: string): ChatBody => ({ model: "m", messages: [{ role: "user", content }] });
const aText = collectTexts(ask(adversarial(256 * 1024)));
const bText = collectTexts(ask("The export feature generated more questions than expected. ".repeat(4000)));

async function warm(scan: () => Promise<unknown>): Promise<void> {
  for (let tries = 0; ; tries++) {
    try {
      await scan();
      return;
    } catch (err) {
      if ((err as { status?: number }).status !== 503 || tries >= 5) throw err;
    }
  }
}

async function bOnce(scanner: Scanner): Promise<string> {
  const start = now();
  try {
    await scanner.scanLarge(PLAIN, [], plain, bText, "org-b");
    return `${(now() - start).toFixed(0)}`;
  } catch (err) {
    return `${(now() - start).toFixed(0)} (${(err as { status?: number }).status ?? "error"})`;
  }
}

/** A keeps `depth` costly scans waiting or running until stopped; counts what it got back. */
function flood(scanner: Scanner, depth: number) {
  const tally = { ok: 0, timedOut: 0, busy: 0 };
  let running = true;
  const loops = Array.from({ length: depth }, async () => {
    while (running) {
      try {
        await scanner.scanLarge(COSTLY, [], costly, aText, "org-a");
        tally.ok++;
      } catch (err) {
        const status = (err as { status?: number }).status;
        if (status === 413) tally.timedOut++;
        else if (status === 503) tally.busy++;
        else throw err;
        // A refused at once (its share is full) tries again shortly, as a client would.
        if (status === 503) await sleep(50);
      }
    }
  });
  return {
    tally,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

async function fairness(label: string, settings: ScanSettings, rounds: number): Promise<void> {
  const scanner = new Scanner(settings);
  try {
    // Both workers started first: on a loaded machine a worker's start can outlast the queue's wait.
    await Promise.all([
      warm(() => scanner.scanLarge(PLAIN, [], plain, bText, "warm-1")),
      warm(() => scanner.scanLarge(PLAIN, [], plain, bText, "warm-2")),
    ]);
    const alone: string[] = [];
    for (let i = 0; i < rounds; i++) alone.push(await bOnce(scanner));
    const a = flood(scanner, 8);
    await sleep(1000);
    const busy: string[] = [];
    let threadsMost = 0;
    let rssMost = 0;
    const sampler = setInterval(() => {
      threadsMost = Math.max(threadsMost, threads());
      rssMost = Math.max(rssMost, rssMiB());
    }, 20);
    for (let i = 0; i < rounds; i++) busy.push(await bOnce(scanner));
    clearInterval(sampler);
    await a.stop();
    const stats = scanner.stats();
    console.log(`\n${label}`);
    console.log(
      `  B alone (ms)                 ${alone.join(", ")}  median ${median(alone.map(parseFloat)).toFixed(0)}`,
    );
    console.log(
      `  B while A floods (ms)        ${busy.join(", ")}  median ${median(busy.map(parseFloat)).toFixed(0)}`,
    );
    console.log(
      `  A's scans: ${a.tally.ok} done, ${a.tally.timedOut} timed out (413), ${a.tally.busy} refused (503); pool: ${stats.started} started, ${stats.refusedShare} refused for A's share`,
    );
    console.log(
      `  threads at most ${threadsMost} (idle process ${idleThreads}), RSS at most ${rssMost} MiB (idle ${idleRss})`,
    );
  } finally {
    await scanner.close();
  }
}

/** The longest the event loop was held, seen by a 1 ms ticker, while `work` ran. */
async function longestBlock(work: () => Promise<unknown>): Promise<number> {
  let last = now();
  let longest = 0;
  const ticker = setInterval(() => {
    const t = now();
    longest = Math.max(longest, t - last);
    last = t;
  }, 1);
  await sleep(20);
  longest = 0;
  last = now();
  await work();
  await sleep(5);
  clearInterval(ticker);
  return longest;
}

async function tinyTexts(): Promise<void> {
  const parts = Array.from({ length: 38_000 }, (_, i) => ({
    type: "text",
    text: "abcdefgh"[i % 8] as string,
  }));
  const raw = JSON.stringify(ask("")).replace('"content":""', `"content":${JSON.stringify(parts)}`);
  const spec: FilterSpec = {
    content_filter_builtins: BUILTIN_SLUGS.map((slug) => ({ slug, action: "flag" as const })),
    content_filters: [{ pattern: "PRJ-[0-9]{4}", action: "redact", label: null }],
  };
  const filters = compileFilters(spec, DETECTORS);
  const scanner = new Scanner({ timeoutMs: 60_000, workerChars: 64 * 1024, workers: 2 });
  try {
    await warm(() => scanner.scanLarge(spec, [], filters, collectTexts(ask("x".repeat(70_000))), "warm"));
    console.log(
      `\n4. A ${(raw.length / 2 ** 20).toFixed(2)} MiB body of ${parts.length} one-character texts, nine builtins and a pattern`,
    );
    console.log(`${"".padEnd(44)} ${"on the loop".padStart(12)} ${"longest block".padStart(14)}`);
    const rows: [string, () => Promise<unknown>][] = [
      [
        "in place (chars alone under the threshold)",
        async () => scanTexts(filters, collectTexts(JSON.parse(raw) as ChatBody)),
      ],
      [
        "offloaded (texts counted)",
        async () => {
          const texts = collectTexts(JSON.parse(raw) as ChatBody);
          if (!scanner.offload(filters, texts)) throw new Error("not offloaded");
          await scanner.scanLarge(spec, [], filters, texts, "org-a");
        },
      ],
      ["idle (the ticker alone, 50 ms)", () => sleep(50)],
    ];
    for (const [label, work] of rows) {
      const loop: number[] = [];
      const block: number[] = [];
      for (let i = 0; i < 5; i++) {
        const before = performance.eventLoopUtilization();
        block.push(await longestBlock(work));
        // The event loop's own busy time, the worker's not included (the ticker's few ms are).
        loop.push(performance.eventLoopUtilization(before).active);
      }
      console.log(
        `${label.padEnd(44)} ${`${median(loop).toFixed(0)} ms`.padStart(12)} ${`${median(block).toFixed(1)} ms`.padStart(14)}`,
      );
    }
  } finally {
    await scanner.close();
  }
}

const idleThreads = threads();
const idleRss = rssMiB();
const workers = 2;
console.log(
  `Scan fair share, ${workers} workers, A: 8 costly 256 KiB scans kept waiting, B: a 240 KB prompt under two builtins`,
);
await fairness(
  "1. Default shares (A holds at most 1 worker, 4 Mi characters queued), 5 s budget",
  { timeoutMs: 5_000, workerChars: 64 * 1024, workers },
  5,
);
await fairness(
  "2. Default shares, 300 ms budget: every A scan times out, its stopped workers count against it",
  { timeoutMs: 300, workerChars: 64 * 1024, workers },
  5,
);
await fairness(
  "3. Round robin alone (A may hold both workers), 300 ms budget: B waits for A's stopping threads",
  { timeoutMs: 300, workerChars: 64 * 1024, workers, orgWorkers: workers },
  5,
);
await tinyTexts();
