import { type CounterKey, type CounterUsage, readCounters } from "../storage/spend-repo.js";
import type { ServiceDeps } from "./context.js";

/** What reading budget counters needs: the database to read, nothing else. */
export type ReadBudgetCountersDeps = Pick<ServiceDeps, "db">;

export type { CounterKey, CounterUsage };

/** Spend and open reservations on each counter, in the order asked (zero for a counter not yet written). */
export async function readBudgetCounters(
  deps: ReadBudgetCountersDeps,
  organizationId: string,
  counters: CounterKey[],
): Promise<CounterUsage[]> {
  return readCounters(deps.db, organizationId, counters);
}
