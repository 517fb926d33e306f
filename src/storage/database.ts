import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import SqliteDatabase from "better-sqlite3";
import { Kysely, SqliteDialect, type SqliteDatabase as SqliteDialectDatabase, sql } from "kysely";
import type { AuditEntryRow } from "./audit-repo.js";
import { startCheckpointer } from "./checkpointer.js";
import { GroupCommitter } from "./group-commit.js";
import { migrateToLatest } from "./migrations.js";
import {
  type ChangeListener,
  type ChangeListenerHandlers,
  openPostgres,
  type PostgresOptions,
} from "./postgres.js";
import type { Db, Executor, GuardrailTable } from "./schema.js";
import { kyselySpendStore, type SpendStore, sqliteSpendStore } from "./spend-store.js";

export type Transact = <T>(work: (tx: Executor) => Promise<T>) => Promise<T>;

/** What one committed management change may invalidate in other instances' caches. */
export interface ChangeNotice {
  /** The change can revoke a key (key, member or workspace deletion). */
  keys?: boolean;
}

/** A notice as the payload of a PostgreSQL notification: one encoding for every sender. */
export function noticePayload(notice: ChangeNotice): string {
  return JSON.stringify(notice);
}

/** The notice a notification's payload carries (the listener's side of noticePayload). */
export function noticeOf(payload: string | undefined): ChangeNotice {
  return JSON.parse(payload ?? "{}") as ChangeNotice;
}

/**
 * What several instances on one database need to agree; absent on SQLite, where one process owns
 * the file and its transactions already run one at a time.
 */
export interface Coordination {
  /** Serializes transactions that name the same thing, until the calling transaction ends. */
  lock(tx: Executor, name: string): Promise<void>;
  /** Announces a change to every instance once the transaction commits. */
  publish(tx: Executor, notice: ChangeNotice): Promise<void>;
}

/** Where a new guardrail goes: the organization's default workspace, or one it names. */
export interface WorkspaceGuard {
  kind: "default" | "named";
  organizationId: string;
  /** The workspace the row was built for; the write happens only if it is still the right one. */
  workspaceId: string;
}

/**
 * Guardrail writes that carry their audit entry and change notice in one statement (PostgreSQL,
 * where each statement of a transaction is a round trip). Each writes nothing and answers false
 * when its precondition no longer holds; the caller then takes the general, transactional path.
 */
export interface AtomicWrites {
  /** Inserts a guardrail, if the workspace guard holds. */
  insertGuardrail(
    row: GuardrailTable,
    audit: AuditEntryRow,
    guard: WorkspaceGuard,
    notice: ChangeNotice,
  ): Promise<boolean>;
  /** Writes a guardrail's new version, if the stored one is still the version read. */
  updateGuardrail(
    row: GuardrailTable,
    expected: { version: number; updatedAt: string | null },
    audit: AuditEntryRow,
    notice: ChangeNotice,
  ): Promise<boolean>;
}

export interface DatabaseHandle {
  db: Db;
  kind: "sqlite" | "postgres";
  /** Runs a change in a transaction (on SQLite, with group commit). */
  transact: Transact;
  /** The spend writes of the request path (a synchronous fast path on SQLite). */
  spendStore: SpendStore;
  coordination?: Coordination;
  /** One-statement guardrail writes, where they save round trips (PostgreSQL). */
  atomicWrites?: AtomicWrites;
  /** Runs a start-up step (bootstrap) while no other instance runs one. */
  withStartupLock<T>(work: () => Promise<T>): Promise<T>;
  /** Receives other instances' change notices (PostgreSQL); absent where there are none. */
  listenForChanges?(handlers: ChangeListenerHandlers): Promise<ChangeListener>;
  /** Answers when the database does (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** SQLite `synchronous` setting: "normal" survives a killed process, "full" also a power loss. */
  sqliteSynchronous: "normal" | "full";
  /** Pool and time-out settings on PostgreSQL; defaults in DEFAULT_POSTGRES_OPTIONS. */
  postgres?: PostgresOptions;
}

export const DEFAULT_POSTGRES_OPTIONS: PostgresOptions = {
  poolMax: 10,
  connectTimeoutMs: 5_000,
  statementTimeoutMs: 30_000,
};

