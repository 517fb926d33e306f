import type SqliteDatabase from "better-sqlite3";
import { type Admission, admit } from "../../domain/budget-admission.js";
import type { HeldReservation, SpendStore } from "../ports.js";
import type { BudgetReservationTable, SpendLedgerTable, SpendRollupTable } from "../schema.js";
import { type CounterKey, rollupRows } from "../spend-repo.js";
import { layersOf } from "../spend-store.js";
import { counterName, Holds } from "./holds.js";

const KEY_WHERE =
  "guardrail_id = ? and scope = ? and subject = ? and reset_interval = ? and window_start = ?";
const keyParams = (k: CounterKey) => [k.guardrail_id, k.scope, k.subject, k.reset_interval, k.window_start];
/** A rollup row's name: the columns of its unique key. */
const rollupName = (r: SpendRollupTable) =>
  `${r.organization_id}\u0000${r.day}\u0000${r.guardrail_id}\u0000${r.key_hash}\u0000${r.model}\u0000${r.provider}\u0000${r.byok}\u0000${r.api}\u0000${r.session_id}`;

/**
 * SQLite's spend store: the same answers as kyselySpendStore (the rule), with the reservations held
 * in this process's memory (holds.ts) instead of in the database. One server process owns a SQLite
 * file (sqlite/server-lock.ts), so every request that can hold a budget is in this process: a
 * counter's settled spend, read from the database, plus what this process holds on it is the
 * whole truth. Reserving and releasing then write nothing; only a settlement does (spend, ledger,
 * rollup). A process that dies loses its holds, never settled spend, and leaves nothing to sweep.
 *
 * Why it stays exact: a decision reads the counter synchronously and holds at once, so nothing runs
 * in between; a settlement commits the spend first and drops its hold only after the commit, in the
 * same synchronous step, so a counter never looks less spent than it is. A read made while a Kysely
 * transaction is open on the connection (across an await) would see that transaction's uncommitted
 * writes, so decisions and commits wait for it to end (`waitForConnection`) instead.
 *
 * Counter rows' reserved_micros and budget_reservations are written only by older versions (the
 * server gives theirs back at start) and by the reference store: they count as held too, and one of
 * their reservations is settled or released as the reference does, so nothing they hold is lost.
 */
