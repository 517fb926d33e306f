import { normalizeThresholds } from "./budget-alerts.js";
import type { Catalog, Region } from "./catalog.js";
import {
  type ApplyTo,
  type BuiltinFilter,
  type BuiltinFilterInput,
  builtinLabel,
  type CustomFilter,
  checkPatterns,
  normalizeBuiltins,
} from "./content-filters.js";
import { type Issue, invalidRequest } from "./errors.js";
import { MAX_LIMIT_USD, microsToUsd, usdToMicros } from "./money.js";
import { RESET_INTERVALS, type ResetInterval } from "./reset-interval.js";

export { RESET_INTERVALS, type ResetInterval };

/** The policy fields of a guardrail, as stored (snake_case: one vocabulary in code, API and tables). */
export interface GuardrailPolicy {
  name: string;
  description: string | null;
  allowed_data_regions: Region[] | null;
  allowed_models: string[] | null;
  allowed_providers: string[] | null;
  ignored_models: string[] | null;
  ignored_providers: string[] | null;
  content_filter_builtins: BuiltinFilter[] | null;
  content_filters: CustomFilter[] | null;
  enable_free_model_publication: boolean;
  enable_free_model_training: boolean;
  enable_paid_model_training: boolean;
  /** Zero-data-retention flag per vendor family id, "other" included. */
  enforce_zdr: Record<string, boolean>;
  include_byok_in_budgets: boolean;
  limit_micros: number | null;
  reset_interval: ResetInterval | null;
  /** Percents of a window's limit whose crossing raises a budget alert; null: none. */
  alert_thresholds: number[] | null;
}

export interface Guardrail extends GuardrailPolicy {
  id: string;
  organization_id: string;
  workspace_id: string;
  is_workspace_default: boolean;
  /** Increments on every write; the entity tag is derived from it (docs/behaviour.md#concurrency). */
  version: number;
  created_at: string;
  updated_at: string | null;
}

/**
 * A create or update body after schema validation: the shapes are right, the meaning is not yet
 * checked. `enforce_zdr_<family>` keys are dynamic (the families are configuration), hence the index
 * signature.
 */
export interface GuardrailBody {
  name?: string;
  description?: string | null;
  allowed_data_regions?: Region[] | null;
  allowed_models?: string[] | null;
  allowed_providers?: string[] | null;
  ignored_models?: string[] | null;
  ignored_providers?: string[] | null;
  content_filter_builtins?: BuiltinFilterInput[] | null;
  content_filters?:
    | { pattern: string; action: CustomFilter["action"]; label?: string | null; apply_to?: ApplyTo }[]
    | null;
  enable_free_model_publication?: boolean;
  enable_free_model_training?: boolean;
  enable_paid_model_training?: boolean;
  enforce_zdr?: boolean | null;
  include_byok_in_budgets?: boolean;
  limit_usd?: number | null;
  reset_interval?: ResetInterval | null;
  alert_thresholds?: number[] | null;
  workspace_id?: string;
  [zdrFlag: `enforce_zdr_${string}`]: boolean | null | undefined;
}

/** The defaults of a new guardrail (docs/behaviour.md#guardrail-defaults). */
export function defaultPolicy(name: string, familyIds: string[]): GuardrailPolicy {
  return {
    name,
    description: null,
    allowed_data_regions: null,
    allowed_models: null,
    allowed_providers: null,
    ignored_models: null,
    ignored_providers: null,
    content_filter_builtins: null,
    content_filters: null,
    enable_free_model_publication: false,
    enable_free_model_training: true,
    enable_paid_model_training: true,
    enforce_zdr: Object.fromEntries(familyIds.map((f) => [f, false])),
    include_byok_in_budgets: false,
    limit_micros: null,
    reset_interval: null,
    alert_thresholds: null,
  };
}

export function workspaceDefaultName(workspaceId: string): string {
  return `Workspace ${workspaceId} Default`;
}

function unique<T>(items: T[]): T[] {
  return [...new Set(items)];
}

function canonicalModels(items: string[], path: string, catalog: Catalog, issues: Issue[]): string[] {
  const out: string[] = [];
  items.forEach((slug, i) => {
    const model = catalog.findModel(slug);
    if (model) out.push(model.canonical_slug);
    else issues.push({ path: `${path}/${i}`, message: `unknown model '${slug}'` });
  });
  return unique(out);
}

