import {
  type Admission,
  admit,
  DEFAULT_OUTPUT_ALLOWANCE,
  type OutputAllowance,
  type RequestPrice,
} from "./budget-admission.js";
import { budgetWindow, type LayerWindow } from "./budget-window.js";
import { type Api, type Catalog, DEFAULT_API, type Endpoint, type Model, type Region } from "./catalog.js";
import { type ChatText, textPointer } from "./chat-texts.js";
import { appliesTo } from "./content-filters.js";
import { type ContentFilters, type FilterHit, type ScanResult, scanTexts } from "./content-scan.js";
import type { ErrorCode } from "./errors.js";
import { microsToUsd } from "./money.js";
import type { AppliedGuardrail, BudgetLayer, EffectivePolicy } from "./policy.js";

/**
 * The decision on a governed model request (docs/behaviour.md#request-decision): a pure function of the request, the
 * ingress region, the guardrails that apply and their combined policy, the spend in each budget
 * window, and the time. Every rule is evaluated, so a dry run can list every reason; the first
 * violation in rule order decides the answer.
 */

export interface DecisionInput {
  /** The model as the caller named it: a slug or a canonical slug. */
  model: string;
  texts: ChatText[];
  messageCount: number;
  /** `max_completion_tokens` or `max_tokens` of the request, if it set one. */
  maxOutputTokens: number | null;
  ingress: Region;
  applied: AppliedGuardrail[];
  policy: EffectivePolicy;
  filters: ContentFilters;
  /** The content scan when it already ran elsewhere (a large request, in a worker); else it runs here. */
  scan?: ScanResult;
  /** Settled spend in the current window of each budget layer, by index of policy.budgets. */
  usage: readonly number[];
  /** Open reservations in the same windows (none when absent). */
  reserved?: readonly number[];
  /** The output reserved for a request that sets no max_tokens, and the least answer worth sending. */
  output?: OutputAllowance;
  now: Date;
  catalog: Catalog;
  /** Providers whose API key is not configured. */
  unavailableProviders: ReadonlySet<string>;
  /** The API the request is made on (absent: chat); endpoints whose provider does not speak it are removed. */
  api?: Api;
  /**
   * The request can also be carried over chat completions (translated): an endpoint whose provider
   * speaks chat stays a candidate (docs/gateway.md#provider-apis).
   */
  viaChat?: boolean;
}

/** Why a provider endpoint was removed from the candidates. */
export type EndpointRule =
  | "provider_not_allowed"
  | "provider_ignored"
  | "zdr_required"
  | "free_model_publication_not_allowed"
  | "free_model_training_not_allowed"
  | "paid_model_training_not_allowed"
  | "outside_ingress_region"
  | "provider_unavailable"
  | "api_not_supported";

/** Removals by the operator's configuration, not by a guardrail. */
const CONFIGURATION_RULES: ReadonlySet<EndpointRule> = new Set(["provider_unavailable", "api_not_supported"]);

export interface Removal {
  rule: EndpointRule;
  /** The guardrails whose setting removed it (empty for provider_unavailable and api_not_supported). */
  guardrail_ids: string[];
}

export interface Candidate {
  endpoint: Endpoint;
  removed_by: Removal[];
}

export type Rule =
  | "region_not_allowed"
  | "model_not_found"
  | "model_not_allowed"
  | "model_ignored"
  | "no_allowed_endpoint"
  | "content_filter"
  | "prompt_injection"
  | "budget_exhausted"
  | "request_exceeds_budget"
  | "budget_reserved";

export interface Violation {
  rule: Rule;
  code: ErrorCode;
  message: string;
  metadata: Record<string, unknown>;
}

export interface BudgetCheck {
  layer: BudgetLayer;
  window: LayerWindow;
  spent_micros: number;
  /** Held by requests in flight (none when absent). */
  reserved_micros?: number;
  /** Whether this request's spend counts on the layer (bring-your-own-key only with include_byok_in_budgets). */
  counts: boolean;
}

export interface Decision {
  allowed: boolean;
  /** Every violated rule, in rule order; the first is the answer when refused. */
  violations: Violation[];
  model: Model | null;
  candidates: Candidate[];
  /** The endpoints the request may go to, in order of preference. */
  endpoints: Endpoint[];
  scan: ScanResult;
  budgets: BudgetCheck[];
  /** Upper bound of the request's cost on the first endpoint with the output it wants. */
  worst_case_micros: number;
  /** The prompt bound's cost and each output token's on the first endpoint. */
  price: RequestPrice;
  /** Output tokens the request wants: its max_tokens, or the default allowance, never over the model's. */
  wanted_tokens: number;
  /** The least answer worth sending, in output tokens (the minimal allowance, or fewer if fewer are wanted). */
  minimal_tokens: number;
  /**
   * The admission on the layers that count, judged on the usage read (the dry run); the gateway's
   * reservation judges again, atomically. Null when no layer counts.
   */
  admission: Admission | null;
}

