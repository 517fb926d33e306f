import { sql } from "kysely";
import type { Executor } from "./schema.js";
import type { CounterKey } from "./spend-repo.js";

/**
 * Settled spend from the daily rollup of one key or one workspace since `fromDay` (a UTC day,
 * inclusive; null: all time), bring-your-own-key spend only when `includeByok`.
 */
export async function settledSpendSince(
  db: Executor,
  organizationId: string,
  subject: { key_hash: string } | { workspace_id: string },
  fromDay: string | null,
  includeByok: boolean,
): Promise<number> {
  const who =
    "key_hash" in subject ? sql`key_hash = ${subject.key_hash}` : sql`workspace_id = ${subject.workspace_id}`;
  const since = fromDay === null ? sql`1 = 1` : sql`day >= ${fromDay}`;
  const byok = includeByok ? sql`1 = 1` : sql`byok = 0`;
  const result = await sql<{ spent: string | number | bigint | null }>`
    select sum(cost_micros) as spent from spend_rollup
     where organization_id = ${organizationId} and guardrail_id = '' and ${who} and ${since} and ${byok}`.execute(
    db,
  );
  return Number(result.rows[0]?.spent ?? 0);
}

/**
 * Makes a counter's settled spend at least `spent` (creating it if need be), never lowering it: a
 * limit set on a key or workspace that already spent in the window starts from that spend, and a
 * counter that already counts more (requests it admitted) keeps its own figure.
 */
export async function raiseCounterSpend(
  db: Executor,
  organizationId: string,
  key: CounterKey,
  spent: number,
): Promise<void> {
  await db
    .insertInto("budget_usage")
    .values({ organization_id: organizationId, ...key, spent_micros: spent, reserved_micros: 0 })
    .onConflict((oc) =>
      oc.columns(["guardrail_id", "scope", "subject", "reset_interval", "window_start"]).doUpdateSet({
        spent_micros: sql`case when budget_usage.spent_micros < excluded.spent_micros then excluded.spent_micros else budget_usage.spent_micros end`,
      }),
    )
    .execute();
}
