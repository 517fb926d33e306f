import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import SqliteDatabase from "better-sqlite3";
import { Kysely, PostgresDialect, SqliteDialect, sql } from "kysely";
import pg from "pg";
import { migrateUpTo } from "../../src/storage/migrations.js";
import { openDatabase } from "../../src/storage/open.js";
import { type DatabaseHandle, DEFAULT_POSTGRES_OPTIONS } from "../../src/storage/ports.js";
import { readUsageReport } from "../../src/storage/usage-repo.js";
import { createScratchDatabase, dropScratchDatabase } from "../helpers/embedded-postgres.js";
import { TEST_DATABASE_KIND, TEST_DATABASE_URL } from "../helpers/server.js";
import { ledger } from "./spend-fixtures.js";

/** The last migration before the ledger and the rollup recorded each request's API. */
const BEFORE_API = "0010_usage_from_the_rollup";
const DAY = "2026-11-22";

/**
 * A database the version before the API column left, with spend in it, upgraded by opening it as
 * the service does: its rows are chat (docs/behaviour.md#usage-by-api), and the upgraded store keeps
 * writing to them and beside them. `npm run test:postgres` runs this file on PostgreSQL.
 */
describe(`upgrading spend recorded before the API was kept, on ${TEST_DATABASE_KIND} (docs/behaviour.md#usage-by-api)`, () => {
  let url: string;
  let remove: () => Promise<void>;
  let database: DatabaseHandle;

  /** The old version's database: migrated up to BEFORE_API, with one request's ledger and rollup rows. */
  async function oldDatabase(): Promise<void> {
    // biome-ignore lint/suspicious/noExplicitAny: the old schema is not the current table types.
    let db: Kysely<any>;
    if (TEST_DATABASE_URL) {
      const serverUrl = TEST_DATABASE_URL;
      url = await createScratchDatabase(serverUrl);
      remove = () => dropScratchDatabase(serverUrl, url);
      db = new Kysely({
        dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }),
      });
    } else {
      const dir = mkdtempSync(join(tmpdir(), "guardrails-test-"));
      url = `sqlite:${join(dir, "guardrails.db")}`;
      remove = async () => rmSync(dir, { recursive: true, force: true });
      db = new Kysely({
        dialect: new SqliteDialect({ database: new SqliteDatabase(join(dir, "guardrails.db")) }),
      });
    }
    await migrateUpTo(db, TEST_DATABASE_KIND, BEFORE_API);
    // The old version's columns, without an API.
    const {
      api: _none,
      session_id: _noSession,
      ...old
    } = ledger("old", 500, { organization_id: "upgraded" });
    await db.insertInto("spend_ledger").values(old).execute();
    await sql`insert into spend_rollup values ('upgraded', ${DAY}, '', 'k', 'w', '', 'm', 'p', 0, 1, 1, 1, 500)`.execute(
      db,
    );
    await db.destroy();
  }

  before(async () => {
    await oldDatabase();
    database = await openDatabase(url, {
      sqliteSynchronous: "normal",
      postgres: { ...DEFAULT_POSTGRES_OPTIONS, poolMax: 2 },
    });
  });
  after(async () => {
    await database?.close();
    await remove?.();
  });

  const report = () =>
    readUsageReport(database.db, "upgraded", {
      from: DAY,
      to: DAY,
      groupBy: ["api"],
      filters: {},
      offset: 0,
      limit: 10,
    });

  it("the old ledger and rollup rows are chat after the upgrade, their sums unchanged", async () => {
    const rows = await database.db
      .selectFrom("spend_ledger")
      .select(["id", "api", "cost_micros"])
      .where("organization_id", "=", "upgraded")
      .execute();
    assert.deepEqual(
      rows.map((r) => ({ ...r, cost_micros: Number(r.cost_micros) })),
      [{ id: "old", api: "chat", cost_micros: 500 }],
    );
    const { rows: usage } = await report();
    assert.deepEqual(
      usage.map((r) => ({ api: r.group.api, requests: r.requests, cost: r.cost_micros })),
      [{ api: "chat", requests: 1, cost: 500 }],
    );
  });

  it("the service's spend store adds a chat request to the old row and an embeddings request beside it", async () => {
    const same = { organization_id: "upgraded", key_hash: "k", workspace_id: "w", model: "m", provider: "p" };
    await database.spendStore.settle(null, 20, ledger("new-chat", 20, { ...same, api: "chat" }));
    await database.spendStore.settle(null, 3, ledger("new-embeddings", 3, { ...same, api: "embeddings" }));
    const { rows: usage } = await report();
    assert.deepEqual(
      usage.map((r) => ({ api: r.group.api, requests: r.requests, cost: r.cost_micros })),
      [
        { api: "chat", requests: 2, cost: 520 },
        { api: "embeddings", requests: 1, cost: 3 },
      ],
    );
    const filtered = await readUsageReport(database.db, "upgraded", {
      from: DAY,
      to: DAY,
      groupBy: [],
      filters: { api: "embeddings" },
      offset: 0,
      limit: 10,
    });
    assert.deepEqual(
      filtered.rows.map((r) => r.cost_micros),
      [3],
    );
  });
  it("PostgreSQL: a settlement from an instance still on the old version, whose ledger entry names no API, is recorded as chat", {
    skip: TEST_DATABASE_KIND !== "postgres" && "the batch function is PostgreSQL's",
  }, async () => {
    const { api: _none, ...old } = ledger("from-old-instance", 11, {
      organization_id: "upgraded",
      key_hash: "k",
      workspace_id: "w",
      model: "m",
      provider: "p",
    });
    const ops = [{ kind: "settle", reservation: null, cost: 11, ledger: old, guardrail_ids: [] }];
    const answer = await sql<{
      outcomes: unknown;
    }>`select guardrails_spend_batch2(${JSON.stringify(ops)}::jsonb) as outcomes`.execute(database.db);
    assert.deepEqual(answer.rows[0]?.outcomes, [0]);
    const row = await database.db
      .selectFrom("spend_ledger")
      .select("api")
      .where("id", "=", "from-old-instance")
      .executeTakeFirst();
    assert.equal(row?.api, "chat");
    const { rows: usage } = await report();
    assert.deepEqual(
      usage.map((r) => ({ api: r.group.api, requests: r.requests, cost: r.cost_micros })),
      [
        { api: "chat", requests: 3, cost: 531 },
        { api: "embeddings", requests: 1, cost: 3 },
      ],
    );
  });
});
