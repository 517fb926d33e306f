import type { ConsoleSessionTable, Executor } from "./schema.js";

export type SessionRecord = ConsoleSessionTable;

export async function insertSession(db: Executor, session: SessionRecord): Promise<void> {
  await db.insertInto("console_sessions").values(session).execute();
}

/** The session with this token digest, if it has not expired at `now` (ISO text compares in order). */
export async function findLiveSession(
  db: Executor,
  tokenHash: string,
  now: string,
): Promise<SessionRecord | undefined> {
  return db
    .selectFrom("console_sessions")
    .selectAll()
    .where("token_hash", "=", tokenHash)
    .where("expires_at", ">", now)
    .executeTakeFirst();
}

export async function deleteSession(db: Executor, tokenHash: string): Promise<void> {
  await db.deleteFrom("console_sessions").where("token_hash", "=", tokenHash).execute();
}

/** Removes sessions that ended before `now`, so the table holds only live ones and a few stale. */
export async function deleteExpiredSessions(db: Executor, now: string): Promise<void> {
  await db.deleteFrom("console_sessions").where("expires_at", "<=", now).execute();
}

/** Ends every session opened with this key (its revocation: docs/behaviour.md#management-key-revocation). */
export async function deleteKeySessions(db: Executor, keyHash: string): Promise<number> {
  const result = await db.deleteFrom("console_sessions").where("key_hash", "=", keyHash).executeTakeFirst();
  return Number(result.numDeletedRows);
}
