import type pg from "pg";
import type { Admission } from "../../domain/budget-admission.js";
import type { AdmissionAsk, HeldReservation, SpendStore } from "../ports.js";
import type { BudgetReservationTable, SpendLedgerTable } from "../schema.js";
import type { CounterKey } from "../spend-repo.js";
import { Batcher } from "./batcher.js";
import { LOST_RACE, retryingRaces, sqlState } from "./errors.js";

/**
 * The gateway's spend writes on PostgreSQL. Every request on one budget updates the same counter
 * row, and PostgreSQL holds that row's lock until the transaction commits. So the writes that arrive
 * together go as one call of `guardrails_spend_batch` (migration 0004): one statement, one round
 * trip, one commit, whatever the batch holds; the lock is held for the server's work only, never
 * across round trips. The function runs the writes in arrival order with the statements of the
 * other stores, so each write's outcome is the one it would have had alone, in that order.
 *
 * When the call fails with an error from the server, it wrote nothing (one statement is one
 * transaction). A lost race (deadlock, serialization) runs the batch again; any other error (a write
 * that breaks a constraint) runs each write again on its own, so one write's error never fails
 * another. An error without a server's answer (a lost connection) may have come after the commit,
 * so it is every write's answer, as it would have been alone: nothing is run twice.
 */

type SpendOp =
  | {
      kind: "reserve";
      organization_id: string;
      counters: { key: CounterKey; limit: number }[];
      amount: number;
      row: BudgetReservationTable;
    }
  | {
      kind: "admit";
      organization_id: string;
      counters: { key: CounterKey; limit: number }[];
      ask: AdmissionAsk;
      row: BudgetReservationTable;
    }
  | {
      kind: "settle";
      reservation: HeldReservation | null;
      cost: number;
      ledger: SpendLedgerTable;
      guardrail_ids: readonly string[];
    }
  | { kind: "release"; reservation: HeldReservation };

/** A reserve's index (-1 admitted), 0 for settle and release, an Admission for admit. */
type Outcome = number | Admission;

interface Pending {
  op: SpendOp;
  resolve: (outcome: Outcome) => void;
  reject: (err: unknown) => void;
}

/** Most writes in one call, and most calls running at once (each holds a pooled connection). */
const MAX_BATCH = 64;
const MAX_IN_FLIGHT = 2;

const STATEMENT = {
  name: "guardrails_spend_batch2",
  text: "select guardrails_spend_batch2($1::jsonb) as outcomes",
};

export function postgresSpendStore(
  pool: pg.Pool,
  options: { maxBatch?: number; maxInFlight?: number } = {},
): SpendStore {
  const call = async (ops: SpendOp[]): Promise<Outcome[]> => {
    const result = await retryingRaces(
      () => pool.query<{ outcomes: Outcome[] }>({ ...STATEMENT, values: [JSON.stringify(ops)] }),
      LOST_RACE,
    );
    const outcomes = result.rows[0]?.outcomes;
    if (outcomes?.length !== ops.length) throw new Error("guardrails_spend_batch answered for another batch");
    return outcomes;
  };

  const run = async (batch: Pending[]): Promise<void> => {
    try {
      const outcomes = await call(batch.map((p) => p.op));
      for (const [i, p] of batch.entries()) p.resolve(outcomes[i] as Outcome);
      return;
    } catch (err) {
      // Without a server's error the batch may have been committed: it is everyone's answer.
      if (batch.length === 1 || sqlState(err) === undefined) {
        for (const p of batch) p.reject(err);
        return;
      }
    }
    // Nothing was written: each write alone finds out whose error it was.
    await Promise.all(batch.map((p) => run([p])));
  };

  const batcher = new Batcher<Pending>(run, {
    maxBatch: options.maxBatch ?? MAX_BATCH,
    maxInFlight: options.maxInFlight ?? MAX_IN_FLIGHT,
  });
  const submit = (op: SpendOp): Promise<Outcome> =>
    new Promise<Outcome>((resolve, reject) => batcher.add({ op, resolve, reject }));

  return {
    async reserve(organizationId, counters, amount, row) {
      return (await submit({
        kind: "reserve",
        organization_id: organizationId,
        counters,
        amount,
        row,
      })) as number;
    },
    async admit(organizationId, counters, ask, row) {
      // Amounts come back as JSON numbers: exact, since limits stay far below 2^53 micro-dollars.
      return (await submit({
        kind: "admit",
        organization_id: organizationId,
        counters,
        ask,
        row,
      })) as Admission;
    },
    async settle(reservation, cost, ledger, guardrailIds = []) {
      await submit({ kind: "settle", reservation, cost, ledger, guardrail_ids: guardrailIds });
    },
    async release(reservation) {
      await submit({ kind: "release", reservation });
    },
    async renew(reservation, expiresAt) {
      // Once a minute or so for a long request: no batch to share.
      await pool.query("update budget_reservations set expires_at = $1 where id = $2", [
        expiresAt,
        reservation.id,
      ]);
    },
  };
}
