import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { readBudgetCounters } from "../../src/services/read-budget-counters.js";
import type { DatabaseHandle, HeldReservation, SpendStore } from "../../src/storage/ports.js";
import { type CounterKey, findExpiredReservations } from "../../src/storage/spend-repo.js";
import { kyselySpendStore } from "../../src/storage/spend-store.js";
import { freshDatabase, TEST_DATABASE_KIND } from "../helpers/server.js";
import { ledger as ledgerRow } from "./spend-fixtures.js";

/**
 * The spend store contract (docs/gateway.md#budgets): one script of reserve, admit, settle, release,
 * renewal and expiry writes, run on the reference store (the Kysely one, spend-store.ts) and on the store the
 * service uses on this database (SQLite's synchronous path, or PostgreSQL's batch function). Both
 * must leave the same trace, and that trace is the one written out below, so a rule changed in one
 * implementation only, or in all three the same wrong way, fails here. Reservations are read where
 * each store keeps them: rows in the database, or holds in the memory of SQLite's server process
 * (seen through the store, as the service's readers and sweep see them). `npm run test:postgres`
 * runs this file on PostgreSQL.
 */

const WINDOW = "2026-11-22T00:00:00.000Z";
const CREATED = "2026-11-22T10:00:00.000Z";
/** Before this instant every reservation of the script is still held; after it, those marked short have expired. */
const SWEEP_AT = "2026-11-22T10:30:00.000Z";
/** After every hold of the script has expired: all of them are listed. */
const NEVER = "9999-12-31T00:00:00.000Z";
const PRICE = { promptMicros: 100, perOutputTokenMicros: 10 };

interface Trace {
  steps: unknown[];
  counters: number[][];
  reservations: string[];
  /** The API of each ledger row, sorted (docs/behaviour.md#usage-by-api). */
  ledger: string[];
  rollup: { guardrail: string; api: string; requests: number; cost: number }[];
}

/** Runs the script on `store` with names of its own (`tag`), and says what it saw and left. */
async function runScript(database: DatabaseHandle, store: SpendStore, tag: string): Promise<Trace> {
  const org = `contract-${tag}`;
  const keys: CounterKey[] = ["a", "b", "c", "d"].map((name) => ({
    guardrail_id: `${tag}-${name}`,
    scope: "key",
    subject: "k",
    reset_interval: "daily",
    window_start: WINDOW,
  }));
  const [a, b, c, d] = keys as [CounterKey, CounterKey, CounterKey, CounterKey];
  const row = (id: string, amount: number, expires = "2026-11-22T11:00:00.000Z") => ({
    id: `${tag}-${id}`,
    organization_id: org,
    counters: "[]",
    amount_micros: amount,
    created_at: CREATED,
    expires_at: expires,
  });
  const held = (id: string, counters: CounterKey[], amount: number): HeldReservation => ({
    id: `${tag}-${id}`,
    counters,
    amount,
  });
  let ledgers = 0;
  const ledger = (cost: number, api = "chat") =>
    ledgerRow(`${tag}-ledger-${++ledgers}`, cost, {
      organization_id: org,
      request_id: `${tag}-request-${ledgers}`,
      key_hash: `${tag}-key`,
      api,
    });
  const steps: unknown[] = [];

  // Reserve: all or nothing, a limit of zero refuses, a counter filled to its limit refuses.
  steps.push(await store.reserve(org, [{ key: a, limit: 1000 }], 300, row("r1", 300)));
  steps.push(
    await store.reserve(
      org,
      [
        { key: a, limit: 1000 },
        { key: b, limit: 0 },
      ],
      50,
      row("r2", 50),
    ),
  );
  steps.push(await store.reserve(org, [{ key: c, limit: 200 }], 200, row("r3", 200)));
  steps.push(await store.reserve(org, [{ key: c, limit: 200 }], 1, row("r4", 1)));

  // Admit: the whole answer, a capped one, and each refusal with its reason.
  steps.push(
    await store.admit(
      org,
      [{ key: d, limit: 5000 }],
      { price: PRICE, wanted: 100, minimal: 10 },
      row("ad1", 0),
    ),
  );
  steps.push(
    await store.admit(
      org,
      [{ key: d, limit: 5000 }],
      { price: PRICE, wanted: 1000, minimal: 10 },
      row("ad2", 0),
    ),
  );
  steps.push(
    await store.admit(
      org,
      [{ key: d, limit: 5000 }],
      { price: PRICE, wanted: 100, minimal: 10 },
      row("ad3", 0),
    ),
  );
  steps.push(
    await store.admit(
      org,
      [{ key: b, limit: 150 }],
      { price: PRICE, wanted: 100, minimal: 10 },
      row("ad4", 0),
    ),
  );

  // Settle to the actual cost; release twice gives back once; a settle with no reservation just
  // records, here for another API, whose rollup row is its own (docs/behaviour.md#usage-by-api).
  await store.settle(held("r1", [a], 300), 120, ledger(120), [`${tag}-governing`]);
  await store.settle(held("ad1", [d], 1100), 900, ledger(900));
  await store.release(held("r3", [c], 200));
  await store.release(held("r3", [c], 200));
  await store.settle(null, 7, ledger(7, "embeddings"));

  // Expiry: a reservation whose hold ran out is found by the sweep and given back; the request that
  // held it settles late and adds only its cost, while a reservation still held stays.
  steps.push(await store.reserve(org, [{ key: a, limit: 1000 }], 200, row("late", 200, CREATED)));
  steps.push(await store.reserve(org, [{ key: a, limit: 1000 }], 100, row("open", 100)));
  // A request still in flight past its hold's expiry renews it, and the sweep leaves it; renewing
  // one given back already changes nothing.
  steps.push(await store.reserve(org, [{ key: a, limit: 1000 }], 100, row("kept", 100, CREATED)));
  await store.renew(held("kept", [a], 100), "2026-11-22T11:00:00.000Z");
  await store.renew(held("r3", [c], 200), "2026-11-22T11:00:00.000Z");
  // What the sweep finds: expired rows, and expired holds a store keeps in memory (SQLite's).
  const expired = [
    ...(await findExpiredReservations(database.db, SWEEP_AT, 1000)),
    ...(store.expiredHolds?.(SWEEP_AT, 1000) ?? []),
  ].filter((r) => r.organization_id === org);
  steps.push(expired.map((r) => r.id.slice(tag.length + 1)));
  for (const r of expired)
    await store.release(held(r.id.slice(tag.length + 1), [a], Number(r.amount_micros)));
  await store.settle(held("late", [a], 200), 50, ledger(50));

  const counters = (await readBudgetCounters({ db: database.db, spend: store }, org, keys)).map((u) => [
    u.spent_micros,
    u.reserved_micros,
  ]);
  const reservations = [
    ...(await database.db
      .selectFrom("budget_reservations")
      .select(["id", "organization_id"])
      .where("organization_id", "=", org)
      .execute()),
    ...(store.expiredHolds?.(NEVER, 1000) ?? []).filter((r) => r.organization_id === org),
  ]
    .map((r) => r.id.slice(tag.length + 1))
    .sort();
  const ledgerRows = await database.db
    .selectFrom("spend_ledger")
    .select("api")
    .where("organization_id", "=", org)
    .execute();
  const rollup = (
    await database.db
      .selectFrom("spend_rollup")
      .select(["guardrail_id", "api", "requests", "cost_micros"])
      .where("organization_id", "=", org)
      .execute()
  )
    .map((r) => ({
      guardrail: r.guardrail_id === "" ? "" : r.guardrail_id.slice(tag.length + 1),
      api: r.api,
      requests: Number(r.requests),
      cost: Number(r.cost_micros),
    }))
    .sort((x, y) => x.guardrail.localeCompare(y.guardrail) || x.api.localeCompare(y.api));
  return { steps, counters, reservations, ledger: ledgerRows.map((r) => r.api).sort(), rollup };
}

