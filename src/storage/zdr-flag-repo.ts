import type { Executor } from "./schema.js";

export interface StoredZdrFlags {
  id: string;
  organization_id: string;
  enforce_zdr: Record<string, boolean>;
  version: number;
}

/** Every guardrail's ZDR flags as stored, across organizations (the start-up family rename). */
export async function listStoredZdrFlags(db: Executor): Promise<StoredZdrFlags[]> {
  const rows = await db
    .selectFrom("guardrails")
    .select(["id", "organization_id", "enforce_zdr", "version"])
    .orderBy("id")
    .execute();
  return rows.map((r) => ({
    id: r.id,
    organization_id: r.organization_id,
    enforce_zdr: JSON.parse(r.enforce_zdr) as Record<string, boolean>,
    version: Number(r.version),
  }));
}

/** Writes new flags over the version they were computed from; false when another writer came first. */
export async function replaceZdrFlags(
  db: Executor,
  row: StoredZdrFlags,
  flags: Record<string, boolean>,
): Promise<boolean> {
  const result = await db
    .updateTable("guardrails")
    .set({ enforce_zdr: JSON.stringify(flags), version: row.version + 1 })
    .where("organization_id", "=", row.organization_id)
    .where("id", "=", row.id)
    .where("version", "=", row.version)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