/** Parses DATABASE_URL: a path, `sqlite:<path>`, or a `postgres://` / `postgresql://` address. */
export function parseDatabaseUrl(
  url: string,
): { kind: "sqlite"; path: string } | { kind: "postgres"; url: string } {
  if (url.startsWith("postgres://") || url.startsWith("postgresql://")) return { kind: "postgres", url };
  const path = url.startsWith("sqlite:") ? url.slice("sqlite:".length) : url;
  if (path.length === 0) throw new Error("DATABASE_URL names no SQLite file");
  return { kind: "sqlite", path };
}

const STATEMENT_CACHE_SIZE = 500;

/**
 * Kysely prepares every statement anew; preparing costs more than running most of ours. Statements
 * are reused by their SQL text. Safe because better-sqlite3 runs each one to completion
 * synchronously. Bounded: SQL with variable-length IN lists could otherwise grow it without end.
 */
function withStatementCache(sqlite: SqliteDatabase.Database): SqliteDialectDatabase {
  const cache = new Map<string, SqliteDatabase.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(sql: string) {
      let statement = cache.get(sql);
      if (!statement) {
        statement = sqlite.prepare(sql);
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.clear();
        cache.set(sql, statement);
      }
      return statement;
    },
  };
}

/** How often a SQLite server looks for changes committed by another process (the command line). */
const OTHER_PROCESS_POLL_MS = 500;

export async function openDatabase(url: string, options: DatabaseOptions): Promise<DatabaseHandle> {
  const target = parseDatabaseUrl(url);
  if (target.kind === "postgres")
    return openPostgres(target.url, options.postgres ?? DEFAULT_POSTGRES_OPTIONS);
  const file = target.path === ":memory:" ? target.path : resolve(target.path);
  if (file !== ":memory:") mkdirSync(dirname(file), { recursive: true });
  const sqlite = new SqliteDatabase(file);
  // WAL: readers never block the writer, and a committed transaction is in the log before the
  // response is sent, so a killed process loses nothing answered.
  sqlite.pragma("journal_mode = WAL");
  sqlite.pragma(`synchronous = ${options.sqliteSynchronous === "full" ? "FULL" : "NORMAL"}`);
  sqlite.pragma("foreign_keys = ON");
  sqlite.pragma("busy_timeout = 5000");
  const checkpointer = file === ":memory:" ? undefined : startCheckpointer(file);
  // The worker checkpoints; this connection only does so if the WAL grows past ~80 MB regardless.
  if (checkpointer) sqlite.pragma("wal_autocheckpoint = 20000");
  const db: Db = new Kysely({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  await migrateToLatest(db, "sqlite");
  // Changes share commits (see GroupCommitter). Measured with `npm run bench` under 50 connections,
  // it nearly doubles create and update throughput even with synchronous=NORMAL, where a commit
  // costs no fsync: each change's own COMMIT wrote its dirty pages to the WAL one by one.
  const committer = new GroupCommitter(db);
  const transact: Transact = (work) => committer.run(work);
  let poll: NodeJS.Timeout | undefined;
  return {
    db,
    kind: "sqlite",
    transact,
    spendStore: sqliteSpendStore(sqlite, kyselySpendStore(transact)),
    withStartupLock: (work) => work(),
    // The command line (keys revoke, ...) writes to the file from another process. SQLite's
    // data_version moves only when another connection commits, so a change made there reaches
    // this process's caches within one poll; the checkpointer's connection commits no data.
    async listenForChanges(handlers) {
      let seen = sqlite.pragma("data_version", { simple: true });
      poll = setInterval(() => {
        try {
          const now = sqlite.pragma("data_version", { simple: true });
          if (now === seen) return;
          seen = now;
          handlers.onChange({ keys: true });
        } catch (err) {
          handlers.onError(err);
        }
      }, OTHER_PROCESS_POLL_MS);
      poll.unref();
      const mine = poll;
      return {
        async close() {
          clearInterval(mine);
        },
      };
    },
    async ping() {
      await sql`select 1`.execute(db);
    },
    async close() {
      clearInterval(poll);
      await checkpointer?.stop();
      await db.destroy();
    },
  };
}