/** What every spend store must leave after the script (worked out by hand from the rules). */
const EXPECTED: Trace = {
  steps: [
    -1,
    1,
    -1,
    0,
    // 100 + 100 tokens × 10 = 1100 of 5000.
    { admitted: true, tokens: 100, capped: false, amount_micros: 1100 },
    // 3900 left: 380 tokens fit (100 + 3800).
    { admitted: true, tokens: 380, capped: true, amount_micros: 3900 },
    // Nothing free while both are held, though 5000 is unspent.
    { admitted: false, index: 0, reason: "budget_reserved", tokens_that_fit: 100 },
    // 150 cannot pay even the ten-token minimum (200).
    { admitted: false, index: 0, reason: "request_exceeds_budget", tokens_that_fit: 5 },
    -1,
    -1,
    -1,
    ["late"],
  ],
  counters: [
    // a: r1 settled at 120, "late" swept and then settled at 50, "open" and "kept" still held.
    [170, 200],
    // b: refused twice, never written.
    [0, 0],
    // c: filled, then released once.
    [0, 0],
    // d: ad1 settled at 900, ad2 still held.
    [900, 3900],
  ],
  reservations: ["ad2", "kept", "open"],
  ledger: ["chat", "chat", "chat", "embeddings"],
  rollup: [
    { guardrail: "", api: "chat", requests: 3, cost: 1070 },
    { guardrail: "", api: "embeddings", requests: 1, cost: 7 },
    { guardrail: "governing", api: "chat", requests: 1, cost: 120 },
  ],
};

describe(`spend stores keep one contract on ${TEST_DATABASE_KIND} (docs/gateway.md#budgets)`, () => {
  let database: DatabaseHandle;
  let remove: () => Promise<void>;
  before(async () => {
    ({ database, remove } = await freshDatabase());
  });
  after(async () => {
    await database.close();
    await remove();
  });

  it("the reference store (Kysely) leaves the trace the rules give: reserve, admit, settle, release, renewal, expiry", async () => {
    assert.deepEqual(await runScript(database, kyselySpendStore(database.transact), "reference"), EXPECTED);
  });

  it(`the ${TEST_DATABASE_KIND === "sqlite" ? "SQLite fast path" : "PostgreSQL batch function"} leaves the same trace as the reference`, async () => {
    assert.deepEqual(await runScript(database, database.spendStore, "adapter"), EXPECTED);
  });
});
