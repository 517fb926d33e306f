/**
 * Benchmark: the governed request path's cost, each figure beside its baselines measured in the same
 * run (the machine is shared and its absolute figures drift; ratios within one run do not).
 *
 * Paths, each a server in its own Node process, all to one upstream child (bench/servers/upstream.ts):
 * - direct to the upstream;
 * - the bare forwarder (bench/servers/forwarder.ts: Node's HTTP server and an undici pool, nothing
 *   else), the floor of any Node proxy hop;
 * - the same forwarder on Fastify, parsing and serializing the JSON body (bench/servers/fastify-forwarder.ts):
 *   the floor of the gateway's framework before any governance;
 * - this gateway with no guardrail, and with the full guardrail (a budget, the nine builtin filters
 *   and ten custom patterns, all on block: bench/servers/gateway.ts);
 * - Portkey's open-source gateway from npm, bare and with the same ten patterns as regexMatch input
 *   guardrails on deny (bench/servers/portkey.ts).
 * The request carries a 4 KB prompt (bench/shared.ts) that nothing matches, so every filter scans
 * all of it and the request is still forwarded.
 *
 * Closed loop (autocannon, BENCH_CONNECTIONS = 50) with an instant upstream and one answering after
 * BENCH_UPSTREAM_LATENCY_MS (20): throughput, p50/p99, and the server's CPU µs per request (its
 * process.cpuUsage() over the measured window ÷ answers). Open loop (bench/open-loop.ts) at
 * BENCH_OPEN_RATE a second (1,000) to the 20 ms upstream: latency from each request's due time.
 * Streamed (closed loop, instant upstream, the same request with `"stream": true`): the bare
 * forwarder and the gateway, whose relay reads each event of the answer (about 300 of them: the
 * upstream echoes 2,000 characters a word an event); the forwarder passes the stream's bytes on
 * whole, the floor of relaying them. Reported beside the targets, not judged.
 * BENCH_ROUNDS (3) rounds, the paths' order reversed every other round; every figure is the median
 * over rounds. Ends with each target and whether this run met it. A report: exits 0.
 */

import { BUILD, ensureBuilt } from "./build.js";
import {
  CONNECTIONS,
  DURATION,
  type Measured,
  measure,
  type ServerChild,
  startServer,
  WARMUP,
} from "./load.js";
import { type OpenLoopResult, openLoop } from "./open-loop.js";
import { promptLoad } from "./shared.js";

const LATENCY_MS = Number(process.env.BENCH_UPSTREAM_LATENCY_MS ?? 20);
const ROUNDS = Math.max(1, Math.round(Number(process.env.BENCH_ROUNDS ?? 3)));
const OPEN_RATE = Number(process.env.BENCH_OPEN_RATE ?? 1000);
/** Paths to leave out, by name, comma-separated (BENCH_SKIP=portkey,portkey-guarded while profiling). */
const SKIP = new Set((process.env.BENCH_SKIP ?? "").split(",").filter(Boolean));

interface Path {
  name: string;
  label: string;
  /** Starts the path's server in front of the upstream at `origin`; null for the upstream itself. */
  start: ((origin: string) => Promise<ServerChild>) | null;
  /** The request path on that server. */
  route: string;
  /** Also measured in the open-loop round (Portkey saturates a core below 1,000 req/s here). */
  open: boolean;
}

const ALL_PATHS: Path[] = [
  { name: "direct", label: "direct to upstream", start: null, route: "/chat/completions", open: true },
  {
    name: "forwarder",
    label: "bare forwarder",
    start: (o) => startServer("forwarder", { BENCH_UPSTREAM_URL: o }),
    route: "/v1/chat/completions",
    open: true,
  },
  {
    name: "fastify",
    label: "Fastify forwarder",
    start: (o) => startServer("fastify-forwarder", { BENCH_UPSTREAM_URL: o }),
    route: "/v1/chat/completions",
    open: true,
  },
  {
    name: "gateway-none",
    label: "gateway, no guardrail",
    start: (o) => startServer("gateway", { BENCH_UPSTREAM_URL: o, BENCH_GATEWAY_POLICY: "none" }, true),
    route: "/api/v1/chat/completions",
    open: true,
  },
  {
    name: "gateway-full",
    label: "gateway, full guardrail",
    start: (o) => startServer("gateway", { BENCH_UPSTREAM_URL: o, BENCH_GATEWAY_POLICY: "full" }, true),
    route: "/api/v1/chat/completions",
    open: true,
  },
  {
    name: "portkey",
    label: "Portkey, no guardrail",
    start: (o) => startServer("portkey", { BENCH_UPSTREAM_URL: o }, true),
    route: "/v1/chat/completions",
    open: false,
  },
  {
    name: "portkey-guarded",
    label: "Portkey, 10 regexMatch",
    start: (o) => startServer("portkey", { BENCH_UPSTREAM_URL: o, BENCH_PORTKEY_GUARDRAILS: "1" }, true),
    route: "/v1/chat/completions",
    open: false,
  },
];
const PATHS = ALL_PATHS.filter((p) => !SKIP.has(p.name));

