import { type CounterKey, type CounterUsage, readCounters } from "../storage/spend-repo.js";
import type { ServiceDeps } from "./context.js";

/** What reading budget counters needs: the database, and the spend store for holds it keeps in memory. */
export type ReadBudgetCountersDeps = Pick<ServiceDeps, "db" | "spend">;

export type { CounterKey, CounterUsage };

/**
 * Spend and open reservations on each counter, in the order asked (zero for a counter not yet
 * written). Reservations are the database's plus what the spend store holds in memory (SQLite's,
 * docs/behaviour.md#budget-reservations), so every reader sees what admission sees.
 */
export async function readBudgetCounters(
  deps: ReadBudgetCountersDeps,
  organizationId: string,
  counters: CounterKey[],
): Promise<CounterUsage[]> {
  const usage = await readCounters(deps.db, organizationId, counters);
  const held = deps.spend.held?.(organizationId, counters);
  if (!held) return usage;
  return usage.map((u, i) => ({ ...u, reserved_micros: u.reserved_micros + (held[i] ?? 0) }));
}
