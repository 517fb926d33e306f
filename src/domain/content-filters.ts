import RE2 from "re2";
import type { Issue } from "./errors.js";
import { patternCost } from "./pattern-cost.js";

/** Builtin filter slugs and their system-assigned labels (docs/behaviour.md#builtin-filters). */
export const BUILTIN_LABELS = {
  email: "[EMAIL]",
  phone: "[PHONE]",
  ssn: "[SSN]",
  "credit-card": "[CREDIT_CARD]",
  "ip-address": "[IP_ADDRESS]",
  secrets: "[SECRET]",
  "person-name": "[PERSON_NAME]",
  address: "[ADDRESS]",
  "regex-prompt-injection": "[PROMPT_INJECTION]",
} as const;

export type BuiltinSlug = keyof typeof BUILTIN_LABELS;
export const BUILTIN_SLUGS = Object.keys(BUILTIN_LABELS) as BuiltinSlug[];
export const FILTER_ACTIONS = ["block", "redact", "flag"] as const;
export type FilterAction = (typeof FILTER_ACTIONS)[number];
export const SCAN_SCOPES = ["user_only", "all_messages"] as const;
export type ScanScope = (typeof SCAN_SCOPES)[number];
/**
 * What a filter reads (docs/behaviour.md#apply-to): the request (the default, and the only meaning
 * a filter without `apply_to` has), the model's answer, or both.
 */
export const APPLY_TO = ["request", "response", "both"] as const;
export type ApplyTo = (typeof APPLY_TO)[number];
/** One direction a filter reads: a filter that applies to `both` reads each. */
export type Direction = "request" | "response";

/** Does a filter with this `apply_to` read this direction? Absent means the request. */
export function appliesTo(applyTo: ApplyTo | undefined, direction: Direction): boolean {
  return applyTo === undefined || applyTo === "request"
    ? direction === "request"
    : applyTo === "both" || direction === "response";
}

/** Only this builtin takes a scan scope (docs/behaviour.md#scan-scope). */
export const SCOPED_BUILTIN: BuiltinSlug = "regex-prompt-injection";
export const DEFAULT_REDACT_LABEL = "[REDACTED]";

export const MAX_CUSTOM_FILTERS = 50;
export const MAX_PATTERN_LENGTH = 10_000;
export const MAX_LABEL_LENGTH = 100;
/**
 * The most scan cost (pattern-cost.ts: positions once counted repetitions are written out) one
 * guardrail's custom patterns may have together, and so any one of them. Chosen by measurement
 * (bench/scan-cost.ts, docs/api.md#pattern-limits): the slowest pattern family known takes 8 to 12
 * ns per position and byte once RE2's DFA gives up, so a guardrail at this bound scans 1 MiB of the
 * worst text in 2.5 to 4 s, inside the default scan time budget of 5 s.
 */
export const MAX_GUARDRAIL_PATTERN_COST = 300;

export interface BuiltinFilter {
  slug: BuiltinSlug;
  action: FilterAction;
  scan_scope?: ScanScope;
  /** Kept only when the client set it: a guardrail without it reads as it always did. */
  apply_to?: ApplyTo;
}

export interface CustomFilter {
  pattern: string;
  action: FilterAction;
  label: string | null;
  apply_to?: ApplyTo;
}

export interface BuiltinFilterInput {
  slug: BuiltinSlug;
  action: FilterAction;
  label?: string;
  scan_scope?: ScanScope;
  apply_to?: ApplyTo;
}

/**
 * Normalizes a builtin filter list: labels are the system's, a slug may appear once per direction
 * (once for requests and once for answers, docs/behaviour.md#apply-to).
 */
