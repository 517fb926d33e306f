import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { describe, it } from "node:test";
import { type ChatBody, collectTexts } from "../../src/domain/chat-texts.js";
import { compileFilters, scanTexts } from "../../src/domain/content-scan.js";
import { DETECTORS } from "../../src/domain/detectors/index.js";
import { AppError } from "../../src/domain/errors.js";
import {
  type FilterSpec,
  type JobText,
  packTexts,
  ScanBusy,
  ScanPool,
  type ScanReply,
  ScanTimeout,
  unpackTexts,
} from "../../src/gateway/scan-pool.js";
import { Scanner } from "../../src/gateway/scan-request.js";

/** Random `a`/`b` text: what makes a counted class's DFA states explode, so RE2 scans it slowly. */
function adversarial(length: number, seed0 = 7): string {
  let seed = seed0;
  let out = "";
  for (let i = 0; i < length; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    out += seed & 0x100 ? "a" : "b";
  }
  return out;
}

/** A pattern at the guardrail cost bound (docs/api.md#pattern-limits): seconds per MiB of a/b text. */
const COSTLY: FilterSpec = {
  content_filter_builtins: [],
  content_filters: [{ pattern: "a\\S{298}c", action: "block", label: null }],
};

const job = (text: string) => packTexts([{ text, role: "user", json: false, message: 0, kind: "text" }]);

const threads = () => readdirSync("/proc/self/task").length;

