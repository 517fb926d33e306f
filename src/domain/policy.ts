import type { BudgetInterval } from "./budget-window.js";
import type { Region } from "./catalog.js";
import {
  type ApplyTo,
  appliesTo,
  type BuiltinFilter,
  type CustomFilter,
  type Direction,
  type FilterAction,
} from "./content-filters.js";
import type { Guardrail } from "./guardrail.js";

/** Where a guardrail applying to a key comes from (docs/behaviour.md#layers). */
export type Layer = "workspace_default" | "member" | "key";

export interface AppliedGuardrail {
  layer: Layer;
  guardrail: Guardrail;
}

/**
 * Whose spend a budget counts: the key's own, all the owning member's keys in the workspace, or
 * all the workspace's keys.
 */
export type BudgetScope = "key" | "member" | "workspace";

/**
 * Where a budget layer comes from: a guardrail applying at one of its layers, the key's own limit,
 * or one of its workspace's budgets. Refusals name it, so a client knows which limit it hit.
 */
export type BudgetLayerKind = Layer | "key_limit" | "workspace_budget";

export interface BudgetLayer {
  /** The guardrail whose budget this is; null for a key's own limit and a workspace budget. */
  guardrail_id: string | null;
  layer: BudgetLayerKind;
  scope: BudgetScope;
  limit_micros: number;
  reset_interval: BudgetInterval;
  include_byok_in_budgets: boolean;
}

/** The budgets a key carries beside its guardrails': its own limit and its workspace's budgets. */
export interface OwnBudgets {
  key_limit: { limit_micros: number; reset_interval: BudgetInterval; include_byok: boolean } | null;
  workspace: readonly { limit_micros: number; reset_interval: BudgetInterval; include_byok: boolean }[];
}

/**
 * The id a layer's spend counters are kept under: its guardrail's, or for a key's own limit and a
 * workspace budget the kind's name, which no guardrail id can equal.
 */
export function counterIdOf(layer: { guardrail_id: string | null; layer: BudgetLayerKind }): string {
  return layer.guardrail_id ?? layer.layer;
}

/**
 * Whose spend a layer of a key counts, as its counter's subject: the key's hash, the member in the
 * workspace (all the member's keys there), or the workspace (all its keys).
 */
export function counterSubject(
  key: { hash: string; workspace_id: string | null; member_user_id: string | null },
  scope: BudgetScope,
): string {
  if (scope === "key") return key.hash;
  if (scope === "workspace") return key.workspace_id ?? "";
  return `${key.workspace_id}:${key.member_user_id}`;
}

export const NO_OWN_BUDGETS: OwnBudgets = { key_limit: null, workspace: [] };

const INTERVAL_ORDER: Record<BudgetInterval, number> = { daily: 0, weekly: 1, monthly: 2, lifetime: 3 };

/** The one policy that governs a key's requests: every applicable guardrail combined. */
export interface EffectivePolicy {
  allowed_data_regions: Region[] | null;
  allowed_models: string[] | null;
  allowed_providers: string[] | null;
  ignored_models: string[];
  ignored_providers: string[];
  enforce_zdr: Record<string, boolean>;
  enable_free_model_publication: boolean;
  enable_free_model_training: boolean;
  enable_paid_model_training: boolean;
  /** The filters that read requests (docs/behaviour.md#apply-to): without `apply_to`. */
  content_filter_builtins: BuiltinFilter[];
  content_filters: CustomFilter[];
  /** The filters that read the model's answers, without `apply_to` (docs/behaviour.md#apply-to). */
  answer_filter_builtins: BuiltinFilter[];
  answer_filters: CustomFilter[];
  budgets: BudgetLayer[];
}

const STRICTNESS: Record<FilterAction, number> = { flag: 0, redact: 1, block: 2 };

function sorted<T extends string>(items: Iterable<T>): T[] {
  return [...items].sort();
}

/** Intersection of the non-null lists; null when every list is null (no restriction). */
function intersect<T extends string>(lists: (T[] | null)[]): T[] | null {
  let acc: Set<T> | null = null;
  for (const list of lists) {
    if (list === null) continue;
    acc = acc === null ? new Set(list) : new Set(list.filter((x) => (acc as Set<T>).has(x)));
  }
  return acc === null ? null : sorted(acc);
}

function union<T extends string>(lists: (T[] | null)[]): T[] {
  const acc = new Set<T>();
  for (const list of lists) for (const x of list ?? []) acc.add(x);
  return sorted(acc);
}

/** Is candidate stricter than kept? Ties are broken by a fixed order so the result never depends on input order. */
function stricter(
  candidate: { action: FilterAction; tie: string },
  kept: { action: FilterAction; tie: string },
): boolean {
  const diff = STRICTNESS[candidate.action] - STRICTNESS[kept.action];
  return diff > 0 || (diff === 0 && candidate.tie < kept.tie);
}

/**
 * The filters of one direction (docs/behaviour.md#apply-to), each without its `apply_to`: a filter
 * that reads both directions is combined in each on its own.
 */
function ofDirection<F extends { apply_to?: ApplyTo }>(lists: (F[] | null)[], direction: Direction): F[] {
  const out: F[] = [];
  for (const list of lists) {
    for (const f of list ?? []) {
      if (!appliesTo(f.apply_to, direction)) continue;
      if (f.apply_to === undefined) out.push(f);
      else {
        const { apply_to: _, ...rest } = f;
        out.push(rest as F);
      }
    }
  }
  return out;
}

