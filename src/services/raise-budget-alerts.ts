import { type BudgetAlert, reachedThresholds } from "../domain/budget-alerts.js";
import { budgetWindow } from "../domain/budget-window.js";
import type { ResetInterval } from "../domain/guardrail.js";
import { newId } from "../domain/ids.js";
import { microsToUsd } from "../domain/money.js";
import { insertAuditEntry } from "../storage/audit-repo.js";
import { claimBudgetAlert } from "../storage/budget-alert-repo.js";
import { type CounterKey, readCounters } from "../storage/spend-repo.js";
import type { ServiceDeps } from "./context.js";

/** A budget counter a settled request charged, with the thresholds its guardrail watches. */
export interface AlertWatch {
  counter: CounterKey;
  limit_micros: number;
  thresholds: readonly number[];
}

/** Audit entries of alerts name this actor: no key acted, spend reached a threshold. */
export const ALERT_ACTOR = "system";

/**
 * Raises the budget alerts that settled spend has reached on the watched counters and nobody raised
 * yet in their window: each one is claimed in the database (the dedupe) and written to the audit
 * log in the same transaction, and returned (`raised`) so that the caller can notify. Alerts already
 * raised, by this process or any other, are skipped; `reached` lists every threshold spend is at.
 */
export async function raiseBudgetAlerts(
  deps: ServiceDeps,
  organizationId: string,
  keyHash: string,
  watches: readonly AlertWatch[],
): Promise<{ raised: BudgetAlert[]; reached: BudgetAlert[] }> {
  if (watches.length === 0) return { raised: [], reached: [] };
  const usage = await readCounters(
    deps.db,
    organizationId,
    watches.map((w) => w.counter),
  );
  const createdAt = deps.now().toISOString();
  const candidates: BudgetAlert[] = [];
  watches.forEach((w, i) => {
    const spent = usage[i]?.spent_micros ?? 0;
    const interval = w.counter.reset_interval as ResetInterval;
    const resetsAt = budgetWindow(interval, new Date(w.counter.window_start)).resetsAt.toISOString();
    for (const threshold of reachedThresholds(w.thresholds, w.limit_micros, spent)) {
      candidates.push({
        organization_id: organizationId,
        guardrail_id: w.counter.guardrail_id,
        scope: w.counter.scope,
        subject: w.counter.subject,
        reset_interval: interval,
        window_start: w.counter.window_start,
        resets_at: resetsAt,
        threshold_percent: threshold,
        limit_micros: w.limit_micros,
        spent_micros: spent,
        key_hash: keyHash,
        created_at: createdAt,
      });
    }
  });
  if (candidates.length === 0) return { raised: [], reached: [] };
  const raised = await deps.transact(async (tx) => {
    const raised: BudgetAlert[] = [];
    for (const alert of candidates) {
      const { resets_at: _derived, ...row } = alert;
      if (!(await claimBudgetAlert(tx, row))) continue;
      await insertAuditEntry(tx, {
        id: newId(),
        organization_id: organizationId,
        actor_key_hash: ALERT_ACTOR,
        action: "guardrail.budget_alert",
        resource_type: "guardrail",
        resource_id: alert.guardrail_id,
        before: null,
        after: JSON.stringify({
          scope: alert.scope,
          subject: alert.subject,
          key_hash: alert.key_hash,
          reset_interval: alert.reset_interval,
          window_start: alert.window_start,
          threshold_percent: alert.threshold_percent,
          limit_usd: microsToUsd(alert.limit_micros),
          spend_usd: microsToUsd(alert.spent_micros),
        }),
        created_at: createdAt,
      });
      raised.push(alert);
    }
    return raised;
  });
  return { raised, reached: candidates };
}
