import type { BudgetAlertTable, Executor } from "./schema.js";

/**
 * Records that an alert was raised, unless a row for the same counter, window and threshold exists:
 * true only for the one writer whose row went in, on SQLite and PostgreSQL alike, so whoever else
 * settled spend on that counter (another request, another instance) does not raise it again.
 */
export async function claimBudgetAlert(db: Executor, row: BudgetAlertTable): Promise<boolean> {
  const result = await db
    .insertInto("budget_alerts")
    .values(row)
    .onConflict((oc) =>
      oc
        .columns(["guardrail_id", "scope", "subject", "reset_interval", "window_start", "threshold_percent"])
        .doNothing(),
    )
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
}

/** The alerts raised for an organization's budgets, oldest first (for operators and tests). */
export async function listBudgetAlerts(db: Executor, organizationId: string): Promise<BudgetAlertTable[]> {
  const rows = await db
    .selectFrom("budget_alerts")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .orderBy("created_at", "asc")
    .orderBy("threshold_percent", "asc")
    .execute();
  return rows.map((r) => ({
    ...r,
    threshold_percent: Number(r.threshold_percent),
    limit_micros: Number(r.limit_micros),
    spent_micros: Number(r.spent_micros),
  }));
}