async function until(check: () => boolean, what: string): Promise<void> {
  // Polls by count, not by a deadline on the outcome: a slow machine only takes more rounds.
  for (let round = 0; round < 3000; round++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail(`never came to pass: ${what}`);
}

/**
 * Starts both workers of a two-worker pool and waits until they are ready: a worker's start (loading
 * its code) is not what these tests measure, and on a loaded machine it takes seconds.
 */
async function warm(pool: ScanPool): Promise<void> {
  await Promise.all([
    pool.run("warm-1", "fA", COSTLY, job("short")),
    pool.run("warm-2", "fB", COSTLY, job("short")),
  ]);
  // One worker may have taken both jobs while the other was still starting.
  await until(() => pool.stats().idle === 2, "both workers are ready");
}

describe("texts cross to a worker packed (docs/gateway.md#fair-share)", () => {
  it("packing and unpacking keeps every text, role, JSON flag, message and kind, empty texts included (docs/gateway.md#fair-share)", () => {
    const texts: JobText[] = [
      { text: "first", role: "system", json: false, message: 0, kind: "text" },
      { text: "", role: "user", json: false, message: 1, kind: "text" },
      { text: '{"a":"é💡"}', role: "tool", json: true, message: 2, kind: "text" },
      { text: "name", role: "developer", json: false, message: null, kind: "name" },
      { text: "last", role: "user", json: false, message: 3, kind: "key" },
    ];
    const packed = packTexts(texts);
    assert.equal(packed.roles.length, 4);
    assert.deepEqual(unpackTexts(structuredClone(packed)), texts);
  });
});

describe("organizations share the scan workers fairly (docs/gateway.md#fair-share)", () => {
  it("organization B's scan is served before the backlog organization A queued before it (docs/gateway.md#fair-share)", async () => {
    // A may hold every worker here, so only the round-robin order puts B ahead of A's backlog.
    const pool = new ScanPool({ size: 2, timeoutMs: 120_000, orgWorkers: 2, orgQueuedChars: 1 << 30 });
    try {
      const order: string[] = [];
      const done = (label: string) => (reply: ScanReply) => {
        assert.equal(reply.ok, true);
        order.push(label);
      };
      await warm(pool);
      const a = Array.from({ length: 6 }, (_, i) =>
        pool.run("org-a", "fA", COSTLY, job(adversarial(32 * 1024, i + 1))).then(done(`A${i + 1}`)),
      );
      await until(() => pool.stats().busy === 2, "A holds both workers");
      assert.equal(pool.stats().queued, 4);
      // B's text is a quarter of each of A's, so once it has a worker it finishes first.
      const b = pool.run("org-b", "fB", COSTLY, job(adversarial(8 * 1024, 99))).then(done("B"));
      await Promise.all([...a, b]);
      const at = order.indexOf("B");
      for (const queued of ["A3", "A4", "A5", "A6"]) {
        assert.ok(at < order.indexOf(queued), `B came after ${queued}: ${order.join(" ")}`);
      }
    } finally {
      await pool.close();
    }
  });

  it("one organization holds at most its share of workers, so another's scan starts at once (docs/gateway.md#fair-share)", async () => {
    const pool = new ScanPool({ size: 2, timeoutMs: 120_000, orgWorkers: 1, orgQueuedChars: 1 << 30 });
    try {
      await warm(pool);
      const order: string[] = [];
      const a = Array.from({ length: 3 }, (_, i) =>
        pool
          .run("org-a", "fA", COSTLY, job(adversarial(32 * 1024, i + 1)))
          .then(() => order.push(`A${i + 1}`)),
      );
      const b = pool.run("org-b", "fB", COSTLY, job(adversarial(8 * 1024, 99))).then(() => order.push("B"));
      // The workers are ready, so dispatching is immediate: A's first and B's run, A's others wait.
      assert.deepEqual([pool.stats().busy, pool.stats().queued], [2, 2]);
      await Promise.all([...a, b]);
      const at = order.indexOf("B");
      assert.ok(at < order.indexOf("A2") && at < order.indexOf("A3"), order.join(" "));
      assert.equal(pool.stats().workers, 2);
      assert.equal(pool.stats().started, 6);
    } finally {
      await pool.close();
    }
  });

  it("past its queued characters, an organization's scan is refused at once with a 503 naming its share, while another's is served (docs/gateway.md#fair-share)", async () => {
    const n = 16 * 1024;
    const scanner = new Scanner({
      timeoutMs: 120_000,
      workerChars: 0,
      workers: 2,
      orgWorkers: 1,
      orgQueuedChars: 2 * n,
    });
    try {
      const filters = compileFilters(COSTLY, DETECTORS);
      const ask = (text: string): ChatBody => ({ model: "m", messages: [{ role: "user", content: text }] });
      const scan = (org: string, text: string) =>
        scanner.scanLarge(COSTLY, [], filters, collectTexts(ask(text)), org);
      // Both workers started and ready (see warm), so A's first scan runs at once.
      await Promise.all([scan("warm-1", "short"), scan("warm-2", "short")]);
      await until(() => scanner.stats().idle === 2, "both workers are ready");
      const order: string[] = [];
      const a = [scan("org-a", adversarial(n, 1)).then(() => order.push("A1"))];
      await until(() => scanner.stats().busy === 1, "A's first scan runs");
      // Two of A's wait: exactly its share of characters.
      for (const i of [2, 3]) a.push(scan("org-a", adversarial(n, i)).then(() => order.push(`A${i}`)));
      const refused = await scan("org-a", adversarial(n, 4)).then(
        () => assert.fail("A's fourth scan was let in"),
        (err: unknown) => err,
      );
      order.push("A4 refused");
      assert.ok(refused instanceof AppError);
      assert.equal(refused.status, 503);
      assert.equal(refused.code, "scan_busy");
      assert.deepEqual(refused.metadata, {
        reason: "organization_share_full",
        queued_characters: 2 * n,
        queued_characters_limit: 2 * n,
      });
      const b = await scan("org-b", adversarial(n, 5));
      order.push("B");
      assert.ok(b, "B's scan ran in a worker and returned its result");
      assert.equal(b.block, null);
      await Promise.all(a);
      assert.equal(order[0], "A4 refused", order.join(" "));
      assert.equal(scanner.stats().refusedShare, 1);
      assert.equal(scanner.stats().started, 6);
    } finally {
      await scanner.close();
    }
  });
});

describe("a worker stopped for a time-out is gone (docs/gateway.md#large-scans)", () => {
  it("time-outs never hold more threads than the pool's size, and the thread count returns to its idle value (docs/gateway.md#large-scans)", async () => {
    const pool = new ScanPool({ size: 2, timeoutMs: 100, orgWorkers: 2, orgQueuedChars: 1 << 30 });
    try {
      // Warm up what a first worker starts in the process, then count threads per worker.
      await pool.run("org-a", "fQ", COSTLY, job("short"));
      await pool.close();
      // Its threads are gone once the count holds still for a while (terminate() resolves at exit).
      let idle = threads();
      let still = 0;
      await until(() => {
        const now = threads();
        still = now === idle ? still + 1 : 0;
        idle = now;
        return still >= 10;
      }, "the thread count settles");
      const pool2 = new ScanPool({ size: 2, timeoutMs: 100, orgWorkers: 2, orgQueuedChars: 1 << 30 });
      try {
        await Promise.all([
          pool2.run("org-a", "fQ", COSTLY, job("short")),
          pool2.run("org-b", "fQ", COSTLY, job("short")),
        ]);
        await until(() => pool2.stats().idle === 2, "both workers are ready");
        const perWorker = (threads() - idle) / 2;
        assert.ok(Number.isInteger(perWorker) && perWorker >= 1, `a worker added ${perWorker} threads`);

        let most = 0;
        let mostHeld = 0;
        let sampling = true;
        const sampler = (async () => {
          while (sampling) {
            const s = pool2.stats();
            mostHeld = Math.max(mostHeld, s.workers + s.stopping);
            most = Math.max(most, threads());
            await new Promise((r) => setTimeout(r, 10));
          }
        })();
        // Each scan needs seconds, far past its 100 ms budget: every one that reaches a worker times
        // out. The later ones wait for the stopped threads to end and their replacements to start,
        // which on a loaded machine can outlast the queue's wait (a 503), never the pool's size.
        const outcomes = await Promise.allSettled(
          ["org-a", "org-b", "org-a", "org-b"].map((org, i) =>
            pool2.run(org, "fQ", COSTLY, job(adversarial(64 * 1024, i + 1))),
          ),
        );
        for (const o of outcomes) {
          assert.equal(o.status, "rejected");
          assert.ok(o.reason instanceof ScanTimeout || o.reason instanceof ScanBusy, String(o.reason));
        }
        assert.ok(pool2.stats().timedOut >= 2, `${pool2.stats().timedOut} timed out`);
        await until(() => pool2.stats().stopping === 0, "every stopped worker ended");
        await until(
          () => threads() === idle + pool2.stats().workers * perWorker,
          "the thread count is back to its idle value",
        );
        sampling = false;
        await sampler;
        assert.ok(mostHeld <= 2, `the pool held ${mostHeld} threads`);
        assert.ok(most <= idle + 2 * perWorker, `the process had ${most} threads, idle ${idle}`);
        assert.equal(threads(), idle + pool2.stats().workers * perWorker);
      } finally {
        await pool2.close();
      }
      await until(() => threads() === idle, "closed, the pool leaves no thread");
    } finally {
      await pool.close();
    }
  });
});

describe("the event loop's share of a large body's scan (docs/gateway.md#fair-share)", () => {
  it("a body of thirty thousand one-character texts is scanned in a worker, with the same result as in place (docs/gateway.md#fair-share)", async () => {
    const scanner = new Scanner({ timeoutMs: 120_000, workerChars: 64 * 1024, workers: 2 });
    try {
      const spec: FilterSpec = {
        content_filter_builtins: [{ slug: "email", action: "redact" }],
        content_filters: [],
      };
      const filters = compileFilters(spec, DETECTORS);
      const parts = Array.from({ length: 30_000 }, (_, i) => ({
        type: "text",
        text: "abcde"[i % 5] as string,
      }));
      parts[12_345] = { type: "text", text: "mail dana@example.com" };
      const body: ChatBody = { model: "m", messages: [{ role: "user", content: parts }] };
      const texts = collectTexts(body);
      const chars = texts.reduce((n, t) => n + t.text.length, 0);
      assert.ok(chars < 64 * 1024, "its characters alone are under the worker threshold");
      const result = await scanner.scanLarge(spec, [], filters, texts, "org-a");
      assert.ok(result, "the scan ran in a worker, not on the event loop");
      assert.equal(scanner.stats().started, 1);
      assert.deepEqual(result, scanTexts(filters, texts));
      assert.equal(result.replacements[0]?.text, texts[12_345]);

      const few = collectTexts({ model: "m", messages: [{ role: "user", content: parts.slice(0, 30) }] });
      assert.equal(
        await scanner.scanLarge(spec, [], filters, few, "org-a"),
        undefined,
        "thirty stay in place",
      );
      assert.equal(scanner.stats().started, 1);
    } finally {
      await scanner.close();
    }
  });
});
