import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { sql } from "kysely";
import pg from "pg";
import { newId } from "../../src/domain/ids.js";
import { readBudgetCounters } from "../../src/services/read-budget-counters.js";
import type { DatabaseHandle, HeldReservation, SpendStore } from "../../src/storage/ports.js";
import type { CounterKey } from "../../src/storage/spend-repo.js";
import { kyselySpendStore } from "../../src/storage/spend-store.js";
import { freshDatabase, TEST_DATABASE_KIND } from "../helpers/server.js";
import { counter, ledger, row } from "./spend-fixtures.js";

/**
 * The spend store contract (docs/gateway.md#budgets), on a real database: on SQLite against both adapters
 * (the portable Kysely one and SQLite's synchronous fast path), on PostgreSQL (`npm run
 * test:postgres`) against the Kysely one and the batch function the service uses there
 * (src/storage/postgres/spend-store.ts).
 */

describe(`spend store contract on ${TEST_DATABASE_KIND} (docs/gateway.md#budgets; CONTRIBUTING.md#tests)`, () => {
  /**
   * A transaction open on the connection across an await, which writes the counter `key` with `spent` and
   * rolls back once released: a management change in flight, whose writes never happened.
   */
  async function heldThenRolledBack(key: CounterKey, spent: number) {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const open = database
      .transact(async (tx) => {
        await tx
          .insertInto("budget_usage")
          .values({ organization_id: "org", ...key, spent_micros: spent, reserved_micros: 0 })
          .execute();
        await gate;
        throw new Error("roll back");
      })
      .catch(() => undefined);
    // The transaction has begun and written before the caller goes on.
    await new Promise((r) => setImmediate(r));
    return { release, open };
  }

  let database: DatabaseHandle;
  let url: string;
  let remove: () => Promise<void>;
  before(async () => {
    ({ database, url, remove } = await freshDatabase());
  });
  after(async () => {
    await database.close();
    await remove();
  });
  // As the service reads them: rows, plus what SQLite's store holds in memory.
  const usage = async (...keys: CounterKey[]) =>
    (await readBudgetCounters({ db: database.db, spend: database.spendStore }, "org", keys)).map((u) => [
      u.spent_micros,
      u.reserved_micros,
    ]);
  /** Which of `ids` are open reservations: rows, or holds in memory (SQLite). */
  const openReservations = async (ids: string[]) =>
    [
      ...(await database.db.selectFrom("budget_reservations").select("id").where("id", "in", ids).execute()),
      ...(database.spendStore.expiredHolds?.("9999-12-31T00:00:00.000Z", 1000) ?? []).filter((r) =>
        ids.includes(r.id),
      ),
    ]
      .map((r) => r.id)
      .sort();

  const adapters: [string, () => SpendStore][] = [["kysely", () => kyselySpendStore(database.transact)]];
  adapters.push([
    TEST_DATABASE_KIND === "sqlite" ? "sqlite fast path" : "postgres batch function",
    () => database.spendStore,
  ]);
  for (const [name, store] of adapters) {
    describe(name, () => {
      it("a reservation is all or nothing: a counter with nothing left leaves the others untouched", async () => {
        const [a, b] = [counter(), counter()];
        assert.equal(
          await store().reserve("org", [{ key: b, limit: 100 }], 100, row(`fill-${name}`, 100)),
          -1,
        );
        const refused = await store().reserve(
          "org",
          [
            { key: a, limit: 1000 },
            { key: b, limit: 100 },
          ],
          50,
          row(`r-${name}`, 50),
        );
        assert.equal(refused, 1, "the second counter had nothing left");
        assert.deepEqual(await usage(a, b), [
          [0, 0],
          [0, 100],
        ]);
      });

      it("settling moves the reservation to the actual cost; releasing twice gives back once", async () => {
        const a = counter();
        const held = { id: `s-${name}`, counters: [a], amount: 300 };
        assert.equal(await store().reserve("org", [{ key: a, limit: 1000 }], 300, row(held.id, 300)), -1);
        await store().settle(held, 120, ledger(`l-${name}`, 120));
        assert.deepEqual(await usage(a), [[120, 0]]);
        const other = { id: `x-${name}`, counters: [a], amount: 200 };
        assert.equal(await store().reserve("org", [{ key: a, limit: 1000 }], 200, row(other.id, 200)), -1);
        await store().release(other);
        await store().release(other);
        assert.deepEqual(await usage(a), [[120, 0]]);
      });

      it("settling a reservation on two counters moves it on both; one the expiry sweep already released adds only its cost", async () => {
        const [a, b] = [counter(), counter()];
        const both = { id: `two-${name}`, counters: [a, b], amount: 300 };
        const limits = [
          { key: a, limit: 1000 },
          { key: b, limit: 1000 },
        ];
        assert.equal(await store().reserve("org", limits, 300, row(both.id, 300)), -1);
        assert.deepEqual(await usage(a, b), [
          [0, 300],
          [0, 300],
        ]);
        await store().settle(both, 120, ledger(`two-l-${name}`, 120));
        assert.deepEqual(await usage(a, b), [
          [120, 0],
          [120, 0],
        ]);
        const swept = { id: `swept-${name}`, counters: [a], amount: 200 };
        assert.equal(await store().reserve("org", [{ key: a, limit: 1000 }], 200, row(swept.id, 200)), -1);
        // Another request's reservation stays held throughout: the late settle must not take it.
        assert.equal(
          await store().reserve("org", [{ key: a, limit: 1000 }], 100, row(`open-${name}`, 100)),
          -1,
        );
        await store().release(swept);
        await store().settle(swept, 50, ledger(`swept-l-${name}`, 50));
        assert.deepEqual(await usage(a), [[170, 100]]);
      });

      it("a settle that fails writes nothing: its reservation is still held and can be given back", async () => {
        const a = counter();
        await store().settle(null, 1, ledger(`taken-${name}`, 1));
        const held = { id: `f-${name}`, counters: [a], amount: 40 };
        assert.equal(await store().reserve("org", [{ key: a, limit: 1000 }], 40, row(held.id, 40)), -1);
        await assert.rejects(store().settle(held, 10, ledger(`taken-${name}`, 10)));
        assert.deepEqual(await usage(a), [[0, 40]]);
        await store().release(held);
        assert.deepEqual(await usage(a), [[0, 0]]);
      });

      it("a limit of zero admits nothing", async () => {
        assert.equal(await store().reserve("org", [{ key: counter(), limit: 0 }], 1, row(`z-${name}`, 1)), 0);
      });
    });
  }

  it("reservations arriving together never pass the limit, and a refused one does not undo the others", async () => {
    const [a, b] = [counter(), counter()];
    const store = database.spendStore;
    const outcomes = await Promise.all([
      store.reserve("org", [{ key: a, limit: 100 }], 60, row("t1", 60)),
      store.reserve("org", [{ key: a, limit: 100 }], 60, row("t2", 60)),
      store.reserve("org", [{ key: a, limit: 100 }], 60, row("t3", 60)),
      store.reserve("org", [{ key: b, limit: 100 }], 10, row("t4", 10)),
    ]);
    // 0 then 60 are under the limit, 120 is not: the third is refused, alone.
    assert.deepEqual(outcomes, [-1, -1, 0, -1]);
    assert.deepEqual(await usage(a, b), [
      [0, 120],
      [0, 10],
    ]);
    assert.deepEqual(await openReservations(["t1", "t2", "t3", "t4"]), ["t1", "t2", "t4"]);
  });

  it("a write that fails among writes arriving together fails alone; the others are committed", async () => {
    const a = counter();
    const store = database.spendStore;
    await store.settle(null, 5, ledger("dup-ledger", 5));
    const outcomes = await Promise.allSettled([
      store.reserve("org", [{ key: a, limit: 100 }], 10, row("ok-1", 10)),
      // The same ledger id again: a unique violation inside whatever batch this write joins.
      store.settle(null, 7, ledger("dup-ledger", 7)),
      store.reserve("org", [{ key: a, limit: 100 }], 20, row("ok-2", 20)),
    ]);
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ["fulfilled", "rejected", "fulfilled"],
    );
    assert.deepEqual(await usage(a), [[0, 30]]);
  });

  it("settlements arriving together on one counter and one rollup row add up exactly, and one that fails among them adds nothing and keeps its hold", async () => {
    const a = counter();
    const store = database.spendStore;
    const guardrail = a.guardrail_id;
    await store.settle(null, 1, ledger("batch-dup", 1, { key_hash: "batch-key" }));
    /** Settles `costs` together (one turn), each on a reservation of its own; the outcomes. */
    const settleTogether = async (tag: string, costs: number[], duplicateAt = -1) => {
      const holds = costs.map((_, i) => ({ id: `${tag}-${i}`, counters: [a], amount: 50 }));
      for (const h of holds)
        assert.equal(await store.reserve("org", [{ key: a, limit: 1_000 }], 50, row(h.id, 50)), -1);
      const outcomes = await Promise.allSettled(
        costs.map((cost, i) =>
          store.settle(
            holds[i] ?? null,
            cost,
            // A reused ledger id: a unique violation inside the batch it joins.
            ledger(i === duplicateAt ? "batch-dup" : `${tag}-ledger-${i}`, cost, { key_hash: "batch-key" }),
            [guardrail],
          ),
        ),
      );
      return { holds, statuses: outcomes.map((o) => o.status) };
    };
    const rollup = async () =>
      (
        await database.db
          .selectFrom("spend_rollup")
          .select(["requests", "cost_micros"])
          .where("guardrail_id", "=", guardrail)
          .where("key_hash", "=", "batch-key")
          .execute()
      ).map((r) => [Number(r.requests), Number(r.cost_micros)]);

    const first = await settleTogether("sum", [11, 13, 17]);
    assert.deepEqual(first.statuses, ["fulfilled", "fulfilled", "fulfilled"]);
    assert.deepEqual(await usage(a), [[41, 0]]);
    assert.deepEqual(await rollup(), [[3, 41]]);

    const second = await settleTogether("fail", [19, 23, 29], 1);
    assert.deepEqual(second.statuses, ["fulfilled", "rejected", "fulfilled"]);
    // Spent: the two that committed; held: the failed one's reservation, still open.
    assert.deepEqual(await usage(a), [[41 + 19 + 29, 50]]);
    assert.deepEqual(await openReservations(second.holds.map((h) => h.id)), ["fail-1"]);
    assert.deepEqual(await rollup(), [[5, 41 + 19 + 29]]);
    await store.release(second.holds[1] as HeldReservation);
  });

  it("on PostgreSQL the writes of one turn go as one call: one transaction, each write with its own outcome, in arrival order", {
    skip: TEST_DATABASE_KIND === "sqlite" && "PostgreSQL's batch function only",
  }, async () => {
    const [a, b] = [counter(), counter()];
    const store = database.spendStore;
    const held = { id: "turn-held", counters: [a], amount: 30 };
    const given = { id: "turn-given", counters: [a], amount: 20 };
    assert.equal(await store.reserve("org", [{ key: a, limit: 100 }], 30, row(held.id, 30)), -1);
    assert.equal(await store.reserve("org", [{ key: a, limit: 100 }], 20, row(given.id, 20)), -1);
    const onAAndB = (limitOfB: number, amount: number, id: string) =>
      store.reserve(
        "org",
        [
          { key: a, limit: 100 },
          { key: b, limit: limitOfB },
        ],
        amount,
        row(id, amount),
      );
    // In one turn: a settle, a release, a reservation admitted on two counters, and one refused on
    // its second counter (b's limit is zero), whose hold on a is given back in the same call.
    const outcomes = await Promise.all([
      store.settle(held, 25, ledger("turn-ledger", 25)),
      store.release(given),
      onAAndB(50, 40, "turn-both"),
      onAAndB(0, 10, "turn-refused"),
    ]);
    assert.deepEqual(outcomes, [undefined, undefined, -1, 1]);
    // 25 settled; 30 and 20 no longer held; 40 held on both; the refused 10 given back.
    assert.deepEqual(await usage(a, b), [
      [25, 40],
      [0, 40],
    ]);
    const writers = await sql<{ tx: string }>`
      select xmin::text as tx from spend_ledger where id = 'turn-ledger'
      union all select xmin::text from budget_reservations where id = 'turn-both'
      union all select xmin::text from budget_usage where guardrail_id in (${a.guardrail_id}, ${b.guardrail_id})`.execute(
      database.db,
    );
    assert.equal(writers.rows.length, 4);
    assert.equal(
      new Set(writers.rows.map((r) => r.tx)).size,
      1,
      "every write of the turn in one transaction",
    );
    const reservations = await database.db
      .selectFrom("budget_reservations")
      .select("id")
      .where("id", "in", [held.id, given.id, "turn-both", "turn-refused"])
      .execute();
    assert.deepEqual(
      reservations.map((r) => r.id),
      ["turn-both"],
    );
  });

  it("on PostgreSQL two batches that touch the same counters in opposite orders wait for each other instead of deadlocking", {
    skip: TEST_DATABASE_KIND === "sqlite" && "PostgreSQL's batch function only",
  }, async () => {
    // Two keys of one member, say: each request reserves on its key's counter and the member's.
    const [first, second] = [counter(), counter()].sort((x, y) => (x.guardrail_id < y.guardrail_id ? -1 : 1));
    const reserving = (k: CounterKey) => ({
      kind: "reserve",
      organization_id: "org",
      counters: [{ key: k, limit: 1000 }],
      amount: 1,
      row: row(`order-${newId()}`, 1),
    });
    for (const k of [first, second] as CounterKey[]) {
      assert.equal(
        await database.spendStore.reserve("org", [{ key: k, limit: 1000 }], 1, row(newId(), 1)),
        -1,
      );
    }
    const batch = (c: pg.Client, ...ops: object[]) =>
      c.query<{ o: number[] }>("select guardrails_spend_batch($1::jsonb) as o", [JSON.stringify(ops)]);
    const one = new pg.Client({ connectionString: url });
    const two = new pg.Client({ connectionString: url });
    await Promise.all([one.connect(), two.connect()]);
    try {
      // One batch holds the first counter; another touches the second, then the first.
      await one.query("begin");
      await batch(one, reserving(first as CounterKey));
      const other = batch(two, reserving(second as CounterKey), reserving(first as CounterKey));
      const settled = other.then(
        (r) => r.rows[0]?.o,
        (err: unknown) => err,
      );
      await new Promise((r) => setTimeout(r, 300));
      // The first batch now needs the second counter: had the other taken it, each would wait for
      // the other, and PostgreSQL would end one of them with a deadlock error.
      await batch(one, reserving(second as CounterKey));
      await one.query("commit");
      assert.deepEqual(await settled, [-1, -1]);
    } finally {
      await Promise.all([one.end(), two.end()]);
    }
    assert.deepEqual(await usage(first as CounterKey, second as CounterKey), [
      [0, 3],
      [0, 3],
    ]);
  });

  it("SQLite's store settles after a Kysely transaction open on the connection ends, instead of joining it", {
    skip: TEST_DATABASE_KIND === "postgres" && "SQLite's store only",
  }, async () => {
    const a = counter();
    const held = { id: "during", counters: [a], amount: 5 };
    assert.equal(await database.spendStore.reserve("org", [{ key: a, limit: 10 }], 5, row(held.id, 5)), -1);
    // A management change holding a transaction across an await, then rolled back.
    const { release, open } = await heldThenRolledBack(counter(), 0);
    const settling = database.spendStore.settle(held, 3, ledger("during-ledger", 3));
    release();
    await open;
    await settling;
    // Had the settlement joined the rolled-back transaction, its spend and ledger row would be gone.
    assert.deepEqual(await usage(a), [[3, 0]]);
    const rows = await database.db
      .selectFrom("spend_ledger")
      .select("id")
      .where("id", "=", "during-ledger")
      .execute();
    assert.equal(rows.length, 1);
  });

  it("SQLite's store decides after a Kysely transaction open on the connection ends: its uncommitted spend is never read", {
    skip: TEST_DATABASE_KIND === "postgres" && "SQLite's store only",
  }, async () => {
    const a = counter();
    // A change that writes the counter as spent, then rolls back: it never happened.
    const { release, open } = await heldThenRolledBack(a, 10);
    const reserving = database.spendStore.reserve("org", [{ key: a, limit: 10 }], 5, row("unspent", 5));
    release();
    await open;
    assert.equal(await reserving, -1, "judged on the committed counter, not the rolled-back write");
    assert.deepEqual(await usage(a), [[0, 5]]);
  });
});
