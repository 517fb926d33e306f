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
 * Time to first token (round `ttft`, once, after the others): a paced upstream
 * (bench/servers/paced-upstream.ts, BENCH_PACE_EVENTS pieces of BENCH_PACE_CHARS characters, one
 * every BENCH_PACE_MS) and the gateway without answer filters, with `email` redacting answers and
 * with the answers policy, one request at a time: the first token's delay beside the bound the
 * window W of each policy sets (docs/gateway.md#answer-streams), and CPU per request.
 * BENCH_ROUNDS (3) rounds, the paths' order reversed every other round; every figure is the median
 * over rounds. BENCH_ONLY names the rounds to run (BENCH_ONLY=streamed,ttft). Ends with each target (ratios within this run; bench/README.md) and whether this run
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
/** The rounds to run, by name, comma-separated (BENCH_ONLY=ttft, BENCH_ONLY=streamed,ttft); every one when unset. */
const ONLY = new Set((process.env.BENCH_ONLY ?? "").split(",").filter(Boolean));
/** Whether the round `name` runs: chosen by BENCH_ONLY (or it is unset) and not left out by BENCH_SKIP. */
const runs = (name: string) => (ONLY.size === 0 || ONLY.has(name)) && !SKIP.has(name);
/** The paced stream's shape (bench/servers/paced-upstream.ts): one piece of PACE_CHARS every PACE_MS, PACE_EVENTS of them. */
const PACE_MS = Number(process.env.BENCH_PACE_MS ?? 2);
const PACE_CHARS = Math.round(Number(process.env.BENCH_PACE_CHARS ?? 4));
const PACE_EVENTS = Math.round(Number(process.env.BENCH_PACE_EVENTS ?? 400));
/** Requests per variant in the time-to-first-token round, one at a time. */
const TTFT_REQUESTS = Math.max(1, Math.round(Number(process.env.BENCH_TTFT_REQUESTS ?? 15)));
/** What the first token's delay may exceed the hold-back's own by: the relay's and the timers' jitter. */
const TTFT_TOLERANCE_MS = Number(process.env.BENCH_TTFT_TOLERANCE_MS ?? 5);

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

const gateway = (policy: "none" | "full" | "answers" | "email-answers") => (o: string) =>
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
// An API round named in BENCH_ONLY brings the chat round it is judged against.
for (const r of ALL_ROUNDS) if (ONLY.has(r.name) && r.api) ONLY.add(r.api.versus);
const ROUNDS_RUN = ALL_ROUNDS.filter((r) => runs(r.name));

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
  const times: number[] = [];
  for (let i = 0; i < count; i++) times.push((await streamTimes(server)).first);
  return median(times);
}

const STREAMED_BODY = JSON.stringify({ ...(JSON.parse(chatBody(BENCH_PROMPT)) as object), stream: true });

/**
 * One streamed chat request: ms from sending it to the first event carrying answer text (NaN when
 * none came), and to the stream's end.
 */
async function streamTimes(server: ServerChild): Promise<{ first: number; end: number }> {
  const started = performance.now();
  const res = await fetch(`${server.origin}/api/v1/chat/completions`, {
    method: "POST",
    headers: server.headers,
    body: STREAMED_BODY,
  });
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let seen = "";
  let first = Number.NaN;
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    if (!Number.isNaN(first)) continue;
    seen += decoder.decode(r.value, { stream: true });
    if (/"content":"[^"]/.test(seen)) first = performance.now() - started;
  }
  return { first, end: performance.now() - started };
}

/** A gateway variant of the time-to-first-token round. */
interface PacedVariant {
  label: string;
  policy: "none" | "answers" | "email-answers";
}

const PACED_VARIANTS: PacedVariant[] = [
  { label: "no answer filter", policy: "none" },
  { label: "email redacted in answers", policy: "email-answers" },
  { label: "answers redacted (bench set)", policy: "answers" },
];

/**
 * Time to first token against a paced upstream (docs/gateway.md#answer-streams): the answer comes
 * PACE_CHARS characters every PACE_MS, so a window that holds W + W/8 characters back before its
 * first scan holds the first token for that many characters' worth of events. Each variant is a
 * gateway of its own, all up at once; the requests go one at a time, the variants taking turns (the
 * order reversed every other turn), so drift on the shared machine reaches each alike. CPU per
 * request is each gateway's CPU while its own requests ran ÷ their count: over a stream that lasts
 * the whole pacing it counts the relay's wake-up and write per event, and the process's idle work.
 */
