import type { Selectable } from "kysely";
import type { AuditTable, Executor } from "./schema.js";
import { insertRow } from "./shaped-query.js";

export type AuditEntry = Selectable<AuditTable>;
/** An entry as written: the database numbers it (seq). */
export type AuditEntryRow = Omit<AuditEntry, "seq">;

/** Appends an entry, in the caller's transaction. */
export async function insertAuditEntry(db: Executor, entry: AuditEntryRow): Promise<void> {
  await insertRow(db, "audit_log", entry as AuditTable);
}

/** Each filter narrows the entries; `since` is included, `until` excluded (ISO-8601 UTC). */
export interface AuditFilter {
  resourceId?: string;
  resourceType?: string;
  actor?: string;
  since?: string;
  until?: string;
}

export async function listAuditEntries(
  db: Executor,
  organizationId: string,
  page: { offset: number; limit: number } & AuditFilter,
): Promise<{ items: AuditEntry[]; total: number }> {
  let base = db.selectFrom("audit_log").where("organization_id", "=", organizationId);
  if (page.resourceId !== undefined) base = base.where("resource_id", "=", page.resourceId);
  if (page.resourceType !== undefined) base = base.where("resource_type", "=", page.resourceType);
  if (page.actor !== undefined) base = base.where("actor_key_hash", "=", page.actor);
  // Timestamps are stored as ISO-8601 UTC text of one width, so text order is time order.
  if (page.since !== undefined) base = base.where("created_at", ">=", page.since);
  if (page.until !== undefined) base = base.where("created_at", "<", page.until);
  const items = await base.selectAll().orderBy("seq", "desc").offset(page.offset).limit(page.limit).execute();
  const count = await base.select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
  return { items, total: Number(count.n) };
}
