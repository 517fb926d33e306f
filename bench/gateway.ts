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
 * whole, the floor of relaying them.
 * A round per API the gateway governs besides chat (ALL_ROUNDS, one entry each: embeddings, Responses
 * native and Responses translated to chat), closed loop, instant upstream, the gateway without and
 * with the full guardrail, its CPU per request divided by the chat round's of the same policy and
 * run. A round whose route answers 404 prints "skipped: <route> not served" and is left out.
 * BENCH_ROUNDS (3) rounds, the paths' order reversed every other round; every figure is the median
 * over rounds. Ends with each target (ratios within this run; bench/README.md) and whether this run
 * met it: a miss is printed as one, not an error. A report: exits 0.
 */

import { BUILD, ensureBuilt } from "./build.js";
import {
  CONNECTIONS,
  DURATION,
  type Load,
  type Measured,
  measure,
  type ServerChild,
  startServer,
  WARMUP,
} from "./load.js";
import { type OpenLoopResult, openLoop } from "./open-loop.js";
import {
  BENCH_PROMPT,
  CHAT_ONLY_MODEL,
  chatBody,
  embeddingsBody,
  MESSAGES_MODEL,
  messagesBody,
  RESPONSES_MODEL,
  responsesBody,
} from "./shared.js";

const LATENCY_MS = Number(process.env.BENCH_UPSTREAM_LATENCY_MS ?? 20);
const ROUNDS = Math.max(1, Math.round(Number(process.env.BENCH_ROUNDS ?? 3)));
const OPEN_RATE = Number(process.env.BENCH_OPEN_RATE ?? 1000);
/** Paths or rounds to leave out, by name, comma-separated (BENCH_SKIP=portkey,portkey-guarded while profiling). */
const SKIP = new Set((process.env.BENCH_SKIP ?? "").split(",").filter(Boolean));

interface Path {
  name: string;
  label: string;
  /** Starts the path's server in front of the upstream at `origin`; null for the upstream itself. */
  start: ((origin: string) => Promise<ServerChild>) | null;
  /** The chat completions route on that server. */
  route: string;
  /** Also measured in the open-loop round (Portkey saturates a core below 1,000 req/s here). */
  open: boolean;
  /** It refuses a prompt a pattern matches: checked once, so a run cannot measure guardrails that guard nothing. */
  guarded: boolean;
}

const gateway = (policy: "none" | "full" | "answers") => (o: string) =>
  startServer("gateway", { BENCH_UPSTREAM_URL: o, BENCH_GATEWAY_POLICY: policy }, true);

const ALL_PATHS: Path[] = [
  {
    name: "direct",
    label: "direct to upstream",
    start: null,
    route: "/chat/completions",
    open: true,
    guarded: false,
  },
  {
    name: "forwarder",
    label: "bare forwarder",
    start: (o) => startServer("forwarder", { BENCH_UPSTREAM_URL: o }),
    route: "/v1/chat/completions",
    open: true,
    guarded: false,
  },
  {
    name: "fastify",
    label: "Fastify forwarder",
    start: (o) => startServer("fastify-forwarder", { BENCH_UPSTREAM_URL: o }),
    route: "/v1/chat/completions",
    open: true,
    guarded: false,
  },
  {
    name: "gateway-none",
    label: "gateway, no guardrail",
    start: gateway("none"),
    route: "/api/v1/chat/completions",
    open: true,
    guarded: false,
  },
  {
    name: "gateway-full",
    label: "gateway, full guardrail",
    start: gateway("full"),
    route: "/api/v1/chat/completions",
    open: true,
    guarded: true,
  },
  {
    // Measured only in the streamed round (docs/gateway.md#answer-streams).
    name: "gateway-answers",
    label: "gateway, answers redacted",
    start: gateway("answers"),
    route: "/api/v1/chat/completions",
    open: false,
    guarded: false,
  },
  {
    name: "portkey",
    label: "Portkey, no guardrail",
    start: (o) => startServer("portkey", { BENCH_UPSTREAM_URL: o }, true),
    route: "/v1/chat/completions",
    open: false,
    guarded: false,
  },
  {
    name: "portkey-guarded",
    label: "Portkey, 10 regexMatch",
    start: (o) => startServer("portkey", { BENCH_UPSTREAM_URL: o, BENCH_PORTKEY_GUARDRAILS: "1" }, true),
    route: "/v1/chat/completions",
    open: false,
    guarded: true,
  },
];
const PATHS = ALL_PATHS.filter((p) => !SKIP.has(p.name));

