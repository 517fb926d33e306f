import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { readBudgetCounters } from "../../src/services/read-budget-counters.js";
import { openDatabase } from "../../src/storage/open.js";
import type { DatabaseHandle } from "../../src/storage/ports.js";
import type { CounterKey } from "../../src/storage/spend-repo.js";
import { kyselySpendStore } from "../../src/storage/spend-store.js";
import { TEST_DATABASE_KIND } from "../helpers/server.js";
import { counter, ledger, row } from "./spend-fixtures.js";

/**
 * SQLite's spend store keeps reservations in the server process's memory
 * (docs/behaviour.md#budget-reservations): one
 * server per file, holds seen by every reader, a hold dropped only once its spend is committed, and
 * reservations an older version wrote given back when the server starts.
 */
describe("SQLite reservations held in the server's memory (docs/behaviour.md#budget-reservations)", {
  skip: TEST_DATABASE_KIND === "postgres" && "SQLite only",
}, () => {
  let dir: string;
  let url: string;
  const open: DatabaseHandle[] = [];
  const openAs = async (server: boolean) => {
    const handle = await openDatabase(url, { sqliteSynchronous: "normal", server });
    open.push(handle);
    return handle;
  };
  const usage = async (database: DatabaseHandle, ...keys: CounterKey[]) =>
    (await readBudgetCounters({ db: database.db, spend: database.spendStore }, "org", keys)).map((u) => [
      u.spent_micros,
      u.reserved_micros,
    ]);
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "guardrails-holds-"));
    url = `sqlite:${join(dir, "g.db")}`;
  });
  after(async () => {
    for (const handle of open) await handle.close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  it("one server per file: a second is refused while the first runs, the command line's opening is not, and the file is free once the first closes", async () => {
    const first = await openAs(true);
    await assert.rejects(openAs(true), /another guardrails server is running on .*g\.db/);
    const cli = await openAs(false);
    await cli.ping();
    await cli.close();
    await first.close();
    const again = await openAs(true);
    await again.close();
  });

  it("a hold is seen by the readers, and dropped only once its settlement is committed: the counter never looks less spent than it is", async () => {
    const database = await openAs(true);
    try {
      const a = counter();
      const held = { id: "h1", counters: [a], amount: 300 };
      assert.equal(
        await database.spendStore.reserve("org", [{ key: a, limit: 1000 }], 300, row(held.id, 300)),
        -1,
      );
      assert.deepEqual(await usage(database, a), [[0, 300]]);
      assert.deepEqual(
        await database.db.selectFrom("budget_reservations").select("id").execute(),
        [],
        "nothing written to hold",
      );
      const settling = database.spendStore.settle(held, 120, ledger("l1", 120));
      // Not committed yet: still held in full.
      assert.deepEqual(database.spendStore.held?.("org", [a]), [300]);
      await settling;
      assert.deepEqual(await usage(database, a), [[120, 0]]);
      // What is held counts against the limit: 880 would fit beside 120 spent, not beside a hold of 100 more.
      assert.equal(
        await database.spendStore.reserve("org", [{ key: a, limit: 1000 }], 100, row("h2", 100)),
        -1,
      );
      const refused = await database.spendStore.admit(
        "org",
        [{ key: a, limit: 1000 }],
        { price: { promptMicros: 0, perOutputTokenMicros: 1 }, wanted: 880, minimal: 800 },
        row("h3", 0),
      );
      assert.deepEqual(refused, {
        admitted: false,
        index: 0,
        reason: "budget_reserved",
        tokens_that_fit: 880,
      });
    } finally {
      await database.close();
    }
  });

  it("reservations an older version left in the file are given back when the server starts; the command line's opening leaves them", async () => {
    const a = counter();
    const older = await openAs(false);
    // The reference store writes reservations as rows, as versions before this one did.
    const reference = kyselySpendStore(older.transact);
    assert.equal(await reference.reserve("org", [{ key: a, limit: 1000 }], 400, row("left", 400)), -1);
    await reference.settle(null, 0, ledger("l-left", 0));
    await older.db
      .updateTable("budget_usage")
      .set({ spent_micros: 250 })
      .where("guardrail_id", "=", a.guardrail_id)
      .execute();
    await older.close();

    const cli = await openAs(false);
    assert.deepEqual(await usage(cli, a), [[250, 400]]);
    await cli.close();

    const server = await openAs(true);
    try {
      assert.deepEqual(await usage(server, a), [[250, 0]]);
      assert.deepEqual(await server.db.selectFrom("budget_reservations").select("id").execute(), []);
    } finally {
      await server.close();
    }
  });

  it("a reservation row the reference store wrote is settled or released by SQLite's store as the reference would", async () => {
    const database = await openAs(false);
    try {
      const [a, b] = [counter(), counter()];
      const reference = kyselySpendStore(database.transact);
      assert.equal(await reference.reserve("org", [{ key: a, limit: 1000 }], 300, row("row-a", 300)), -1);
      assert.equal(await reference.reserve("org", [{ key: b, limit: 1000 }], 200, row("row-b", 200)), -1);
      await database.spendStore.settle(
        { id: "row-a", counters: [a], amount: 300 },
        90,
        ledger("l-row-a", 90),
      );
      await database.spendStore.release({ id: "row-b", counters: [b], amount: 200 });
      await database.spendStore.release({ id: "row-b", counters: [b], amount: 200 });
      assert.deepEqual(await usage(database, a, b), [
        [90, 0],
        [0, 0],
      ]);
    } finally {
      await database.close();
    }
  });
});
