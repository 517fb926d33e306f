import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { createManagementKey } from "../../src/services/keys.js";
import { type RouteUnderTest, standardAuthCases } from "../helpers/auth-cases.js";
import {
  type ApiResponse,
  call,
  secondInstance,
  startTestServer,
  TEST_DATABASE_KIND,
  type TestOrg,
  type TestServer,
} from "../helpers/server.js";

/**
 * Management keys listed and revoked over HTTP (docs/api.md#management-keys): a revoked key and its
 * console sessions are refused from the next call on, the organization's last key is kept, and the
 * console's sign-in is counted by the failed-authentication throttle (docs/behaviour.md#sign-in-throttle).
 */

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");
const INVALID_KEY = { error: { code: 401, message: "Invalid API key" } };
const NOT_FOUND = { error: { code: 404, message: "Resource not found" } };

/** A further management key of the organization, made as the command line makes one. */
async function secondKey(server: TestServer, org: TestOrg, name = "second"): Promise<string> {
  const made = await createManagementKey(server.deps, server.deps.db, org.organizationId, name, "system");
  return made.secret;
}

async function signIn(server: TestServer, key: string): Promise<string> {
  const res = await call(server, "POST", "/api/v1/session", { body: { key } });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return (res.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
}

const list = (server: TestServer, key: string) =>
  call(server, "GET", "/api/v1/management-keys?limit=100", { key });
const revoke = (server: TestServer, key: string, hash: string) =>
  call(server, "DELETE", `/api/v1/management-keys/${hash}`, { key });

describe(`management keys on ${TEST_DATABASE_KIND} (docs/api.md#management-keys)`, () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });

  describe("the standard authentication cases (CONTRIBUTING.md#tests)", () => {
    const routes: RouteUnderTest[] = [
      { method: "GET", path: () => "/api/v1/management-keys" },
      {
        method: "DELETE",
        path: async (org) => `/api/v1/management-keys/${sha256(await secondKey(server, org))}`,
      },
    ];
    for (const route of routes) standardAuthCases(() => server, route);
  });

  it("lists the organization's management keys with hash, name, label and created_at, never a secret, and marks the caller's own (docs/api.md#management-keys)", async () => {
    const org = await server.newOrg();
    const other = await server.newOrg();
    const second = await secondKey(server, org, "ops");
    const inference = await call(server, "POST", "/api/v1/keys", { key: org.key, body: { name: "app" } });
    assert.equal(inference.status, 201);

    const res = await list(server, org.key);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.total_count, 2);
    assert.deepEqual(
      res.body.data.map((k: Record<string, unknown>) => Object.keys(k).sort()),
      [
        ["created_at", "current", "hash", "label", "name"],
        ["created_at", "current", "hash", "label", "name"],
      ],
    );
    const byHash = new Map(res.body.data.map((k: { hash: string }) => [k.hash, k]));
    assert.deepEqual(byHash.get(sha256(org.key)), {
      hash: sha256(org.key),
      name: "Initial management key",
      label: `${org.key.slice(0, 14)}...${org.key.slice(-3)}`,
      created_at: (byHash.get(sha256(org.key)) as { created_at: string }).created_at,
      current: true,
    });
    assert.equal((byHash.get(sha256(second)) as { current: boolean; name: string }).current, false);
    assert.equal((byHash.get(sha256(second)) as { name: string }).name, "ops");
    const text = JSON.stringify(res.body);
    for (const secret of [org.key, second, inference.body.key, other.key]) {
      assert.equal(text.includes(secret), false, "no secret is listed");
    }
    assert.equal(text.includes(inference.body.data.hash), false, "inference keys are not listed here");
    assert.equal(text.includes(sha256(other.key)), false, "another organization's keys are not listed");

    // The inference-key list keeps its shape and holds no management key.
    const keys = await call(server, "GET", "/api/v1/keys?include_disabled=true", { key: org.key });
    assert.equal(keys.status, 200);
    assert.deepEqual(
      keys.body.data.map((k: { hash: string }) => k.hash),
      [inference.body.data.hash],
    );
    // Seen through the second key, that one is current.
    const seen = await list(server, second);
    assert.deepEqual(
      seen.body.data.filter((k: { current: boolean }) => k.current).map((k: { hash: string }) => k.hash),
      [sha256(second)],
    );
  });

  it("paging: offset and limit bound the page, total_count counts all; a bad limit is 400 (docs/api.md#management-keys)", async () => {
    const org = await server.newOrg();
    await secondKey(server, org, "b");
    await secondKey(server, org, "c");
    const first = await call(server, "GET", "/api/v1/management-keys?limit=2", { key: org.key });
    const rest = await call(server, "GET", "/api/v1/management-keys?limit=2&offset=2", { key: org.key });
    assert.equal(first.body.total_count, 3);
    assert.equal(first.body.data.length, 2);
    assert.equal(rest.body.data.length, 1);
    const bad = await call(server, "GET", "/api/v1/management-keys?limit=0", { key: org.key });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.message, "Invalid request parameters");
  });

  it("a revoked key's API calls are 401 from the very next request, its console session is 401 at once, and it can sign in no more (docs/behaviour.md#management-key-revocation)", async () => {
    const org = await server.newOrg();
    const doomed = await secondKey(server, org, "leaked");
    // Used first, so its authentication is cached before the revocation.
    assert.equal((await call(server, "GET", "/api/v1/guardrails", { key: doomed })).status, 200);
    const cookie = await signIn(server, doomed);
    assert.equal((await call(server, "GET", "/api/v1/guardrails", { headers: { cookie } })).status, 200);

    const res = await revoke(server, org.key, sha256(doomed));
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body, { deleted: true });

    const api = await call(server, "GET", "/api/v1/guardrails", { key: doomed });
    assert.equal(api.status, 401);
    assert.deepEqual(api.body, INVALID_KEY);
    const session = await call(server, "GET", "/api/v1/guardrails", { headers: { cookie } });
    assert.equal(session.status, 401);
    assert.equal(session.body.error.message, "Session expired or signed out");
    const sessions = await server.database.db
      .selectFrom("console_sessions")
      .select("token_hash")
      .where("key_hash", "=", sha256(doomed))
      .execute();
    assert.deepEqual(sessions, [], "its sessions are deleted, not only refused");
    const again = await call(server, "POST", "/api/v1/session", { body: { key: doomed } });
    assert.equal(again.status, 401);
    assert.deepEqual(again.body, INVALID_KEY);

    // The key that revoked it still works, and the list no longer holds the revoked one.
    const after = await list(server, org.key);
    assert.equal(after.status, 200);
    assert.deepEqual(
      after.body.data.map((k: { hash: string }) => k.hash),
      [sha256(org.key)],
    );
    // Revoked twice: it is gone, 404.
    assert.deepEqual((await revoke(server, org.key, sha256(doomed))).body, NOT_FOUND);
  });

  it("the revocation is in the audit log: who, which key, how many sessions ended, and no secret (docs/behaviour.md#management-key-revocation)", async () => {
    const org = await server.newOrg();
    const doomed = await secondKey(server, org, "audited");
    await signIn(server, doomed);
    assert.equal((await revoke(server, org.key, sha256(doomed))).status, 200);
    const log = await call(server, "GET", `/api/v1/audit-log?resource_id=${sha256(doomed)}`, {
      key: org.key,
    });
    assert.equal(log.status, 200);
    // Newest first: the revocation, then the key's creation (docs/behaviour.md#audit-log).
    assert.deepEqual(
      log.body.data.map((e: { action: string }) => e.action),
      ["management_key.revoke", "key.create"],
      JSON.stringify(log.body),
    );
    const entry = log.body.data[0];
    assert.equal(entry.resource_type, "management_key");
    assert.equal(entry.actor_key_hash, sha256(org.key));
    assert.equal(entry.before.hash, sha256(doomed));
    assert.equal(entry.before.name, "audited");
    assert.deepEqual(entry.after, { revoked: true, console_sessions_ended: 1 });
    assert.equal(JSON.stringify(log.body).includes(doomed), false, "no secret in the audit log");
  });

  it("a key may revoke itself while another is left; its own next call is 401 (docs/behaviour.md#management-key-revocation)", async () => {
    const org = await server.newOrg();
    const other = await secondKey(server, org);
    const res = await revoke(server, org.key, sha256(org.key));
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual((await call(server, "GET", "/api/v1/guardrails", { key: org.key })).body, INVALID_KEY);
    assert.equal((await call(server, "GET", "/api/v1/guardrails", { key: other })).status, 200);
  });

  it("the organization's last active management key is refused with 409 last_management_key, nothing changes, and it still works (docs/behaviour.md#management-key-revocation)", async () => {
    const org = await server.newOrg();
    const cookie = await signIn(server, org.key);
    const auditBefore = await call(server, "GET", "/api/v1/audit-log", { key: org.key });
    const res = await revoke(server, org.key, sha256(org.key));
    assert.equal(res.status, 409, JSON.stringify(res.body));
    assert.equal(res.body.error.code, 409);
    assert.equal(res.body.error.message, "Resource conflict. Please try again later.");
    assert.equal(res.body.error.metadata.reason, "last_management_key");
    assert.match(res.body.error.metadata.hint, /keys create --management/);
    // Through the console's cookie, the same.
    const viaCookie = await call(server, "DELETE", `/api/v1/management-keys/${sha256(org.key)}`, {
      headers: { cookie, origin: server.origin },
    });
    assert.equal(viaCookie.status, 409);

    assert.equal((await call(server, "GET", "/api/v1/guardrails", { key: org.key })).status, 200);
    assert.equal((await call(server, "GET", "/api/v1/guardrails", { headers: { cookie } })).status, 200);
    assert.equal((await list(server, org.key)).body.total_count, 1);
    const auditAfter = await call(server, "GET", "/api/v1/audit-log", { key: org.key });
    assert.deepEqual(auditAfter.body, auditBefore.body, "no audit entry for a refused revocation");
  });

  it("of two keys revoking each other at once, exactly one succeeds: the organization keeps one (docs/behaviour.md#management-key-revocation)", async () => {
    const org = await server.newOrg();
    const other = await secondKey(server, org);
    const answers = await Promise.all([
      revoke(server, org.key, sha256(other)),
      revoke(server, other, sha256(org.key)),
    ]);
    const statuses = answers.map((a: ApiResponse) => a.status).sort();
    // The loser is refused as the last key (409), or, if its own key went first, as unknown (401).
    assert.equal(statuses.filter((s) => s === 200).length, 1, JSON.stringify(statuses));
    assert.ok(
      statuses.every((s) => s === 200 || s === 409 || s === 401),
      JSON.stringify(statuses),
    );
    const left = await server.database.db
      .selectFrom("keys")
      .select("hash")
      .where("organization_id", "=", org.organizationId)
      .where("kind", "=", "management")
      .where("disabled", "=", 0)
      .execute();
    assert.equal(left.length, 1);
  });

  it("another organization's key, an inference key's hash and an unknown hash are 404 and change nothing (docs/behaviour.md#organizations)", async () => {
    const org = await server.newOrg();
    await secondKey(server, org);
    const theirs = await server.newOrg();
    await secondKey(server, theirs);
    const inference = await call(server, "POST", "/api/v1/keys", { key: org.key, body: { name: "app" } });
    for (const hash of [sha256(theirs.key), inference.body.data.hash, "0".repeat(64), "not-a-hash"]) {
      const res = await revoke(server, org.key, hash);
      assert.equal(res.status, 404, hash);
      assert.deepEqual(res.body, NOT_FOUND);
    }
    assert.equal((await call(server, "GET", "/api/v1/guardrails", { key: theirs.key })).status, 200);
    assert.equal((await list(server, theirs.key)).body.total_count, 2);
    const ask = await call(server, "GET", "/api/v1/key", { key: inference.body.key });
    assert.equal(ask.status, 200, "the inference key still works");
    // And the inference routes do not reach a management key either.
    const asInference = await call(server, "DELETE", `/api/v1/keys/${sha256(org.key)}`, { key: org.key });
    assert.deepEqual(asInference.body, NOT_FOUND);
  });

  it("the new routes are in the OpenAPI document with their schemas (CONTRIBUTING.md#schemas-are-the-types)", async () => {
    const doc = await call(server, "GET", "/api/v1/openapi.json");
    const listOp = doc.body.paths["/api/v1/management-keys"]?.get;
    const deleteOp = doc.body.paths["/api/v1/management-keys/{hash}"]?.delete;
    assert.ok(listOp && deleteOp);
    const item = listOp.responses["200"].content["application/json"].schema.properties.data.items;
    assert.deepEqual(Object.keys(item.properties).sort(), ["created_at", "current", "hash", "label", "name"]);
    assert.ok(deleteOp.responses["409"]);
    const signInOp = doc.body.paths["/api/v1/session"].post;
    assert.ok(signInOp.responses["429"], "the sign-in documents its 429");
  });

  it("a revocation on one instance reaches another instance's cache: the key is refused there too (docs/behaviour.md#management-key-revocation)", async () => {
    const second = await secondInstance(server, { listenForChanges: true });
    try {
      const org = await server.newOrg();
      const doomed = await secondKey(server, org);
      assert.equal((await call(second, "GET", "/api/v1/guardrails", { key: doomed })).status, 200);
      assert.equal((await revoke(server, org.key, sha256(doomed))).status, 200);
      // Notices (PostgreSQL) or the data_version check (SQLite) reach it within a second: bounded polling.
      let status = 0;
      for (let i = 0; i < 100 && status !== 401; i++) {
        status = (await call(second, "GET", "/api/v1/guardrails", { key: doomed })).status;
        if (status !== 401) await new Promise((r) => setTimeout(r, 50));
      }
      assert.equal(status, 401);
    } finally {
      await second.close();
    }
  });
});

