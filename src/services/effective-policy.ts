import { type BudgetInterval, budgetWindow, type LayerWindow } from "../domain/budget-window.js";
import { builtinLabel } from "../domain/content-filters.js";
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
import type { KeyPolicy, ServiceDeps } from "./context.js";

// Callers outside the services (the gateway) name a key and its policy through this module.
export type { KeyPolicy, KeyRecord };

/** Loads the guardrails that apply to a key, in layer order (docs/behaviour.md#layers). */
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
    // The workspace default applies only once materialized (docs/behaviour.md#layers).
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
 * computed (docs/behaviour.md#freshness). Undefined for an unknown or disabled key.
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

/** The effective policy as GET /api/v1/key shows it: the guardrail fields, labels and flags by name. */
export function presentPolicy(p: EffectivePolicy, familyIds: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {
    allowed_data_regions: p.allowed_data_regions,
    allowed_models: p.allowed_models,
    allowed_providers: p.allowed_providers,
    ignored_models: p.ignored_models,
    ignored_providers: p.ignored_providers,
    enable_free_model_publication: p.enable_free_model_publication,
    enable_free_model_training: p.enable_free_model_training,
    enable_paid_model_training: p.enable_paid_model_training,
    content_filter_builtins: p.content_filter_builtins.map((f) => ({ ...f, label: builtinLabel(f.slug) })),
    content_filters: p.content_filters,
  };
  for (const family of familyIds) out[`enforce_zdr_${family}`] = p.enforce_zdr[family] ?? false;
  return out;
}
