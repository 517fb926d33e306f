/**
 * `npm run bench`: POST create and PATCH update of guardrails under autocannon (50 connections),
 * beside a baseline measured in the same run — a bare Fastify route inserting a row of the same size
 * with better-sqlite3 (the baseline the targets are set against, for both ratios), and for information a bare UPDATE. Each server runs in its own child process, started the same way, so
 * the load generator never shares the server's event loop. A report, not a test: always exits 0.
 *
 * Environment: see bench/load.ts.
 */
import { ensureBuilt } from "./build.js";
import { startServer } from "./load.js";
import { measureWrites, printReport } from "./writes.js";

async function runAgainst(name: "service" | "baseline") {
  const server = await startServer(name);
  try {
    return await measureWrites(server);
  } finally {
    await server.stop();
  }
}

try {
  ensureBuilt();
  const baseline = await runAgainst("baseline");
  const service = await runAgainst("service");
  printReport("guardrails bench (SQLite)", baseline, service);
} catch (err) {
  console.error(`bench failed: ${err instanceof Error ? err.stack : String(err)}`);
}
process.exit(0);
