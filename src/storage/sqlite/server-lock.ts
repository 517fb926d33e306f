import SqliteDatabase from "better-sqlite3";

export interface ServerLock {
  release(): void;
}

/** Where the lock of a database file is taken: a small SQLite file of its own beside it. */
export const serverLockFile = (file: string) => `${file}-server.lock`;

/**
 * Holds a SQLite file for one server process. The server keeps its budget reservations in memory
 * (sqlite/spend-store.ts), so a second server on the same file would not see the first one's and
 * both could spend the same remainder. The lock is an exclusive transaction held open on a file of
 * its own beside the database: SQLite takes it as an OS file lock (fcntl), which the kernel drops
 * when the process ends, however it ends (kill -9 included), so a crashed server never leaves a
 * stale lock behind. The database file itself is not locked: the command line (`guardrails keys
 * revoke`, ...) reads and writes it while the server runs.
 */
export function takeServerLock(file: string): ServerLock {
  // timeout 0: a lock another process holds is an answer now, not something to wait for.
  const lock = new SqliteDatabase(serverLockFile(file), { timeout: 0 });
  try {
    // No journal file: nothing is ever written in it.
    lock.pragma("journal_mode = MEMORY");
    lock.exec("begin exclusive");
  } catch (err) {
    lock.close();
    if ((err as { code?: unknown }).code === "SQLITE_BUSY")
      throw new Error(
        `DATABASE_URL: another guardrails server is running on ${file}; one server process per SQLite file (several instances need PostgreSQL, see docs/deployment.md)`,
        { cause: err },
      );
    throw err;
  }
  return {
    release() {
      if (!lock.open) return;
      lock.exec("rollback");
      lock.close();
    },
  };
}
