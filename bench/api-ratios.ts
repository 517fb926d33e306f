/**
 * Benchmark: each governed API's CPU per request beside chat's, measured on one gateway process
 * that serves them all, in short batches taken in turn. bench/gateway.ts measures each API on a
 * server of its own, minutes apart; on a machine shared with other work its load moves in between,
 * and so do the ratios. Here a batch of each API follows a batch of chat on the same process, over
 * and over, and each ratio is taken between neighbouring batches, so a change of load reaches both
 * sides of a ratio alike. bench/README.md#api-ratios.
 *
 * BENCH_GATEWAY_POLICY (none | full | both, default both), BENCH_RATIO_REPEATS (12 batches of each),
 * BENCH_RATIO_BATCH (400 requests a batch), BENCH_RATIO_CONNECTIONS (10), BENCH_ONLY (API names, each
 * with its chat load; default all). A report: exits 0.
 */
import autocannon from "autocannon";
import { BUILD, ensureBuilt } from "./build.js";
import { type ServerChild, startServer } from "./load.js";
import {
  BENCH_PROMPT,
  CHAT_ONLY_MODEL,
  chatBody,
  MESSAGES_MODEL,
  messagesBody,
  RESPONSES_MODEL,
  responsesBody,
} from "./shared.js";

const REPEATS = Math.max(1, Math.round(Number(process.env.BENCH_RATIO_REPEATS ?? 12)));
const BATCH = Math.max(10, Math.round(Number(process.env.BENCH_RATIO_BATCH ?? 400)));
const CONNECTIONS = Math.max(1, Math.round(Number(process.env.BENCH_RATIO_CONNECTIONS ?? 10)));
const POLICIES = (
  process.env.BENCH_GATEWAY_POLICY === "none" || process.env.BENCH_GATEWAY_POLICY === "full"
    ? [process.env.BENCH_GATEWAY_POLICY]
    : ["none", "full"]
) as ("none" | "full")[];

interface Api {
  name: string;
  path: string;
  body: string;
  /** The chat load it is judged against. */
  versus: string;
}

const streamed = (body: string) => JSON.stringify({ ...(JSON.parse(body) as object), stream: true });
const ALL_APIS: Api[] = [
  { name: "chat", path: "/api/v1/chat/completions", body: chatBody(BENCH_PROMPT), versus: "chat" },
  {
    name: "chat-streamed",
    path: "/api/v1/chat/completions",
    body: streamed(chatBody(BENCH_PROMPT)),
    versus: "chat-streamed",
  },
  {
    name: "messages-native",
    path: "/api/v1/messages",
    body: messagesBody(BENCH_PROMPT, MESSAGES_MODEL),
    versus: "chat",
  },
  {
    name: "messages-translated",
    path: "/api/v1/messages",
    body: messagesBody(BENCH_PROMPT, CHAT_ONLY_MODEL),
    versus: "chat",
  },
  {
    name: "messages-native-streamed",
    path: "/api/v1/messages",
    body: messagesBody(BENCH_PROMPT, MESSAGES_MODEL, true),
    versus: "chat-streamed",
  },
  {
    name: "messages-translated-streamed",
    path: "/api/v1/messages",
    body: messagesBody(BENCH_PROMPT, CHAT_ONLY_MODEL, true),
    versus: "chat-streamed",
  },
  {
    name: "responses-native",
    path: "/api/v1/responses",
    body: responsesBody(BENCH_PROMPT, RESPONSES_MODEL),
    versus: "chat",
  },
  {
    name: "responses-translated",
    path: "/api/v1/responses",
    body: responsesBody(BENCH_PROMPT, CHAT_ONLY_MODEL),
    versus: "chat",
  },
];

/**
 * APIs to measure alone, by name, comma-separated (BENCH_ONLY=messages-translated-streamed): each
 * brings the chat load it is judged against. Unset: every API.
 */
