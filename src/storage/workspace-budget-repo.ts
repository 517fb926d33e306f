import type { Executor, WorkspaceBudgetTable } from "./schema.js";

export type WorkspaceBudgetRow = WorkspaceBudgetTable;

const num = (r: WorkspaceBudgetRow): WorkspaceBudgetRow => ({
  ...r,
  // bigint columns: make sure arithmetic sees a number whatever the driver returns.
  limit_micros: Number(r.limit_micros),
  include_byok_in_budgets: Number(r.include_byok_in_budgets),
});

/** A workspace's budgets, by interval (daily, weekly, monthly, lifetime). */
export async function listWorkspaceBudgets(
  db: Executor,
  organizationId: string,
  workspaceId: string,
): Promise<WorkspaceBudgetRow[]> {
  const rows = await db
    .selectFrom("workspace_budgets")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where("workspace_id", "=", workspaceId)
    .orderBy("reset_interval", "asc")
    .execute();
  return rows.map(num);
}

/** The budgets of each of `workspaceIds`, by workspace, each list as listWorkspaceBudgets orders it (one query). */
export async function listBudgetsOfWorkspaces(
  db: Executor,
  organizationId: string,
  workspaceIds: readonly string[],
): Promise<Map<string, WorkspaceBudgetRow[]>> {
  const byWorkspace = new Map<string, WorkspaceBudgetRow[]>();
  if (workspaceIds.length === 0) return byWorkspace;
  const rows = await db
    .selectFrom("workspace_budgets")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where("workspace_id", "in", [...new Set(workspaceIds)])
    .orderBy("workspace_id", "asc")
    .orderBy("reset_interval", "asc")
    .execute();
  for (const row of rows) {
    const list = byWorkspace.get(row.workspace_id) ?? [];
    list.push(num(row));
    byWorkspace.set(row.workspace_id, list);
  }
  return byWorkspace;
}

/** Inserts a budget, or replaces the limit of the workspace's budget for that interval. */
export async function upsertWorkspaceBudget(db: Executor, row: WorkspaceBudgetRow): Promise<void> {
  await db
    .insertInto("workspace_budgets")
    .values(row)
    .onConflict((oc) =>
      oc.columns(["workspace_id", "reset_interval"]).doUpdateSet({
        limit_micros: row.limit_micros,
        updated_at: row.updated_at,
      }),
    )
    .execute();
}

/** The workspace-wide bring-your-own-key setting, written on every one of its budgets. */
export async function setWorkspaceBudgetsByok(
  db: Executor,
  organizationId: string,
  workspaceId: string,
  include: number,
): Promise<void> {
  await db
    .updateTable("workspace_budgets")
    .set({ include_byok_in_budgets: include })
    .where("organization_id", "=", organizationId)
    .where("workspace_id", "=", workspaceId)
    .execute();
}

export async function deleteWorkspaceBudget(
  db: Executor,
  organizationId: string,
  workspaceId: string,
  interval: string,
): Promise<boolean> {
  const result = await db
    .deleteFrom("workspace_budgets")
    .where("organization_id", "=", organizationId)
    .where("workspace_id", "=", workspaceId)
    .where("reset_interval", "=", interval)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Every budget of a workspace, when the workspace is deleted. */
export async function deleteWorkspaceBudgets(
  db: Executor,
  organizationId: string,
  workspaceId: string,
): Promise<void> {
  await db
    .deleteFrom("workspace_budgets")
    .where("organization_id", "=", organizationId)
    .where("workspace_id", "=", workspaceId)
    .execute();
}
