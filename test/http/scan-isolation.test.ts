import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { call, clientFor } from "../helpers/server.js";
import {
  ask,
  chat,
  type GatewayBench,
  guardKey,
  orgWithKey,
  SONNET,
  startGatewayBench,
} from "./gateway-support.js";

/** Random `a`/`b` text: what makes a counted class's DFA states explode, so RE2 scans it slowly. */
function adversarial(length: number): string {
  let seed = 7;
  let out = "";
  for (let i = 0; i < length; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    out += seed & 0x100 ? "a" : "b";
  }
  return out;
}

/** The costliest patterns a guardrail may have (cost 300), and every builtin. */
const COSTLY = {
  content_filters: [{ pattern: "a\\S{298}c", action: "block" }],
  content_filter_builtins: [
    { slug: "email", action: "redact" },
    { slug: "phone", action: "redact" },
    { slug: "ssn", action: "block" },
    { slug: "credit-card", action: "block" },
    { slug: "ip-address", action: "flag" },
    { slug: "secrets", action: "block" },
    { slug: "person-name", action: "flag" },
    { slug: "address", action: "flag" },
    { slug: "regex-prompt-injection", action: "flag" },
  ],
};

describe("large scans run off the event loop (docs/gateway.md#large-scans)", () => {
  let bench: GatewayBench;
  before(async () => {
    // A generous budget: this test is about who waits for a slow scan, not about its time-out.
    bench = await startGatewayBench({
      bodyLimit: 4 * 1024 * 1024,
      scan: { timeoutMs: 120_000, workerChars: 64 * 1024, workers: 2 },
    });
  });
  after(async () => {
    await bench.close();
  });

  it("while organization A's 1 MiB prompt is scanned against its costliest patterns, organization B's /healthz and guardrail reads complete (docs/gateway.md#large-scans)", async () => {
    const a = await orgWithKey(bench);
    await guardKey(a.steps, a.key, COSTLY);
    const b = await orgWithKey(bench);
    await b.steps.guardrail({ name: "b's own" });
    const before = bench.received.length;

    let answered = false;
    const slow = chat(bench.server, a.key.secret, ask(adversarial(1024 * 1024))).then((res) => {
      answered = true;
      return res;
    });
    // B keeps asking until A is answered; count what B got back before that. Reading and parsing
    // A's body alone lets B through a handful of times; a scan on the event loop lets B through no
    // more (measured: 6 rounds), a scan in a worker lets B through for its whole length (thousands).
    let completedBeforeA = 0;
    const bApi = clientFor(bench.server, b.org.key);
    while (!answered) {
      const [health, list] = await Promise.all([
        call(bench.server, "GET", "/healthz"),
        bApi.get("/api/v1/guardrails"),
      ]);
      assert.equal(health.status, 200);
      assert.equal(list.status, 200);
      assert.equal(list.body.data[0]?.name, "b's own");
      if (!answered) completedBeforeA++;
    }
    const res = await slow;
    assert.equal(res.status, 200, res.text.slice(0, 500));
    assert.equal(bench.received.length, before + 1);
    assert.ok(completedBeforeA >= 50, `B completed only ${completedBeforeA} rounds while A was scanned`);
  });

  it("a scan in a worker finds and redacts exactly what the event loop does (docs/gateway.md#large-scans)", async () => {
    const { steps, key } = await orgWithKey(bench);
    await guardKey(steps, key, {
      content_filter_builtins: [{ slug: "email", action: "redact" }],
      content_filters: [{ pattern: "PRJ-[0-9]{4}", action: "redact", label: "[PROJECT]" }],
    });
    const tail = " write to dana@example.com about PRJ-2093.";
    const small = await chat(bench.server, key.secret, ask(`small:${tail}`));
    assert.equal(small.status, 200);
    const smallSent = bench.received.at(-1)?.body.messages[0].content;
    const filler = "lorem ipsum ".repeat(8 * 1024);
    const large = await chat(bench.server, key.secret, ask(`${filler}${tail}`));
    assert.equal(large.status, 200);
    const largeSent: string = bench.received.at(-1)?.body.messages[0].content;
    assert.equal(smallSent, "small: write to [EMAIL] about [PROJECT].");
    assert.equal(largeSent, `${filler} write to [EMAIL] about [PROJECT].`);
  });
});