const ONLY = new Set((process.env.BENCH_ONLY ?? "").split(",").filter(Boolean));
for (const api of ALL_APIS) if (ONLY.has(api.name)) ONLY.add(api.versus);
const APIS = ALL_APIS.filter((api) => ONLY.size === 0 || ONLY.has(api.name));

/** One batch of `api` on `server`: the server's CPU µs per answer, and the answers that were not 2xx. */
async function batch(server: ServerChild, api: Api): Promise<{ cpu: number; non2xx: number }> {
  const before = await server.cpu();
  const result = await autocannon({
    url: `${server.origin}${api.path}`,
    connections: CONNECTIONS,
    amount: BATCH,
    method: "POST",
    headers: server.headers,
    body: api.body,
  });
  const used = (await server.cpu()) - before;
  const answered = result["2xx"] + result.non2xx;
  return { cpu: answered > 0 ? used / answered : Number.NaN, non2xx: result.non2xx };
}

function median(values: number[]): number {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

async function run(policy: "none" | "full", upstream: ServerChild): Promise<void> {
  const server = await startServer(
    "gateway",
    { BENCH_UPSTREAM_URL: upstream.origin, BENCH_GATEWAY_POLICY: policy },
    true,
  );
  try {
    const cpu = new Map<string, number[]>(APIS.map((a) => [a.name, []]));
    const ratios = new Map<string, number[]>(APIS.map((a) => [a.name, []]));
    const non2xx = new Map<string, number>(APIS.map((a) => [a.name, 0]));
    // A warm-up batch of each, discarded: the first requests of each route compile its code.
    for (const api of APIS) await batch(server, api);
    for (let r = 0; r < REPEATS; r++) {
      const last = new Map<string, number>();
      // Each API right after its chat load, the order turned every repeat.
      const order = r % 2 === 0 ? APIS : [...APIS].reverse();
      for (const api of order) {
        if (api.versus === api.name) continue;
        const chat = APIS.find((a) => a.name === api.versus) as Api;
        for (const a of r % 2 === 0 ? [chat, api] : [api, chat]) {
          const got = await batch(server, a);
          cpu.get(a.name)?.push(got.cpu);
          non2xx.set(a.name, (non2xx.get(a.name) ?? 0) + got.non2xx);
          last.set(a.name, got.cpu);
        }
        ratios.get(api.name)?.push((last.get(api.name) as number) / (last.get(chat.name) as number));
      }
    }
    console.log(`\ngateway, ${policy === "none" ? "no guardrail" : "full guardrail"}`);
    console.log("api                             CPU µs/req  ÷chat (median, min–max)   non-2xx");
    for (const api of APIS) {
      const rs = ratios.get(api.name) ?? [];
      const spread = rs.length > 0 ? `${Math.min(...rs).toFixed(2)}–${Math.max(...rs).toFixed(2)}` : "";
      const ratio = api.versus === api.name ? "" : `${median(rs).toFixed(2)} (${spread})`;
      console.log(
        `${api.name.padEnd(30)} ${median(cpu.get(api.name) ?? [])
          .toFixed(0)
          .padStart(11)}  ${ratio.padEnd(24)} ${String(non2xx.get(api.name)).padStart(8)}`,
      );
    }
  } finally {
    await server.stop();
  }
}

async function main(): Promise<void> {
  ensureBuilt();
  console.log(
    `api ratios: ${REPEATS} batches of ${BATCH} requests per API, ${CONNECTIONS} connections, instant upstream, the service's ${BUILD} build, Node ${process.version}`,
  );
  const upstream = await startServer("upstream", { BENCH_UPSTREAM_LATENCY_MS: "0" });
  try {
    for (const policy of POLICIES) await run(policy, upstream);
  } finally {
    await upstream.stop();
  }
}

try {
  await main();
} catch (err) {
  console.error(`bench failed: ${err instanceof Error ? err.stack : String(err)}`);
}
process.exit(0);
