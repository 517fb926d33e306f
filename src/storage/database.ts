import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import SqliteDatabase from "better-sqlite3";
import { Kysely, SqliteDialect, type SqliteDatabase as SqliteDialectDatabase, sql } from "kysely";
import { startCheckpointer } from "./checkpointer.js";
import { GroupCommitter } from "./group-commit.js";
import { migrateToLatest } from "./migrations.js";
import type { Db, Executor } from "./schema.js";
import { kyselySpendStore, type SpendStore, sqliteSpendStore } from "./spend-store.js";

export type Transact = <T>(work: (tx: Executor) => Promise<T>) => Promise<T>;

export interface DatabaseHandle {
  db: Db;
  kind: "sqlite" | "postgres";
  /** Runs a change in a transaction (on SQLite, with group commit). */
  transact: Transact;
  /** The spend writes of the request path (a synchronous fast path on SQLite). */
  spendStore: SpendStore;
  /** Answers when the database does (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** SQLite `synchronous` setting: "normal" survives a killed process, "full" also a power loss. */
  sqliteSynchronous: "normal" | "full";
}

/** Parses DATABASE_URL: a path, `sqlite:<path>`, or `postgres://` (not yet supported). */
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

export async function openDatabase(url: string, options: DatabaseOptions): Promise<DatabaseHandle> {
  const target = parseDatabaseUrl(url);
  if (target.kind === "postgres") {
    throw new Error(
      "DATABASE_URL is a PostgreSQL address, and PostgreSQL support is not built yet; use a SQLite path (the default) for now",
    );
  }
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
  await migrateToLatest(db);
  // Group commit pays off where a commit is expensive: with synchronous=FULL every commit is an
  // fsync. With NORMAL (and checkpoints in the worker) a commit is cheap, and measured under load
  // the savepoints cost more than the shared commits saved, so each change gets a plain transaction.
  const committer = options.sqliteSynchronous === "full" ? new GroupCommitter(db) : undefined;
  const transact: Transact = committer
    ? (work) => committer.run(work)
    : (work) => db.transaction().execute(work);
  return {
    db,
    kind: "sqlite",
    transact,
    spendStore: sqliteSpendStore(sqlite, kyselySpendStore(transact)),
    async ping() {
      await sql`select 1`.execute(db);
    },
    async close() {
      await checkpointer?.stop();
      await db.destroy();
    },
  };
}
