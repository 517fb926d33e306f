/**
 * Benchmark: chat completions through the gateway to the local upstream, beside the same
 * load sent straight to that upstream, in one run at 50 connections. The gateway's key is governed
 * by a budget (every request reserves and settles in SQLite) and two content filters. Targets: at
 * least 0.5 of the direct throughput and at most 1 ms added p50 latency, judged with an upstream
 * that takes BENCH_UPSTREAM_LATENCY_MS (default 20 ms) to answer, as a model does; a first round
 * with an instant upstream shows the gateway's own cost, and a last one an upstream whose answers
 * take 10–30 ms, evenly spread (for information: with a fixed time, answers come back in lockstep
 * bursts that the gateway must work through one after another). Every round also measures a bare
 * forwarder (bench/servers/forwarder.ts: Node's HTTP server and the gateway's upstream client, nothing
 * else), the floor of any proxy hop under that load on this machine. Latencies are exact to the
 * microsecond (bench/load.ts). A report: exits 0.
 */
import { CONNECTIONS, DURATION, type Measured, measure, startServer, WARMUP } from "./load.js";
import { chatLoad as load } from "./shared.js";

const TARGET_RATIO = 0.5;
const TARGET_ADDED_P50_MS = 1;
/** A model's time to answer, for the judged round (BENCH_UPSTREAM_LATENCY_MS, default 20). */
const LATENCY_MS = Number(process.env.BENCH_UPSTREAM_LATENCY_MS ?? 20);
/** The spread of the last round's answer times: latency × (1 ± SPREAD), evenly. */
const SPREAD = 0.5;

interface Round {
  latencyMs: number;
  spread: number;
  direct: Measured;
  /** A bare forwarder to the same upstream: what a proxy hop costs with no governance at all. */
  floor: Measured;
  gateway: Measured;
}

/** Sends the gateway's load through a server started with BENCH_UPSTREAM_URL, then stops it. */
async function through(name: string, upstreamOrigin: string): Promise<Measured> {
  const server = await startServer(name, { BENCH_UPSTREAM_URL: upstreamOrigin });
  try {
    return await measure("chat", server, load("/api/v1/chat/completions"));
  } finally {
    await server.stop();
  }
}

/** One upstream (answering after `latencyMs`), measured straight and through the gateway. */
async function round(latencyMs: number, spread = 0): Promise<Round> {
  const upstream = await startServer("upstream", {
    BENCH_UPSTREAM_LATENCY_MS: String(latencyMs),
    BENCH_UPSTREAM_SPREAD: String(spread),
  });
  try {
    const direct = await measure("chat", upstream, load("/chat/completions"));
    const floor = await through("forwarder", upstream.origin);
    return { latencyMs, spread, direct, floor, gateway: await through("gateway", upstream.origin) };
  } finally {
    await upstream.stop();
  }
}

function report(r: Round, judged: boolean, why = ""): void {
  const ratio = r.direct.rps > 0 ? r.gateway.rps / r.direct.rps : 0;
  const added = r.gateway.p50 - r.direct.p50;
  const after =
    r.spread > 0
      ? `${(r.latencyMs * (1 - r.spread)).toFixed(0)}–${(r.latencyMs * (1 + r.spread)).toFixed(0)} ms, evenly spread`
      : `${r.latencyMs} ms`;
  console.log(`
upstream answering after ${after}${judged ? "" : ` (for information: ${why})`}`);
  console.log("path                   req/s   p50 ms   p99 ms  non-2xx  errors  statuses");
  for (const [name, m] of [
    ["direct to upstream", r.direct],
    ["bare forwarder", r.floor],
    ["through the gateway", r.gateway],
  ] as const) {
    console.log(
      `${name.padEnd(20)} ${m.rps.toFixed(0).padStart(7)} ${m.p50.toFixed(2).padStart(8)} ${m.p99.toFixed(2).padStart(8)} ${String(m.non2xx).padStart(8)} ${String(m.errors).padStart(7)}  ${m.statuses}`,
    );
  }
  const verdict = (ok: boolean) => (judged ? (ok ? "met" : "MISSED") : "not judged");
  console.log(
    `ratio ${ratio.toFixed(2)} (target ≥ ${TARGET_RATIO}: ${verdict(ratio >= TARGET_RATIO)}); added p50 ${added.toFixed(2)} ms (target ≤ ${TARGET_ADDED_P50_MS} ms: ${verdict(added <= TARGET_ADDED_P50_MS)})`,
  );
  const floorRatio = r.direct.rps > 0 ? r.floor.rps / r.direct.rps : 0;
  console.log(
    `the bare forwarder, for comparison: ratio ${floorRatio.toFixed(2)}, added p50 ${(r.floor.p50 - r.direct.p50).toFixed(2)} ms (a proxy hop with no governance; the gateway's own share is ${(r.gateway.p50 - r.floor.p50).toFixed(2)} ms)`,
  );
}

async function main(): Promise<void> {
  console.log(
    `\ngateway bench: ${CONNECTIONS} connections, ${WARMUP} s warm-up + ${DURATION} s measured per row, Node ${process.version}`,
  );
  report(await round(0), false, "the gateway's own cost, no model time");
  report(await round(LATENCY_MS), true);
  report(await round(LATENCY_MS, SPREAD), false, "answer times that vary, as a model's do");
}

try {
  await main();
} catch (err) {
  console.error(`bench failed: ${err instanceof Error ? err.stack : String(err)}`);
}
process.exit(0);
