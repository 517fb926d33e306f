import { type BudgetInterval, budgetWindow, type LayerWindow } from "../domain/budget-window.js";
import type { Guardrail } from "../domain/guardrail.js";
import { workspaceDefaultGuardrailId } from "../domain/ids.js";
import {
  type AppliedGuardrail,
  type BudgetLayer,
  combinePolicies,
  type EffectivePolicy,
  type OwnBudgets,
} from "../domain/policy.js";
import { findKeyGuardrailIds } from "../storage/assignment-repo.js";
import { findGuardrail } from "../storage/guardrail-repo.js";
import { findKeyByHash, type KeyRecord } from "../storage/key-repo.js";
import type { Executor } from "../storage/schema.js";
import { listWorkspaceBudgets } from "../storage/workspace-budget-repo.js";
import type { ServiceDeps } from "./context.js";

export interface KeyPolicy {
  key: KeyRecord;
  applied: AppliedGuardrail[];
  policy: EffectivePolicy;
}

/** Loads the guardrails that apply to a key, in layer order. */
async function loadApplied(
  deps: ServiceDeps,
  key: KeyRecord,
  db: Executor = deps.db,
): Promise<AppliedGuardrail[]> {
  if (key.workspace_id === null) return [];
  const org = key.organization_id;
  const member = key.member_user_id ? { userId: key.member_user_id, workspaceId: key.workspace_id } : null;
  const ids = await findKeyGuardrailIds(db, org, key.hash, member);
  const wanted: [AppliedGuardrail["layer"], string | undefined][] = [
    ["workspace_default", workspaceDefaultGuardrailId(key.workspace_id)],
    ["member", ids.member],
    ["key", ids.key],
  ];
  const applied: AppliedGuardrail[] = [];
  for (const [layer, id] of wanted) {
    if (id === undefined) continue;
    const guardrail: Guardrail | undefined = await findGuardrail(db, org, id);
    // The workspace default applies only once materialized (decisions §9).
    if (guardrail) applied.push({ layer, guardrail });
  }
  return applied;
}

/** The key's own limit and its workspace's budgets, as budget layers take them. */
async function loadOwnBudgets(
  deps: ServiceDeps,
  key: KeyRecord,
  db: Executor = deps.db,
): Promise<OwnBudgets> {
  const keyLimit =
    key.limit_micros === null
      ? null
      : {
          limit_micros: Number(key.limit_micros),
          reset_interval: (key.limit_reset ?? "lifetime") as BudgetInterval,
          include_byok: Number(key.include_byok_in_limit) === 1,
        };
  const workspace =
    key.workspace_id === null
      ? []
      : (await listWorkspaceBudgets(db, key.organization_id, key.workspace_id)).map((b) => ({
          limit_micros: b.limit_micros,
          reset_interval: b.reset_interval as BudgetInterval,
          include_byok: b.include_byok_in_budgets === 1,
        }));
  return { key_limit: keyLimit, workspace };
}

/**
 * A key's guardrails and effective policy with every budget layer that counts it, read now (no
 * cache; disabled keys too): for presenting keys, where the gateway uses resolveKeyPolicy.
 */
export async function loadKeyPolicy(
  deps: ServiceDeps,
  key: KeyRecord,
  db: Executor = deps.db,
): Promise<KeyPolicy> {
  const applied = await loadApplied(deps, key, db);
  const own = await loadOwnBudgets(deps, key, db);
  return {
    key,
    applied,
    policy: combinePolicies(applied, deps.catalog.familyIds(), key.member_user_id !== null, own),
  };
}

/**
 * The effective policy of an inference key, from the warm cache when nothing changed since it was
 * computed (issue 3, freshness). Undefined for an unknown or disabled key.
 */
export async function resolveKeyPolicy(deps: ServiceDeps, keyHash: string): Promise<KeyPolicy | undefined> {
  const result = await deps.caches.keyPolicies.getOrCompute(
    keyHash,
    async () => {
      const key = await findKeyByHash(deps.db, keyHash);
      if (key?.kind !== "inference" || key.disabled === 1) return null;
      return loadKeyPolicy(deps, key);
    },
    (found) => found !== null,
  );
  return result ?? undefined;
}

export interface BudgetStatus extends BudgetLayer {
  window: LayerWindow;
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
