import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { sql } from "kysely";
import pg from "pg";
import { defaultPolicy, type Guardrail } from "../../src/domain/guardrail.js";
import { newId } from "../../src/domain/ids.js";
import type { AuditEntryRow } from "../../src/storage/audit-repo.js";
import { findGuardrail, guardrailToRow } from "../../src/storage/guardrail-repo.js";
import type { AtomicWrites, ChangeNotice, DatabaseHandle, WorkspaceGuard } from "../../src/storage/ports.js";
import { CHANGES_CHANNEL } from "../../src/storage/postgres/notices.js";
import { clientFor, freshDatabase, startTestServer, TEST_DATABASE_KIND } from "../helpers/server.js";

/**
 * Guardrail writes in one statement on PostgreSQL (src/storage/postgres/atomic-writes.ts): the row, its
 * audit entry and the change notice are written together or not at all, and only while the
 * precondition read by the caller still holds.
 */
describe("one-statement guardrail writes on PostgreSQL: row, audit entry and notice together, only while the precondition holds (docs/deployment.md#transactions-and-durability)", () => {
  let database: DatabaseHandle;
  let url: string;
  let remove: () => Promise<void>;
  let atomic: AtomicWrites;
  let listener: pg.Client;
  const notices: string[] = [];
  const org = newId();
  const workspace = newId();

  before(async () => {
    assert.equal(TEST_DATABASE_KIND, "postgres", "run with npm run test:postgres");
    ({ database, url, remove } = await freshDatabase());
    assert.ok(database.atomicWrites, "PostgreSQL offers one-statement writes");
    atomic = database.atomicWrites;
    const now = new Date().toISOString();
    await database.db
      .insertInto("organizations")
      .values({ id: org, name: "o", default_workspace_id: null, created_at: now })
      .execute();
    await database.db
      .insertInto("workspaces")
      .values({
        id: workspace,
        organization_id: org,
        name: "w",
        is_default: 1,
        default_guardrail_id: newId(),
        created_at: now,
        slug: "w",
        description: null,
        updated_at: null,
      })
      .execute();
    await database.db
      .updateTable("organizations")
      .set({ default_workspace_id: workspace })
      .where("id", "=", org)
      .execute();
    listener = new pg.Client({ connectionString: url });
    await listener.connect();
    listener.on("notification", (m) => {
      if (m.channel === CHANGES_CHANNEL) notices.push(m.payload ?? "");
    });
    await listener.query(`listen ${CHANGES_CHANNEL}`);
  });
  after(async () => {
    await listener?.end();
    await database?.close();
    await remove?.();
  });

  const guardrail = (name: string, workspaceId = workspace): Guardrail => ({
    ...defaultPolicy(name, ["vendor_a"]),
    id: newId(),
    organization_id: org,
    workspace_id: workspaceId,
    is_workspace_default: false,
    version: 1,
    created_at: new Date().toISOString(),
    updated_at: null,
  });
  const audit = (resourceId: string, action: string): AuditEntryRow => ({
    id: newId(),
    organization_id: org,
    actor_key_hash: "k",
    action,
    resource_type: "guardrail",
    resource_id: resourceId,
    before: null,
    after: JSON.stringify({ id: resourceId }),
    created_at: new Date().toISOString(),
  });
  /** Writes a new guardrail with its create audit entry. */
  const insert = (g: Guardrail, guard: WorkspaceGuard, notice: ChangeNotice = {}) =>
    atomic.insertGuardrail(guardrailToRow(g), audit(g.id, "guardrail.create"), guard, notice);
  /** Writes a guardrail's next version with its update audit entry, over the version `expected`. */
  const update = (
    g: Guardrail,
    expected: { version: number; updatedAt: string | null },
    notice: ChangeNotice = {},
  ) => atomic.updateGuardrail(guardrailToRow(g), expected, audit(g.id, "guardrail.update"), notice);
  const auditActions = async (resourceId: string) =>
    (
      await database.db
        .selectFrom("audit_log")
        .select("action")
        .where("resource_id", "=", resourceId)
        .orderBy("seq")
        .execute()
    ).map((r) => r.action);
  /** The notices received so far, once a marker sent after them has come back. */
  const noticesNow = async (): Promise<string[]> => {
    const marker = `marker-${newId()}`;
    await sql`select pg_notify(${CHANGES_CHANNEL}, ${marker})`.execute(database.db);
    for (let i = 0; i < 100 && !notices.includes(marker); i++) await new Promise((r) => setTimeout(r, 20));
    const seen = notices.splice(0).filter((n) => n !== marker);
    return seen;
  };

  it("an insert into the default workspace as guessed writes the row, its audit entry and one notice", async () => {
    await noticesNow();
    const g = guardrail("in the default");
    const written = await insert(
      g,
      { kind: "default", organizationId: org, workspaceId: workspace },
      { keys: false },
    );
    assert.equal(written, true);
    assert.deepEqual(await findGuardrail(database.db, org, g.id), g);
    assert.deepEqual(await auditActions(g.id), ["guardrail.create"]);
    assert.deepEqual(await noticesNow(), [JSON.stringify({ keys: false })]);
  });

  it("an insert whose workspace guess is wrong (not the default, or not in the organization) writes nothing and sends no notice", async () => {
    await noticesNow();
    const stranger = newId();
    for (const guard of [
      { kind: "default" as const, organizationId: org, workspaceId: stranger },
      { kind: "named" as const, organizationId: org, workspaceId: stranger },
      { kind: "named" as const, organizationId: newId(), workspaceId: workspace },
    ]) {
      const g = guardrail("misplaced", guard.workspaceId);
      assert.equal(await insert(g, guard), false);
      assert.equal(await findGuardrail(database.db, org, g.id), undefined);
      assert.deepEqual(await auditActions(g.id), []);
    }
    assert.deepEqual(await noticesNow(), []);
  });

  it("an update over the version read writes it with its audit entry; over a stale version it writes nothing", async () => {
    const g = guardrail("to update");
    assert.equal(await insert(g, { kind: "named", organizationId: org, workspaceId: workspace }), true);
    await noticesNow();
    const next: Guardrail = { ...g, description: "v2", version: 2, updated_at: new Date().toISOString() };
    assert.equal(await update(next, { version: 1, updatedAt: null }, { keys: false }), true);
    assert.deepEqual(await findGuardrail(database.db, org, g.id), next);
    assert.deepEqual(await noticesNow(), [JSON.stringify({ keys: false })]);
    // The same change again, computed from version 1: another writer got there first.
    const stale: Guardrail = { ...g, description: "lost?", version: 2, updated_at: new Date().toISOString() };
    assert.equal(await update(stale, { version: 1, updatedAt: null }), false);
    // Same version number, another change time: a row deleted and made again is not the one read.
    assert.equal(
      await update({ ...stale, version: 3 }, { version: 2, updatedAt: "2000-01-01T00:00:00.000Z" }),
      false,
    );
    assert.deepEqual(await findGuardrail(database.db, org, g.id), next);
    assert.deepEqual(await auditActions(g.id), ["guardrail.create", "guardrail.update"]);
    assert.deepEqual(await noticesNow(), []);
  });

  /** The transaction that last wrote each guardrail (its xmin), by id. */
  const writtenBy = async (ids: string[]): Promise<Map<string, string>> => {
    const rows = await sql<{ id: string; tx: string }>`
      select id, xmin::text as tx from guardrails where id in (${sql.join(ids)})`.execute(database.db);
    return new Map(rows.rows.map((r) => [r.id, r.tx]));
  };
  const inDefault: WorkspaceGuard = { kind: "default", organizationId: org, workspaceId: workspace };

  it("writes that arrive in one turn go in one statement: one transaction for all, each with its audit entry, notices sent once", async () => {
    await noticesNow();
    const made = Array.from({ length: 6 }, (_, i) => guardrail(`together ${i}`));
    const written = await Promise.all(made.map((g) => insert(g, inDefault, { keys: false })));
    assert.deepEqual(
      written,
      made.map(() => true),
    );
    const txs = await writtenBy(made.map((g) => g.id));
    assert.equal(new Set(txs.values()).size, 1, "every row written by one transaction");
    for (const g of made) {
      assert.deepEqual(await findGuardrail(database.db, org, g.id), g);
      assert.deepEqual(await auditActions(g.id), ["guardrail.create"]);
    }
    // One transaction's identical notices are delivered once.
    assert.deepEqual(await noticesNow(), [JSON.stringify({ keys: false })]);

    const updated = made.map((g, i) => ({
      ...g,
      description: `v2 of ${i}`,
      version: 2,
      updated_at: new Date().toISOString(),
    }));
    const results = await Promise.all(updated.map((g) => update(g, { version: 1, updatedAt: null })));
    assert.deepEqual(
      results,
      made.map(() => true),
    );
    assert.equal(new Set((await writtenBy(made.map((g) => g.id))).values()).size, 1);
    for (const g of updated) {
      assert.deepEqual(await findGuardrail(database.db, org, g.id), g);
      assert.deepEqual(await auditActions(g.id), ["guardrail.create", "guardrail.update"]);
    }
    assert.deepEqual(await noticesNow(), [JSON.stringify({})]);
  });

  it("in a shared statement each write keeps its own precondition: a wrong workspace or a stale version writes only that row nothing", async () => {
    await noticesNow();
    const good = [guardrail("good 1"), guardrail("good 2")];
    const misplaced = guardrail("misplaced in a batch", newId());
    const inserted = await Promise.all([
      insert(good[0] as Guardrail, inDefault),
      insert(misplaced, { kind: "default", organizationId: org, workspaceId: misplaced.workspace_id }),
      insert(good[1] as Guardrail, inDefault),
    ]);
    assert.deepEqual(inserted, [true, false, true]);
    assert.equal(await findGuardrail(database.db, org, misplaced.id), undefined);
    assert.deepEqual(await auditActions(misplaced.id), []);

    const [a, b] = good as [Guardrail, Guardrail];
    const now = new Date().toISOString();
    const updated = await Promise.all([
      update({ ...a, description: "fresh", version: 2, updated_at: now }, { version: 1, updatedAt: null }),
      update({ ...b, description: "stale", version: 3, updated_at: now }, { version: 2, updatedAt: null }),
    ]);
    assert.deepEqual(updated, [true, false]);
    assert.equal((await findGuardrail(database.db, org, a.id))?.description, "fresh");
    assert.deepEqual(await findGuardrail(database.db, org, b.id), b);
    assert.deepEqual(await auditActions(b.id), ["guardrail.create"]);
  });

  it("two updates of one guardrail in one turn never share a statement: the second is checked against the first's version", async () => {
    const g = guardrail("updated twice at once");
    assert.equal(await insert(g, inDefault), true);
    const now = new Date().toISOString();
    const results = await Promise.all([
      update({ ...g, description: "first", version: 2, updated_at: now }, { version: 1, updatedAt: null }),
      update({ ...g, description: "second", version: 2, updated_at: now }, { version: 1, updatedAt: null }),
    ]);
    assert.deepEqual(results, [true, false]);
    assert.equal((await findGuardrail(database.db, org, g.id))?.description, "first");
    assert.deepEqual(await auditActions(g.id), ["guardrail.create", "guardrail.update"]);
  });

  it("when one row of a shared statement breaks a constraint, the others are still written and only that write fails", async () => {
    const existing = guardrail("already stored");
    assert.equal(await insert(existing, inDefault), true);
    const others = [guardrail("beside a clash 1"), guardrail("beside a clash 2")];
    const clash = { ...guardrail("same id"), id: existing.id };
    const outcomes = await Promise.allSettled([
      insert(others[0] as Guardrail, inDefault),
      insert(clash, inDefault),
      insert(others[1] as Guardrail, inDefault),
    ]);
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ["fulfilled", "rejected", "fulfilled"],
    );
    assert.equal((outcomes[1] as PromiseRejectedResult).reason.code, "23505");
    for (const g of others) {
      assert.deepEqual(await findGuardrail(database.db, org, g.id), g);
      assert.deepEqual(await auditActions(g.id), ["guardrail.create"]);
    }
    assert.deepEqual(await findGuardrail(database.db, org, existing.id), existing);
    assert.deepEqual(await auditActions(existing.id), ["guardrail.create"]);
  });

  it("the service writes creates and updates without Idempotency-Key this way, and answers as the transactional path does", async () => {
    const server = await startTestServer();
    try {
      const real = server.deps.atomic;
      assert.ok(real);
      const calls: string[] = [];
      server.deps.atomic = {
        insertGuardrail: async (...args) => {
          const written = await real.insertGuardrail(...args);
          calls.push(`insert ${written}`);
          return written;
        },
        updateGuardrail: async (...args) => {
          const written = await real.updateGuardrail(...args);
          calls.push(`update ${written}`);
          return written;
        },
      };
      const o = await server.newOrg();
      const api = clientFor(server, o.key);
      // The first create learns the default workspace on the transactional path; later ones guess it.
      const first = await api.post("/api/v1/guardrails", { name: "first" });
      const second = await api.post("/api/v1/guardrails", {
        name: "second",
        limit_usd: 5,
        reset_interval: "daily",
      });
      assert.deepEqual([first.status, second.status], [201, 201]);
      assert.equal(second.body.data.workspace_id, o.workspaceId);
      const id = second.body.data.id as string;
      const patched = await api.patch(`/api/v1/guardrails/${id}`, { description: "now described" });
      assert.equal(patched.status, 200);
      assert.equal(patched.body.data.description, "now described");
      assert.notEqual(patched.headers.get("etag"), second.headers.get("etag"));
      const stale = await api.patch(
        `/api/v1/guardrails/${id}`,
        { description: "x" },
        { headers: { "if-match": second.headers.get("etag") ?? "" } },
      );
      assert.equal(stale.status, 409);
      const got = await api.get(`/api/v1/guardrails/${id}`);
      assert.deepEqual(got.body.data, patched.body.data);
      assert.deepEqual(calls, ["insert true", "update true"]);
      const log = await api.get(`/api/v1/audit-log?resource_id=${id}`);
      assert.deepEqual(
        log.body.data.map((e: { action: string }) => e.action),
        ["guardrail.update", "guardrail.create"],
      );
    } finally {
      await server.close();
    }
  });

  it("an update over a guardrail this instance wrote, since changed by another instance, applies the PATCH over the stored version (If-Match and 404 as on a fresh read)", async () => {
    const server = await startTestServer();
    try {
      const o = await server.newOrg();
      const api = clientFor(server, o.key);
      const db = server.deps.db;
      const made = await api.post("/api/v1/guardrails", { name: "remembered", description: "v1" });
      assert.equal(made.status, 201);
      const id = made.body.data.id as string;
      /** Another instance's change: the row moves on without this instance knowing. */
      const changeElsewhere = async (description: string) => {
        const stored = await findGuardrail(db, o.organizationId, id);
        assert.ok(stored);
        await db
          .updateTable("guardrails")
          .set({ description, version: stored.version + 1, updated_at: new Date().toISOString() })
          .where("id", "=", id)
          .execute();
      };

      await changeElsewhere("from elsewhere");
      const patched = await api.patch(`/api/v1/guardrails/${id}`, { name: "renamed" });
      assert.equal(patched.status, 200);
      assert.equal(patched.body.data.name, "renamed");
      assert.equal(
        patched.body.data.description,
        "from elsewhere",
        "the PATCH applies over the stored version",
      );
      assert.deepEqual((await api.get(`/api/v1/guardrails/${id}`)).body.data, patched.body.data);

      // The entity tag of the stored version matches, though this instance remembers an older one.
      await changeElsewhere("again from elsewhere");
      const current = await api.get(`/api/v1/guardrails/${id}`);
      const matched = await api.patch(
        `/api/v1/guardrails/${id}`,
        { description: "matched" },
        { headers: { "if-match": current.headers.get("etag") ?? "" } },
      );
      assert.equal(matched.status, 200);
      assert.equal(matched.body.data.name, "renamed");
      const stale = await api.patch(
        `/api/v1/guardrails/${id}`,
        { description: "x" },
        { headers: { "if-match": patched.headers.get("etag") ?? "" } },
      );
      assert.equal(stale.status, 409);

      await db.deleteFrom("guardrails").where("id", "=", id).execute();
      assert.equal((await api.patch(`/api/v1/guardrails/${id}`, { description: "gone" })).status, 404);
      const log = await api.get(`/api/v1/audit-log?resource_id=${id}`);
      assert.deepEqual(
        log.body.data.map((e: { action: string }) => e.action),
        ["guardrail.update", "guardrail.update", "guardrail.create"],
      );
    } finally {
      await server.close();
    }
  });

  it("a create into a workspace whose deletion is under way waits for it, then writes nothing: no guardrail or key is left in a deleted workspace", async () => {
    const server = await startTestServer();
    const deleter = new pg.Client({ connectionString: server.databaseUrl });
    try {
      await deleter.connect();
      const o = await server.newOrg();
      const api = clientFor(server, o.key);
      const doomed = async () => {
        const ws = await api.post("/api/v1/workspaces", { name: `doomed ${newId()}` });
        assert.equal(ws.status, 201);
        const id = ws.body.data.id as string;
        // The first step of a workspace deletion: its row locked until the deletion commits.
        await deleter.query("begin");
        await deleter.query("select 1 from workspaces where id = $1 for update", [id]);
        return id;
      };
      const finishDeletion = async (id: string) => {
        await deleter.query("delete from guardrails where workspace_id = $1", [id]);
        await deleter.query("delete from keys where workspace_id = $1", [id]);
        await deleter.query("delete from workspaces where id = $1", [id]);
        await deleter.query("commit");
      };
      const pending = <T>(p: Promise<T>) =>
        Promise.race([p.then(() => "answered"), new Promise((r) => setTimeout(() => r("waiting"), 300))]);

      // The one-statement create, and the transactional ones (an Idempotency-Key; a key).
      for (const send of [
        (ws: string) => api.post("/api/v1/guardrails", { name: "late", workspace_id: ws }),
        (ws: string) =>
          api.post(
            "/api/v1/guardrails",
            { name: "late", workspace_id: ws },
            { headers: { "idempotency-key": newId() } },
          ),
        (ws: string) => api.post("/api/v1/keys", { name: "late", workspace_id: ws }),
      ]) {
        const ws = await doomed();
        const answer = send(ws);
        assert.equal(await pending(answer), "waiting", "the create waits for the deletion");
        await finishDeletion(ws);
        const res = await answer;
        assert.equal(res.status, 400, JSON.stringify(res.body));
        const left = await server.deps.db
          .selectFrom("guardrails")
          .select("id")
          .where("workspace_id", "=", ws)
          .execute();
        assert.deepEqual(left, []);
        assert.deepEqual(
          await server.deps.db.selectFrom("keys").select("hash").where("workspace_id", "=", ws).execute(),
          [],
        );
      }
    } finally {
      await deleter.end().catch(() => undefined);
      await server.close();
    }
  });
});
