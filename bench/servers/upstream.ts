/**
 * The bundled local upstream (an echo model) in its own process: the gateway bench's provider.
 * BENCH_UPSTREAM_LATENCY_MS makes it answer after that long, like a model. With
 * BENCH_UPSTREAM_SPREAD (a fraction below 1) each answer takes instead a time drawn evenly from
 * latency × (1 ± spread), from a fixed seed, so every run draws the same sequence.
 */
import { startLocalUpstream } from "../../src/local-upstream/server.js";
import { serveChild } from "../shared.js";

const latencyMs = Number(process.env.BENCH_UPSTREAM_LATENCY_MS ?? 0);
const spread = Number(process.env.BENCH_UPSTREAM_SPREAD ?? 0);
if (!(spread >= 0 && spread < 1)) throw new Error("BENCH_UPSTREAM_SPREAD must be in [0, 1)");

/** mulberry32: a small seeded generator of evenly spread numbers in [0, 1). */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const draw = seeded(20261123);

const upstream = await startLocalUpstream({
  port: 0,
  latencyMs,
  ...(spread > 0 ? { script: () => ({ delayMs: latencyMs * (1 - spread + 2 * spread * draw()) }) } : {}),
});
serveChild({ type: "ready", origin: upstream.url, key: null }, () => upstream.close());