describe("the scan time budget (docs/gateway.md#large-scans)", () => {
  let bench: GatewayBench;
  before(async () => {
    // Every scan goes to a worker, with a budget far below what the costly 768 KiB scan needs
    // (seconds) and far above what a short question needs even on a loaded machine (microseconds,
    // plus compiling the patterns in a fresh worker). Two workers, one per organization at most
    // (docs/gateway.md#fair-share).
    bench = await startGatewayBench({ scan: { timeoutMs: 500, workerChars: 0, workers: 2, orgWorkers: 1 } });
  });
  after(async () => {
    await bench.close();
  });

  it("a scan over its time budget is a 413 scan_time_exceeded, nothing is forwarded, and the next request is served (docs/gateway.md#large-scans)", async () => {
    const { org, steps, key } = await orgWithKey(bench);
    await guardKey(steps, key, COSTLY);
    // Waits are not what this test is about: a worker starting (seconds on a loaded machine) or a
    // stopped one still ending may outlast the queue's wait, a 503, so each step may be tried again.
    const tryAgain = async <T extends { status: number }>(send: () => Promise<T>): Promise<T> => {
      let res = await send();
      for (let tries = 1; tries < 4 && res.status === 503; tries++) res = await send();
      return res;
    };
    // A fresh worker's first short scan can itself outlast 500 ms on a heavily loaded machine (413).
    let warm = await chat(bench.server, key.secret, ask("a first short question"));
    for (let tries = 1; tries < 4 && (warm.status === 413 || warm.status === 503); tries++) {
      warm = await chat(bench.server, key.secret, ask("a first short question"));
    }
    assert.equal(warm.status, 200, warm.text);
    const before = bench.received.length;
    const prompt = adversarial(768 * 1024);
    const res = await chat(bench.server, key.secret, ask(prompt));
    assert.equal(res.status, 413, res.text.slice(0, 500));
    assert.equal(res.body.error.code, 413);
    assert.match(res.body.error.message, /did not finish within 500 ms/);
    assert.deepEqual(res.body.error.metadata, {
      reason: "scan_time_exceeded",
      time_budget_ms: 500,
      characters: prompt.length,
    });
    // A's stopped worker still counts against A's one worker: this waits until its thread has ended.
    const dry = await tryAgain(() =>
      clientFor(bench.server, org.key).post("/api/v1/guardrails/evaluate", {
        key_hash: key.hash,
        model: SONNET,
        messages: [{ role: "user", content: prompt }],
      }),
    );
    assert.equal(dry.status, 413);
    assert.equal(dry.body.error.metadata.reason, "scan_time_exceeded");
    assert.equal(bench.received.length, before, "nothing reached the upstream");
    // A's stopped workers count against A's one worker until their threads end; another organization
    // still finds the other worker (docs/gateway.md#fair-share).
    const b = await orgWithKey(bench);
    await guardKey(b.steps, b.key, COSTLY);
    const other = await tryAgain(() =>
      chat(bench.server, b.key.secret, ask("another organization's short question")),
    );
    assert.equal(other.status, 200, other.text);
    assert.equal(bench.received.length, before + 1);
    // The stuck worker was replaced: a small request under the same guardrail is scanned and served.
    // On a heavily loaded machine the fresh worker's first short scan can itself outlast 500 ms, so
    // a few tries are allowed; a worker that stays stuck fails every one of them.
    let next = await chat(bench.server, key.secret, ask("a short question"));
    for (let tries = 1; tries < 4 && (next.status === 413 || next.status === 503); tries++) {
      next = await chat(bench.server, key.secret, ask("a short question"));
    }
    assert.equal(next.status, 200, next.text);
    assert.equal(bench.received.length, before + 2);
  });
});
