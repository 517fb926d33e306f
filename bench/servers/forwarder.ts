/**
 * The floor of a proxy hop (gateway bench): a bare forwarder that passes each POST …/chat/completions
 * to BENCH_UPSTREAM_URL and its answer back, with nothing else: no framework, auth, validation,
 * decision, spend or logging. Its upstream client is the gateway's (an undici Pool, keep-alive, the
 * same options as src/gateway/upstream.ts), and its server is Node's HTTP server, which Fastify is
 * built on. Whatever latency it adds is what any Node proxy pays on this machine, under this load.
 */
import { createServer } from "node:http";
import { Pool } from "undici";
import { serveChild } from "../shared.js";

const upstreamUrl = process.env.BENCH_UPSTREAM_URL;
if (!upstreamUrl) throw new Error("BENCH_UPSTREAM_URL is required");
const upstream = new URL(upstreamUrl);
const path = `${upstream.pathname.replace(/\/+$/, "")}/chat/completions`;
const pool = new Pool(upstream.origin, { connections: 256, pipelining: 1, keepAliveTimeout: 30_000 });

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    pool
      .request({
        path,
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: Buffer.concat(chunks),
      })
      .then(async (reply) => {
        const payload = Buffer.from(await reply.body.arrayBuffer());
        res.writeHead(reply.statusCode, {
          "content-type": String(reply.headers["content-type"] ?? "application/json"),
          "content-length": payload.length,
        });
        res.end(payload);
      })
      .catch(() => {
        res.writeHead(502).end();
      });
  });
});

server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as { port: number };
  serveChild({ type: "ready", origin: `http://127.0.0.1:${port}`, key: null }, async () => {
    server.close();
    await pool.close();
  });
});