function knownProviders(items: string[], path: string, catalog: Catalog, issues: Issue[]): string[] {
  items.forEach((id, i) => {
    if (!catalog.hasProvider(id)) issues.push({ path: `${path}/${i}`, message: `unknown provider '${id}'` });
  });
  return unique(items);
}

/**
 * Applies a validated create or update body to a policy and returns the new policy, or throws a 400
 * naming every offending property. Pure: the caller supplies the current policy (defaults on create).
 * Update semantics (docs/behaviour.md#partial-update): only supplied properties change, null clears, lists replace whole.
 */
export function applyGuardrailBody(
  current: GuardrailPolicy,
  body: GuardrailBody,
  catalog: Catalog,
  options: { isCreate: boolean; fixedName?: string },
): GuardrailPolicy {
  const issues: Issue[] = [];
  const next: GuardrailPolicy = { ...current, enforce_zdr: { ...current.enforce_zdr } };

  if (body.name !== undefined) {
    if (options.fixedName !== undefined && body.name !== options.fixedName) {
      issues.push({ path: "/name", message: "the name of a workspace default guardrail cannot be changed" });
    }
    next.name = body.name;
  }
  if (body.description !== undefined) next.description = body.description;
  if (body.allowed_data_regions !== undefined) {
    next.allowed_data_regions = body.allowed_data_regions === null ? null : unique(body.allowed_data_regions);
  }
  for (const field of ["allowed_models", "ignored_models"] as const) {
    const value = body[field];
    if (value !== undefined)
      next[field] = value === null ? null : canonicalModels(value, `/${field}`, catalog, issues);
  }
  for (const field of ["allowed_providers", "ignored_providers"] as const) {
    const value = body[field];
    if (value !== undefined)
      next[field] = value === null ? null : knownProviders(value, `/${field}`, catalog, issues);
  }
  if (body.content_filter_builtins !== undefined) {
    next.content_filter_builtins =
      body.content_filter_builtins === null
        ? null
        : normalizeBuiltins(body.content_filter_builtins, "/content_filter_builtins", issues);
  }
  let patternProblems: ReturnType<typeof checkPatterns> = [];
  if (body.content_filters !== undefined) {
    if (body.content_filters === null) next.content_filters = null;
    else {
      next.content_filters = body.content_filters.map((f) => {
        const filter: CustomFilter = { pattern: f.pattern, action: f.action, label: f.label ?? null };
        if (f.apply_to !== undefined) filter.apply_to = f.apply_to;
        return filter;
      });
      patternProblems = checkPatterns(next.content_filters);
      for (const p of patternProblems) {
        issues.push({
          path: `/content_filters/${p.index}/pattern`,
          message: p.limit ? p.pattern_error : `invalid regex pattern: ${p.pattern_error}`,
        });
      }
    }
  }
  for (const flag of [
    "enable_free_model_publication",
    "enable_free_model_training",
    "enable_paid_model_training",
  ] as const) {
    const value = body[flag];
    if (value !== undefined) next[flag] = value;
  }
  // Deprecated enforce_zdr: copied into each family flag the same request does not set (docs/behaviour.md#enforce-zdr-deprecated).
  const legacy = body.enforce_zdr;
  for (const family of catalog.familyIds()) {
    const explicit = body[`enforce_zdr_${family}`];
    if (typeof explicit === "boolean") next.enforce_zdr[family] = explicit;
    else if (typeof legacy === "boolean") next.enforce_zdr[family] = legacy;
  }
  if (body.include_byok_in_budgets !== undefined) next.include_byok_in_budgets = body.include_byok_in_budgets;
  if (body.limit_usd !== undefined) {
    if (body.limit_usd === null) next.limit_micros = null;
    else if (body.limit_usd > MAX_LIMIT_USD) {
      issues.push({ path: "/limit_usd", message: `must be at most ${MAX_LIMIT_USD}` });
    } else {
      const micros = usdToMicros(body.limit_usd);
      if (micros === undefined)
        issues.push({ path: "/limit_usd", message: "must not be finer than a micro-dollar (6 decimals)" });
      else next.limit_micros = micros;
    }
  }
  if (body.reset_interval !== undefined) next.reset_interval = body.reset_interval;
  if (body.alert_thresholds !== undefined) {
    next.alert_thresholds =
      body.alert_thresholds === null ? null : normalizeThresholds(body.alert_thresholds);
  }
  // After the request is applied the two are both null or both set (docs/behaviour.md#budget-fields); on update the
  // stored value of the one not sent counts.
  if (
    !issues.some((i) => i.path === "/limit_usd") &&
    (next.limit_micros === null) !== (next.reset_interval === null)
  ) {
    const unset = next.limit_micros === null ? "limit_usd" : "reset_interval";
    const set = unset === "limit_usd" ? "reset_interval" : "limit_usd";
    let message = `is required when ${set} is set`;
    if (body[unset] === null) message = `cannot be null while ${set} is set`;
    else if (!options.isCreate) message = `is required: ${set} is set and no ${unset} is stored`;
    issues.push({ path: `/${unset}`, message });
  }
  if (issues.length > 0) {
    const first = patternProblems[0];
    if (!first) throw invalidRequest(issues);
    // The first pattern problem, with the limit it broke when it compiles but costs too much.
    const { index, ...problem } = first;
    throw invalidRequest(issues, { reason: "invalid_regex_pattern", filter_index: index, ...problem });
  }
  return next;
}

