import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { sql } from "kysely";
import { clientFor, startTestServer, TEST_DATABASE_KIND, type TestServer } from "../helpers/server.js";

/**
 * "A change whose audit row cannot be written does not happen" (docs/behaviour.md#audit-log). A trigger in
 * the real database makes every audit insert of one organization fail; the change must then be
 * answered with a 500 and leave nothing behind, while other organizations carry on. SQLite runs it
 * with both `synchronous` settings (FULL turns on group commit); PostgreSQL has one way to commit.
 */
const VARIANTS = TEST_DATABASE_KIND === "postgres" ? (["normal"] as const) : (["normal", "full"] as const);
for (const synchronous of VARIANTS) {
  const variant =
    TEST_DATABASE_KIND === "postgres"
      ? "PostgreSQL"
      : `synchronous=${synchronous}${synchronous === "full" ? ", group commit" : ""}`;
  describe(`the audit entry and its change are one transaction (docs/behaviour.md#audit-log; ${variant})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({ sqliteSynchronous: synchronous });
    });
    after(async () => {
      await server.close();
    });

    async function breakAuditFor(organizationId: string): Promise<void> {
      // A trigger body cannot take parameters; the id is a UUID we generated, so inlining it is safe.
      assert.match(organizationId, /^[0-9a-f-]{36}$/);
      const name = `audit_fails_${organizationId.replaceAll("-", "_")}`;
      if (TEST_DATABASE_KIND === "postgres") {
        await sql
          .raw(
            `create function ${name}() returns trigger language plpgsql as $$
             begin
               if new.organization_id = '${organizationId}' then raise exception 'audit storage unavailable'; end if;
               return new;
             end $$`,
          )
          .execute(server.database.db);
        await sql
          .raw(`create trigger ${name} before insert on audit_log for each row execute function ${name}()`)
          .execute(server.database.db);
        return;
      }
      await sql
        .raw(
          `create trigger ${name} before insert on audit_log
         when new.organization_id = '${organizationId}'
         begin select raise(abort, 'audit storage unavailable'); end`,
        )
        .execute(server.database.db);
    }

    it("when the audit entry cannot be written, a create, an update and a delete do not happen (500, nothing changed)", async () => {
      const org = await server.newOrg();
      const api = clientFor(server, org.key);
      const created = await api.post("/api/v1/guardrails", { name: "before the failure" });
      assert.equal(created.status, 201);
      const id = created.body.data.id as string;

      await breakAuditFor(org.organizationId);

      const create = await api.post("/api/v1/guardrails", { name: "never stored" });
      assert.equal(create.status, 500);
      assert.deepEqual(create.body, { error: { code: 500, message: "Internal Server Error" } });
      const update = await api.patch(`/api/v1/guardrails/${id}`, { name: "never renamed" });
      assert.equal(update.status, 500);
      const removal = await api.delete(`/api/v1/guardrails/${id}`);
      assert.equal(removal.status, 500);
      const key = await api.post("/api/v1/keys", { name: "never made" });
      assert.equal(key.status, 500);

      const list = await api.get("/api/v1/guardrails");
      assert.deepEqual(
        list.body.data.map((g: { id: string; name: string }) => [g.id, g.name]),
        [[id, "before the failure"]],
      );
      assert.equal((await api.get("/api/v1/keys")).body.total_count, 0);

      // Another organization is unaffected, even when (group commit) its change shares a commit with a failing one.
      const other = await server.newOrg();
      const results = await Promise.all([
        clientFor(server, other.key).post("/api/v1/guardrails", { name: "fine" }),
        api.post("/api/v1/guardrails", { name: "still failing" }),
      ]);
      assert.deepEqual(
        results.map((r) => r.status),
        [201, 500],
      );
      assert.equal((await clientFor(server, other.key).get("/api/v1/guardrails")).body.total_count, 1);
      assert.equal((await api.get("/api/v1/guardrails")).body.total_count, 1);
    });
  });
}
