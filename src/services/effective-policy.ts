import { type BudgetInterval, budgetWindow, type LayerWindow } from "../domain/budget-window.js";
import { builtinLabel } from "../domain/content-filters.js";
import { workspaceDefaultGuardrailId } from "../domain/ids.js";
import {
  type AppliedGuardrail,
  type BudgetLayer,
  combinePolicies,
  type EffectivePolicy,
  type OwnBudgets,
} from "../domain/policy.js";
import { findKeysGuardrailIds, memberSlot } from "../storage/assignment-repo.js";
import { findGuardrails } from "../storage/guardrail-repo.js";
import { findKeyByHash, type KeyRecord } from "../storage/key-repo.js";
import type { Executor } from "../storage/schema.js";
import { listBudgetsOfWorkspaces, type WorkspaceBudgetRow } from "../storage/workspace-budget-repo.js";
import type { KeyPolicy, ServiceDeps } from "./context.js";

// Callers outside the services (the gateway) name a key and its policy through this module.
export type { KeyPolicy, KeyRecord };

/** A key's own limit and its workspace's budgets (`workspaceBudgets`), as budget layers take them. */
function ownBudgetsOf(key: KeyRecord, workspaceBudgets: readonly WorkspaceBudgetRow[]): OwnBudgets {
  const keyLimit =
    key.limit_micros === null
      ? null
      : {
          limit_micros: Number(key.limit_micros),
          reset_interval: (key.limit_reset ?? "lifetime") as BudgetInterval,
          include_byok: Number(key.include_byok_in_limit) === 1,
        };
  const workspace = workspaceBudgets.map((b) => ({
    limit_micros: b.limit_micros,
    reset_interval: b.reset_interval as BudgetInterval,
    include_byok: b.include_byok_in_budgets === 1,
  }));
  return { key_limit: keyLimit, workspace };
}

/**
 * Keys' guardrails and effective policies, each with every budget layer that counts it, read now
 * (no cache; disabled keys too), in the order of `keys`. The reads are one query per kind of row
 * (key and member assignments, guardrails, workspace budgets) whatever the number of keys, so a page
 * of keys costs what one key does. Keys of one organization.
 */
export async function loadKeyPolicies(
  deps: ServiceDeps,
  organizationId: string,
  keys: readonly KeyRecord[],
  db: Executor = deps.db,
): Promise<KeyPolicy[]> {
  const governed = keys.flatMap((key) =>
    key.workspace_id === null ? [] : [{ key, workspaceId: key.workspace_id }],
  );
  const assigned = await findKeysGuardrailIds(
    db,
    organizationId,
    governed.map(({ key }) => ({ hash: key.hash, memberUserId: key.member_user_id })),
  );
  /** Each governed key's layers and the guardrail each names, in layer order (docs/behaviour.md#layers). */
  const wanted = governed.map(({ key, workspaceId }) => {
    const layers: [AppliedGuardrail["layer"], string | undefined][] = [
      ["workspace_default", workspaceDefaultGuardrailId(workspaceId)],
      [
        "member",
        key.member_user_id ? assigned.byMember.get(memberSlot(workspaceId, key.member_user_id)) : undefined,
      ],
      ["key", assigned.byKey.get(key.hash)],
    ];
    return { key, layers };
  });
  const guardrails = await findGuardrails(
    db,
    organizationId,
    wanted.flatMap(({ layers }) => layers.flatMap(([, id]) => (id === undefined ? [] : [id]))),
  );
  const budgets = await listBudgetsOfWorkspaces(
    db,
    organizationId,
    governed.map(({ workspaceId }) => workspaceId),
  );
  const appliedByKey = new Map<string, AppliedGuardrail[]>();
  for (const { key, layers } of wanted) {
    const applied: AppliedGuardrail[] = [];
    for (const [layer, id] of layers) {
      const guardrail = id === undefined ? undefined : guardrails.get(id);
      // The workspace default applies only once materialized (docs/behaviour.md#layers).
      if (guardrail) applied.push({ layer, guardrail });
    }
    appliedByKey.set(key.hash, applied);
  }
  return keys.map((key) => {
    const applied = appliedByKey.get(key.hash) ?? [];
    const own = ownBudgetsOf(key, key.workspace_id === null ? [] : (budgets.get(key.workspace_id) ?? []));
    return {
      key,
      applied,
      policy: combinePolicies(applied, deps.catalog.familyIds(), key.member_user_id !== null, own),
    };
  });
}

/** One key's guardrails and effective policy, read now: loadKeyPolicies for one key. */
export async function loadKeyPolicy(
  deps: ServiceDeps,
  key: KeyRecord,
  db: Executor = deps.db,
): Promise<KeyPolicy> {
  const [loaded] = await loadKeyPolicies(deps, key.organization_id, [key], db);
  if (!loaded) throw new Error("a key loaded is a key with a policy");
  return loaded;
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
    // Each direction's filters, combined on their own: those reading requests as the specification
    // has them, then those reading answers, marked `apply_to: "response"` (docs/behaviour.md#apply-to).
    content_filter_builtins: [
      ...p.content_filter_builtins.map((f) => ({ ...f, label: builtinLabel(f.slug) })),
      ...p.answer_filter_builtins.map((f) => ({ ...f, label: builtinLabel(f.slug), apply_to: "response" })),
    ],
    content_filters: [...p.content_filters, ...p.answer_filters.map((f) => ({ ...f, apply_to: "response" }))],
  };
  for (const family of familyIds) out[`enforce_zdr_${family}`] = p.enforce_zdr[family] ?? false;
  return out;
}
