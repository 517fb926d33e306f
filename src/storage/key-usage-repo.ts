import { sql } from "kysely";
import type { Executor } from "./schema.js";

export interface KeySpendRow {
  key_hash: string;
  byok: boolean;
  /** Micro-dollars: all time, and since each window's start. */
  total: number;
  daily: number;
  weekly: number;
  monthly: number;
}

/** Sums the ledger of some keys of one organization, split by BYOK, in one statement. */
export async function sumKeySpend(
  db: Executor,
  organizationId: string,
  hashes: readonly string[],
  starts: { daily: string; weekly: string; monthly: string },
): Promise<KeySpendRow[]> {
  const since = (start: string) =>
    sql<string>`coalesce(sum(case when created_at >= ${start} then cost_micros else 0 end), 0)`;
  const rows = await db
    .selectFrom("spend_ledger")
    .select([
      "key_hash",
      "byok",
      sql<string>`coalesce(sum(cost_micros), 0)`.as("total"),
      since(starts.daily).as("daily"),
      since(starts.weekly).as("weekly"),
      since(starts.monthly).as("monthly"),
    ])
    .where("organization_id", "=", organizationId)
    .where("key_hash", "in", [...hashes])
    .groupBy(["key_hash", "byok"])
    .execute();
  // PostgreSQL returns bigint sums as text.
  return rows.map((r) => ({
    key_hash: r.key_hash,
    byok: Number(r.byok) === 1,
    total: Number(r.total),
    daily: Number(r.daily),
    weekly: Number(r.weekly),
    monthly: Number(r.monthly),
  }));
}
