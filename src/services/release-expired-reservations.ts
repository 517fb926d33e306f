import { type CounterKey, findExpiredReservations } from "../storage/spend-repo.js";
import type { ServiceDeps } from "./context.js";

/** What the sweep needs: the database to find expired holds, the spend store to give them back, the clock. */
export type ReleaseExpiredDeps = Pick<ServiceDeps, "db" | "spend" | "now">;

/**
 * Releases reservations whose request can no longer be running (a crashed process left them, on
 * PostgreSQL): their hold outlasts the provider's time-out. Returns how many were released.
 */
export async function releaseExpired(deps: ReleaseExpiredDeps, batch = 100): Promise<number> {
  const now = deps.now().toISOString();
  // Holds kept in memory (SQLite) expire too: a request that never settled or released (a bug, say)
  // must not keep its budget.
  const expired = [
    ...(await findExpiredReservations(deps.db, now, batch)),
    ...(deps.spend.expiredHolds?.(now, batch) ?? []),
  ];
  for (const row of expired) {
    await deps.spend.release({
      id: row.id,
      counters: JSON.parse(row.counters) as CounterKey[],
      amount: Number(row.amount_micros),
    });
  }
  return expired.length;
}
