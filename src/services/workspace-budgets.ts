import type { BudgetInterval } from "../domain/budget-window.js";
import { invalidRequest, notFound } from "../domain/errors.js";
import { isUuid, newId } from "../domain/ids.js";
import { MAX_LIMIT_USD, microsToUsd, usdToMicros } from "../domain/money.js";
import type { Executor } from "../storage/schema.js";
import {
  deleteWorkspaceBudget,
  listWorkspaceBudgets,
  setWorkspaceBudgetsByok,
  upsertWorkspaceBudget,
  type WorkspaceBudgetRow,
} from "../storage/workspace-budget-repo.js";
import { findWorkspace, findWorkspaceBySlug, type Workspace } from "../storage/workspace-repo.js";
import { inTransaction, isoNow, type Principal, recordAudit, rowLock, type ServiceDeps } from "./context.js";
import { seedBudgetCounter } from "./seed-budget-counter.js";

/** The intervals a workspace budget may have; "lifetime" never resets. */
export const WORKSPACE_BUDGET_INTERVALS = ["daily", "weekly", "monthly", "lifetime"] as const;

/** A workspace's budgets as the reference SDK reads them, with the workspace-wide BYOK setting. */
export interface WorkspaceBudgets {
  data: Record<string, unknown>[];
  include_byok_in_budgets: boolean;
}

/** A budget as the reference SDK reads it: a lifetime budget's `reset_interval` is null. */
export function presentWorkspaceBudget(b: WorkspaceBudgetRow): Record<string, unknown> {
  return {
    id: b.id,
    workspace_id: b.workspace_id,
    limit_usd: microsToUsd(b.limit_micros),
    reset_interval: b.reset_interval === "lifetime" ? null : b.reset_interval,
    created_at: b.created_at,
    updated_at: b.updated_at,
  };
}

function intervalOf(value: string): BudgetInterval {
  if ((WORKSPACE_BUDGET_INTERVALS as readonly string[]).includes(value)) return value as BudgetInterval;
  throw invalidRequest([{ path: "/interval", message: "must be daily, weekly, monthly or lifetime" }]);
}

/** A workspace of the caller's organization by id or slug; another organization's is unknown (404). */
async function workspaceOf(
  db: Executor,
  principal: Principal,
  ref: string,
  lock?: "key share",
): Promise<Workspace> {
  const ws = isUuid(ref)
    ? await findWorkspace(db, principal.organizationId, ref, lock)
    : await findWorkspaceBySlug(db, principal.organizationId, ref);
  if (!ws) throw notFound();
  return ws;
}

const rank = (interval: string) => (WORKSPACE_BUDGET_INTERVALS as readonly string[]).indexOf(interval);

/**
 * Limits must strictly decrease as the interval narrows (lifetime > monthly > weekly > daily), as
 * in the reference service: a narrower budget at or over a wider one could never refuse anything.
 * What the new limit breaks, or null.
 */
function orderClash(others: readonly WorkspaceBudgetRow[], interval: string, micros: number): string | null {
  for (const o of others) {
    if (o.reset_interval === interval) continue;
    const wider = rank(o.reset_interval) > rank(interval);
    if (wider ? micros >= o.limit_micros : micros <= o.limit_micros) {
      const usd = microsToUsd(o.limit_micros);
      return wider
        ? `must be less than the ${o.reset_interval} budget's ${usd}: limits decrease as the interval narrows`
        : `must be more than the ${o.reset_interval} budget's ${usd}: limits decrease as the interval narrows`;
    }
  }
  return null;
}

const byokOf = (rows: readonly WorkspaceBudgetRow[]) => rows.some((r) => r.include_byok_in_budgets === 1);

/**
 * Sets the workspace's budget for one interval (replacing its limit if there is one), and, when
 * sent, the workspace-wide bring-your-own-key setting on all its budgets. The gateway enforces
 * each as a budget layer over all the workspace's keys (docs/gateway.md#budgets).
 */
