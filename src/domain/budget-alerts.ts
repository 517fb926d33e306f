import { microsToUsd } from "./money.js";
import type { ResetInterval } from "./reset-interval.js";

/** Alert thresholds are whole percents of a window's limit: 1 to 100, at most this many per guardrail. */
export const MAX_ALERT_THRESHOLDS = 10;
export const MIN_ALERT_PERCENT = 1;
export const MAX_ALERT_PERCENT = 100;

/** The thresholds as stored: each once, in ascending order (the order of crossing). */
export function normalizeThresholds(thresholds: readonly number[]): number[] {
  return [...new Set(thresholds)].sort((a, b) => a - b);
}

/**
 * The thresholds that settled spend has reached: spend at or over `threshold`% of the limit. In
 * integers, so 80% of a limit is reached at exactly that many micro-dollars and not a rounding
 * error earlier. A limit of zero has no fraction to reach.
 */
export function reachedThresholds(
  thresholds: readonly number[],
  limitMicros: number,
  spentMicros: number,
): number[] {
  if (limitMicros <= 0) return [];
  return thresholds.filter((t) => spentMicros * 100 >= t * limitMicros);
}

/** One threshold reached in one window of one budget subject (docs/gateway.md#budget-alerts). */
export interface BudgetAlert {
  organization_id: string;
  guardrail_id: string;
  scope: "key" | "member" | "workspace";
  /** The key's hash, or `<workspace_id>:<member_user_id>` for a member budget. */
  subject: string;
  reset_interval: ResetInterval;
  window_start: string;
  resets_at: string;
  threshold_percent: number;
  limit_micros: number;
  spent_micros: number;
  /** The key whose settled request reached the threshold. */
  key_hash: string;
  created_at: string;
}

/** The JSON event a webhook receives: the same facts, money in USD, ids by name. */
export function alertEvent(alert: BudgetAlert, eventId: string): Record<string, unknown> {
  const [workspaceId, memberUserId] =
    alert.scope === "member" ? splitMemberSubject(alert.subject) : [undefined, undefined];
  return {
    id: eventId,
    type: "budget.threshold_reached",
    created_at: alert.created_at,
    data: {
      organization_id: alert.organization_id,
      guardrail_id: alert.guardrail_id,
      scope: alert.scope,
      key_hash: alert.scope === "key" ? alert.subject : alert.key_hash,
      ...(alert.scope === "member" ? { workspace_id: workspaceId, member_user_id: memberUserId } : {}),
      reset_interval: alert.reset_interval,
      window_start: alert.window_start,
      resets_at: alert.resets_at,
      threshold_percent: alert.threshold_percent,
      limit_usd: microsToUsd(alert.limit_micros),
      spend_usd: microsToUsd(alert.spent_micros),
    },
  };
}

/** A member budget's subject is `<workspace_id>:<member_user_id>`; user ids hold no colon-free guarantee, workspace ids do (UUIDs). */
function splitMemberSubject(subject: string): [string, string] {
  const at = subject.indexOf(":");
  return at < 0 ? [subject, ""] : [subject.slice(0, at), subject.slice(at + 1)];
}