function combineBuiltins(filters: BuiltinFilter[]): BuiltinFilter[] {
  const bySlug = new Map<string, BuiltinFilter>();
  for (const f of filters) {
    const kept = bySlug.get(f.slug);
    if (!kept) {
      bySlug.set(f.slug, { ...f });
      continue;
    }
    const action = STRICTNESS[f.action] > STRICTNESS[kept.action] ? f.action : kept.action;
    const merged: BuiltinFilter = { slug: f.slug, action };
    // The wider scan scope is the stricter one.
    if (kept.scan_scope !== undefined || f.scan_scope !== undefined) {
      merged.scan_scope =
        kept.scan_scope === "all_messages" || f.scan_scope === "all_messages" ? "all_messages" : "user_only";
    }
    bySlug.set(f.slug, merged);
  }
  return [...bySlug.values()].sort((a, b) => (a.slug < b.slug ? -1 : 1));
}

function combineCustom(filters: CustomFilter[]): CustomFilter[] {
  const byPattern = new Map<string, CustomFilter>();
  for (const f of filters) {
    const kept = byPattern.get(f.pattern);
    if (
      !kept ||
      stricter(
        { action: f.action, tie: JSON.stringify(f.label) },
        { action: kept.action, tie: JSON.stringify(kept.label) },
      )
    ) {
      byPattern.set(f.pattern, f);
    }
  }
  return [...byPattern.values()].sort((a, b) => (a.pattern < b.pattern ? -1 : a.pattern > b.pattern ? 1 : 0));
}

/**
 * Every budget layer that counts a key's requests, in the order they are checked (the first refusal
 * decides; docs/gateway.md#budgets): the key's own limit, then the guardrails' budgets (key, member,
 * workspace default), then the workspace's budgets from daily to lifetime. The one place that lists
 * them, so the reservation treats every kind alike.
 */
export function budgetLayers(
  applied: AppliedGuardrail[],
  hasMember: boolean,
  own: OwnBudgets = NO_OWN_BUDGETS,
): BudgetLayer[] {
  const keyLimit: BudgetLayer[] = own.key_limit
    ? [
        {
          guardrail_id: null,
          layer: "key_limit",
          scope: "key",
          limit_micros: own.key_limit.limit_micros,
          reset_interval: own.key_limit.reset_interval,
          include_byok_in_budgets: own.key_limit.include_byok,
        },
      ]
    : [];
  const workspace = [...own.workspace]
    .sort((a, b) => INTERVAL_ORDER[a.reset_interval] - INTERVAL_ORDER[b.reset_interval])
    .map(
      (w): BudgetLayer => ({
        guardrail_id: null,
        layer: "workspace_budget",
        scope: "workspace",
        limit_micros: w.limit_micros,
        reset_interval: w.reset_interval,
        include_byok_in_budgets: w.include_byok,
      }),
    );
  return [...keyLimit, ...guardrailBudgetLayers(applied, hasMember), ...workspace];
}

function guardrailBudgetLayers(applied: AppliedGuardrail[], hasMember: boolean): BudgetLayer[] {
  const layers: BudgetLayer[] = [];
  for (const { layer, guardrail: g } of applied) {
    if (g.limit_micros === null || g.reset_interval === null) continue;
    // A member guardrail counts all the member's keys; the workspace default applies per member
    // and per key; a key's guardrail counts that key alone (docs/behaviour.md#budget-scopes).
    const scopes: BudgetScope[] =
      layer === "key" ? ["key"] : layer === "member" ? ["member"] : hasMember ? ["member", "key"] : ["key"];
    for (const scope of scopes) {
      layers.push({
        guardrail_id: g.id,
        layer,
        scope,
        limit_micros: g.limit_micros,
        reset_interval: g.reset_interval,
        include_byok_in_budgets: g.include_byok_in_budgets,
      });
    }
  }
  return layers.sort((a, b) =>
    `${a.layer}/${a.scope}/${a.guardrail_id}`.localeCompare(`${b.layer}/${b.scope}/${b.guardrail_id}`),
  );
}

/**
 * Combines the guardrails that apply to a key (docs/behaviour.md#combination): allowed lists intersect (null = no
 * restriction, an empty intersection allows nothing), ignored lists unite, a ZDR flag applies if any
 * guardrail sets it, an enable_* permission holds only if every guardrail grants it, filters unite
 * with the strictest action per slug or pattern and per direction, and every budget is kept as its own layer, beside
 * the key's own limit and its workspace's budgets (`own`). Pure and order-independent.
 */
export function combinePolicies(
  applied: AppliedGuardrail[],
  familyIds: string[],
  hasMember: boolean,
  own: OwnBudgets = NO_OWN_BUDGETS,
): EffectivePolicy {
  const gs = applied.map((a) => a.guardrail);
  const builtins = gs.map((g) => g.content_filter_builtins);
  const custom = gs.map((g) => g.content_filters);
  const enforce_zdr: Record<string, boolean> = {};
  for (const family of familyIds) enforce_zdr[family] = gs.some((g) => g.enforce_zdr[family] === true);
  return {
    allowed_data_regions: intersect(gs.map((g) => g.allowed_data_regions)),
    allowed_models: intersect(gs.map((g) => g.allowed_models)),
    allowed_providers: intersect(gs.map((g) => g.allowed_providers)),
    ignored_models: union(gs.map((g) => g.ignored_models)),
    ignored_providers: union(gs.map((g) => g.ignored_providers)),
    enforce_zdr,
    enable_free_model_publication: gs.every((g) => g.enable_free_model_publication),
    enable_free_model_training: gs.every((g) => g.enable_free_model_training),
    enable_paid_model_training: gs.every((g) => g.enable_paid_model_training),
    content_filter_builtins: combineBuiltins(ofDirection(builtins, "request")),
    content_filters: combineCustom(ofDirection(custom, "request")),
    answer_filter_builtins: combineBuiltins(ofDirection(builtins, "response")),
    answer_filters: combineCustom(ofDirection(custom, "response")),
    budgets: budgetLayers(applied, hasMember, own),
  };
}
