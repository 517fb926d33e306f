import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import SqliteDatabase from "better-sqlite3";
import { Kysely, SqliteDialect, type SqliteDatabase as SqliteDialectDatabase, sql } from "kysely";
import { migrateToLatest } from "../migrations.js";
import type { DatabaseHandle, DatabaseOptions, Transact } from "../ports.js";
import type { Db } from "../schema.js";
import { startCheckpointer } from "./checkpointer.js";
import { GroupCommitter } from "./group-commit.js";
import { type ServerLock, takeServerLock } from "./server-lock.js";
import { sqliteSpendStore } from "./spend-store.js";

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

/**
 * Opens (and migrates) the service's database in a SQLite file, or in memory for ":memory:". As the
 * server (`server`), it first takes the file's server lock and, once migrated, gives back the
 * reservations an earlier process left in the file: none of its requests is in flight any more.
 */
export async function openSqlite(
  path: string,
  synchronous: DatabaseOptions["sqliteSynchronous"],
  server = false,
): Promise<DatabaseHandle> {
  const file = path === ":memory:" ? path : resolve(path);
  if (file !== ":memory:") mkdirSync(dirname(file), { recursive: true });
  const lock: ServerLock | undefined = server && file !== ":memory:" ? takeServerLock(file) : undefined;
  try {
    return await openLocked(file, synchronous, server, lock);
  } catch (err) {
    lock?.release();
    throw err;
  }
}

/**
 * Reservations left in the file by a version that wrote them (or by the reference store): released,
 * as the expiry sweep would once they expired. Only the server, holding the lock, may: then no
 * other process has a request in flight.
 */
function releaseLeftReservations(sqlite: SqliteDatabase.Database): void {
  sqlite.transaction(() => {
    sqlite.prepare("delete from budget_reservations").run();
    sqlite.prepare("update budget_usage set reserved_micros = 0 where reserved_micros <> 0").run();
  })();
}

async function openLocked(
  file: string,
  synchronous: DatabaseOptions["sqliteSynchronous"],
  server: boolean,
  lock: ServerLock | undefined,
): Promise<DatabaseHandle> {
  const sqlite = new SqliteDatabase(file);
  // WAL: readers never block the writer, and a committed transaction is in the log before the
  // response is sent, so a killed process loses nothing answered.
  sqlite.pragma("journal_mode = WAL");
  sqlite.pragma(`synchronous = ${synchronous === "full" ? "FULL" : "NORMAL"}`);
  sqlite.pragma("foreign_keys = ON");
  sqlite.pragma("busy_timeout = 5000");
  const checkpointer = file === ":memory:" ? undefined : startCheckpointer(file);
  // The worker checkpoints; this connection only does so if the WAL grows past ~80 MB regardless.
  if (checkpointer) sqlite.pragma("wal_autocheckpoint = 20000");
  const db: Db = new Kysely({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  await migrateToLatest(db, "sqlite");
  if (server) releaseLeftReservations(sqlite);
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
    // Waiting for a read through Kysely is waiting for its open transaction to end.
    spendStore: sqliteSpendStore(sqlite, async () => {
      await sql`select 1`.execute(db);
    }),
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
      lock?.release();
    },
  };
}
