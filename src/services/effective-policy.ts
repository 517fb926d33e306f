import { type BudgetWindow, budgetWindow } from "../domain/budget-window.js";
import type { Guardrail } from "../domain/guardrail.js";
import { workspaceDefaultGuardrailId } from "../domain/ids.js";
import {
  type AppliedGuardrail,
  type BudgetLayer,
  combinePolicies,
  type EffectivePolicy,
} from "../domain/policy.js";
import { findKeyGuardrailIds } from "../storage/assignment-repo.js";
import { findGuardrail } from "../storage/guardrail-repo.js";
import { findKeyByHash, type KeyRecord } from "../storage/key-repo.js";
import type { ServiceDeps } from "./context.js";

export interface KeyPolicy {
  key: KeyRecord;
  applied: AppliedGuardrail[];
  policy: EffectivePolicy;
}

/** Loads the guardrails that apply to a key, in layer order (docs/behaviour.md#layers). */
async function loadApplied(deps: ServiceDeps, key: KeyRecord): Promise<AppliedGuardrail[]> {
  if (key.workspace_id === null) return [];
  const org = key.organization_id;
  const member = key.member_user_id ? { userId: key.member_user_id, workspaceId: key.workspace_id } : null;
  const ids = await findKeyGuardrailIds(deps.db, org, key.hash, member);
  const wanted: [AppliedGuardrail["layer"], string | undefined][] = [
    ["workspace_default", workspaceDefaultGuardrailId(key.workspace_id)],
    ["member", ids.member],
    ["key", ids.key],
  ];
  const applied: AppliedGuardrail[] = [];
  for (const [layer, id] of wanted) {
    if (id === undefined) continue;
    const guardrail: Guardrail | undefined = await findGuardrail(deps.db, org, id);
    // The workspace default applies only once materialized (docs/behaviour.md#layers).
    if (guardrail) applied.push({ layer, guardrail });
  }
  return applied;
}

/**
 * The effective policy of an inference key, from the warm cache when nothing changed since it was
 * computed (docs/behaviour.md#freshness). Undefined for an unknown or disabled key.
 */
export async function resolveKeyPolicy(deps: ServiceDeps, keyHash: string): Promise<KeyPolicy | undefined> {
  const result = await deps.caches.keyPolicies.getOrCompute(
    keyHash,
    async () => {
      const key = await findKeyByHash(deps.db, keyHash);
      if (key?.kind !== "inference" || key.disabled === 1) return null;
      const applied = await loadApplied(deps, key);
      return {
        key,
        applied,
        policy: combinePolicies(applied, deps.catalog.familyIds(), key.member_user_id !== null),
      };
    },
    (found) => found !== null,
  );
  return result ?? undefined;
}

export interface BudgetStatus extends BudgetLayer {
  window: BudgetWindow;
  spent_micros: number;
  reserved_micros: number;
}

/** Each budget layer with its current UTC window and the spend and open reservations in it. */
export function budgetStatuses(
  policy: EffectivePolicy,
  now: Date,
  usage: { spent: number[]; reserved: number[] },
): BudgetStatus[] {
  return policy.budgets.map((b, i) => ({
    ...b,
    window: budgetWindow(b.reset_interval, now),
    spent_micros: usage.spent[i] ?? 0,
    reserved_micros: usage.reserved[i] ?? 0,
  }));
}
