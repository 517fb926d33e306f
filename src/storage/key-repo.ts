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

export async function listInferenceKeys(
  db: Executor,
  organizationId: string,
  page: { offset: number; limit: number; workspaceId?: string; includeDisabled?: boolean },
): Promise<{ items: KeyRecord[]; total: number }> {
  let base = db
    .selectFrom("keys")
    .where("organization_id", "=", organizationId)
    .where("kind", "=", "inference");
  if (page.workspaceId !== undefined) base = base.where("workspace_id", "=", page.workspaceId);
  if (page.includeDisabled === false) base = base.where("disabled", "=", 0);
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

export async function countManagementKeys(db: Executor): Promise<number> {
  const row = await db
    .selectFrom("keys")
    .where("kind", "=", "management")
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
