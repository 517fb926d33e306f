import RE2 from "re2";
import type { Issue } from "./errors.js";

/** Builtin filter slugs and their system-assigned labels (decisions §6). */
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

/** Only this builtin takes a scan scope (decisions §6). */
export const SCOPED_BUILTIN: BuiltinSlug = "regex-prompt-injection";
export const DEFAULT_REDACT_LABEL = "[REDACTED]";

export const MAX_CUSTOM_FILTERS = 50;
export const MAX_PATTERN_LENGTH = 10_000;
export const MAX_LABEL_LENGTH = 100;

export interface BuiltinFilter {
  slug: BuiltinSlug;
  action: FilterAction;
  scan_scope?: ScanScope;
}

export interface CustomFilter {
  pattern: string;
  action: FilterAction;
  label: string | null;
}

export interface BuiltinFilterInput {
  slug: BuiltinSlug;
  action: FilterAction;
  label?: string;
  scan_scope?: ScanScope;
}

/** Normalizes a builtin filter list: labels are the system's, a slug may appear once. */
export function normalizeBuiltins(
  items: BuiltinFilterInput[],
  path: string,
  issues: Issue[],
): BuiltinFilter[] {
  const seen = new Set<string>();
  const out: BuiltinFilter[] = [];
  items.forEach((item, i) => {
    if (seen.has(item.slug)) {
      issues.push({
        path: `${path}/${i}/slug`,
        message: `builtin filter '${item.slug}' appears more than once`,
      });
    }
    seen.add(item.slug);
    if (item.scan_scope !== undefined && item.slug !== SCOPED_BUILTIN) {
      issues.push({
        path: `${path}/${i}/scan_scope`,
        message: `scan_scope applies only to '${SCOPED_BUILTIN}'`,
      });
    }
    const filter: BuiltinFilter = { slug: item.slug, action: item.action };
    if (item.slug === SCOPED_BUILTIN) filter.scan_scope = item.scan_scope ?? "all_messages";
    out.push(filter);
  });
  return out;
}

export interface PatternProblem {
  index: number;
  pattern_error: string;
}

/**
 * Compiles a custom pattern with RE2, the linear-time engine. RE2 refuses what needs backtracking
 * (lookaround, backreferences, possessive quantifiers), so a pattern it accepts can never take more
 * than linear time on any input (pitfalls: catastrophic backtracking).
 */
export function compilePattern(pattern: string): RE2 {
  return new RE2(pattern, "gu");
}

/** Checks every custom pattern; returns the problems found (empty when all compile). */
export function checkPatterns(filters: CustomFilter[]): PatternProblem[] {
  const problems: PatternProblem[] = [];
  filters.forEach((f, index) => {
    try {
      compilePattern(f.pattern);
    } catch (err) {
      problems.push({ index, pattern_error: err instanceof Error ? err.message : "does not compile" });
    }
  });
  return problems;
}

export function builtinLabel(slug: BuiltinSlug): string {
  return BUILTIN_LABELS[slug];
}