/**
 * One round: a load, its upstream and the paths it measures. A round per API the gateway governs is
 * one entry (`api`), measured on the gateway without and with the full guardrail and judged against
 * the chat round `versus` of the same run, path by path.
 */
interface Round {
  name: string;
  title: string;
  kind: "closed" | "open";
  /** The upstream's answer time. */
  latencyMs: number;
  /** The paths it measures. */
  measures: (p: Path) => boolean;
  /** The request it sends `path`, with `prompt` as its text. */
  load: (path: Path, prompt: string) => Load;
  /** In the first round, each guarded path must refuse a prompt a pattern matches. */
  checksRefusal: boolean;
  api?: {
    /** The gateway's route of that API: while the gateway answers 404 there, the round is skipped. */
    route: string;
    /** The chat round whose CPU per request it is judged against. */
    versus: string;
  };
}

const chatLoad = (path: Path, prompt: string): Load => ({
  path: path.route,
  method: "POST",
  body: chatBody(prompt),
});
const GATEWAYS = (p: Path) => p.name === "gateway-none" || p.name === "gateway-full";

/** An API round: the gateway's two policies on `route`, with `body(prompt)`, against the instant chat round. */
function apiRound(
  name: string,
  title: string,
  route: string,
  body: (prompt: string) => string,
  versus = "instant",
): Round {
  return {
    name,
    title,
    kind: "closed",
    latencyMs: 0,
    measures: GATEWAYS,
    load: (_path, prompt) => ({ path: route, method: "POST", body: body(prompt) }),
    checksRefusal: true,
    api: { route, versus },
  };
}

const ALL_ROUNDS: Round[] = [
  {
    name: "instant",
    title: "closed loop, instant upstream (medians over rounds; ratios are medians of each round's own)",
    kind: "closed",
    latencyMs: 0,
    measures: (p) => p.name !== "gateway-answers",
    load: chatLoad,
    checksRefusal: true,
  },
  {
    name: "model",
    title: `closed loop, upstream answering after ${LATENCY_MS} ms`,
    kind: "closed",
    latencyMs: LATENCY_MS,
    measures: (p) => p.name !== "gateway-answers",
    load: chatLoad,
    checksRefusal: false,
  },
  {
    name: "open",
    title: `open loop: ${OPEN_RATE} requests a second due, upstream answering after ${LATENCY_MS} ms`,
    kind: "open",
    latencyMs: LATENCY_MS,
    measures: (p) => p.open,
    load: chatLoad,
    checksRefusal: false,
  },
  {
    // The relay reads each event of the answer (about 300: the upstream echoes 2,000 characters a
    // word an event); the bare forwarder passes the stream's bytes on whole, the floor of relaying them.
    name: "streamed",
    title: "closed loop, streamed answers, instant upstream (no direct path: ÷direct is -)",
    kind: "closed",
    latencyMs: 0,
    measures: (p) => p.name === "forwarder" || GATEWAYS(p) || p.name === "gateway-answers",
    load: (path, prompt) => ({
      path: path.route,
      method: "POST",
      body: JSON.stringify({ ...(JSON.parse(chatBody(prompt)) as object), stream: true }),
    }),
    checksRefusal: false,
  },
  apiRound(
    "embeddings",
    "embeddings (POST /api/v1/embeddings), instant upstream",
    "/api/v1/embeddings",
    (prompt) => embeddingsBody(prompt),
  ),
  apiRound(
    "responses-native",
    `Responses (POST /api/v1/responses) to ${RESPONSES_MODEL}, whose provider speaks it, instant upstream`,
    "/api/v1/responses",
    (prompt) => responsesBody(prompt, RESPONSES_MODEL),
  ),
  apiRound(
    "responses-translated",
    `Responses (POST /api/v1/responses) to ${CHAT_ONLY_MODEL}, whose providers speak only chat (translated), instant upstream`,
    "/api/v1/responses",
    (prompt) => responsesBody(prompt, CHAT_ONLY_MODEL),
  ),
  apiRound(
    "messages-native",
    `Messages (POST /api/v1/messages) to ${MESSAGES_MODEL}, whose provider speaks it, instant upstream`,
    "/api/v1/messages",
    (prompt) => messagesBody(prompt, MESSAGES_MODEL),
  ),
  apiRound(
    "messages-translated",
    `Messages (POST /api/v1/messages) to ${CHAT_ONLY_MODEL}, whose providers speak only chat (translated), instant upstream`,
    "/api/v1/messages",
    (prompt) => messagesBody(prompt, CHAT_ONLY_MODEL),
  ),
  apiRound(
    "messages-native-streamed",
    `Messages streamed to ${MESSAGES_MODEL} (native), beside chat's streamed round`,
    "/api/v1/messages",
    (prompt) => messagesBody(prompt, MESSAGES_MODEL, true),
    "streamed",
  ),
  apiRound(
    "messages-translated-streamed",
    `Messages streamed to ${CHAT_ONLY_MODEL} (translated), beside chat's streamed round`,
    "/api/v1/messages",
    (prompt) => messagesBody(prompt, CHAT_ONLY_MODEL, true),
    "streamed",
  ),
];
/**
 * Rounds to run alone, by name, comma-separated (BENCH_ONLY=messages-translated-streamed, to profile
 * one round): an API round brings the chat round it is judged against. Unset: every round.
 */
