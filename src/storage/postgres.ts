import { randomUUID } from "node:crypto";
import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import {
  type ChangeNotice,
  type Coordination,
  type DatabaseHandle,
  noticeOf,
  noticePayload,
  type Transact,
} from "./database.js";
import { migrateToLatest } from "./migrations.js";
import { LOST_RACE, retryingRaces } from "./postgres-errors.js";
import { postgresSpendStore } from "./postgres-spend.js";
import { postgresAtomicWrites } from "./postgres-writes.js";
import type { Db, Executor } from "./schema.js";

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

/** How often the listener checks that a notice it sends itself comes back. */
const PROBE_EVERY_MS = 250;
/** A probe not back after this long means notices have stopped arriving: the connection is dropped. */
export const PROBE_DEADLINE_MS = 1000;

/**
 * LISTENs on its own connection (a pooled one would be handed to other work). When the connection
 * drops, it reports that it is not listening, so caches stop serving, and reconnects with backoff;
 * once listening again, everything cached before is treated as stale.
 *
 * A connection can also die without closing (a network partition, a stopped server process) or
 * accept LISTEN without ever delivering a notice (a pooler in transaction mode). So the listener
 * sends itself a probe on a channel of its own every PROBE_EVERY_MS and counts itself deaf when one
 * is not back within PROBE_DEADLINE_MS; a new connection is trusted only once its first probe is back.
 */
export async function listenForChanges(
  config: pg.PoolConfig,
  handlers: ChangeListenerHandlers,
): Promise<ChangeListener> {
  const probeChannel = `guardrails_probe_${randomUUID().replaceAll("-", "")}`;
  let closed = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  let delay = 100;
  let sequence = 0;
  /** The probe sent on the current connection and not back yet. */
  let outstanding: { payload: string; sentAt: number } | undefined;

  const connect = async (): Promise<void> => {
    const next = new pg.Client({ ...config, keepAlive: true });
    let firstProbeBack: (() => void) | undefined;
    next.on("notification", (message) => {
      if (message.channel === probeChannel) {
        if (client === next && outstanding?.payload === message.payload) outstanding = undefined;
        firstProbeBack?.();
        return;
      }
      if (message.channel !== CHANGES_CHANNEL) return;
      try {
        handlers.onChange(noticeOf(message.payload));
      } catch {
        handlers.onChange({ keys: true });
      }
    });
    next.on("error", (err) => {
      handlers.onError(err);
      lost(next);
    });
    next.on("end", () => lost(next));
    try {
      await next.connect();
      await next.query(`listen ${CHANGES_CHANNEL}`);
      await next.query(`listen ${probeChannel}`);
      const back = new Promise<void>((resolve) => {
        firstProbeBack = resolve;
      });
      await next.query("select pg_notify($1, $2)", [probeChannel, "first"]);
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<"late">((resolve) => {
        timer = setTimeout(() => resolve("late"), PROBE_DEADLINE_MS);
      });
      const outcome = await Promise.race([back, late]);
      clearTimeout(timer);
      if (outcome === "late") {
        throw new Error(
          `DATABASE_URL: a notice sent on this connection did not come back within ${PROBE_DEADLINE_MS} ms, so changes made by other instances would go unseen; LISTEN/NOTIFY needs a direct connection or a pooler in session mode (not transaction mode)`,
        );
      }
      firstProbeBack = undefined;
      if (closed) throw new Error("closed");
    } catch (err) {
      await next.end().catch(() => undefined);
      throw err;
    }
    client = next;
    outstanding = undefined;
    delay = 100;
    handlers.onState(true);
  };

  const lost = (which: pg.Client) => {
    if (client !== which) return;
    client = undefined;
    outstanding = undefined;
    handlers.onState(false);
    // A connection that went silent may never close by itself; let it go without waiting.
    which.end().catch(() => undefined);
    schedule();
  };

  const probe = () => {
    const current = client;
    if (!current) return;
    if (outstanding) {
      if (Date.now() - outstanding.sentAt > PROBE_DEADLINE_MS) {
        handlers.onError(
          new Error(`change notices stopped arriving: a probe was not back within ${PROBE_DEADLINE_MS} ms`),
        );
        lost(current);
      }
      return;
    }
    const payload = String(++sequence);
    outstanding = { payload, sentAt: Date.now() };
    current.query("select pg_notify($1, $2)", [probeChannel, payload]).catch((err: unknown) => {
      handlers.onError(err);
      lost(current);
    });
  };

  const schedule = () => {
    if (closed || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      connect().catch((err: unknown) => {
        if (closed) return;
        handlers.onError(err);
        delay = Math.min(delay * 2, 5_000);
        schedule();
      });
    }, delay);
    retry.unref();
  };

  await connect();
  const ticker = setInterval(probe, PROBE_EVERY_MS);
  ticker.unref();
  return {
    async close() {
      closed = true;
      clearInterval(ticker);
      if (retry) clearTimeout(retry);
      const current = client;
      client = undefined;
      // A connection that went silent would never finish closing: shutting down does not wait on it.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        current?.end().catch(() => undefined),
        new Promise((resolve) => {
          timer = setTimeout(resolve, PROBE_DEADLINE_MS);
        }),
      ]);
      clearTimeout(timer);
    },
  };
}
