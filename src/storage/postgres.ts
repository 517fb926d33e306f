import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import type { ChangeNotice, Coordination, DatabaseHandle, Transact } from "./database.js";
import { migrateToLatest } from "./migrations.js";
import type { Db, Executor } from "./schema.js";
import { batchedSpendStore } from "./spend-store.js";

export interface PostgresOptions {
  /** Most connections one instance holds (GUARDRAILS_PG_POOL_MAX). */
  poolMax: number;
  /** How long to wait for a connection, at start and from the pool (GUARDRAILS_PG_CONNECT_TIMEOUT_MS). */
  connectTimeoutMs: number;
  /** Longest time one statement may run before PostgreSQL cancels it (GUARDRAILS_PG_STATEMENT_TIMEOUT_MS). */
  statementTimeoutMs: number;
}

/** The channel on which every instance announces committed management changes. */
export const CHANGES_CHANNEL = "guardrails_changes";
/** Session lock that serializes migrations and the first-start bootstrap across instances. */
const STARTUP_LOCK = 7_310_512_118_001;
/** How many times a transaction that lost a race (RETRIED_STATES) is run again. */
const TRANSIENT_RETRIES = 3;
/** Deadlock, serialization failure, unique violation. */
const RETRIED_STATES = new Set(["40P01", "40001", "23505"]);

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

/** The PostgreSQL error code of an error, if it has one (SQLSTATE). */
export function sqlState(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

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
    const client = new pg.Client({ ...config, application_name: STARTUP_APPLICATION_NAME, types });
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

  const transact: Transact = async (work) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await db.transaction().execute(work);
      } catch (err) {
        // The transaction was rolled back whole, so running it again is safe. A deadlock or
        // serialization failure is transient. A unique violation means another instance inserted
        // the same thing after this transaction looked for it (check-then-insert under READ
        // COMMITTED): run again, the check now sees it and answers as it would on SQLite, where
        // transactions run one at a time. A real duplicate fails again and reaches the caller.
        const state = sqlState(err);
        if (state !== undefined && RETRIED_STATES.has(state) && attempt <= TRANSIENT_RETRIES) continue;
        throw err;
      }
    }
  };

  const coordination: Coordination = {
    async lock(tx: Executor, name: string) {
      // Held until the transaction ends; hashtext maps the name onto the lock space.
      await sql`select pg_advisory_xact_lock(hashtext(${name}))`.execute(tx);
    },
    async publish(tx: Executor, notice: ChangeNotice) {
      // Delivered to every listening instance only when (and if) the transaction commits.
      await sql`select pg_notify(${CHANGES_CHANNEL}, ${JSON.stringify(notice)})`.execute(tx);
    },
  };

  return {
    db,
    kind: "postgres",
    transact,
    spendStore: batchedSpendStore(transact),
    coordination,
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

/** How the change listener's connection shows in pg_stat_activity (the pool's show as "guardrails"). */
export const LISTENER_APPLICATION_NAME = "guardrails-listener";
/** The short-lived connection that holds the start-up lock while migrating and bootstrapping. */
const STARTUP_APPLICATION_NAME = "guardrails-startup";

export interface ChangeListenerHandlers {
  /** A committed change announced by any instance (this one included). */
  onChange(notice: ChangeNotice): void;
  /** Whether notifications are being received; while not, cached data cannot be trusted. */
  onState(listening: boolean): void;
  onError(err: unknown): void;
}

export interface ChangeListener {
  close(): Promise<void>;
}

/**
 * LISTENs on its own connection (a pooled one would be handed to other work). When the connection
 * drops, it reports that it is not listening, so caches stop serving, and reconnects with backoff;
 * once listening again, everything cached before is treated as stale.
 */
export async function listenForChanges(
  config: pg.PoolConfig,
  handlers: ChangeListenerHandlers,
): Promise<ChangeListener> {
  let closed = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  let delay = 100;

  const connect = async (): Promise<void> => {
    const next = new pg.Client({ ...config, types });
    next.on("notification", (message) => {
      if (message.channel !== CHANGES_CHANNEL) return;
      try {
        handlers.onChange(JSON.parse(message.payload ?? "{}") as ChangeNotice);
      } catch {
        handlers.onChange({ keys: true });
      }
    });
    next.on("error", (err) => {
      handlers.onError(err);
      lost(next);
    });
    next.on("end", () => lost(next));
    await next.connect();
    await next.query(`listen ${CHANGES_CHANNEL}`);
    if (closed) {
      await next.end();
      return;
    }
    client = next;
    delay = 100;
    handlers.onState(true);
  };

  const lost = (which: pg.Client) => {
    if (client !== which) return;
    client = undefined;
    handlers.onState(false);
    schedule();
  };

  const schedule = () => {
    if (closed || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      connect().catch((err: unknown) => {
        handlers.onError(err);
        delay = Math.min(delay * 2, 5_000);
        schedule();
      });
    }, delay);
    retry.unref();
  };

  await connect();
  return {
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      const current = client;
      client = undefined;
      await current?.end().catch(() => undefined);
    },
  };
}
