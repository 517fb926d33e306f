/**
 * The floor of a framework hop (gateway bench): the bare forwarder (./forwarder.ts) written on
 * Fastify, the gateway's framework. It parses the JSON body (Fastify's own parser), sends it on to
 * BENCH_UPSTREAM_URL through the same undici pool, and answers with the upstream's text; no logging,
 * auth, validation, decision or spend. What it costs over the bare forwarder is what Fastify and one
 * JSON parse and serialization cost before the gateway does anything of its own.
 */
import Fastify from "fastify";
import { Pool } from "undici";
import { serveChild } from "../shared.js";

const upstreamUrl = process.env.BENCH_UPSTREAM_URL;
if (!upstreamUrl) throw new Error("BENCH_UPSTREAM_URL is required");
const upstream = new URL(upstreamUrl);
const path = `${upstream.pathname.replace(/\/+$/, "")}/chat/completions`;
const pool = new Pool(upstream.origin, { connections: 256, pipelining: 1, keepAliveTimeout: 30_000 });

const app = Fastify({ logger: false });
app.post("/v1/chat/completions", async (request, reply) => {
  const answer = await pool.request({
    path,
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify(request.body),
  });
  const text = await answer.body.text();
  reply
    .code(answer.statusCode)
    .header("content-type", String(answer.headers["content-type"] ?? "application/json"));
  return text;
});

const origin = await app.listen({ port: 0, host: "127.0.0.1" });
serveChild({ type: "ready", origin, key: null }, async () => {
  await app.close();
  await pool.close();
});
