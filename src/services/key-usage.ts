import { budgetWindow } from "../domain/budget-window.js";
import type { ResetInterval } from "../domain/guardrail.js";
import { microsToUsd } from "../domain/money.js";
import { sumKeySpend } from "../storage/key-usage-repo.js";
import type { ServiceDeps } from "./context.js";

/** A key's spend in USD as the reference service reports it: all time and per UTC calendar window. */
export interface KeyUsage {
  usage: number;
  usage_daily: number;
  usage_weekly: number;
  usage_monthly: number;
  byok_usage: number;
  byok_usage_daily: number;
  byok_usage_weekly: number;
  byok_usage_monthly: number;
}

const WINDOWS: ResetInterval[] = ["daily", "weekly", "monthly"];

export const NO_USAGE: KeyUsage = {
  usage: 0,
  usage_daily: 0,
  usage_weekly: 0,
  usage_monthly: 0,
  byok_usage: 0,
  byok_usage_daily: 0,
  byok_usage_weekly: 0,
  byok_usage_monthly: 0,
};

/**
 * The one place that reads what keys have spent, from the spend ledger (settled requests only; a
 * request in flight counts once it settles). `usage` is spend on the service's own provider
 * accounts, `byok_usage` spend on bring-your-own-key endpoints, as in the reference service. The
 * windows are the budgets' calendar windows in UTC (docs/api.md#key-usage).
 */
export async function readKeyUsage(
  deps: ServiceDeps,
  organizationId: string,
  hashes: readonly string[],
  now: Date,
): Promise<Map<string, KeyUsage>> {
  const out = new Map<string, KeyUsage>();
  if (hashes.length === 0) return out;
  const starts = Object.fromEntries(
    WINDOWS.map((w) => [w, budgetWindow(w, now).start.toISOString()]),
  ) as Record<ResetInterval, string>;
  const rows = await sumKeySpend(deps.db, organizationId, hashes, starts);
  for (const hash of hashes) out.set(hash, { ...NO_USAGE });
  for (const r of rows) {
    const u = out.get(r.key_hash);
    if (!u) continue;
    const prefix = r.byok ? "byok_usage" : "usage";
    u[prefix] = microsToUsd(r.total);
    u[`${prefix}_daily`] = microsToUsd(r.daily);
    u[`${prefix}_weekly`] = microsToUsd(r.weekly);
    u[`${prefix}_monthly`] = microsToUsd(r.monthly);
  }
  return out;
}
