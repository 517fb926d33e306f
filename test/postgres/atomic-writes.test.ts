import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { sql } from "kysely";
import pg from "pg";
import { defaultPolicy, type Guardrail } from "../../src/domain/guardrail.js";
import { newId } from "../../src/domain/ids.js";
import type { AuditEntryRow } from "../../src/storage/audit-repo.js";
import type {
  AtomicWrites,
  ChangeNotice,
  DatabaseHandle,
  WorkspaceGuard,
} from "../../src/storage/database.js";
import { findGuardrail, guardrailToRow } from "../../src/storage/guardrail-repo.js";
import { CHANGES_CHANNEL } from "../../src/storage/postgres.js";
import { clientFor, freshDatabase, startTestServer, TEST_DATABASE_KIND } from "../helpers/server.js";

/**
 * Guardrail writes in one statement on PostgreSQL (src/storage/postgres-writes.ts): the row, its
 * audit entry and the change notice are written together or not at all, and only while the
 * precondition read by the caller still holds.
 */
describe("one-statement guardrail writes on PostgreSQL: row, audit entry and notice together, only while the precondition holds (issue 5)", () => {
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
});
