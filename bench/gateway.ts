/**
 * Benchmark (issue 4b): chat completions through the gateway to the local upstream, beside the same
 * load sent straight to that upstream, in one run at 50 connections. The gateway's key is governed
 * by a budget (every request reserves and settles in SQLite) and two content filters. Targets: at
 * least 0.5 of the direct throughput and at most 1 ms added p50 latency. A report: exits 0.
 */
import { CONNECTIONS, DURATION, type Load, type Measured, measure, startServer, WARMUP } from "./load.js";

const TARGET_RATIO = 0.5;
const TARGET_ADDED_P50_MS = 1;

const body = JSON.stringify({
  model: "meta-llama/llama-3.1-8b-instruct",
  messages: [
    { role: "system", content: "You are a concise assistant." },
    { role: "user", content: "Summarize the weekly report for the team in two sentences, please." },
  ],
  max_tokens: 200,
});
const load = (path: string): Load => ({ path, method: "POST", body });

async function main(): Promise<void> {
  const upstream = await startServer("upstream");
  let direct: Measured;
  let gateway: Measured;
  try {
    direct = await measure("chat", upstream, load("/chat/completions"));
    const service = await startServer("gateway", { BENCH_UPSTREAM_URL: upstream.origin });
    try {
      gateway = await measure("chat", service, load("/api/v1/chat/completions"));
    } finally {
      await service.stop();
    }
  } finally {
    await upstream.stop();
  }
  const ratio = direct.rps > 0 ? gateway.rps / direct.rps : 0;
  const added = gateway.p50 - direct.p50;
  console.log(
    `\ngateway bench: ${CONNECTIONS} connections, ${WARMUP} s warm-up + ${DURATION} s measured per row, Node ${process.version}\n`,
  );
  console.log("path                   req/s   p50 ms   p99 ms  non-2xx  errors  statuses");
  for (const [name, m] of [
    ["direct to upstream", direct],
    ["through the gateway", gateway],
  ] as const) {
    console.log(
      `${name.padEnd(20)} ${m.rps.toFixed(0).padStart(7)} ${m.p50.toFixed(1).padStart(8)} ${m.p99.toFixed(1).padStart(8)} ${String(m.non2xx).padStart(8)} ${String(m.errors).padStart(7)}  ${m.statuses}`,
    );
  }
  const ratioOk = ratio >= TARGET_RATIO;
  const addedOk = added <= TARGET_ADDED_P50_MS;
  console.log(
    `\nratio ${ratio.toFixed(2)} (target ≥ ${TARGET_RATIO}: ${ratioOk ? "met" : "MISSED"}); added p50 ${added.toFixed(1)} ms (target ≤ ${TARGET_ADDED_P50_MS} ms: ${addedOk ? "met" : "MISSED"})`,
  );
}

try {
  await main();
} catch (err) {
  console.error(`bench failed: ${err instanceof Error ? err.stack : String(err)}`);
}
process.exit(0);
