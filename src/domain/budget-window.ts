import type { ResetInterval } from "./guardrail.js";

export interface BudgetWindow {
  /** Inclusive start, UTC. */
  start: Date;
  /** Exclusive end: when the budget resets, UTC. */
  resetsAt: Date;
}

/**
 * How often a budget layer starts again: a calendar window, or never ("lifetime": a key's own
 * limit without limit_reset, or a workspace's lifetime budget).
 */
export type BudgetInterval = ResetInterval | "lifetime";

/** A layer's window: a lifetime one starts at the epoch and never resets. */
export interface LayerWindow {
  start: Date;
  resetsAt: Date | null;
}

const EPOCH = new Date(0);

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The calendar window in UTC that contains `now` (docs/behaviour.md#budget-windows):
 * daily from 00:00, weekly from Monday 00:00, monthly from the 1st 00:00. Computed from the timestamp
 * alone, so no job has to reset anything and the server's time zone plays no part.
 */
export function budgetWindow(interval: ResetInterval, now: Date): BudgetWindow;
export function budgetWindow(interval: BudgetInterval, now: Date): LayerWindow;
export function budgetWindow(interval: BudgetInterval, now: Date): LayerWindow {
  if (interval === "lifetime") return { start: EPOCH, resetsAt: null };
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  const d = now.getUTCDate();
  switch (interval) {
    case "daily": {
      const start = Date.UTC(y, m, d);
      return { start: new Date(start), resetsAt: new Date(start + DAY_MS) };
    }
    case "weekly": {
      const sinceMonday = (now.getUTCDay() + 6) % 7;
      const start = Date.UTC(y, m, d - sinceMonday);
      return { start: new Date(start), resetsAt: new Date(start + 7 * DAY_MS) };
    }
    case "monthly":
      return { start: new Date(Date.UTC(y, m, 1)), resetsAt: new Date(Date.UTC(y, m + 1, 1)) };
  }
}
