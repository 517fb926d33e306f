import { type Admission, admit, type LayerUsage } from "../domain/budget-admission.js";
import type { AdmissionAsk, HeldReservation, SpendStore, Transact } from "./ports.js";
import type { BudgetReservationTable, Executor, SpendLedgerTable } from "./schema.js";
import {
  type CounterKey,
  deleteReservation,
  insertReservation,
  insertSpend,
  readCounters,
  reserveCounter,
  reserveCounterWithin,
  rollUpSpend,
  settleCounter,
} from "./spend-repo.js";

/**
 * Reserves `amount` on every counter, each under its limit, and records the reservation; -1 when
 * done. When a counter has nothing left, what was added to the earlier ones is taken back in the
 * same transaction (so it can share one with other writes, without savepoints) and its index is
 * returned.
 */
async function reserveIn(
  tx: Executor,
  organizationId: string,
  counters: { key: CounterKey; limit: number }[],
  amount: number,
  row: BudgetReservationTable,
): Promise<number> {
  for (const [i, c] of counters.entries()) {
    if (await reserveCounter(tx, organizationId, c.key, c.limit, amount)) continue;
    for (const earlier of counters.slice(0, i)) await settleCounter(tx, earlier.key, amount, 0);
    return i;
  }
  await insertReservation(tx, row);
  return -1;
}

/** The counters as budget-admission.ts reads them (a counter not written yet has used nothing). */
export function layersOf(
  counters: { limit: number }[],
  usage: { spent_micros: number; reserved_micros: number }[],
) {
  return counters.map(
    (c, i): LayerUsage => ({
      limit_micros: c.limit,
      spent_micros: usage[i]?.spent_micros ?? 0,
      reserved_micros: usage[i]?.reserved_micros ?? 0,
    }),
  );
}

/**
 * The sized admission over Kysely: judged on a read, written with a condition that holds the limit.
 * If another writer took the room between the two (PostgreSQL at read committed), what was written
 * is taken back and the counter is reported as held by requests in flight.
 */
async function admitIn(
  tx: Executor,
  organizationId: string,
  counters: { key: CounterKey; limit: number }[],
  ask: AdmissionAsk,
  row: BudgetReservationTable,
): Promise<Admission> {
  const usage = await readCounters(
    tx,
    organizationId,
    counters.map((c) => c.key),
  );
  const admission = admit(layersOf(counters, usage), ask.price, ask.wanted, ask.minimal);
  if (!admission.admitted) return admission;
  for (const [i, c] of counters.entries()) {
    if (await reserveCounterWithin(tx, organizationId, c.key, c.limit, admission.amount_micros)) continue;
    for (const earlier of counters.slice(0, i))
      await settleCounter(tx, earlier.key, admission.amount_micros, 0);
    return { admitted: false, index: i, reason: "budget_reserved", tokens_that_fit: 0 };
  }
  await insertReservation(tx, { ...row, amount_micros: admission.amount_micros });
  return admission;
}

/** Settles a reservation (when there is one) to the actual cost and writes the ledger entry. */
async function settleIn(
  tx: Executor,
  reservation: HeldReservation | null,
  cost: number,
  ledger: SpendLedgerTable,
  guardrailIds: readonly string[],
): Promise<void> {
  if (reservation) {
    // A reservation the expiry sweep already released is not taken back twice.
    const held = await deleteReservation(tx, reservation.id);
    for (const key of reservation.counters) await settleCounter(tx, key, held ? reservation.amount : 0, cost);
  }
  await insertSpend(tx, ledger);
  await rollUpSpend(tx, ledger, guardrailIds);
}

/** Gives a reservation's amount back to its counters, unless it was settled or released already. */
async function releaseIn(tx: Executor, reservation: HeldReservation): Promise<void> {
  if (!(await deleteReservation(tx, reservation.id))) return;
  for (const key of reservation.counters) await settleCounter(tx, key, reservation.amount, 0);
}

/**
 * The reference spend store: each write is one transaction of the shared repository statements, on
 * either database. The adapters' faster stores (sqlite/spend-store.ts, postgres/spend-store.ts) must
 * answer exactly as this one does, and the storage contract test runs the same cases on all of them;
 * when the rule changes, it changes here first.
 */
export function kyselySpendStore(transact: Transact): SpendStore {
  return {
    reserve(organizationId, counters, amount, row) {
      return transact((tx) => reserveIn(tx, organizationId, counters, amount, row));
    },
    admit(organizationId, counters, ask, row) {
      return transact((tx) => admitIn(tx, organizationId, counters, ask, row));
    },
    async settle(reservation, cost, ledger, guardrailIds = []) {
      await transact((tx) => settleIn(tx, reservation, cost, ledger, guardrailIds));
    },
    async release(reservation) {
      await transact((tx) => releaseIn(tx, reservation));
    },
    async renew(reservation, expiresAt) {
      await transact((tx) =>
        tx
          .updateTable("budget_reservations")
          .set({ expires_at: expiresAt })
          .where("id", "=", reservation.id)
          .execute(),
      );
    },
  };
}
