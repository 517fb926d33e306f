import autocannon from "autocannon";
import { startServer } from "../load.js";
import { BENCH_PROMPT, CHAT_MODEL, CHAT_ONLY_MODEL, chatBody, messagesBody } from "../shared.js";

const which = process.argv[2] ?? "chat";
const upstream = await startServer("upstream", { BENCH_UPSTREAM_LATENCY_MS: "0" });
const server = await startServer("gateway", { BENCH_UPSTREAM_URL: upstream.origin, BENCH_GATEWAY_POLICY: "none", BENCH_CPU_PROF: `/tmp/prof-${which}` }, true);
const body =
  which === "chat"
    ? JSON.stringify({ ...(JSON.parse(chatBody(BENCH_PROMPT, CHAT_MODEL)) as object), stream: true })
    : messagesBody(BENCH_PROMPT, CHAT_ONLY_MODEL, true);
const path = which === "chat" ? "/api/v1/chat/completions" : "/api/v1/messages";
for (let i = 0; i < 2; i++) { const amount = i === 0 ? 3000 : 8000;
  const before = await server.cpu();
  const r = await autocannon({ url: `${server.origin}${path}`, connections: 50, amount, method: "POST", headers: server.headers, body });
  const used = (await server.cpu()) - before;
  console.log(which, "cpu/req", (used / amount).toFixed(0), "2xx", r["2xx"], "p50", r.latency.p50, "bytes", r.throughput.total / amount);
}
await server.stop();
await upstream.stop();
process.exit(0);