const ONLY = new Set((process.env.BENCH_ONLY ?? "").split(",").filter(Boolean));
for (const r of ALL_ROUNDS) if (ONLY.has(r.name) && r.api) ONLY.add(r.api.versus);
const ROUNDS_RUN = ALL_ROUNDS.filter((r) => !SKIP.has(r.name) && (ONLY.size === 0 || ONLY.has(r.name)));

type Result = Measured | OpenLoopResult;
/** Each round's figures by path, one entry per round of the run (absent while a round is skipped). */
type Figures = Record<string, Result[]>;
const figures: Record<string, Figures> = {};
/** API rounds found not served (404), left out for the rest of the run. */
const unserved = new Set<string>();

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

/** The status and error message of one request of `load`. */
async function probe(server: ServerChild, load: Load): Promise<{ status: number; message: string }> {
  const res = await fetch(`${server.origin}${load.path}`, {
    method: "POST",
    headers: server.headers,
    body: load.body as string,
  });
  const text = await res.text();
  let message = "";
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } };
    if (typeof parsed.error?.message === "string") message = parsed.error.message;
  } catch {
    // Not JSON (Portkey's or the forwarder's own answers): the status says enough.
  }
  return { status: res.status, message };
}

/** A prompt one of the patterns matches: guarded paths must refuse it, or they guard nothing. */
const MATCHING_PROMPT = `${BENCH_PROMPT}\n\nSee PRJ-123456 for details.`;

