import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { sql } from "kysely";
import { inTransaction } from "../../src/services/context.js";
import { createManagementKey } from "../../src/services/keys.js";
import { findKeyByHash } from "../../src/storage/key-repo.js";
import { startTestServer, TEST_DATABASE_KIND, type TestOrg, type TestServer } from "../helpers/server.js";
import { orgSteps, sha256 } from "./org-support.js";

interface Entry {
  action: string;
  resource_type: string;
  resource_id: string;
  actor_key_hash: string;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

/**
 * Making an organization and making a management key are management changes like any other: each
 * writes its audit entry in the same transaction, without the secret (docs/behaviour.md#audit-log).
 */
describe("organization and management key creations are audited (docs/behaviour.md#audit-log)", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });

  async function entries(org: TestOrg, query = ""): Promise<Entry[]> {
    const res = await orgSteps(server, org).api.get(`/api/v1/audit-log?limit=100${query}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.data;
  }

  it("a new organization has two entries: organization.create and its first key's key.create, with no secret", async () => {
    const org = await server.newOrg();
    const log = await entries(org);
    assert.equal(log.length, 2);
    const [key, made] = log as [Entry, Entry];
    assert.equal(made.action, "organization.create");
    assert.equal(made.resource_type, "organization");
    assert.equal(made.resource_id, org.organizationId);
    assert.equal(made.actor_key_hash, "system");
    assert.equal(made.before, null);
    assert.equal(made.after?.id, org.organizationId);
    assert.equal(made.after?.default_workspace_id, org.workspaceId);
    assert.equal(typeof made.after?.name, "string");
    assert.equal(key.action, "key.create");
    assert.equal(key.resource_type, "key");
    assert.equal(key.resource_id, sha256(org.key));
    assert.equal(key.actor_key_hash, "system");
    assert.equal(key.after?.kind, "management");
    assert.equal(key.after?.hash, sha256(org.key));
    const text = JSON.stringify(log);
    assert.ok(!text.includes(org.key.slice(-20)), "no part of the secret beyond its label is in the log");
  });

  it("a management key made by the command line is one key.create entry by `cli`, without its secret", async () => {
    const org = await server.newOrg();
    const made = await inTransaction(server.deps, (tx) =>
      createManagementKey(server.deps, tx, org.organizationId, "second", "cli"),
    );
    const [entry] = await entries(org, `&resource_id=${made.record.hash}`);
    assert.equal(entry?.action, "key.create");
    assert.equal(entry?.actor_key_hash, "cli");
    assert.equal(entry?.after?.name, "second");
    assert.equal(entry?.after?.kind, "management");
    assert.ok(!JSON.stringify(entry).includes(made.secret.slice(-20)));
  });

  it("when the entry cannot be written, the management key is not made either", {
    skip: TEST_DATABASE_KIND === "postgres" ? "the trigger below is SQLite's" : false,
  }, async () => {
    const org = await server.newOrg();
    assert.match(org.organizationId, /^[0-9a-f-]{36}$/);
    const trigger = `audit_fails_${org.organizationId.replaceAll("-", "_")}`;
    // A trigger body cannot take parameters; the id is a UUID we generated, so inlining it is safe.
    await sql
      .raw(
        `create trigger ${trigger} before insert on audit_log when new.organization_id = '${org.organizationId}'
         begin select raise(abort, 'audit storage unavailable'); end`,
      )
      .execute(server.database.db);
    await assert.rejects(
      inTransaction(server.deps, (tx) =>
        createManagementKey(server.deps, tx, org.organizationId, "doomed", "cli"),
      ),
      /audit storage unavailable/,
    );
    const left = await sql<{
      n: number;
    }>`select count(*) as n from keys where organization_id = ${org.organizationId} and name = 'doomed'`.execute(
      server.database.db,
    );
    assert.equal(Number(left.rows[0]?.n), 0);
    // The organization's first key is still there and still the only one.
    assert.ok(await findKeyByHash(server.database.db, sha256(org.key)));
    await sql.raw(`drop trigger ${trigger}`).execute(server.database.db);
  });
});