/**
 * The guardrail as returned in `data` (docs/behaviour.md#guardrail-fields). Its response schema in
 * src/http/schemas/guardrail.ts is checked against this type when the project compiles.
 */
export interface PresentedGuardrail {
  id: string;
  name: string;
  description: string | null;
  workspace_id: string;
  created_at: string;
  updated_at: string | null;
  allowed_data_regions: Region[] | null;
  allowed_models: string[] | null;
  allowed_providers: string[] | null;
  ignored_models: string[] | null;
  ignored_providers: string[] | null;
  content_filter_builtins: (BuiltinFilter & { label: string })[] | null;
  content_filters: CustomFilter[] | null;
  enable_free_model_publication: boolean;
  enable_free_model_training: boolean;
  enable_paid_model_training: boolean;
  enforce_zdr: null;
  include_byok_in_budgets: boolean;
  limit_usd: number | null;
  reset_interval: ResetInterval | null;
  alert_thresholds: number[] | null;
  /** One flag per vendor family of the catalog: the families are configuration. */
  [zdrFlag: `enforce_zdr_${string}`]: boolean;
  /** Readers that walk the fields by name (the audit diff, the command line) get unknown. */
  [field: string]: unknown;
}

export function presentGuardrail(g: Guardrail, familyIds: string[]): PresentedGuardrail {
  const flags: Record<`enforce_zdr_${string}`, boolean> = {};
  for (const family of familyIds) flags[`enforce_zdr_${family}`] = g.enforce_zdr[family] ?? false;
  // The flags sit between enforce_zdr and include_byok_in_budgets, where the reference service has them.
  return {
    id: g.id,
    name: g.name,
    description: g.description,
    workspace_id: g.workspace_id,
    created_at: g.created_at,
    updated_at: g.updated_at,
    allowed_data_regions: g.allowed_data_regions,
    allowed_models: g.allowed_models,
    allowed_providers: g.allowed_providers,
    ignored_models: g.ignored_models,
    ignored_providers: g.ignored_providers,
    content_filter_builtins:
      g.content_filter_builtins?.map((f) => ({ ...f, label: builtinLabel(f.slug) })) ?? null,
    content_filters: g.content_filters,
    enable_free_model_publication: g.enable_free_model_publication,
    enable_free_model_training: g.enable_free_model_training,
    enable_paid_model_training: g.enable_paid_model_training,
    enforce_zdr: null,
    ...flags,
    include_byok_in_budgets: g.include_byok_in_budgets,
    limit_usd: g.limit_micros === null ? null : microsToUsd(g.limit_micros),
    reset_interval: g.reset_interval,
    alert_thresholds: g.alert_thresholds,
  };
}

export function etagOf(g: Pick<Guardrail, "version">): string {
  return `"${g.version}"`;
}

/**
 * Does an If-Match header value match the current entity tag? `*` matches any existing guardrail;
 * weak tags compare by their opaque part (RFC 9110 §13.1.1 asks strong comparison; our tags are
 * only ever strong, so a W/ form from a proxy is the same tag).
 */
export function ifMatchSatisfied(header: string, current: Pick<Guardrail, "version"> | undefined): boolean {
  const trimmed = header.trim();
  if (trimmed === "*") return current !== undefined;
  if (!current) return false;
  const tag = etagOf(current);
  return trimmed
    .split(",")
    .map((t) => t.trim().replace(/^W\//, ""))
    .includes(tag);
}