export async function setWorkspaceBudget(
  deps: ServiceDeps,
  principal: Principal,
  ref: string,
  intervalParam: string,
  input: { limit_usd: number; include_byok_in_budgets?: boolean },
): Promise<{ budget: WorkspaceBudgetRow; include_byok_in_budgets: boolean }> {
  // Validated before anything is read or written: bad input changes nothing.
  const interval = intervalOf(intervalParam);
  const micros = usdToMicros(input.limit_usd);
  if (!(input.limit_usd > 0) || input.limit_usd > MAX_LIMIT_USD || micros === undefined || micros <= 0) {
    throw invalidRequest([
      {
        path: "/limit_usd",
        message: `must be more than 0 and at most ${MAX_LIMIT_USD}, kept to the micro-dollar (6 decimals)`,
      },
    ]);
  }
  return inTransaction(deps, async (tx) => {
    // Locked (PostgreSQL) so that a workspace deleted meanwhile leaves no budget behind.
    const ws = await workspaceOf(tx, principal, ref, rowLock(deps, "key share"));
    const before = await listWorkspaceBudgets(tx, principal.organizationId, ws.id);
    const existing = before.find((b) => b.reset_interval === interval);
    const clash = orderClash(before, interval, micros);
    if (clash) throw invalidRequest([{ path: "/limit_usd", message: clash }], { reason: "budget_order" });
    const include = input.include_byok_in_budgets ?? byokOf(before);
    const now = isoNow(deps);
    const budget: WorkspaceBudgetRow = {
      id: existing?.id ?? newId(),
      organization_id: principal.organizationId,
      workspace_id: ws.id,
      reset_interval: interval,
      limit_micros: micros,
      include_byok_in_budgets: include ? 1 : 0,
      created_at: existing?.created_at ?? now,
      updated_at: now,
    };
    await upsertWorkspaceBudget(tx, budget);
    await setWorkspaceBudgetsByok(tx, principal.organizationId, ws.id, budget.include_byok_in_budgets);
    for (const b of [...before.filter((o) => o.reset_interval !== interval), budget]) {
      await seedBudgetCounter(
        tx,
        principal.organizationId,
        { kind: "workspace", id: ws.id },
        b.reset_interval as BudgetInterval,
        include,
        deps.now(),
      );
    }
    await recordAudit(deps, tx, principal, {
      action: "workspace.budget_set",
      resource_type: "workspace",
      resource_id: ws.id,
      before: existing
        ? { ...presentWorkspaceBudget(existing), include_byok_in_budgets: byokOf(before) }
        : null,
      after: { ...presentWorkspaceBudget(budget), include_byok_in_budgets: include },
    });
    return { budget, include_byok_in_budgets: include };
  });
}

export async function listBudgetsOfWorkspace(
  deps: ServiceDeps,
  principal: Principal,
  ref: string,
): Promise<{ rows: WorkspaceBudgetRow[]; include_byok_in_budgets: boolean }> {
  const ws = await workspaceOf(deps.db, principal, ref);
  const rows = await listWorkspaceBudgets(deps.db, principal.organizationId, ws.id);
  return {
    rows: rows.sort((a, b) => rank(a.reset_interval) - rank(b.reset_interval)),
    include_byok_in_budgets: byokOf(rows),
  };
}

/** One budget of a workspace; 404 when the workspace has none for that interval. */
export async function getWorkspaceBudget(
  deps: ServiceDeps,
  principal: Principal,
  ref: string,
  intervalParam: string,
): Promise<{ budget: WorkspaceBudgetRow; include_byok_in_budgets: boolean }> {
  const interval = intervalOf(intervalParam);
  const { rows, include_byok_in_budgets } = await listBudgetsOfWorkspace(deps, principal, ref);
  const budget = rows.find((r) => r.reset_interval === interval);
  if (!budget) throw notFound();
  return { budget, include_byok_in_budgets };
}

/** Deletes a workspace's budget for one interval; a budget that does not exist is deleted already. */
export async function removeWorkspaceBudget(
  deps: ServiceDeps,
  principal: Principal,
  ref: string,
  intervalParam: string,
): Promise<void> {
  const interval = intervalOf(intervalParam);
  await inTransaction(deps, async (tx) => {
    const ws = await workspaceOf(tx, principal, ref, rowLock(deps, "key share"));
    const before = (await listWorkspaceBudgets(tx, principal.organizationId, ws.id)).find(
      (b) => b.reset_interval === interval,
    );
    if (!before) return;
    await deleteWorkspaceBudget(tx, principal.organizationId, ws.id, interval);
    await recordAudit(deps, tx, principal, {
      action: "workspace.budget_delete",
      resource_type: "workspace",
      resource_id: ws.id,
      before: presentWorkspaceBudget(before),
      after: null,
    });
  });
}
