/**
 * The bundled local upstream (an echo model) in its own process: the gateway bench's provider.
 * BENCH_UPSTREAM_LATENCY_MS makes it answer after that long, like a model.
 */
import { startLocalUpstream } from "../../src/local-upstream/server.js";
import { serveChild } from "../shared.js";

const upstream = await startLocalUpstream({
  port: 0,
  latencyMs: Number(process.env.BENCH_UPSTREAM_LATENCY_MS ?? 0),
});
serveChild({ type: "ready", origin: upstream.url, key: null }, () => upstream.close());
