import { appliesTo, type BuiltinSlug } from "../../domain/content-filters.js";
import {
  type ContentFilters,
  compileFilters,
  type Detector,
  type FilterHit,
} from "../../domain/content-scan.js";
import { AppError } from "../../domain/errors.js";
import type { AppliedGuardrail, EffectivePolicy } from "../../domain/policy.js";

/**
 * Compiled answer filters by policy object, as prepare.ts keeps the request's: a key's policy is
 * cached until a management change, so its answer patterns are compiled once.
 */
const compiled = new WeakMap<EffectivePolicy, ContentFilters | null>();

/**
 * The filters that read the model's answers under this policy (docs/behaviour.md#apply-to), or null
 * when none does: then the answer is relayed exactly as before, with no work added.
 */
export function answerFiltersOf(
  policy: EffectivePolicy,
  detectors: Record<BuiltinSlug, Detector>,
): ContentFilters | null {
  let filters = compiled.get(policy);
  if (filters === undefined) {
    filters =
      policy.answer_filter_builtins.length === 0 && policy.answer_filters.length === 0
        ? null
        : compileFilters(
            {
              content_filter_builtins: policy.answer_filter_builtins,
              content_filters: policy.answer_filters,
            },
            detectors,
          );
    compiled.set(policy, filters);
  }
  return filters;
}

/** The guardrails whose answer filters hold the filter that matched with this action. */
function answerGuardrails(applied: AppliedGuardrail[], hit: FilterHit): string[] {
  const f = hit.filter;
  return applied
    .filter((a) =>
      f.type === "builtin"
        ? a.guardrail.content_filter_builtins?.some(
            (b) => b.slug === f.slug && b.action === hit.action && appliesTo(b.apply_to, "response"),
          ) === true
        : a.guardrail.content_filters?.some(
            (c) => c.pattern === f.pattern && c.action === hit.action && appliesTo(c.apply_to, "response"),
          ) === true,
    )
    .map((a) => a.guardrail.id)
    .sort();
}

/**
 * The refusal of an answer a `block` filter matched (docs/gateway.md#answer-filters): a 403 in the
 * door's error shape naming the filter, never the matched text. The provider produced the answer,
 * so its tokens are charged: `charged` says so in the metadata.
 */
export function answerBlocked(applied: AppliedGuardrail[], hit: FilterHit): AppError {
  return new AppError(
    "guardrail_refused",
    {
      reason: "answer_content_filter",
      filter: hit.filter,
      label: hit.label,
      guardrail_ids: answerGuardrails(applied, hit),
      charged: true,
    },
    `Answer blocked by content filter: ${hit.label}`,
  );
}

/**
 * The refusal of an answer whose scan could not finish (a worker time-out, a pattern's cost): the
 * answer is withheld, never sent unscanned (docs/gateway.md#answer-filters).
 */
export function answerUnscanned(): AppError {
  return new AppError(
    "guardrail_refused",
    { reason: "answer_scan_failed", charged: true },
    "Answer withheld: its content scan could not finish",
  );
}
