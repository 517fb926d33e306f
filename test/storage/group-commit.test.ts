import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import SqliteDatabase from "better-sqlite3";
import { openDatabase } from "../../src/storage/open.js";
import type { DatabaseHandle } from "../../src/storage/ports.js";
import type { Executor } from "../../src/storage/schema.js";

for (const synchronous of ["normal", "full"] as const)
  describe(`group commit on SQLite (synchronous=${synchronous}): changes of one event-loop turn share a commit, each keeps its own outcome`, () => {
    let dir: string;
    let database: DatabaseHandle;
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), "guardrails-group-commit-"));
      database = await openDatabase(`sqlite:${join(dir, "g.db")}`, { sqliteSynchronous: synchronous });
    });
    after(async () => {
      await database.close();
      rmSync(dir, { recursive: true, force: true });
    });

    const orgRow = (id: string) => ({
      id,
      name: id,
      default_workspace_id: null,
      created_at: new Date().toISOString(),
    });
    const insertOrg = (tx: Executor, id: string) =>
      tx.insertInto("organizations").values(orgRow(id)).execute();

    it("a change that fails inside a shared batch is rolled back alone; the others are committed", async () => {
      const ids = Array.from({ length: 40 }, (_, i) => `org-${i}`);
      const results = await Promise.allSettled(
        ids.map((id, i) =>
          database.transact(async (tx) => {
            await insertOrg(tx, id);
            if (i % 3 === 0) throw new Error(`refused ${id}`);
            return id;
          }),
        ),
      );
      const stored = (await database.db.selectFrom("organizations").select("id").execute())
        .map((r) => r.id)
        .sort();
      const expected = ids.filter((_, i) => i % 3 !== 0).sort();
      assert.deepEqual(stored, expected);
      results.forEach((r, i) => {
        if (i % 3 === 0)
          assert.equal(r.status === "rejected" && (r.reason as Error).message, `refused org-${i}`);
        else assert.deepEqual(r, { status: "fulfilled", value: `org-${i}` });
      });
    });

    it("a change sees the changes committed before it in the same batch (they run one after another)", async () => {
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          database.transact(async (tx) => {
            await tx
              .insertInto("organizations")
              .values(orgRow(`seq-${i}`))
              .execute();
            const n = await tx
              .selectFrom("organizations")
              .where("id", "like", "seq-%")
              .select((eb) => eb.fn.countAll<number>().as("n"))
              .executeTakeFirstOrThrow();
            return Number(n.n);
          }),
        ),
      );
      assert.deepEqual(results, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    });

    /** Runs `work` with a count of the organizations whose id starts with `prefix`, read by a second connection. */
    async function observed(prefix: string, work: (count: () => number) => Promise<void>): Promise<void> {
      const observer = new SqliteDatabase(join(dir, "g.db"), { readonly: true });
      try {
        const statement = observer.prepare("select count(*) as n from organizations where id like ?");
        await work(() => (statement.get(`${prefix}%`) as { n: number }).n);
      } finally {
        observer.close();
      }
    }

    it("changes started in one turn are committed together: another connection sees none of them before the shared commit", async () => {
      await observed("turn-", async (count) => {
        const seen = await Promise.all(
          Array.from({ length: 5 }, (_, i) =>
            database.transact(async (tx) => {
              await insertOrg(tx, `turn-${i}`);
              return count();
            }),
          ),
        );
        // With a commit per change, the later changes would see the earlier ones: 0, 1, 2, 3, 4.
        assert.deepEqual(seen, [0, 0, 0, 0, 0]);
        assert.equal(count(), 5);
      });
    });

    it("a change started in a later turn gets a commit of its own and is answered only once committed", async () => {
      await observed("later-", async (count) => {
        await database.transact((tx) => insertOrg(tx, "later-0"));
        assert.equal(count(), 1, "answered, so committed");
        const seen = await database.transact(async (tx) => {
          await insertOrg(tx, "later-1");
          return count();
        });
        assert.equal(seen, 1, "the first change was committed in its own turn");
      });
    });

    it("a lone change is committed at once and its error reaches its caller", async () => {
      assert.equal(
        await database.transact(
          async (tx) => (await tx.insertInto("organizations").values(orgRow("lone")).execute()).length,
        ),
        1,
      );
      await assert.rejects(
        database.transact(async (tx) => {
          await tx.insertInto("organizations").values(orgRow("lone-fail")).execute();
          throw new Error("no");
        }),
        /no/,
      );
      const lone = await database.db
        .selectFrom("organizations")
        .select("id")
        .where("id", "in", ["lone", "lone-fail"])
        .execute();
      assert.deepEqual(
        lone.map((r) => r.id),
        ["lone"],
      );
    });
  });
