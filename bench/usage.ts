/**
 * Benchmark (usage report): a month of one million ledger rows in one organization on SQLite, 300
 * keys in 10 workspaces, 12 models on 3 providers, a tenth of them bring-your-own-key, each request
 * under two guardrails; and 50,000 rows of another organization beside them. Then GET
 * /api/v1/usage's query (readUsageReport) for the whole month, grouped five ways, 20 runs each.
 * Baseline in the same run: the same "by day" sums read from the ledger itself, which is what the
 * rollup spares. Target: p50 and max under 200 ms. Prints; asserts nothing.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import SqliteDatabase from "better-sqlite3";
import { sql } from "kysely";
import { openDatabase } from "../src/storage/open.js";
import type { SpendLedgerTable } from "../src/storage/schema.js";
import { rollupRows } from "../src/storage/spend-repo.js";
import { readUsageReport, type UsageDimension } from "../src/storage/usage-repo.js";

const ROWS = Number(process.env.BENCH_USAGE_ROWS ?? 1_000_000);
const RUNS = 20;
const dir = mkdtempSync(join(tmpdir(), "usage-bench-"));
const file = join(dir, "bench.db");
const database = await openDatabase(file, { sqliteSynchronous: "normal" });

// Loaded on a connection of its own, through one prepared statement per table in large
// transactions: the bench measures the reads, so the load goes as fast as SQLite takes it.
const raw = new SqliteDatabase(file);
raw.pragma("journal_mode = WAL");
const addLedger = raw.prepare(
  `insert into spend_ledger values (@id, @organization_id, @request_id, @key_hash, @workspace_id, @member_user_id, @model, @provider, @byok, @prompt_tokens, @completion_tokens, @cost_micros, @created_at, @api, @session_id)`,
);
const addRollup = raw.prepare(
  `insert into spend_rollup values (@organization_id, @day, @guardrail_id, @key_hash, @workspace_id, @member_user_id, @model, @provider, @byok, 1, @prompt_tokens, @completion_tokens, @cost_micros, @api, @session_id)
   on conflict (organization_id, day, guardrail_id, key_hash, model, provider, byok, api, session_id) do update set
     requests = spend_rollup.requests + 1, prompt_tokens = spend_rollup.prompt_tokens + excluded.prompt_tokens,
     completion_tokens = spend_rollup.completion_tokens + excluded.completion_tokens,
     cost_micros = spend_rollup.cost_micros + excluded.cost_micros`,
);
const load = raw.transaction((from: number, to: number, org: string) => {
  for (let i = from; i < to; i++) {
    const key = i % 300;
    const row: SpendLedgerTable = {
      id: `${org}-${i}`,
      organization_id: org,
      request_id: `r-${org}-${i}`,
      key_hash: `key-${key}`,
      workspace_id: `ws-${key % 10}`,
      member_user_id: key % 3 === 0 ? null : `member-${key % 50}`,
      model: `model-${i % 12}`,
      provider: `provider-${i % 3}`,
      byok: i % 10 === 0 ? 1 : 0,
      prompt_tokens: 100 + (i % 900),
      completion_tokens: 50 + (i % 400),
      cost_micros: 10 + (i % 500),
      created_at: new Date(Date.UTC(2026, 10, 1) + Math.floor((i / to) * 30 * 86_400_000)).toISOString(),
      api: i % 12 === 11 ? "embeddings" : "chat",
      session_id: null,
    };
    addLedger.run(row);
    for (const r of rollupRows(row, [`g-ws-${key % 10}`, `g-key-${key}`])) {
      const { requests: _one, ...values } = r;
      addRollup.run(values);
    }
  }
});
const loadStarted = performance.now();
for (let at = 0; at < ROWS; at += 50_000) load(at, Math.min(ROWS, at + 50_000), "org");
load(0, 50_000, "other");
const rollupCount = raw.prepare("select count(*) as n from spend_rollup").get() as { n: number };
raw.close();
console.log(
  `loaded ${ROWS} ledger rows (+50,000 of another organization) in ${((performance.now() - loadStarted) / 1000).toFixed(1)} s; rollup rows: ${rollupCount.n}`,
);

function stats(times: number[]): string {
  const sorted = [...times].sort((a, b) => a - b);
  const p50 = sorted[Math.floor(sorted.length / 2)] ?? 0;
  const max = sorted[sorted.length - 1] ?? 0;
  return `p50 ${p50.toFixed(1)} ms, max ${max.toFixed(1)} ms${max < 200 ? "" : "  (over 200 ms)"}`;
}

async function time(run: () => Promise<unknown>): Promise<number[]> {
  await run();
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  return times;
}

const month = { from: "2026-11-01", to: "2026-11-30", offset: 0, limit: 100 };
const cases: [string, UsageDimension[], Partial<Record<UsageDimension, string>>][] = [
  ["by day", ["day"], {}],
  ["by key", ["key"], {}],
  ["by model and provider", ["model", "provider"], {}],
  ["by guardrail", ["guardrail"], {}],
  ["one key by day and model", ["day", "model"], { key: "key-7" }],
];
for (const [name, groupBy, filters] of cases) {
  const times = await time(() => readUsageReport(database.db, "org", { ...month, groupBy, filters }));
  console.log(`usage ${name.padEnd(26)} ${stats(times)}`);
}
const baseline = await time(() =>
  sql`select substr(created_at, 1, 10) as day, count(*), sum(cost_micros) from spend_ledger
      where organization_id = 'org' and created_at >= '2026-11-01' and created_at < '2026-12-01'
      group by 1 order by 1`.execute(database.db),
);
console.log(`baseline: by day from the ledger ${stats(baseline)}`);
await database.close();
rmSync(dir, { recursive: true, force: true });
