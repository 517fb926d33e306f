import type { OutputAllowance } from "../domain/budget-admission.js";
import { type Api, DEFAULT_API, type Region } from "../domain/catalog.js";
import type { ChatText } from "../domain/chat-texts.js";
import type { BuiltinSlug } from "../domain/content-filters.js";
import { type ContentFilters, compileFilters, type Detector } from "../domain/content-scan.js";
import { type Decision, decide } from "../domain/decision.js";
import { invalidRequest } from "../domain/errors.js";
import type { EffectivePolicy } from "../domain/policy.js";
import type { ServiceDeps } from "../services/context.js";
import type { KeyPolicy } from "../services/effective-policy.js";
import type { BudgetAlerts } from "./budget-alerts.js";
import type { GatewayMetrics } from "./metrics.js";
import type { Scanner } from "./scan-request.js";
import { readUsage } from "./spend.js";
import type { Surface } from "./surfaces/surface.js";
import type { Upstreams } from "./upstream.js";

/** What the governed request path needs, built once in main.ts (or by a test). */
export interface GatewayDeps {
  services: ServiceDeps;
  upstreams: Upstreams;
  metrics: GatewayMetrics;
  detectors: Record<BuiltinSlug, Detector>;
  /** Scans large requests off the event loop, under a time budget. */
  scanner: Scanner;
  /** Output reserved for a request without max_tokens, and the least answer (defaults otherwise). */
  output?: OutputAllowance;
  /** Budget alerts, checked after each settlement off the request path. */
  alerts?: BudgetAlerts;
  /** How long a budget hold outlasts its provider's time-out (default: complete.ts's HOLD_MARGIN_MS). */
  holdMarginMs?: number;
}

/**
 * Compiled filters by policy object: a key's policy is cached until a management change, so its
 * patterns are compiled once, not per request; a new policy object is a new entry.
 */
const compiled = new WeakMap<EffectivePolicy, ContentFilters>();

function filtersOf(gw: GatewayDeps, policy: EffectivePolicy): ContentFilters {
  let filters = compiled.get(policy);
  if (!filters) {
    filters = compileFilters(policy, gw.detectors);
    compiled.set(policy, filters);
  }
  return filters;
}

export interface Prepared<Body extends object> {
  decision: Decision;
  texts: ChatText[];
  /** The request's message count, as the decision took it. */
  messageCount: number;
  /** The body as it would be forwarded: texts redacted, nothing else changed. */
  redacted: Body;
  /** Settled spend and open reservations per budget layer. */
  spent: number[];
  reserved: number[];
  /** The API of the surface the request came through, recorded with its spend. */
  api: Api;
}

/**
 * The output limit to forward, when the budgets admitted fewer tokens than the request would
 * otherwise be allowed (its own max_tokens, or the model's whole output): null when nothing changes.
 */
export function outputCap<Body extends object>(
  surface: Surface<Body>,
  body: Body,
  model: { max_output_tokens: number },
  tokens: number,
): number | null {
  const asked = surface.maxOutputTokens(body) ?? model.max_output_tokens;
  return tokens < asked ? tokens : null;
}

/**
 * Decides, timing the decision. With `readBudgets` the budget windows' usage is read first, so the
 * decision can judge the budgets (the dry run, or explaining a refused reservation); the gateway
 * leaves it out, because its reservation is the budget check, atomic where a read is not.
 * `earlier` is this request's first preparation: deciding again (on the budgets) reuses its texts
 * and scan instead of scanning the request a second time.
 */
export async function prepareRequest<Body extends object>(
  gw: GatewayDeps,
  surface: Surface<Body>,
  keyPolicy: KeyPolicy,
  body: Body,
  ingress: Region,
  readBudgets: boolean,
  earlier?: Prepared<Body>,
): Promise<Prepared<Body>> {
  const { key, policy, applied } = keyPolicy;
  const now = gw.services.now();
  const usage =
    readBudgets && policy.budgets.length > 0
      ? await readUsage(gw.services, key, policy, now)
      : { spent: policy.budgets.map(() => 0), reserved: policy.budgets.map(() => 0) };
  const started = process.hrtime.bigint();
  const texts = earlier?.texts ?? surface.collectTexts(body);
  const filters = filtersOf(gw, policy);
  const model = surface.model(body);
  const messageCount = surface.messageCount(body);
  const found = gw.services.catalog.findModel(model);
  // A model of another API is the caller's mistake, not a rule's refusal (docs/gateway.md#provider-apis).
  const api = found?.api ?? DEFAULT_API;
  if (found && api !== surface.api && !surface.modelApis?.includes(api))
    throw invalidRequest([
      {
        path: "/model",
        message: `${found.slug} is an ${api} model; this route serves ${surface.api} models`,
      },
    ]);
  // Input no filter can read is refused while a filter applies (docs/gateway.md#embeddings).
  const unread = surface.unscannable?.(body);
  if (unread !== undefined && filters.builtins.length + filters.custom.length + filters.broken.length > 0)
    throw invalidRequest([
      {
        path: unread,
        message: "token arrays cannot be read by this key's content filters: send the input as text",
      },
    ]);
  // A model that does not exist is refused before any scan.
  const scan =
    earlier?.decision.scan ??
    (found ? await gw.scanner.scanLarge(policy, applied, filters, texts, key.organization_id) : undefined);
  const decision = decide({
    model,
    texts,
    messageCount,
    maxOutputTokens: surface.maxOutputTokens(body),
    ingress,
    applied,
    policy,
    filters,
    ...(scan ? { scan } : {}),
    usage: usage.spent,
    reserved: usage.reserved,
    ...(gw.output ? { output: gw.output } : {}),
    now,
    catalog: gw.services.catalog,
    unavailableProviders: gw.upstreams.unavailable,
    api: surface.api,
    viaChat: surface.translation !== undefined,
  });
  const redacted = surface.replaceTexts(body, decision.scan.replacements, texts);
  gw.metrics.decisionSeconds.observe(Number(process.hrtime.bigint() - started) / 1e9);
  return {
    decision,
    texts,
    messageCount,
    redacted,
    spent: usage.spent,
    reserved: usage.reserved,
    api: surface.api,
  };
}
