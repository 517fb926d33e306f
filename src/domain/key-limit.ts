import { type Issue, invalidRequest } from "./errors.js";
import { RESET_INTERVALS, type ResetInterval } from "./guardrail.js";
import { MAX_LIMIT_USD, microsToUsd, usdToMicros } from "./money.js";

/** A key's own spending limit as stored: micro-dollars, and its window (null: the key's lifetime). */
export interface KeyLimit {
  limit_micros: number | null;
  limit_reset: ResetInterval | null;
  include_byok_in_limit: boolean;
}

/** The limit fields of a key create or update, as the reference SDK sends them. */
export interface KeyLimitInput {
  limit?: number | null;
  limit_reset?: string | null;
  include_byok_in_limit?: boolean;
}

export const NO_KEY_LIMIT: KeyLimit = { limit_micros: null, limit_reset: null, include_byok_in_limit: false };

/**
 * The key's limit after `input` (fields not sent keep their stored value), or 400 with every
 * problem. The same bounds as a guardrail's limit_usd: at least 0, at most MAX_LIMIT_USD, kept to
 * the micro-dollar (a finer amount would be rounded, so it is refused rather than changed).
 */
export function applyKeyLimit(stored: KeyLimit, input: KeyLimitInput): KeyLimit {
  const issues: Issue[] = [];
  const next: KeyLimit = { ...stored };
  if (input.limit !== undefined) {
    if (input.limit === null) next.limit_micros = null;
    else if (!Number.isFinite(input.limit) || input.limit < 0)
      issues.push({ path: "/limit", message: "must be a number of USD, 0 or more" });
    else if (input.limit > MAX_LIMIT_USD)
      issues.push({ path: "/limit", message: `must be at most ${MAX_LIMIT_USD}` });
    else {
      const micros = usdToMicros(input.limit);
      if (micros === undefined)
        issues.push({ path: "/limit", message: "must not be finer than a micro-dollar (6 decimals)" });
      else next.limit_micros = micros;
    }
  }
  if (input.limit_reset !== undefined) {
    if (input.limit_reset === null) next.limit_reset = null;
    else if ((RESET_INTERVALS as readonly string[]).includes(input.limit_reset))
      next.limit_reset = input.limit_reset as ResetInterval;
    else issues.push({ path: "/limit_reset", message: "must be daily, weekly, monthly or null" });
  }
  if (input.include_byok_in_limit !== undefined) next.include_byok_in_limit = input.include_byok_in_limit;
  if (issues.length > 0) throw invalidRequest(issues);
  return next;
}

/** The reference SDK's limit fields of a key: its limit, what is left of it in its window, its reset. */
export function presentKeyLimit(
  limit: KeyLimit,
  spentMicros: number,
): {
  limit: number | null;
  limit_remaining: number | null;
  limit_reset: ResetInterval | null;
  include_byok_in_limit: boolean;
} {
  return {
    limit: limit.limit_micros === null ? null : microsToUsd(limit.limit_micros),
    limit_remaining:
      limit.limit_micros === null ? null : microsToUsd(Math.max(0, limit.limit_micros - spentMicros)),
    limit_reset: limit.limit_reset,
    include_byok_in_limit: limit.include_byok_in_limit,
  };
}