const EMPTY_SCAN: ScanResult = { hits: [], block: null, replacements: [] };

const PROMPT_INJECTION_MESSAGE = "Request blocked: prompt injection patterns detected";

function ids(applied: AppliedGuardrail[], test: (a: AppliedGuardrail) => boolean): string[] {
  return applied.filter(test).map((a) => a.guardrail.id);
}

function regionViolation(input: DecisionInput): Violation | null {
  const allowed = input.policy.allowed_data_regions;
  if (allowed === null || allowed.includes(input.ingress)) return null;
  const regions = allowed.length === 0 ? "none" : allowed.join(", ");
  return {
    rule: "region_not_allowed",
    code: "guardrail_refused",
    message: `Requests governed by this key's guardrails must arrive through an allowed region address (${regions}); this one arrived through ${input.ingress}`,
    metadata: {
      reason: "region_not_allowed",
      ingress_region: input.ingress,
      allowed_regions: allowed,
      guardrail_ids: ids(
        input.applied,
        (a) =>
          a.guardrail.allowed_data_regions !== null &&
          !a.guardrail.allowed_data_regions.includes(input.ingress),
      ),
    },
  };
}

function modelViolations(input: DecisionInput, model: Model): Violation[] {
  const out: Violation[] = [];
  const slug = model.canonical_slug;
  const { allowed_models, ignored_models } = input.policy;
  if (allowed_models !== null && !allowed_models.includes(slug)) {
    out.push({
      rule: "model_not_allowed",
      code: "guardrail_refused",
      message: `Model ${model.slug} is not allowed by this key's guardrails`,
      metadata: {
        reason: "model_not_allowed",
        model: model.slug,
        guardrail_ids: ids(
          input.applied,
          (a) => a.guardrail.allowed_models !== null && !a.guardrail.allowed_models.includes(slug),
        ),
      },
    });
  }
  if (ignored_models.includes(slug)) {
    out.push({
      rule: "model_ignored",
      code: "guardrail_refused",
      message: `Model ${model.slug} is excluded by this key's guardrails`,
      metadata: {
        reason: "model_ignored",
        model: model.slug,
        guardrail_ids: ids(input.applied, (a) => a.guardrail.ignored_models?.includes(slug) === true),
      },
    });
  }
  return out;
}

/** Each endpoint of the model with the rules that remove it (docs/behaviour.md#endpoint-selection). */
function judgeEndpoints(input: DecisionInput, model: Model): Candidate[] {
  const { policy, applied } = input;
  const family = input.catalog.familyOf(model);
  return model.endpoints.map((endpoint) => {
    const p = endpoint.provider;
    const removed: Removal[] = [];
    const remove = (rule: EndpointRule, test: (a: AppliedGuardrail) => boolean) =>
      removed.push({ rule, guardrail_ids: ids(applied, test) });
    if (policy.allowed_providers !== null && !policy.allowed_providers.includes(p))
      remove("provider_not_allowed", (a) => a.guardrail.allowed_providers?.includes(p) === false);
    if (policy.ignored_providers.includes(p))
      remove("provider_ignored", (a) => a.guardrail.ignored_providers?.includes(p) === true);
    if (policy.enforce_zdr[family] === true && !endpoint.zdr)
      remove("zdr_required", (a) => a.guardrail.enforce_zdr[family] === true);
    if (endpoint.free && endpoint.publishes_prompts && !policy.enable_free_model_publication)
      remove("free_model_publication_not_allowed", (a) => !a.guardrail.enable_free_model_publication);
    if (endpoint.free && endpoint.trains_on_data && !policy.enable_free_model_training)
      remove("free_model_training_not_allowed", (a) => !a.guardrail.enable_free_model_training);
    if (!endpoint.free && endpoint.trains_on_data && !policy.enable_paid_model_training)
      remove("paid_model_training_not_allowed", (a) => !a.guardrail.enable_paid_model_training);
    // Through a regional address, only endpoints in that region (docs/behaviour.md#region-enforcement).
    if (input.ingress !== "global" && endpoint.region !== input.ingress)
      removed.push({ rule: "outside_ingress_region", guardrail_ids: [] });
    if (input.unavailableProviders.has(p)) removed.push({ rule: "provider_unavailable", guardrail_ids: [] });
    // A provider that does not speak the request's API cannot serve it (docs/gateway.md#provider-apis).
    if (
      !input.catalog.speaks(p, input.api ?? DEFAULT_API) &&
      !(input.viaChat && input.catalog.speaks(p, "chat"))
    )
      removed.push({ rule: "api_not_supported", guardrail_ids: [] });
    return { endpoint, removed_by: removed };
  });
}

