import { type RowLock, withLock } from "./row-lock.js";
import type { Executor, KeyTable } from "./schema.js";

export type KeyRecord = KeyTable;

export async function insertKey(db: Executor, key: KeyRecord): Promise<void> {
  await db.insertInto("keys").values(key).execute();
}

export async function findKeyByHash(db: Executor, hash: string): Promise<KeyRecord | undefined> {
  return db.selectFrom("keys").selectAll().where("hash", "=", hash).executeTakeFirst();
}

export async function findOrganizationKey(
  db: Executor,
  organizationId: string,
  hash: string,
  lock?: RowLock,
): Promise<KeyRecord | undefined> {
  return db
    .selectFrom("keys")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where("hash", "=", hash)
    .$call((q) => withLock(q, lock))
    .executeTakeFirst();
}

/** An organization's keys of one kind, as a query the lists narrow further. */
function keysOfKind(db: Executor, organizationId: string, kind: "inference" | "management") {
  return db.selectFrom("keys").where("organization_id", "=", organizationId).where("kind", "=", kind);
}

/** A page of keys, oldest first (ties by hash), with the count of every key the query selects. */
async function pageOfKeys(
  base: ReturnType<typeof keysOfKind>,
  page: { offset: number; limit: number },
): Promise<{ items: KeyRecord[]; total: number }> {
  const items = await base
    .selectAll()
    .orderBy("created_at", "asc")
    .orderBy("hash", "asc")
    .offset(page.offset)
    .limit(page.limit)
    .execute();
  const count = await base.select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
  return { items, total: Number(count.n) };
}

export async function listInferenceKeys(
  db: Executor,
  organizationId: string,
  page: { offset: number; limit: number; workspaceId?: string; includeDisabled?: boolean },
): Promise<{ items: KeyRecord[]; total: number }> {
  let base = keysOfKind(db, organizationId, "inference");
  if (page.workspaceId !== undefined) base = base.where("workspace_id", "=", page.workspaceId);
  if (page.includeDisabled === false) base = base.where("disabled", "=", 0);
  return pageOfKeys(base, page);
}

/**
 * An organization's management keys that still authenticate, oldest first; a revoked one stays as a
 * disabled row (docs/behaviour.md#management-key-revocation) and is not listed.
 */
export async function listActiveManagementKeys(
  db: Executor,
  organizationId: string,
  page: { offset: number; limit: number },
): Promise<{ items: KeyRecord[]; total: number }> {
  const base = keysOfKind(db, organizationId, "management").where("disabled", "=", 0);
  return pageOfKeys(base, page);
}

/**
 * The hashes of an organization's active management keys, each row locked (in hash order, so two
 * revocations lock alike and cannot deadlock) until the transaction ends. On PostgreSQL a revocation
 * that waited re-reads the rows as committed, so two racing revocations cannot both see a second key.
 */
export async function lockActiveManagementKeys(
  db: Executor,
  organizationId: string,
  lock?: RowLock,
): Promise<string[]> {
  const rows = await db
    .selectFrom("keys")
    .select("hash")
    .where("organization_id", "=", organizationId)
    .where("kind", "=", "management")
    .where("disabled", "=", 0)
    .orderBy("hash", "asc")
    .$call((q) => withLock(q, lock))
    .execute();
  return rows.map((r) => r.hash);
}

/** Marks a key revoked for good: it stays as a disabled row so its secret is never registered again. */
export async function revokeKeyRow(
  db: Executor,
  organizationId: string,
  hash: string,
  at: string,
): Promise<void> {
  await db
    .updateTable("keys")
    .set({ disabled: 1, updated_at: at })
    .where("organization_id", "=", organizationId)
    .where("hash", "=", hash)
    .execute();
}

/** Management keys that still authenticate, in every organization. */
export async function countManagementKeys(db: Executor): Promise<number> {
  const row = await db
    .selectFrom("keys")
    .where("kind", "=", "management")
    .where("disabled", "=", 0)
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function deleteKey(db: Executor, organizationId: string, hash: string): Promise<boolean> {
  const result = await db
    .deleteFrom("keys")
    .where("organization_id", "=", organizationId)
    .where("hash", "=", hash)
    .executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

export async function deleteWorkspaceKeys(
  db: Executor,
  organizationId: string,
  workspaceId: string,
): Promise<void> {
  await db
    .deleteFrom("keys")
    .where("organization_id", "=", organizationId)
    .where("workspace_id", "=", workspaceId)
    .execute();
}

/** Writes a key's mutable fields. */
export async function updateKeyRow(db: Executor, key: KeyRecord): Promise<void> {
  await db
    .updateTable("keys")
    .set({
      name: key.name,
      disabled: key.disabled,
      updated_at: key.updated_at,
      limit_micros: key.limit_micros,
      limit_reset: key.limit_reset,
      include_byok_in_limit: key.include_byok_in_limit,
    })
    .where("organization_id", "=", key.organization_id)
    .where("hash", "=", key.hash)
    .execute();
}