export function sqliteSpendStore(
  sqlite: SqliteDatabase.Database,
  waitForConnection: () => Promise<void>,
): SpendStore {
  const holds = new Holds();
  const readOne = sqlite.prepare(`select spent_micros, reserved_micros from budget_usage where ${KEY_WHERE}`);
  const addSpent = sqlite.prepare(
    `insert into budget_usage (organization_id, guardrail_id, scope, subject, reset_interval, window_start, spent_micros, reserved_micros)
     values (?, ?, ?, ?, ?, ?, ?, 0)
     on conflict (guardrail_id, scope, subject, reset_interval, window_start)
     do update set spent_micros = budget_usage.spent_micros + excluded.spent_micros`,
  );
  // A reservation written by an older version (or the reference store): given back as they do.
  const dropRow = sqlite.prepare("delete from budget_reservations where id = ?");
  const renewRow = sqlite.prepare("update budget_reservations set expires_at = ? where id = ?");
  const takeBack = sqlite.prepare(
    `update budget_usage set reserved_micros = case when reserved_micros > ? then reserved_micros - ? else 0 end where ${KEY_WHERE}`,
  );
  const releaseRow = (reservation: HeldReservation) => {
    if (dropRow.run(reservation.id).changes !== 1) return;
    for (const key of reservation.counters)
      takeBack.run(reservation.amount, reservation.amount, ...keyParams(key));
  };
  const addRollup = sqlite.prepare(
    `insert into spend_rollup (organization_id, day, guardrail_id, key_hash, workspace_id, member_user_id, model, provider, byok, requests, prompt_tokens, completion_tokens, cost_micros, api, session_id)
     values (@organization_id, @day, @guardrail_id, @key_hash, @workspace_id, @member_user_id, @model, @provider, @byok, @requests, @prompt_tokens, @completion_tokens, @cost_micros, @api, @session_id)
     on conflict (organization_id, day, guardrail_id, key_hash, model, provider, byok, api, session_id) do update set
       requests = spend_rollup.requests + excluded.requests,
       prompt_tokens = spend_rollup.prompt_tokens + excluded.prompt_tokens,
       completion_tokens = spend_rollup.completion_tokens + excluded.completion_tokens,
       cost_micros = spend_rollup.cost_micros + excluded.cost_micros`,
  );
  const addLedger = sqlite.prepare(
    `insert into spend_ledger (id, organization_id, request_id, key_hash, workspace_id, member_user_id, model, provider, byok, prompt_tokens, completion_tokens, cost_micros, created_at, api, session_id)
     values (@id, @organization_id, @request_id, @key_hash, @workspace_id, @member_user_id, @model, @provider, @byok, @prompt_tokens, @completion_tokens, @cost_micros, @created_at, @api, @session_id)`,
  );

  /** A counter as a decision reads it: settled spend, and everything held on it. */
  const usageOf = (key: CounterKey) => {
    const name = counterName(key);
    const row = readOne.get(...keyParams(key)) as
      | { spent_micros: number; reserved_micros: number }
      | undefined;
    return {
      name,
      spent_micros: row?.spent_micros ?? 0,
      reserved_micros: (row?.reserved_micros ?? 0) + holds.on(name),
    };
  };

  type Usage = ReturnType<typeof usageOf>;

  /**
   * Each counter in turn takes `amount` if `fits` (given what this request already took from it,
   * should it name a counter twice); the hold is recorded only when all do. `usage` is each
   * counter's as read in this same synchronous step, when the caller has read it already (one read
   * of a counter is a statement and its locks: the larger part of a decision's database time). The
   * index of the first that refuses, else -1.
   */
  const holdOnAll = (
    counters: { key: CounterKey; limit: number }[],
    amount: number,
    row: BudgetReservationTable,
    fits: (spent: number, held: number, limit: number) => boolean,
    usage: readonly Usage[] = counters.map((c) => usageOf(c.key)),
  ): number => {
    const taking = new Map<string, number>();
    const names: string[] = [];
    for (const [i, u] of usage.entries()) {
      const c = counters[i] as { key: CounterKey; limit: number };
      const mine = taking.get(u.name) ?? 0;
      if (!fits(u.spent_micros, u.reserved_micros + mine, c.limit)) return i;
      taking.set(u.name, mine + amount);
      names.push(u.name);
    }
    holds.add(row, names, amount);
    return -1;
  };

  /** Runs a decision now, or once no Kysely transaction is open on the connection. */
  const decide = <T>(run: () => T): Promise<T> => {
    if (sqlite.inTransaction) return waitForConnection().then(() => decide(run));
    try {
      return Promise.resolve(run());
    } catch (err) {
      return Promise.reject(err);
    }
  };

  // Group commit: the settlements of concurrent requests that arrive in one turn of the event loop
  // share one transaction (one WAL write). Their ledger rows are written one by one; what they add
  // to the same counter or the same rollup row is summed first and written once, so a batch of
  // requests of one key costs one update of each instead of one per request. Should the batch
  // fail, it is rolled back whole and each operation runs again in a transaction of its own, so one
  // request's failure fails only that request. Every caller is answered only after the commit that
  // holds its writes, and a hold is dropped only then.
  interface Settlement {
    reservation: HeldReservation | null;
    cost: number;
    ledger: SpendLedgerTable;
    guardrailIds: readonly string[];
  }
  interface Pending {
    /** A settlement, or any other write (giving back an older version's reservation). */
    op: Settlement | (() => void);
    /** After the commit: the hold the settlement replaces is dropped. */
    committed?: () => void;
    resolve: () => void;
    reject: (err: unknown) => void;
  }
  let queue: Pending[] = [];
  const commitAll = sqlite.transaction((batch: Pending[]) => {
    const spent = new Map<string, { organizationId: string; key: CounterKey; amount: number }>();
    const rollups = new Map<string, SpendRollupTable>();
    for (const { op } of batch) {
      if (typeof op === "function") {
        op();
        continue;
      }
      const { reservation, cost, ledger } = op;
      if (reservation) {
        if (!holds.has(reservation.id)) releaseRow(reservation);
        for (const key of reservation.counters) {
          const name = counterName(key);
          const sum = spent.get(name);
          if (sum) sum.amount += cost;
          else spent.set(name, { organizationId: ledger.organization_id, key, amount: cost });
        }
      }
      addLedger.run(ledger);
      for (const row of rollupRows(ledger, op.guardrailIds)) {
        const name = rollupName(row);
        const sum = rollups.get(name);
        if (!sum) {
          rollups.set(name, row);
          continue;
        }
        sum.requests += row.requests;
        sum.prompt_tokens += row.prompt_tokens;
        sum.completion_tokens += row.completion_tokens;
        sum.cost_micros += row.cost_micros;
      }
    }
    for (const { organizationId, key, amount } of spent.values())
      addSpent.run(organizationId, ...keyParams(key), amount);
    for (const row of rollups.values()) addRollup.run(row);
  });
  const done = (batch: Pending[]) => {
    for (const p of batch) {
      p.committed?.();
      p.resolve();
    }
  };
  const flush = () => {
    if (sqlite.inTransaction) {
      // A Kysely transaction is open across an await: joining it would tie these writes to its
      // outcome. The queue keeps growing meanwhile and is committed once it has ended.
      waitForConnection().then(flush, (err: unknown) => {
        const batch = queue;
        queue = [];
        for (const p of batch) p.reject(err);
      });
      return;
    }
    const batch = queue;
    queue = [];
    try {
      commitAll(batch);
    } catch (err) {
      if (batch.length === 1) {
        batch[0]?.reject(err);
        return;
      }
      // Nothing of the batch was written: each again alone, to fail only the one at fault.
      for (const p of batch) {
        try {
          commitAll([p]);
        } catch (own) {
          p.reject(own);
          continue;
        }
        done([p]);
      }
      return;
    }
    done(batch);
  };

  const write = (op: Pending["op"], committed?: () => void) =>
    new Promise<void>((resolve, reject) => {
      queue.push({ op, ...(committed ? { committed } : {}), resolve, reject });
      if (queue.length === 1) setImmediate(flush);
    });

  return {
    reserve(_organizationId, counters, amount, row) {
      return decide(() =>
        holdOnAll(
          counters,
          amount,
          row,
          // As the reference's conditional write: the amount itself may run past the limit.
          (spent, held, limit) => limit > 0 && spent + held < limit,
        ),
      );
    },
    admit(_organizationId, counters, ask, row) {
      return decide((): Admission => {
        const usage = counters.map((c) => usageOf(c.key));
        const admission = admit(layersOf(counters, usage), ask.price, ask.wanted, ask.minimal);
        if (!admission.admitted) return admission;
        const amount = admission.amount_micros;
        // Nothing ran since the read above (this step is synchronous): the same usage decides the hold.
        const refused = holdOnAll(
          counters,
          amount,
          row,
          (spent, held, limit) => amount <= limit && spent + held + amount <= limit,
          usage,
        );
        if (refused < 0) return admission;
        return { admitted: false, index: refused, reason: "budget_reserved", tokens_that_fit: 0 };
      });
    },
    settle(reservation, cost, ledger, guardrailIds = []) {
      return write(
        { reservation, cost, ledger, guardrailIds },
        reservation ? () => holds.drop(reservation.id) : undefined,
      );
    },
    async release(reservation) {
      if (holds.drop(reservation.id)) return;
      await write(() => releaseRow(reservation));
    },
    async renew(reservation, expiresAt) {
      if (holds.renew(reservation.id, expiresAt)) return;
      // A reservation an older version (or the reference store) wrote, as the reference renews it.
      await write(() => renewRow.run(expiresAt, reservation.id));
    },
    held(_organizationId, counters) {
      return counters.map((k) => holds.on(counterName(k)));
    },
    expiredHolds(nowIso, limit) {
      return holds.expired(nowIso, limit);
    },
  };
}
