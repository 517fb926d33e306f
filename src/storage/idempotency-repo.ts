import type { Executor, IdempotencyTable } from "./schema.js";

export async function findIdempotencyRecord(
  db: Executor,
  organizationId: string,
  keyHash: string,
  notBefore: string,
): Promise<IdempotencyTable | undefined> {
  return db
    .selectFrom("idempotency_keys")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where("key_hash", "=", keyHash)
    .where("created_at", ">=", notBefore)
    .executeTakeFirst();
}

/** Stores a response; an expired record under the same key is replaced. */
export async function saveIdempotencyRecord(db: Executor, record: IdempotencyTable): Promise<void> {
  await db
    .deleteFrom("idempotency_keys")
    .where("organization_id", "=", record.organization_id)
    .where("key_hash", "=", record.key_hash)
    .execute();
  await db.insertInto("idempotency_keys").values(record).execute();
}

export async function purgeIdempotencyRecords(db: Executor, before: string): Promise<void> {
  await db.deleteFrom("idempotency_keys").where("created_at", "<", before).execute();
}