async function runRound(round: Round, order: Path[], first: boolean): Promise<void> {
  if (unserved.has(round.name)) return;
  const upstream = await startServer("upstream", { BENCH_UPSTREAM_LATENCY_MS: String(round.latencyMs) });
  try {
    for (const path of order.filter(round.measures)) {
      const result = await withPath(path, upstream, async (server): Promise<Result | null> => {
        const load = round.load(path, BENCH_PROMPT);
        if (round.api) {
          const answer = await probe(server, load);
          if (answer.status === 404) {
            console.log(`  skipped: ${round.api.route} not served (${round.name}: 404 ${answer.message})`);
            unserved.add(round.name);
            return null;
          }
          if (answer.status < 200 || answer.status >= 300)
            console.log(`  ${round.name}, ${path.label}: status ${answer.status} ${answer.message}`);
        }
        if (first && round.checksRefusal && path.guarded) {
          const refused = await probe(server, round.load(path, MATCHING_PROMPT));
          console.log(
            `  ${round.name}, ${path.label} refuses a prompt a pattern matches: status ${refused.status}`,
          );
        }
        return round.kind === "open"
          ? openLoop(server, load, OPEN_RATE, WARMUP, DURATION)
          : measure(path.name, server, load);
      });
      if (result === null) return;
      const byPath = figures[round.name] ?? {};
      push(byPath, path.name, result);
      figures[round.name] = byPath;
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

/** The median of the finite values (a path that got no answer in a round has no figure there). */
function median(values: number[]): number {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Per-round ratios of one figure between two lists of results (index i: round i of the run). */
function ratios(a: Result[] | undefined, b: Result[] | undefined, pick: (x: Result) => number): number[] {
  const ys = b ?? [];
  return (a ?? []).map((x, i) => {
    const y = ys[i];
    return y === undefined ? Number.NaN : pick(x) / pick(y);
  });
}
/** CPU per answer; none without answers, so that a path that answered nothing never meets a target. */
const cpu = (x: Result) => (x.cpuPerRequest > 0 ? x.cpuPerRequest : Number.NaN);
const rps = (x: Result) => ("rps" in x ? x.rps : x.sentRate);

const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : "-");

const verdicts: string[] = [];
/** Figures printed beside the targets, which are no target themselves. */
const notes: string[] = [];
/** A target of this run: a miss is printed as one, never an error (the bench exits 0). */
function target(text: string, ratio: number, ok: (r: number) => boolean): void {
  const verdict = Number.isFinite(ratio) ? (ok(ratio) ? "met   " : "MISSED") : "n/a   ";
  verdicts.push(`${verdict}  ${text}`);
}

function closedReport(round: Round): void {
  const byPath = figures[round.name] ?? {};
  console.log(`\n${round.title}`);
  console.log(
    "path                       req/s  ÷direct  p50 ms  p99 ms  +p50 ms  +p99 ms  CPU µs/req  ÷forwarder  non-2xx  errors",
  );
  const direct = byPath.direct ?? [];
  for (const path of PATHS) {
    const ms = (byPath[path.name] ?? []) as Measured[];
    if (ms.length === 0) continue;
    const m = (k: keyof Measured) => median(ms.map((x) => x[k] as number));
    const addedP50 = median(ms.map((x, i) => x.p50 - (direct[i]?.p50 ?? Number.NaN)));
    const addedP99 = median(ms.map((x, i) => x.p99 - (direct[i]?.p99 ?? Number.NaN)));
    const rpsRatio = median(ratios(ms, byPath.direct, rps));
    const cpuRatio = median(ratios(ms, byPath.forwarder, cpu));
    const notDirect = path.name !== "direct";
    console.log(
      `${path.label.padEnd(24)} ${fmt(m("rps")).padStart(7)} ${fmt(rpsRatio, 2).padStart(8)} ${fmt(m("p50"), 2).padStart(7)} ${fmt(m("p99"), 2).padStart(7)} ${(notDirect ? fmt(addedP50, 2) : "").padStart(8)} ${(notDirect ? fmt(addedP99, 2) : "").padStart(8)} ${fmt(median(ms.map(cpu))).padStart(11)} ${(notDirect ? fmt(cpuRatio, 2) : "").padStart(11)} ${String(ms.reduce((s, x) => s + x.non2xx, 0)).padStart(8)} ${String(ms.reduce((s, x) => s + x.errors, 0)).padStart(7)}`,
    );
  }
}

function openReport(round: Round): void {
  const byPath = figures[round.name] ?? {};
  console.log(`\n${round.title}`);
  console.log(
    "path                      sent/s  answered  p50 ms  p99 ms  +p50 ms  +p99 ms  CPU µs/req  non-2xx  errors",
  );
  const direct = (byPath.direct ?? []) as OpenLoopResult[];
  const added = (name: string, k: "p50" | "p99") =>
    median(((byPath[name] ?? []) as OpenLoopResult[]).map((x, i) => x[k] - (direct[i]?.[k] ?? Number.NaN)));
  for (const path of PATHS.filter(round.measures)) {
    const rs = (byPath[path.name] ?? []) as OpenLoopResult[];
    if (rs.length === 0) continue;
    const m = (k: keyof OpenLoopResult) => median(rs.map((x) => x[k]));
    const notDirect = path.name !== "direct";
    console.log(
      `${path.label.padEnd(24)} ${fmt(m("sentRate")).padStart(7)} ${fmt(m("answered")).padStart(9)} ${fmt(m("p50"), 2).padStart(7)} ${fmt(m("p99"), 2).padStart(7)} ${(notDirect ? fmt(added(path.name, "p50"), 2) : "").padStart(8)} ${(notDirect ? fmt(added(path.name, "p99"), 2) : "").padStart(8)} ${fmt(median(rs.map(cpu))).padStart(11)} ${String(rs.reduce((s, x) => s + x.non2xx, 0)).padStart(8)} ${String(rs.reduce((s, x) => s + x.errors, 0)).padStart(7)}`,
    );
  }
  if (byPath["gateway-full"] && byPath.forwarder && byPath.direct) {
    const floor = added("forwarder", "p50");
    const p50 = added("gateway-full", "p50");
    const p99 = added("gateway-full", "p99");
    target(
      `open loop ${OPEN_RATE}/s: added p50 with the full guardrail ≤ the bare forwarder's + 0.3 ms (${fmt(p50, 2)} ≤ ${fmt(floor + 0.3, 2)} ms)`,
      p50 - floor,
      (d) => d <= 0.3,
    );
    target(
      `open loop ${OPEN_RATE}/s: added p99 with the full guardrail ≤ 2 ms (${fmt(p99, 2)} ms)`,
      p99,
      (v) => v <= 2,
    );
  }
}

/** An API round beside its chat round: the gateway's CPU per request, and its ratio to chat's, path by path. */
function apiReport(round: Round, versus: string): void {
  const byPath = figures[round.name] ?? {};
  const chat = figures[versus] ?? {};
  console.log(`\n${round.title}`);
  if (unserved.has(round.name)) {
    console.log(`  skipped: ${round.api?.route} not served`);
    return;
  }
  console.log(
    "path                       req/s  p50 ms  p99 ms  CPU µs/req  chat's µs/req  ÷chat  non-2xx  errors",
  );
  for (const path of PATHS.filter(round.measures)) {
    const ms = (byPath[path.name] ?? []) as Measured[];
    if (ms.length === 0) continue;
    const m = (k: keyof Measured) => median(ms.map((x) => x[k] as number));
    const chatCpu = median((chat[path.name] ?? []).map(cpu));
    const ratio = median(ratios(ms, chat[path.name], cpu));
    console.log(
      `${path.label.padEnd(24)} ${fmt(m("rps")).padStart(7)} ${fmt(m("p50"), 2).padStart(7)} ${fmt(m("p99"), 2).padStart(7)} ${fmt(median(ms.map(cpu))).padStart(11)} ${fmt(chatCpu).padStart(14)} ${fmt(ratio, 2).padStart(6)} ${String(ms.reduce((s, x) => s + x.non2xx, 0)).padStart(8)} ${String(ms.reduce((s, x) => s + x.errors, 0)).padStart(7)}`,
    );
    target(
      `${round.name}, ${path.label}: CPU per request ≤ 1.25× chat's (${fmt(ratio, 2)}×)`,
      ratio,
      (r) => r <= 1.25,
    );
  }
}

/** The targets of a chat round against the bare forwarder and Portkey (docs: bench/README.md). */
function judgeChat(round: Round): void {
  const byPath = figures[round.name] ?? {};
  const profile = round.name === "instant" ? "instant upstream" : `${round.latencyMs} ms upstream`;
  const toForwarder = (name: string) => median(ratios(byPath[name], byPath.forwarder, cpu));
  if (byPath["gateway-full"] && byPath.forwarder) {
    const r = toForwarder("gateway-full");
    target(
      `${profile}: CPU per request, full guardrail ≤ 2.5× the bare forwarder (${fmt(r, 2)}×)`,
      r,
      (x) => x <= 2.5,
    );
  }
  if (byPath["gateway-none"] && byPath.forwarder) {
    const r = toForwarder("gateway-none");
    target(
      `${profile}: CPU per request, no guardrail ≤ 1.7× the bare forwarder (${fmt(r, 2)}×)`,
      r,
      (x) => x <= 1.7,
    );
  }
  if (byPath["gateway-full"] && byPath["portkey-guarded"]) {
    const r = median(ratios(byPath["portkey-guarded"], byPath["gateway-full"], cpu));
    target(
      `${profile}: CPU per guarded request ≥ 10× less than Portkey with its 10 regexMatch (Portkey ${fmt(r, 1)}× ours)`,
      r,
      (x) => x >= 10,
    );
  }
  if (byPath.fastify && byPath.forwarder) {
    const floor = toForwarder("fastify");
    const none = median(ratios(byPath["gateway-none"], byPath.fastify, cpu));
    notes.push(
      `${profile}: the Fastify forwarder alone costs ${fmt(floor, 2)}× the bare forwarder's CPU; the gateway without a guardrail ${fmt(none, 2)}× the Fastify forwarder's`,
    );
  }
}

/**
 * Time to first token of a streamed answer, one request at a time (no load): from sending the
 * request to the first event carrying answer text, over `count` requests; the median in ms.
 */
async function firstToken(server: ServerChild, count: number): Promise<number> {
  const body = JSON.stringify({ ...(JSON.parse(chatBody(BENCH_PROMPT)) as object), stream: true });
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const res = await fetch(`${server.origin}/api/v1/chat/completions`, {
      method: "POST",
      headers: server.headers,
      body,
    });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let seen = "";
    let at = Number.NaN;
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      seen += decoder.decode(r.value, { stream: true });
      if (Number.isNaN(at) && /"content":"[^"]/.test(seen)) at = performance.now() - started;
    }
    times.push(at);
  }
  return median(times);
}