type Figures = Record<string, Measured[]>;

/** Runs `work` with the path's server (or the upstream itself) and stops the server afterwards. */
async function withPath<T>(
  path: Path,
  upstream: ServerChild,
  work: (s: ServerChild) => Promise<T>,
): Promise<T> {
  if (!path.start) return work(upstream);
  const server = await path.start(upstream.origin);
  try {
    return await work(server);
  } finally {
    await server.stop();
  }
}

/** A prompt one of the patterns matches: guarded paths must refuse it, or they guard nothing. */
async function refusesMatch(server: ServerChild, route: string): Promise<number> {
  const body = JSON.parse(promptLoad(route).body) as { messages: { content: string }[] };
  const last = body.messages[body.messages.length - 1];
  if (last) last.content += "\n\nSee PRJ-123456 for details.";
  const res = await fetch(`${server.origin}${route}`, {
    method: "POST",
    headers: server.headers,
    body: JSON.stringify(body),
  });
  await res.arrayBuffer();
  return res.status;
}

async function closedRound(
  latencyMs: number,
  order: Path[],
  figures: Figures,
  check: boolean,
): Promise<void> {
  const upstream = await startServer("upstream", { BENCH_UPSTREAM_LATENCY_MS: String(latencyMs) });
  try {
    for (const path of order) {
      const m = await withPath(path, upstream, async (server) => {
        if (check && path.name.endsWith("-full")) {
          console.log(
            `  ${path.label} refuses a prompt a pattern matches: status ${await refusesMatch(server, path.route)}`,
          );
        }
        if (check && path.name === "portkey-guarded") {
          console.log(
            `  ${path.label} refuses a prompt a pattern matches: status ${await refusesMatch(server, path.route)}`,
          );
        }
        return measure(path.name, server, promptLoad(path.route));
      });
      push(figures, path.name, m);
    }
  } finally {
    await upstream.stop();
  }
}

/** The paths measured again with streamed answers: the relay's cost beside the forwarder's. */
const STREAMED = new Set(["forwarder", "gateway-none", "gateway-full"]);

/** The bench's request with `"stream": true`. */
function streamLoad(route: string): ReturnType<typeof promptLoad> {
  const load = promptLoad(route);
  return { ...load, body: JSON.stringify({ ...(JSON.parse(load.body) as object), stream: true }) };
}

async function streamRound(order: Path[], figures: Figures): Promise<void> {
  const upstream = await startServer("upstream", { BENCH_UPSTREAM_LATENCY_MS: "0" });
  try {
    for (const path of order.filter((p) => STREAMED.has(p.name))) {
      const m = await withPath(path, upstream, (server) =>
        measure(path.name, server, streamLoad(path.route)),
      );
      push(figures, path.name, m);
    }
  } finally {
    await upstream.stop();
  }
}

async function openRound(order: Path[], results: Record<string, OpenLoopResult[]>): Promise<void> {
  const upstream = await startServer("upstream", { BENCH_UPSTREAM_LATENCY_MS: String(LATENCY_MS) });
  try {
    for (const path of order.filter((p) => p.open)) {
      const r = await withPath(path, upstream, (server) =>
        openLoop(server, promptLoad(path.route), OPEN_RATE, WARMUP, DURATION),
      );
      push(results, path.name, r);
    }
  } finally {
    await upstream.stop();
  }
}

