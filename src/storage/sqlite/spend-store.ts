import type SqliteDatabase from "better-sqlite3";
import { type Admission, admit } from "../../domain/budget-admission.js";
import type { AdmissionAsk, SpendStore } from "../ports.js";
import type { BudgetReservationTable, SpendLedgerTable } from "../schema.js";
import { type CounterKey, rollupRows } from "../spend-repo.js";
import { layersOf } from "../spend-store.js";

/** Raised inside a reservation's savepoint to roll it back. */
class Exhausted extends Error {
  constructor(readonly index: number) {
    super("budget used up");
  }
}

const KEY_WHERE =
  "guardrail_id = ? and scope = ? and subject = ? and reset_interval = ? and window_start = ?";
const keyParams = (k: CounterKey) => [k.guardrail_id, k.scope, k.subject, k.reset_interval, k.window_start];

/**
 * The same writes as kyselySpendStore, as synchronous better-sqlite3 transactions (SQLite's own SQL:
 * this adapter is SQLite's alone). Inside the shared transaction of a batch, each write's own
 * transaction function becomes a savepoint. While a Kysely transaction is open on the connection (it
 * spans awaits), a synchronous one cannot start, so the writes go through `fallback`, which queues
 * behind it. Statements run to completion synchronously, so nothing else interleaves with them.
 */