export function normalizeBuiltins(
  items: BuiltinFilterInput[],
  path: string,
  issues: Issue[],
): BuiltinFilter[] {
  const seen = new Set<string>();
  const out: BuiltinFilter[] = [];
  items.forEach((item, i) => {
    const directions = (["request", "response"] as const).filter((d) => appliesTo(item.apply_to, d));
    if (directions.some((d) => seen.has(`${d}:${item.slug}`))) {
      issues.push({
        path: `${path}/${i}/slug`,
        message:
          item.apply_to === undefined
            ? `builtin filter '${item.slug}' appears more than once`
            : `builtin filter '${item.slug}' appears more than once for the ${directions.find((d) => seen.has(`${d}:${item.slug}`))}`,
      });
    }
    for (const d of directions) seen.add(`${d}:${item.slug}`);
    if (item.scan_scope !== undefined && item.slug !== SCOPED_BUILTIN) {
      issues.push({
        path: `${path}/${i}/scan_scope`,
        message: `scan_scope applies only to '${SCOPED_BUILTIN}'`,
      });
    }
    if (item.scan_scope !== undefined && item.apply_to === "response") {
      issues.push({
        path: `${path}/${i}/scan_scope`,
        message: "scan_scope applies only to filters that read requests",
      });
    }
    const filter: BuiltinFilter = { slug: item.slug, action: item.action };
    if (item.slug === SCOPED_BUILTIN && item.apply_to !== "response") {
      filter.scan_scope = item.scan_scope ?? "all_messages";
    }
    if (item.apply_to !== undefined) filter.apply_to = item.apply_to;
    out.push(filter);
  });
  return out;
}

export interface PatternProblem {
  index: number;
  pattern_error: string;
  /** Which bound a pattern that compiles breaks: its own cost, or its guardrail's running total. */
  limit?: "pattern_cost" | "guardrail_cost";
  cost?: number;
  max_cost?: number;
}

/**
 * Compiles a custom pattern with RE2, the linear-time engine. RE2 refuses what needs backtracking
 * (lookaround, backreferences, possessive quantifiers), so a pattern it accepts can never take more
 * than linear time on any input (docs/behaviour.md#custom-patterns).
 */
export function compilePattern(pattern: string): RE2 {
  return new RE2(pattern, "gu");
}

/**
 * Checks one guardrail's custom patterns: each must compile with compilePattern (the very function
 * the request path compiles them with), and their scan cost must stay within
 * MAX_GUARDRAIL_PATTERN_COST, alone and together. Returns the problems found (empty when none).
 * Within these bounds every pattern set the request path builds compiles (content-scan.ts), so a
 * guardrail accepted here serves every request, whatever other guardrails apply with it.
 */
export function checkPatterns(filters: CustomFilter[]): PatternProblem[] {
  const problems: PatternProblem[] = [];
  let total = 0;
  let totalReported = false;
  filters.forEach((f, index) => {
    try {
      compilePattern(f.pattern);
    } catch (err) {
      problems.push({ index, pattern_error: err instanceof Error ? err.message : "does not compile" });
      return;
    }
    const cost = patternCost(f.pattern);
    total += cost;
    if (cost > MAX_GUARDRAIL_PATTERN_COST) {
      problems.push({
        index,
        pattern_error: `pattern costs ${cost} to scan; at most ${MAX_GUARDRAIL_PATTERN_COST} is allowed`,
        limit: "pattern_cost",
        cost,
        max_cost: MAX_GUARDRAIL_PATTERN_COST,
      });
      totalReported = true;
    } else if (total > MAX_GUARDRAIL_PATTERN_COST && !totalReported) {
      // The running total is reported once, at the filter that passes the bound.
      problems.push({
        index,
        pattern_error: `the guardrail's patterns cost ${total} to scan up to this one; at most ${MAX_GUARDRAIL_PATTERN_COST} is allowed in all`,
        limit: "guardrail_cost",
        cost: total,
        max_cost: MAX_GUARDRAIL_PATTERN_COST,
      });
      totalReported = true;
    }
  });
  return problems;
}

export function builtinLabel(slug: BuiltinSlug): string {
  return BUILTIN_LABELS[slug];
}