function push<T>(into: Record<string, T[]>, name: string, value: T): void {
  const list = into[name] ?? [];
  list.push(value);
  into[name] = list;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Per-round ratios of one figure between two paths (same round, same upstream). */
function ratios<T>(figures: Record<string, T[]>, a: string, b: string, pick: (x: T) => number): number[] {
  const ys = figures[b] ?? [];
  return (figures[a] ?? []).map((x, i) => {
    const y = ys[i];
    return y === undefined ? Number.NaN : pick(x) / pick(y);
  });
}

const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : "-");

const verdicts: string[] = [];
/** Figures printed beside the targets, which are no target themselves. */
const notes: string[] = [];
function target(text: string, ok: boolean): void {
  verdicts.push(`${ok ? "met   " : "MISSED"}  ${text}`);
}

function closedReport(title: string, figures: Figures): void {
  console.log(`\n${title}`);
  console.log(
    "path                       req/s  ÷direct  p50 ms  p99 ms  +p50 ms  +p99 ms  CPU µs/req  ÷forwarder  non-2xx  errors",
  );
  const direct = figures.direct ?? [];
  for (const path of PATHS) {
    const ms = figures[path.name] ?? [];
    if (ms.length === 0) continue;
    const m = (k: keyof Measured) => median(ms.map((x) => x[k] as number));
    const addedP50 = median(ms.map((x, i) => x.p50 - (direct[i]?.p50 ?? Number.NaN)));
    const addedP99 = median(ms.map((x, i) => x.p99 - (direct[i]?.p99 ?? Number.NaN)));
    const rpsRatio = median(ratios(figures, path.name, "direct", (x) => x.rps));
    const cpuRatio = median(ratios(figures, path.name, "forwarder", (x) => x.cpuPerRequest));
    console.log(
      `${path.label.padEnd(24)} ${fmt(m("rps")).padStart(7)} ${fmt(rpsRatio, 2).padStart(8)} ${fmt(m("p50"), 2).padStart(7)} ${fmt(m("p99"), 2).padStart(7)} ${(path.name === "direct" ? "" : fmt(addedP50, 2)).padStart(8)} ${(path.name === "direct" ? "" : fmt(addedP99, 2)).padStart(8)} ${fmt(m("cpuPerRequest")).padStart(11)} ${(path.name === "direct" ? "" : fmt(cpuRatio, 2)).padStart(11)} ${String(ms.reduce((s, x) => s + x.non2xx, 0)).padStart(8)} ${String(ms.reduce((s, x) => s + x.errors, 0)).padStart(7)}`,
    );
  }
}

function judgeClosed(profile: string, figures: Figures, judgeThroughput: boolean): void {
  const cpuFull = median(ratios(figures, "gateway-full", "forwarder", (x) => x.cpuPerRequest));
  const cpuNone = median(ratios(figures, "gateway-none", "forwarder", (x) => x.cpuPerRequest));
  if (figures["gateway-full"] && figures.forwarder)
    target(
      `${profile}: CPU per request, full guardrail ≤ 2.0× the bare forwarder (${fmt(cpuFull, 2)}×)`,
      cpuFull <= 2,
    );
  if (figures["gateway-none"] && figures.forwarder)
    target(
      `${profile}: CPU per request, no guardrail ≤ 1.5× the bare forwarder (${fmt(cpuNone, 2)}×)`,
      cpuNone <= 1.5,
    );
  if (figures.fastify && figures.forwarder) {
    const floor = median(ratios(figures, "fastify", "forwarder", (x) => x.cpuPerRequest));
    const none = median(ratios(figures, "gateway-none", "fastify", (x) => x.cpuPerRequest));
    notes.push(
      `${profile}: the Fastify forwarder alone costs ${fmt(floor, 2)}× the bare forwarder's CPU; the gateway without a guardrail ${fmt(none, 2)}× the Fastify forwarder's`,
    );
  }
  if (judgeThroughput && figures["gateway-full"] && figures.direct) {
    const rps = median(ratios(figures, "gateway-full", "direct", (x) => x.rps));
    target(`${profile}: throughput with the full guardrail ≥ 0.93× direct (${fmt(rps, 2)}×)`, rps >= 0.93);
  }
  if (figures["gateway-full"] && figures["portkey-guarded"]) {
    const each = ratios(figures, "gateway-full", "portkey-guarded", (x) => x.rps);
    target(
      `${profile}: throughput ≥ 3× Portkey with equivalent guardrails, every round (${each.map((r) => `${fmt(r, 1)}×`).join(", ")})`,
      each.every((r) => r >= 3),
    );
  }
}