/** Answer filters on a stream: CPU beside the same stream without them, and the first token's delay. */
async function answerStreams(): Promise<void> {
  if (SKIP.has("gateway-answers") || SKIP.has("streamed")) return;
  const byPath = figures.streamed ?? {};
  if (byPath["gateway-answers"] && byPath["gateway-none"]) {
    const r = median(ratios(byPath["gateway-answers"], byPath["gateway-none"], cpu));
    target(
      `streamed answers: CPU per request with answer redaction ≤ 1.5× the same stream without answer filters (${fmt(r, 2)}×)`,
      r,
      (x) => x <= 1.5,
    );
  }
  const upstream = await startServer("upstream", { BENCH_UPSTREAM_LATENCY_MS: "0" });
  try {
    const ttft: Record<string, number> = {};
    for (const name of ["gateway-none", "gateway-answers"]) {
      const path = ALL_PATHS.find((p) => p.name === name) as Path;
      ttft[name] = await withPath(path, upstream, (server) => firstToken(server, 200));
    }
    console.log(
      `
streamed answers, time to first token (median of 200 requests one at a time): without answer filters ${fmt(ttft["gateway-none"] as number, 2)} ms, with answer redaction ${fmt(ttft["gateway-answers"] as number, 2)} ms`,
    );
  } finally {
    await upstream.stop();
  }
}

