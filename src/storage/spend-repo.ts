import { type ExpressionBuilder, sql } from "kysely";
import type { BudgetReservationTable, Database, Executor, SpendLedgerTable } from "./schema.js";

/** One budget counter: a guardrail's budget for one subject in one calendar window. */
export interface CounterKey {
  guardrail_id: string;
  scope: "key" | "member";
  subject: string;
  reset_interval: string;
  window_start: string;
}

function matches(eb: ExpressionBuilder<Database, "budget_usage">, k: CounterKey) {
  return eb.and([
    eb("guardrail_id", "=", k.guardrail_id),
    eb("scope", "=", k.scope),
    eb("subject", "=", k.subject),
    eb("reset_interval", "=", k.reset_interval),
    eb("window_start", "=", k.window_start),
  ]);
}

function sameCounter(row: CounterKey, k: CounterKey): boolean {
  return (
    row.guardrail_id === k.guardrail_id &&
    row.scope === k.scope &&
    row.subject === k.subject &&
    row.reset_interval === k.reset_interval &&
    row.window_start === k.window_start
  );
}

export interface CounterUsage {
  spent_micros: number;
  reserved_micros: number;
}

/** Settled spend and open reservations of each counter, in the order asked (zero where none yet). */
export async function readCounters(
  db: Executor,
  organizationId: string,
  counters: CounterKey[],
): Promise<CounterUsage[]> {
  if (counters.length === 0) return [];
  const rows = await db
    .selectFrom("budget_usage")
    .select([
      "guardrail_id",
      "scope",
      "subject",
      "reset_interval",
      "window_start",
      "spent_micros",
      "reserved_micros",
    ])
    .where("organization_id", "=", organizationId)
    .where((eb) => eb.or(counters.map((k) => matches(eb, k))))
    .execute();
  return counters.map((k) => {
    const row = rows.find((r) => sameCounter(r, k));
    return {
      spent_micros: Number(row?.spent_micros ?? 0),
      reserved_micros: Number(row?.reserved_micros ?? 0),
    };
  });
}

/**
 * Adds `amount` to a counter's reservations if, and only if, its spend plus reservations is still
 * under `limit`: one conditional UPDATE, atomic on every database. False when the budget is used up.
 */
export async function reserveCounter(
  tx: Executor,
  organizationId: string,
  key: CounterKey,
  limit: number,
  amount: number,
): Promise<boolean> {
  await tx
    .insertInto("budget_usage")
    .values({ organization_id: organizationId, ...key, spent_micros: 0, reserved_micros: 0 })
    .onConflict((oc) => oc.doNothing())
    .execute();
  const result = await tx
    .updateTable("budget_usage")
    .set({ reserved_micros: sql`reserved_micros + ${amount}` })
    .where((eb) => matches(eb, key))
    .where(sql<boolean>`spent_micros + reserved_micros < ${limit}`)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Moves a reservation's amount out of the counter and the actual cost into its spend. */
export async function settleCounter(
  tx: Executor,
  key: CounterKey,
  reserved: number,
  actual: number,
): Promise<void> {
  await tx
    .updateTable("budget_usage")
    .set({
      // CASE rather than max()/greatest(): the same SQL on SQLite and PostgreSQL.
      reserved_micros: sql`case when reserved_micros > ${reserved} then reserved_micros - ${reserved} else 0 end`,
      spent_micros: sql`spent_micros + ${actual}`,
    })
    .where((eb) => matches(eb, key))
    .execute();
}

export async function insertReservation(tx: Executor, row: BudgetReservationTable): Promise<void> {
  await tx.insertInto("budget_reservations").values(row).execute();
}

/** Removes a reservation; false when it was already settled or released (by the expiry sweep, say). */
export async function deleteReservation(tx: Executor, id: string): Promise<boolean> {
  const result = await tx.deleteFrom("budget_reservations").where("id", "=", id).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

export async function findExpiredReservations(
  db: Executor,
  nowIso: string,
  limit: number,
): Promise<BudgetReservationTable[]> {
  return db
    .selectFrom("budget_reservations")
    .selectAll()
    .where("expires_at", "<=", nowIso)
    .orderBy("expires_at")
    .limit(limit)
    .execute();
}

export async function insertSpend(tx: Executor, row: SpendLedgerTable): Promise<void> {
  await tx.insertInto("spend_ledger").values(row).execute();
}
