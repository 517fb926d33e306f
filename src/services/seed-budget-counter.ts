import { type BudgetInterval, budgetWindow } from "../domain/budget-window.js";
import { counterIdOf } from "../domain/policy.js";
import { raiseCounterSpend, settledSpendSince } from "../storage/budget-seed-repo.js";
import type { Executor } from "../storage/schema.js";

/**
 * Starts the counter of a key's own limit or a workspace budget, in the current window, from what
 * the key or workspace already spent there (docs/gateway.md#budgets): a limit set after spending
 * holds what is left, as `limit_remaining` says, rather than the whole limit again.
 */
export async function seedBudgetCounter(
  db: Executor,
  organizationId: string,
  owner: { kind: "key"; hash: string } | { kind: "workspace"; id: string },
  interval: BudgetInterval,
  includeByok: boolean,
  now: Date,
): Promise<void> {
  const start = budgetWindow(interval, now).start;
  const spent = await settledSpendSince(
    db,
    organizationId,
    owner.kind === "key" ? { key_hash: owner.hash } : { workspace_id: owner.id },
    interval === "lifetime" ? null : start.toISOString().slice(0, 10),
    includeByok,
  );
  if (spent <= 0) return;
  const layer = owner.kind === "key" ? "key_limit" : "workspace_budget";
  await raiseCounterSpend(
    db,
    organizationId,
    {
      guardrail_id: counterIdOf({ guardrail_id: null, layer }),
      scope: owner.kind,
      subject: owner.kind === "key" ? owner.hash : owner.id,
      reset_interval: interval,
      window_start: start.toISOString(),
    },
    spent,
  );
}
