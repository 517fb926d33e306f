import { type ExpressionBuilder, type RawBuilder, sql } from "kysely";
import type {
  BudgetReservationTable,
  Database,
  Executor,
  SpendLedgerTable,
  SpendRollupTable,
} from "./schema.js";
import { insertRow, runShaped } from "./shaped-query.js";

/** One budget counter: a guardrail's budget for one subject in one calendar window. */
export interface CounterKey {
  guardrail_id: string;
  scope: "key" | "member" | "workspace";
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

const KEY_COLUMNS = ["guardrail_id", "scope", "subject", "reset_interval", "window_start"] as const;

/** Adds `amount` to a counter's reservations under `limit`; false when the counter refuses. */
export type CounterReservation = (
  tx: Executor,
  organizationId: string,
  key: CounterKey,
  limit: number,
  amount: number,
) => Promise<boolean>;

/**
 * A reservation write: one upsert whose update is conditional, atomic on SQLite and PostgreSQL
 * alike. A counter not yet written starts at zero and is inserted unconditionally, so `refuses`
 * turns away beforehand what no counter could take; `room` is the condition on a counter already
 * there. Each kind keeps its own statement shape (`shape`).
 */
function counterReservation(
  shape: string,
  refuses: (limit: number, amount: number) => boolean,
  room: (limit: number) => RawBuilder<boolean>,
): CounterReservation {
  return async (tx, organizationId, key, limit, amount) => {
    if (refuses(limit, amount)) return false;
    const parameters = [
      organizationId,
      key.guardrail_id,
      key.scope,
      key.subject,
      key.reset_interval,
      key.window_start,
      0,
      amount,
      limit,
    ];
    const result = await runShaped(tx, shape, parameters, () =>
      tx
        .insertInto("budget_usage")
        .values({ organization_id: organizationId, ...key, spent_micros: 0, reserved_micros: amount })
        .onConflict((oc) =>
          oc
            .columns([...KEY_COLUMNS])
            .doUpdateSet({ reserved_micros: sql`budget_usage.reserved_micros + excluded.reserved_micros` })
            .where(room(limit)),
        ),
    );
    return Number(result.numAffectedRows ?? 0) === 1;
  };
}

/**
 * Adds `amount` to a counter's reservations if, and only if, its spend plus reservations is still
 * under `limit` (the amount itself may run past it). False when the budget is used up, and always
 * for a limit with nothing to give.
 */
export const reserveCounter = counterReservation(
  "reserve-counter",
  (limit) => limit <= 0,
  (limit) => sql<boolean>`budget_usage.spent_micros + budget_usage.reserved_micros < ${limit}`,
);

/**
 * Adds `amount` to a counter's reservations if spend plus reservations plus `amount` stays within
 * `limit`: the write of a sized admission (budget-admission.ts), whose amount was judged on a read.
 * The condition is the guarantee, whatever happened between that read and this write: a counter
 * never holds more than its limit. False when it no longer fits.
 */
export const reserveCounterWithin = counterReservation(
  "reserve-counter-within",
  (limit, amount) => amount > limit,
  (limit) =>
    sql<boolean>`budget_usage.spent_micros + budget_usage.reserved_micros + excluded.reserved_micros <= ${limit}`,
);

/** Moves a reservation's amount out of the counter and the actual cost into its spend. */
export async function settleCounter(
  tx: Executor,
  key: CounterKey,
  reserved: number,
  actual: number,
): Promise<void> {
  const parameters = [
    reserved,
    reserved,
    actual,
    key.guardrail_id,
    key.scope,
    key.subject,
    key.reset_interval,
    key.window_start,
  ];
  await runShaped(tx, "settle-counter", parameters, () =>
    tx
      .updateTable("budget_usage")
      .set({
        // CASE rather than max()/greatest(): the same SQL on SQLite and PostgreSQL.
        reserved_micros: sql`case when reserved_micros > ${reserved} then reserved_micros - ${reserved} else 0 end`,
        spent_micros: sql`spent_micros + ${actual}`,
      })
      .where((eb) => matches(eb, key)),
  );
}

export async function insertReservation(tx: Executor, row: BudgetReservationTable): Promise<void> {
  await insertRow(tx, "budget_reservations", row);
}

/** Removes a reservation; false when it was already settled or released (by the expiry sweep, say). */
export async function deleteReservation(tx: Executor, id: string): Promise<boolean> {
  const result = await runShaped(tx, "delete-reservation", [id], () =>
    tx.deleteFrom("budget_reservations").where("id", "=", id),
  );
  return Number(result.numAffectedRows ?? 0) === 1;
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
  await insertRow(tx, "spend_ledger", row);
}

/** The rollup rows of one ledger row: once per request, and once under each guardrail that governed it. */
export function rollupRows(ledger: SpendLedgerTable, guardrailIds: readonly string[]): SpendRollupTable[] {
  return ["", ...guardrailIds].map((guardrail_id) => ({
    organization_id: ledger.organization_id,
    day: ledger.created_at.slice(0, 10),
    guardrail_id,
    key_hash: ledger.key_hash,
    workspace_id: ledger.workspace_id,
    member_user_id: ledger.member_user_id ?? "",
    model: ledger.model,
    provider: ledger.provider,
    byok: ledger.byok,
    requests: 1,
    prompt_tokens: ledger.prompt_tokens,
    completion_tokens: ledger.completion_tokens,
    cost_micros: ledger.cost_micros,
    api: ledger.api,
    session_id: ledger.session_id ?? "",
  }));
}

/** Adds a ledger row to the daily rollup, in the ledger row's transaction. */
export async function rollUpSpend(
  tx: Executor,
  ledger: SpendLedgerTable,
  guardrailIds: readonly string[],
): Promise<void> {
  for (const row of rollupRows(ledger, guardrailIds)) {
    await tx
      .insertInto("spend_rollup")
      .values(row)
      .onConflict((oc) =>
        oc
          .columns([
            "organization_id",
            "day",
            "guardrail_id",
            "key_hash",
            "model",
            "provider",
            "byok",
            "api",
            "session_id",
          ])
          .doUpdateSet({
            requests: sql`spend_rollup.requests + 1`,
            prompt_tokens: sql`spend_rollup.prompt_tokens + excluded.prompt_tokens`,
            completion_tokens: sql`spend_rollup.completion_tokens + excluded.completion_tokens`,
            cost_micros: sql`spend_rollup.cost_micros + excluded.cost_micros`,
          }),
      )
      .execute();
  }
}
