/**
 * The calendar windows a budget resets on. A module of its own because both guardrails and budget
 * alerts name them, and guardrail.ts already imports budget-alerts.ts.
 */
export const RESET_INTERVALS = ["daily", "weekly", "monthly"] as const;
export type ResetInterval = (typeof RESET_INTERVALS)[number];