function judgeStreamed(round: Round): void {
  const byPath = figures[round.name] ?? {};
  for (const path of PATHS.filter((p) => GATEWAYS(p))) {
    if (!byPath[path.name] || !byPath.forwarder) continue;
    const r = median(ratios(byPath[path.name], byPath.forwarder, cpu));
    target(
      `streamed answers: CPU per request, ${path.label.replace("gateway, ", "")} ≤ 1.5× the bare forwarder's (${fmt(r, 2)}×)`,
      r,
      (x) => x <= 1.5,
    );
  }
}

async function main(): Promise<void> {
  ensureBuilt();
  console.log(
    `\ngateway bench: ${CONNECTIONS} connections closed loop, ${OPEN_RATE}/s open loop, ${WARMUP} s warm-up + ${DURATION} s measured per path, ${ROUNDS} rounds, the service's ${BUILD} build, Node ${process.version}`,
  );
  console.log(`rounds: ${ROUNDS_RUN.map((r) => r.name).join(", ")}`);
  for (let i = 0; i < ROUNDS; i++) {
    const order = i % 2 === 0 ? PATHS : [...PATHS].reverse();
    console.log(`round ${i + 1} of ${ROUNDS}: ${order.map((p) => p.name).join(", ")}`);
    for (const round of ROUNDS_RUN) await runRound(round, order, i === 0);
  }
  for (const round of ROUNDS_RUN) {
    if (round.api) apiReport(round, round.api.versus);
    else if (round.kind === "open") openReport(round);
    else closedReport(round);
    if (round.name === "instant" || round.name === "model") judgeChat(round);
    if (round.name === "streamed") judgeStreamed(round);
  }
  await answerStreams();
  console.log("\ntargets, all ratios within this run (the decision alone is judged by bench/decision.ts):");
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