function endpointViolation(model: Model, candidates: Candidate[], api: Api): Violation | null {
  if (candidates.some((c) => c.removed_by.length === 0)) return null;
  const presented = candidates.map((c) => ({
    provider: c.endpoint.provider,
    region: c.endpoint.region,
    removed_by: c.removed_by,
  }));
  // Some endpoint was permitted and only the operator's configuration (a missing API key, a
  // provider that does not speak the API) stands in the way: not a refusal by the guardrails.
  const byConfiguration = candidates.find(
    (c) => c.removed_by.length > 0 && c.removed_by.every((r) => CONFIGURATION_RULES.has(r.rule)),
  );
  if (byConfiguration) {
    const unavailable = byConfiguration.removed_by.some((r) => r.rule === "provider_unavailable");
    return {
      rule: "no_allowed_endpoint",
      code: "no_provider_available",
      message: unavailable
        ? `No provider is available for ${model.slug}: the permitted providers have no API key configured`
        : `No provider is available for ${model.slug}: the permitted providers do not speak the ${api} API`,
      metadata: {
        reason: unavailable ? "provider_unavailable" : "api_not_supported",
        model: model.slug,
        candidates: presented,
      },
    };
  }
  return {
    rule: "no_allowed_endpoint",
    code: "guardrail_refused",
    message: `No provider endpoint for ${model.slug} is permitted by this key's guardrails`,
    metadata: { reason: "no_allowed_endpoint", model: model.slug, candidates: presented },
  };
}

/** The guardrails whose request filters hold the filter that matched (docs/behaviour.md#apply-to). */
function filterGuardrails(applied: AppliedGuardrail[], hit: FilterHit): string[] {
  const f = hit.filter;
  return ids(applied, (a) =>
    f.type === "builtin"
      ? a.guardrail.content_filter_builtins?.some(
          (b) => b.slug === f.slug && b.action === hit.action && appliesTo(b.apply_to, "request"),
        ) === true
      : a.guardrail.content_filters?.some(
          (c) => c.pattern === f.pattern && c.action === hit.action && appliesTo(c.apply_to, "request"),
        ) === true,
  );
}

/**
 * A redaction that falls on a name (a property, function or participant name) cannot be written
 * without breaking what refers to that name, so the request is refused instead of forwarding the
 * name (docs/gateway.md#what-is-scanned). Returns the first redact filter, in policy order, that
 * matches the first such name, and where the name is.
 */
function unredactableName(input: DecisionInput, scan: ScanResult): { hit: FilterHit; field: string } | null {
  const named = scan.replacements.find((r) => r.text.kind !== "text")?.text;
  if (!named) return null;
  const filter = [...input.filters.builtins, ...input.filters.custom].find(
    (f) => f.action === "redact" && !(f.userOnly && named.role !== "user") && f.find(named.text).length > 0,
  );
  if (filter)
    return {
      hit: { filter: filter.ref, action: "redact", label: filter.label, count: 1 },
      field: textPointer(named),
    };
  // No filter matches the name alone: the match was read in its canonical form, or across the seam
  // to the next text (docs/behaviour.md#split-values). It is refused all the same, under the first
  // redact filter that matched; forwarding the name would forward part of the value.
  const hit = scan.hits.find((h) => h.action === "redact");
  return hit ? { hit: { ...hit, count: 1 }, field: textPointer(named) } : null;
}