describe("the console's sign-in is counted by the failed-authentication throttle (docs/behaviour.md#sign-in-throttle)", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });

  it("past 100 failed sign-ins the next is 429 with the API's throttle body and Retry-After; the API is throttled too, a known key still signs in", async () => {
    const org = await server.newOrg();
    // Known valid before the burst, as on the API.
    assert.equal((await call(server, "GET", "/api/v1/guardrails", { key: org.key })).status, 200);
    const statuses: number[] = [];
    for (let i = 0; i < 100; i++) {
      const res = await call(server, "POST", "/api/v1/session", { body: { key: `sk-gr-mgmt-guess-${i}` } });
      statuses.push(res.status);
    }
    assert.deepEqual(
      statuses.filter((s) => s !== 401),
      [],
    );
    const refused = await call(server, "POST", "/api/v1/session", { body: { key: "sk-gr-mgmt-guess-x" } });
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get("set-cookie"), null);
    assert.ok(Number(refused.headers.get("retry-after")) >= 1);
    const api = await call(server, "GET", "/api/v1/guardrails", { key: "sk-gr-v1-guess-y" });
    assert.equal(api.status, 429, "the sign-in's failures count on the API too");
    // The same body, whichever way in, but for the seconds left.
    const shape = (body: { error: { metadata: Record<string, unknown> } }) => ({
      ...body,
      error: { ...body.error, metadata: { ...body.error.metadata, retry_after_seconds: 0 } },
    });
    assert.deepEqual(shape(refused.body), shape(api.body));
    assert.deepEqual(refused.body.error.metadata.reason, "authentication_throttled");
    assert.equal(
      refused.body.error.message,
      "Too many failed authentication attempts. Please try again later.",
    );

    // A key this instance already knows valid still signs in, as it still passes on the API.
    const ok = await call(server, "POST", "/api/v1/session", { body: { key: org.key } });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
  });
});

describe("failed Bearer keys count toward the sign-in's limit (docs/behaviour.md#sign-in-throttle)", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });

  it("100 unknown Bearer keys, then an unknown key pasted into the sign-in: 429, and no session is stored", async () => {
    for (let i = 0; i < 100; i++) {
      const res = await call(server, "GET", "/api/v1/guardrails", { key: `sk-gr-v1-guess-${i}` });
      assert.equal(res.status, 401);
    }
    const res = await call(server, "POST", "/api/v1/session", { body: { key: "sk-gr-mgmt-guess" } });
    assert.equal(res.status, 429);
    assert.equal(res.body.error.metadata.reason, "authentication_throttled");
    const sessions = await server.database.db.selectFrom("console_sessions").select("token_hash").execute();
    assert.deepEqual(sessions, []);
  });
});