async function pacedFirstToken(): Promise<void> {
  const upstream = await startServer("paced-upstream", {
    BENCH_PACE_MS: String(PACE_MS),
    BENCH_PACE_CHARS: String(PACE_CHARS),
    BENCH_PACE_EVENTS: String(PACE_EVENTS),
  });
  const servers: ServerChild[] = [];
  try {
    for (const v of PACED_VARIANTS) servers.push(await gateway(v.policy)(upstream.origin));
    // Warm-up: the first requests compile the relay's and the window's code.
    for (let i = 0; i < 3; i++) for (const s of servers) await streamTimes(s);
    const first: number[][] = servers.map(() => []);
    const end: number[][] = servers.map(() => []);
    const cpuUsed = servers.map(() => 0);
    for (let i = 0; i < TTFT_REQUESTS; i++) {
      const turn = servers.map((_, j) => j);
      if (i % 2 === 1) turn.reverse();
      for (const j of turn) {
        const server = servers[j] as ServerChild;
        // CPU read around each request, so a gateway's idle time during the others' turns is not counted.
        const before = await server.cpu();
        const t = await streamTimes(server);
        cpuUsed[j] = (cpuUsed[j] ?? 0) + (await server.cpu()) - before;
        first[j]?.push(t.first);
        end[j]?.push(t.end);
      }
    }
    const cpuPer = cpuUsed.map((used) => used / TTFT_REQUESTS);
    const baseFirst = median(first[0] ?? []);
    const baseCpu = cpuPer[0] ?? Number.NaN;
    console.log(
      `
time to first token, paced upstream: ${PACE_EVENTS} events of ${PACE_CHARS} characters, one every ${PACE_MS} ms; median of ${TTFT_REQUESTS} requests one at a time per variant, the variants taking turns`,
    );
    console.log(
      "gateway                          W  W+W/8  events held  TTFT ms  +TTFT ms  bound ms  stream ms  CPU µs/req  ÷none",
    );
    PACED_VARIANTS.forEach((v, j) => {
      const server = servers[j] as ServerChild;
      const w = server.answerWindow ?? 0;
      const ttft = median(first[j] ?? []);
      const cpuRatio = (cpuPer[j] ?? Number.NaN) / baseCpu;
      const filtered = w > 0;
      // The first scan waits for W + W/8 characters (src/domain/answer-window.ts): the events that
      // carry them, the first of which leaves at once; at most all the stream's events.
      const threshold = w + w / 8;
      const held = filtered ? Math.min(PACE_EVENTS, Math.ceil(threshold / PACE_CHARS)) : 0;
      const bound = held * PACE_MS + TTFT_TOLERANCE_MS;
      const extra = ttft - baseFirst;
      console.log(
        `${v.label.padEnd(30)} ${String(w).padStart(4)} ${fmt(threshold).padStart(6)} ${String(held).padStart(12)} ${fmt(ttft, 2).padStart(8)} ${(filtered ? fmt(extra, 2) : "").padStart(9)} ${(filtered ? fmt(bound, 0) : "").padStart(9)} ${fmt(median(end[j] ?? []), 1).padStart(10)} ${fmt(cpuPer[j] ?? Number.NaN).padStart(11)} ${(filtered ? fmt(cpuRatio, 2) : "").padStart(6)}`,
      );
      if (!filtered) return;
      target(
        `paced stream, ${v.label}: first token later by ≤ the hold-back's ${held} events × ${PACE_MS} ms + ${TTFT_TOLERANCE_MS} ms (W ${w}: +${fmt(extra, 2)} ≤ ${fmt(bound, 0)} ms)`,
        extra - bound,
        (d) => d <= 0,
      );
      target(
        `paced stream, ${v.label}: CPU per request ≤ 1.5× the same stream without answer filters (${fmt(cpuRatio, 2)}×)`,
        cpuRatio,
        (r) => r <= 1.5,
      );
    });
  } finally {
    for (const s of servers) await s.stop();
    await upstream.stop();
  }
}

/** Answer filters on a stream: CPU beside the same stream without them, and the first token's delay. */
async function answerStreams(): Promise<void> {
  if (SKIP.has("gateway-answers") || !runs("streamed")) return;
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
  console.log(`rounds: ${[...ROUNDS_RUN.map((r) => r.name), ...(runs("ttft") ? ["ttft"] : [])].join(", ")}`);
  for (let i = 0; i < ROUNDS && ROUNDS_RUN.length > 0; i++) {
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
  if (runs("ttft")) await pacedFirstToken();
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