function contentViolation(input: DecisionInput, scan: ScanResult): Violation | null {
  const named = scan.block ? null : unredactableName(input, scan);
  const hit = scan.block ?? named?.hit;
  if (!hit) return null;
  const injection = hit.filter.type === "builtin" && hit.filter.slug === "regex-prompt-injection";
  return {
    rule: injection ? "prompt_injection" : "content_filter",
    code: "guardrail_refused",
    // The messages of docs/behaviour.md#filter-enforcement; the matched text itself is never repeated.
    message: injection ? PROMPT_INJECTION_MESSAGE : `Request blocked by content filter: ${hit.label}`,
    metadata: {
      reason: injection ? "prompt_injection" : "content_filter",
      filter: hit.filter,
      label: hit.label,
      guardrail_ids: filterGuardrails(input.applied, hit),
      // Where the name is, never the name: a redact filter matched it and names are not rewritten.
      ...(named ? { action: "redact", name_at: named.field } : {}),
    },
  };
}

/** Prompt tokens a provider reports as written to or read from its prompt cache (parts of the prompt). */
export interface CacheTokens {
  write: number;
  read: number;
}

/**
 * Cost in micro-dollars: USD per million tokens is exactly micro-dollars per token. Cached prompt
 * tokens are priced at the model's cache prices where the catalog has them, else at the prompt
 * price (docs/gateway.md#cache-prices); they are never more than the prompt.
 */
export function costMicros(
  model: Model,
  endpoint: Endpoint,
  promptTokens: number,
  completionTokens: number,
  cache?: CacheTokens,
): number {
  if (endpoint.free) return 0;
  const p = model.pricing;
  let prompt = promptTokens * p.prompt_usd_per_million_tokens;
  if (cache && cache.write + cache.read > 0) {
    const write = Math.min(cache.write, promptTokens);
    const read = Math.min(cache.read, promptTokens - write);
    prompt =
      (promptTokens - write - read) * p.prompt_usd_per_million_tokens +
      write * (p.cache_write_usd_per_million_tokens ?? p.prompt_usd_per_million_tokens) +
      read * (p.cache_read_usd_per_million_tokens ?? p.prompt_usd_per_million_tokens);
  }
  return Math.ceil(prompt + completionTokens * p.completion_usd_per_million_tokens);
}

/**
 * An upper bound of the prompt's tokens: a byte-level tokenizer never makes more tokens than the
 * text has UTF-8 bytes, plus a few per message for the role markers.
 */
export function promptTokenBound(texts: ChatText[], messages: number): number {
  let bytes = 0;
  for (const t of texts) bytes += Buffer.byteLength(t.text, "utf8");
  return bytes + 8 * messages;
}

/** The prompt's and each output token's cost on an endpoint, unrounded (free endpoints cost nothing). */
export function priceOn(model: Model, endpoint: Endpoint | undefined, promptTokens: number): RequestPrice {
  if (!endpoint || endpoint.free) return { promptMicros: 0, perOutputTokenMicros: 0 };
  return {
    promptMicros: promptTokens * model.pricing.prompt_usd_per_million_tokens,
    perOutputTokenMicros: model.pricing.completion_usd_per_million_tokens,
  };
}

function budgetChecks(input: DecisionInput, byok: boolean): BudgetCheck[] {
  return input.policy.budgets.map((layer, i) => ({
    layer,
    window: budgetWindow(layer.reset_interval, input.now),
    spent_micros: input.usage[i] ?? 0,
    reserved_micros: input.reserved?.[i] ?? 0,
    counts: !byok || layer.include_byok_in_budgets,
  }));
}

const usageOf = (c: BudgetCheck) => ({
  limit_micros: c.layer.limit_micros,
  spent_micros: c.spent_micros,
  reserved_micros: c.reserved_micros ?? 0,
});

/** What a refusal calls the limit of each kind of layer. */
const LIMIT_NOUN: Record<BudgetLayer["layer"], string> = {
  key: "limit",
  member: "limit",
  workspace_default: "limit",
  key_limit: "key limit",
  workspace_budget: "workspace budget",
};

/** Seconds a client is told to wait when in-flight requests hold a budget: they settle when their answers end. */
export const BUDGET_RESERVED_RETRY_SECONDS = 1;

/**
 * The refusal of one layer (docs/gateway.md#budgets). `spend_usd` is always settled spend; what
 * requests in flight hold is `reserved_usd`, apart.
 */
