import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { migrateToLatest } from "../migrations.js";
import type { ChangeNotice, Coordination, DatabaseHandle, PostgresOptions, Transact } from "../ports.js";
import type { Db, Executor } from "../schema.js";
import { postgresAtomicWrites } from "./atomic-writes.js";
import { LOST_RACE, retryingRaces } from "./errors.js";
import { LISTENER_APPLICATION_NAME, listenForChanges } from "./listener.js";
import { CHANGES_CHANNEL, noticePayload } from "./notices.js";
import { postgresSpendStore } from "./spend-store.js";

/** Session lock that serializes migrations and the first-start bootstrap across instances. */
const STARTUP_LOCK = 7_310_512_118_001;
/** What a transaction is run again for: a lost race (deadlock, serialization failure) or a unique violation. */
const RETRIED_STATES = new Set([...LOST_RACE, "23505"]);

/**
 * int8 (bigint, count(*)) arrives as text by default. Every bigint here is micro-dollars or a
 * sequence, far below 2^53, so it is read as a number; a value beyond that fails loudly instead of
 * silently losing precision.
 */
function parseInt8(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new Error(`a bigint from the database is out of range: ${text}`);
  return value;
}

const types = {
  getTypeParser(oid: number, format?: string) {
    if (oid === pg.types.builtins.INT8) return parseInt8;
    // biome-ignore lint/suspicious/noExplicitAny: pg's overloads split text and binary parsers; we pass the call through unchanged.
    return (pg.types.getTypeParser as any)(oid, format);
  },
};

/** A start-up failure said in an operator's words, without the password. */
function explainConnectError(err: unknown, url: URL): Error {
  const where = `${url.hostname}:${url.port || "5432"}`;
  const user = decodeURIComponent(url.username || "(default user)");
  const database = decodeURIComponent(url.pathname.slice(1) || "(default database)");
  const code = (err as { code?: string } | null)?.code;
  const reason =
    code === "ECONNREFUSED"
      ? `nothing accepts connections at ${where} (connection refused)`
      : code === "ENOTFOUND" || code === "EAI_AGAIN"
        ? `the host ${url.hostname} could not be resolved`
        : code === "28P01" || code === "28000"
          ? `PostgreSQL at ${where} refused user "${user}": wrong password or no access`
          : code === "3D000"
            ? `the database "${database}" does not exist on ${where}`
            : err instanceof Error && /timeout/i.test(err.message)
              ? `no answer from ${where} in time`
              : `could not connect to ${where}: ${err instanceof Error ? err.message : String(err)}`;
  return new Error(`DATABASE_URL: ${reason}`, { cause: err });
}

/** Opens the service's database on PostgreSQL: checks the connection, then migrates under a lock. */
export async function openPostgres(url: string, options: PostgresOptions): Promise<DatabaseHandle> {
  const parsed = new URL(url);
  const config: pg.PoolConfig = {
    connectionString: url,
    max: options.poolMax,
    connectionTimeoutMillis: options.connectTimeoutMs,
    idleTimeoutMillis: 30_000,
    statement_timeout: options.statementTimeoutMs,
    application_name: "guardrails",
    types,
  };
  const pool = new pg.Pool(config);
  // A connection that breaks while idle must not crash the process; the pool replaces it.
  pool.on("error", () => undefined);
  try {
    const client = await pool.connect();
    client.release();
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw explainConnectError(err, parsed);
  }
  const db: Db = new Kysely({ dialect: new PostgresDialect({ pool }) });

  const withStartupLock = async <T>(work: () => Promise<T>): Promise<T> => {
    // A session lock on a connection of its own, outside the pool and held across the whole
    // start-up step: instances started together migrate and bootstrap one after another, never side
    // by side. Outside the pool, so the work can use every pooled connection (even a pool of one).
    const client = new pg.Client({ ...config, application_name: STARTUP_APPLICATION_NAME });
    client.on("error", () => undefined);
    try {
      await client.connect();
    } catch (err) {
      throw explainConnectError(err, parsed);
    }
    try {
      await client.query("select pg_advisory_lock($1)", [STARTUP_LOCK]);
      // Ending the session releases the lock too, so no unlock is needed on any path.
      return await work();
    } finally {
      await client.end().catch(() => undefined);
    }
  };

  try {
    await withStartupLock(() => migrateToLatest(db, "postgres"));
  } catch (err) {
    await db.destroy().catch(() => undefined);
    throw err;
  }

  // The transaction was rolled back whole, so running it again is safe. A deadlock or
  // serialization failure is transient. A unique violation means another instance inserted the same
  // thing after this transaction looked for it (check-then-insert under READ COMMITTED): run again,
  // the check now sees it and answers as it would on SQLite, where transactions run one at a time.
  // A real duplicate fails again and reaches the caller.
  const transact: Transact = (work) => retryingRaces(() => db.transaction().execute(work), RETRIED_STATES);

  const coordination: Coordination = {
    async lock(tx: Executor, name: string) {
      // Held until the transaction ends; hashtext maps the name onto the lock space.
      await sql`select pg_advisory_xact_lock(hashtext(${name}))`.execute(tx);
    },
    async publish(tx: Executor, notice: ChangeNotice) {
      // Delivered to every listening instance only when (and if) the transaction commits.
      await sql`select pg_notify(${CHANGES_CHANNEL}, ${noticePayload(notice)})`.execute(tx);
    },
  };

  return {
    db,
    kind: "postgres",
    transact,
    spendStore: postgresSpendStore(pool),
    coordination,
    atomicWrites: postgresAtomicWrites(pool, CHANGES_CHANNEL),
    withStartupLock,
    listenForChanges: (handlers) =>
      listenForChanges({ ...config, application_name: LISTENER_APPLICATION_NAME }, handlers),
    async ping() {
      await sql`select 1`.execute(db);
    },
    async close() {
      await db.destroy();
    },
  };
}

/** The short-lived connection that holds the start-up lock while migrating and bootstrapping. */
const STARTUP_APPLICATION_NAME = "guardrails-startup";