export function sqliteSpendStore(sqlite: SqliteDatabase.Database, fallback: SpendStore): SpendStore {
  const upsert = sqlite.prepare(
    `insert into budget_usage (organization_id, guardrail_id, scope, subject, reset_interval, window_start, spent_micros, reserved_micros)
     values (?, ?, ?, ?, ?, ?, 0, ?)
     on conflict (guardrail_id, scope, subject, reset_interval, window_start)
     do update set reserved_micros = budget_usage.reserved_micros + excluded.reserved_micros
     where budget_usage.spent_micros + budget_usage.reserved_micros < ?`,
  );
  const readOne = sqlite.prepare(`select spent_micros, reserved_micros from budget_usage where ${KEY_WHERE}`);
  const upsertWithin = sqlite.prepare(
    `insert into budget_usage (organization_id, guardrail_id, scope, subject, reset_interval, window_start, spent_micros, reserved_micros)
     values (?, ?, ?, ?, ?, ?, 0, ?)
     on conflict (guardrail_id, scope, subject, reset_interval, window_start)
     do update set reserved_micros = budget_usage.reserved_micros + excluded.reserved_micros
     where budget_usage.spent_micros + budget_usage.reserved_micros + excluded.reserved_micros <= ?`,
  );
  const addReservation = sqlite.prepare(
    "insert into budget_reservations (id, organization_id, counters, amount_micros, created_at, expires_at) values (?, ?, ?, ?, ?, ?)",
  );
  const dropReservation = sqlite.prepare("delete from budget_reservations where id = ?");
  const settleOne = sqlite.prepare(
    `update budget_usage set
       reserved_micros = case when reserved_micros > ? then reserved_micros - ? else 0 end,
       spent_micros = spent_micros + ?
     where ${KEY_WHERE}`,
  );
  const addRollup = sqlite.prepare(
    `insert into spend_rollup (organization_id, day, guardrail_id, key_hash, workspace_id, member_user_id, model, provider, byok, requests, prompt_tokens, completion_tokens, cost_micros)
     values (@organization_id, @day, @guardrail_id, @key_hash, @workspace_id, @member_user_id, @model, @provider, @byok, 1, @prompt_tokens, @completion_tokens, @cost_micros)
     on conflict (organization_id, day, guardrail_id, key_hash, model, provider, byok) do update set
       requests = spend_rollup.requests + 1,
       prompt_tokens = spend_rollup.prompt_tokens + excluded.prompt_tokens,
       completion_tokens = spend_rollup.completion_tokens + excluded.completion_tokens,
       cost_micros = spend_rollup.cost_micros + excluded.cost_micros`,
  );
  const addLedger = sqlite.prepare(
    `insert into spend_ledger (id, organization_id, request_id, key_hash, workspace_id, member_user_id, model, provider, byok, prompt_tokens, completion_tokens, cost_micros, created_at)
     values (@id, @organization_id, @request_id, @key_hash, @workspace_id, @member_user_id, @model, @provider, @byok, @prompt_tokens, @completion_tokens, @cost_micros, @created_at)`,
  );

  const reserve = sqlite.transaction(
    (
      organizationId: string,
      counters: { key: CounterKey; limit: number }[],
      amount: number,
      row: BudgetReservationTable,
    ) => {
      for (const [i, c] of counters.entries()) {
        // A new counter is inserted unconditionally, so a limit with nothing to give is refused here.
        const admitted =
          c.limit > 0 && upsert.run(organizationId, ...keyParams(c.key), amount, c.limit).changes === 1;
        if (!admitted) throw new Exhausted(i);
      }
      addReservation.run(
        row.id,
        row.organization_id,
        row.counters,
        row.amount_micros,
        row.created_at,
        row.expires_at,
      );
    },
  );
  // Read and write in one synchronous transaction: nothing in this process runs between them, and
  // the write's condition still holds the limit against another process on the same file.
  const admitNow = sqlite.transaction(
    (
      organizationId: string,
      counters: { key: CounterKey; limit: number }[],
      ask: AdmissionAsk,
      row: BudgetReservationTable,
    ): Admission => {
      const usage = counters.map(
        (c) =>
          (readOne.get(...keyParams(c.key)) as
            | { spent_micros: number; reserved_micros: number }
            | undefined) ?? {
            spent_micros: 0,
            reserved_micros: 0,
          },
      );
      const admission = admit(layersOf(counters, usage), ask.price, ask.wanted, ask.minimal);
      if (!admission.admitted) return admission;
      for (const [i, c] of counters.entries()) {
        const fits =
          admission.amount_micros <= c.limit &&
          upsertWithin.run(organizationId, ...keyParams(c.key), admission.amount_micros, c.limit).changes ===
            1;
        if (!fits) throw new Exhausted(i);
      }
      addReservation.run(
        row.id,
        row.organization_id,
        row.counters,
        admission.amount_micros,
        row.created_at,
        row.expires_at,
      );
      return admission;
    },
  );
  const settle = sqlite.transaction(
    (
      reservation: { id: string; counters: CounterKey[]; amount: number } | null,
      cost: number,
      ledger: SpendLedgerTable,
      guardrailIds: readonly string[],
    ) => {
      if (reservation) {
        const held = dropReservation.run(reservation.id).changes === 1 ? reservation.amount : 0;
        for (const key of reservation.counters) settleOne.run(held, held, cost, ...keyParams(key));
      }
      addLedger.run(ledger);
      for (const row of rollupRows(ledger, guardrailIds)) {
        const { requests: _one, ...values } = row;
        addRollup.run(values);
      }
    },
  );
  const release = sqlite.transaction(
    (reservation: { id: string; counters: CounterKey[]; amount: number }) => {
      if (dropReservation.run(reservation.id).changes !== 1) return;
      for (const key of reservation.counters)
        settleOne.run(reservation.amount, reservation.amount, 0, ...keyParams(key));
    },
  );

  // Group commit: the writes of concurrent requests that arrive in one turn of the event loop share
  // one transaction (one WAL write), each in its own savepoint, so one request's failure rolls back
  // only its own writes. Every caller is answered only after the shared commit.
  interface Pending {
    run: () => unknown;
    async: () => Promise<unknown>;
    resolve: (value: unknown) => void;
    reject: (err: unknown) => void;
  }
  let queue: Pending[] = [];
  const outcomes = new Map<Pending, { ok: true; value: unknown } | { ok: false; err: unknown }>();
  const commitAll = sqlite.transaction((batch: Pending[]) => {
    for (const op of batch) {
      try {
        outcomes.set(op, { ok: true, value: op.run() });
      } catch (err) {
        outcomes.set(op, { ok: false, err });
      }
    }
  });
  const flush = () => {
    const batch = queue;
    queue = [];
    if (sqlite.inTransaction) {
      // A Kysely transaction is open across an await: go through it (queued behind it) instead.
      for (const op of batch) op.async().then(op.resolve, op.reject);
      return;
    }
    try {
      commitAll(batch);
    } catch (err) {
      outcomes.clear();
      for (const op of batch) op.reject(err);
      return;
    }
    for (const op of batch) {
      const outcome = outcomes.get(op);
      if (outcome?.ok) op.resolve(outcome.value);
      else op.reject(outcome?.err);
    }
    outcomes.clear();
  };
  const schedule = <T>(run: () => T, async: () => Promise<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      queue.push({ run, async, resolve: resolve as (value: unknown) => void, reject });
      if (queue.length === 1) setImmediate(flush);
    });

  return {
    reserve(organizationId, counters, amount, row) {
      return schedule(
        () => {
          try {
            reserve(organizationId, counters, amount, row);
            return -1;
          } catch (err) {
            if (err instanceof Exhausted) return err.index;
            throw err;
          }
        },
        () => fallback.reserve(organizationId, counters, amount, row),
      );
    },
    admit(organizationId, counters, ask, row) {
      return schedule(
        (): Admission => {
          try {
            return admitNow(organizationId, counters, ask, row);
          } catch (err) {
            if (err instanceof Exhausted)
              return { admitted: false, index: err.index, reason: "budget_reserved", tokens_that_fit: 0 };
            throw err;
          }
        },
        () => fallback.admit(organizationId, counters, ask, row),
      );
    },
    settle(reservation, cost, ledger, guardrailIds = []) {
      return schedule(
        () => settle(reservation, cost, ledger, guardrailIds),
        () => fallback.settle(reservation, cost, ledger, guardrailIds),
      );
    },
    release(reservation) {
      return schedule(
        () => release(reservation),
        () => fallback.release(reservation),
      );
    },
  };
}