export function budgetViolation(
  c: BudgetCheck,
  reason: "budget_exhausted" | "request_exceeds_budget" | "budget_reserved",
  tokensThatFit: number,
): Violation {
  const limit = `the ${c.layer.reset_interval} ${LIMIT_NOUN[c.layer.layer]} of $${microsToUsd(c.layer.limit_micros)} for this ${c.layer.scope}`;
  const resets = c.window.resetsAt?.toISOString() ?? null;
  // A lifetime limit never resets: the refusal says so instead of naming a time.
  const until = resets === null ? "it does not reset" : `it resets at ${resets}`;
  const metadata: Record<string, unknown> = {
    reason,
    guardrail_id: c.layer.guardrail_id,
    layer: c.layer.layer,
    scope: c.layer.scope,
    reset_interval: c.layer.reset_interval,
    limit_usd: microsToUsd(c.layer.limit_micros),
    spend_usd: microsToUsd(c.spent_micros),
    reserved_usd: microsToUsd(c.reserved_micros ?? 0),
    resets_at: resets,
  };
  if (reason === "budget_exhausted")
    return {
      rule: reason,
      code: "guardrail_refused",
      message: `Budget exhausted: ${limit} is spent; ${until}`,
      metadata,
    };
  if (reason === "request_exceeds_budget")
    return {
      rule: reason,
      code: "guardrail_refused",
      message: `Request exceeds the budget: what is left of ${limit} cannot pay for this request's prompt and a minimal answer; ${until}`,
      metadata: { ...metadata, output_tokens_that_fit: tokensThatFit },
    };
  return {
    rule: reason,
    code: "budget_reserved",
    message: `Budget held by requests in flight: what is left of ${limit} is reserved until they finish; retry shortly`,
    metadata: {
      ...metadata,
      output_tokens_that_fit: tokensThatFit,
      retry_after_seconds: BUDGET_RESERVED_RETRY_SECONDS,
    },
  };
}

/** Every counted layer that would refuse on its own, each with its reason; the dry run lists them all. */
function budgetViolations(
  checks: BudgetCheck[],
  price: RequestPrice,
  wanted: number,
  minimal: number,
): Violation[] {
  const out: Violation[] = [];
  for (const c of checks) {
    if (!c.counts) continue;
    const alone = admit([usageOf(c)], price, wanted, minimal);
    if (!alone.admitted) out.push(budgetViolation(c, alone.reason, alone.tokens_that_fit));
  }
  return out;
}

export function decide(input: DecisionInput): Decision {
  const violations: Violation[] = [];
  const region = regionViolation(input);
  if (region) violations.push(region);
  const model = input.catalog.findModel(input.model) ?? null;
  if (!model) {
    violations.push({
      rule: "model_not_found",
      code: "model_not_found",
      message: `Model ${input.model} does not exist`,
      metadata: { reason: "model_not_found", model: input.model },
    });
    return {
      allowed: false,
      violations,
      model,
      candidates: [],
      endpoints: [],
      scan: EMPTY_SCAN,
      budgets: [],
      worst_case_micros: 0,
      price: { promptMicros: 0, perOutputTokenMicros: 0 },
      wanted_tokens: 0,
      minimal_tokens: 0,
      admission: null,
    };
  }
  violations.push(...modelViolations(input, model));
  const candidates = judgeEndpoints(input, model);
  const endpointProblem = endpointViolation(model, candidates, input.api ?? DEFAULT_API);
  if (endpointProblem) violations.push(endpointProblem);
  const scan = input.scan ?? scanTexts(input.filters, input.texts);
  const content = contentViolation(input, scan);
  if (content) violations.push(content);
  const endpoints = candidates.filter((c) => c.removed_by.length === 0).map((c) => c.endpoint);
  const first = endpoints[0];
  const budgets = budgetChecks(input, first?.byok ?? false);
  const allowance = input.output ?? DEFAULT_OUTPUT_ALLOWANCE;
  // A request that names no output limit is given the default allowance, not the model's whole
  // output: a few reservations of the whole would fill a small budget (docs/gateway.md#budgets).
  const wanted = Math.min(input.maxOutputTokens ?? allowance.defaultTokens, model.max_output_tokens);
  const minimal = Math.min(allowance.minimalTokens, wanted);
  const prompt = promptTokenBound(input.texts, input.messageCount);
  const price = priceOn(model, first, prompt);
  violations.push(...budgetViolations(budgets, price, wanted, minimal));
  const counted = budgets.filter((c) => c.counts).map(usageOf);
  const admission = counted.length > 0 ? admit(counted, price, wanted, minimal) : null;
  const worst = first ? costMicros(model, first, prompt, wanted) : 0;
  return {
    allowed: violations.length === 0,
    violations,
    model,
    candidates,
    endpoints,
    scan,
    budgets,
    worst_case_micros: worst,
    price,
    wanted_tokens: wanted,
    minimal_tokens: minimal,
    admission,
  };
}