function openReport(results: Record<string, OpenLoopResult[]>): void {
  console.log(`\nopen loop: ${OPEN_RATE} requests a second due, upstream answering after ${LATENCY_MS} ms`);
  console.log(
    "path                      sent/s  answered  p50 ms  p99 ms  +p50 ms  +p99 ms  CPU µs/req  non-2xx  errors",
  );
  const direct = results.direct ?? [];
  const added = (name: string, k: "p50" | "p99") =>
    median((results[name] ?? []).map((x, i) => x[k] - (direct[i]?.[k] ?? Number.NaN)));
  for (const path of PATHS.filter((p) => p.open)) {
    const rs = results[path.name] ?? [];
    if (rs.length === 0) continue;
    const m = (k: keyof OpenLoopResult) => median(rs.map((x) => x[k]));
    const notDirect = path.name !== "direct";
    console.log(
      `${path.label.padEnd(24)} ${fmt(m("sentRate")).padStart(7)} ${fmt(m("answered")).padStart(9)} ${fmt(m("p50"), 2).padStart(7)} ${fmt(m("p99"), 2).padStart(7)} ${(notDirect ? fmt(added(path.name, "p50"), 2) : "").padStart(8)} ${(notDirect ? fmt(added(path.name, "p99"), 2) : "").padStart(8)} ${fmt(m("cpuPerRequest")).padStart(11)} ${String(rs.reduce((s, x) => s + x.non2xx, 0)).padStart(8)} ${String(rs.reduce((s, x) => s + x.errors, 0)).padStart(7)}`,
    );
  }
  if (results["gateway-full"] && results.forwarder && results.direct) {
    const floor = added("forwarder", "p50");
    const p50 = added("gateway-full", "p50");
    const p99 = added("gateway-full", "p99");
    target(
      `open loop ${OPEN_RATE}/s: added p50 with the full guardrail ≤ the bare forwarder's + 0.3 ms (${fmt(p50, 2)} ≤ ${fmt(floor + 0.3, 2)} ms)`,
      p50 <= floor + 0.3,
    );
    target(
      `open loop ${OPEN_RATE}/s: added p99 with the full guardrail ≤ 2 ms (${fmt(p99, 2)} ms)`,
      p99 <= 2,
    );
  }
}

async function main(): Promise<void> {
  ensureBuilt();
  console.log(
    `\ngateway bench: ${CONNECTIONS} connections closed loop, ${OPEN_RATE}/s open loop, ${WARMUP} s warm-up + ${DURATION} s measured per path, ${ROUNDS} rounds, the service's ${BUILD} build, Node ${process.version}`,
  );
  const instant: Figures = {};
  const model: Figures = {};
  const open: Record<string, OpenLoopResult[]> = {};
  const streamed: Figures = {};
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? PATHS : [...PATHS].reverse();
    console.log(`round ${round + 1} of ${ROUNDS}: ${order.map((p) => p.name).join(", ")}`);
    await closedRound(0, order, instant, round === 0);
    await closedRound(LATENCY_MS, order, model, false);
    await openRound(order, open);
    await streamRound(order, streamed);
  }
  closedReport(
    "closed loop, instant upstream (medians over rounds; ratios are medians of each round's own)",
    instant,
  );
  closedReport(`closed loop, upstream answering after ${LATENCY_MS} ms`, model);
  openReport(open);
  closedReport("closed loop, streamed answers, instant upstream (no direct path: ÷direct is -)", streamed);
  for (const name of ["gateway-none", "gateway-full"]) {
    if (!streamed[name] || !streamed.forwarder) continue;
    const cpu = median(ratios(streamed, name, "forwarder", (x) => x.cpuPerRequest));
    notes.push(`streamed answers: ${name} costs ${fmt(cpu, 2)}× the bare forwarder's CPU per request`);
  }
  judgeClosed("instant upstream", instant, false);
  judgeClosed(`${LATENCY_MS} ms upstream`, model, true);
  console.log("\ntargets (the decision alone is judged by bench/decision.ts):");
  for (const v of verdicts) console.log(`  ${v}`);
  if (notes.length > 0) console.log("\nfloors (not targets):");
  for (const n of notes) console.log(`  ${n}`);
}

try {
  await main();
} catch (err) {
  console.error(`bench failed: ${err instanceof Error ? err.stack : String(err)}`);
}
process.exit(0);
