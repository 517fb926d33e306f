import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, it } from "node:test";
import {
  type ApiResponse,
  call,
  secondInstance,
  startTestServer,
  TEST_DATABASE_KIND,
  type TestServer,
} from "../helpers/server.js";

/**
 * The console's sign-in (docs/api.md#console-sessions): a management key exchanged for a session
 * cookie that stands in for the key on management routes, with its flags, its Origin check on
 * writes, its expiry and its sign-out, on whichever database the suite runs on.
 */

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

function cookieOf(res: ApiResponse): string {
  const set = res.headers.get("set-cookie");
  assert.ok(set, "the answer sets a cookie");
  const pair = set.split(";")[0] ?? "";
  assert.match(pair, /^gr_session=[A-Za-z0-9_-]{40,}$/);
  return pair;
}

async function signIn(server: TestServer, key: string, headers: Record<string, string> = {}) {
  const res = await call(server, "POST", "/api/v1/session", { body: { key }, headers });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return { res, cookie: cookieOf(res) };
}

describe(`console sessions on ${TEST_DATABASE_KIND} (docs/api.md#console-sessions)`, () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });

  it("a management key is exchanged for an HttpOnly, SameSite=Strict cookie scoped to the API, not Secure over plain HTTP (docs/api.md#console-sessions)", async () => {
    const org = await server.newOrg();
    const { res } = await signIn(server, org.key);
    assert.equal(res.body.data.organization_id, org.organizationId);
    assert.ok(Date.parse(res.body.data.expires_at) > Date.now());
    const set = res.headers.get("set-cookie") ?? "";
    assert.match(set, /; HttpOnly/);
    assert.match(set, /; SameSite=Strict/);
    assert.match(set, /; Path=\/api\/v1/);
    assert.match(set, /; Max-Age=43200/);
    assert.doesNotMatch(set, /Secure/);
    assert.equal(res.headers.get("cache-control"), "no-store");
    assert.equal(JSON.stringify(res.body).includes(org.key), false, "the key is not echoed");
  });

  it("the session token is stored only as its SHA-256 (docs/api.md#console-sessions)", async () => {
    const org = await server.newOrg();
    const { cookie } = await signIn(server, org.key);
    const token = cookie.slice("gr_session=".length);
    const rows = await server.database.db
      .selectFrom("console_sessions")
      .selectAll()
      .where("organization_id", "=", org.organizationId)
      .execute();
    assert.equal(rows.length, 1);
    assert.equal(rows[0]?.token_hash, sha256(token));
    assert.equal(JSON.stringify(rows).includes(token), false);
    assert.equal(rows[0]?.key_hash, sha256(org.key));
  });

  it("the cookie stands in for the management key on management reads, and sees only its own organization (docs/api.md#console-sessions)", async () => {
    const mine = await server.newOrg();
    const theirs = await server.newOrg();
    const made = await call(server, "POST", "/api/v1/guardrails", {
      key: theirs.key,
      body: { name: "theirs" },
    });
    assert.equal(made.status, 201);
    const { cookie } = await signIn(server, mine.key);
    const list = await call(server, "GET", "/api/v1/guardrails", { headers: { cookie } });
    assert.equal(list.status, 200, JSON.stringify(list.body));
    assert.equal(
      list.body.data.some((g: { id: string }) => g.id === made.body.data.id),
      false,
    );
    const other = await call(server, "GET", `/api/v1/guardrails/${made.body.data.id}`, {
      headers: { cookie },
    });
    assert.equal(other.status, 404);
    const who = await call(server, "GET", "/api/v1/session", { headers: { cookie } });
    assert.equal(who.status, 200);
    assert.equal(who.body.data.organization_id, mine.organizationId);
    assert.equal(typeof who.body.data.expires_at, "string");
  });

  it("no list a console page reads shows another organization's objects, and the dry run treats their key as unknown (docs/api.md#console-sessions)", async () => {
    const mine = await server.newOrg();
    const theirs = await server.newOrg();
    const as = (key: string) => ({ key });
    const space = await call(server, "POST", "/api/v1/workspaces", {
      ...as(theirs.key),
      body: { name: "theirs" },
    });
    const member = await call(server, "POST", "/api/v1/members", {
      ...as(theirs.key),
      body: { user_id: "their-ada" },
    });
    const key = await call(server, "POST", "/api/v1/keys", {
      ...as(theirs.key),
      body: { name: "their key", member_user_id: "their-ada" },
    });
    const guardrail = await call(server, "POST", "/api/v1/guardrails", {
      ...as(theirs.key),
      body: { name: "theirs" },
    });
    for (const res of [space, member, key, guardrail])
      assert.equal(res.status, 201, JSON.stringify(res.body));
    const hash: string = key.body.data.hash;
    const assigned = await call(
      server,
      "POST",
      `/api/v1/guardrails/${guardrail.body.data.id}/assignments/keys`,
      {
        ...as(theirs.key),
        body: { key_hashes: [hash] },
      },
    );
    assert.equal(assigned.body.assigned_count, 1);
    const traces = [space.body.data.id, "their-ada", hash, guardrail.body.data.id, sha256(theirs.key)];

    const { cookie } = await signIn(server, mine.key);
    for (const path of [
      "/api/v1/keys?include_disabled=true",
      "/api/v1/members",
      "/api/v1/workspaces",
      "/api/v1/guardrails",
      "/api/v1/guardrails/assignments/keys",
      "/api/v1/guardrails/assignments/members",
      "/api/v1/audit-log",
      `/api/v1/audit-log?actor_key_hash=${sha256(theirs.key)}`,
      `/api/v1/audit-log?resource_id=${hash}`,
    ]) {
      const res = await call(server, "GET", path, { headers: { cookie } });
      assert.equal(res.status, 200, `${path}: ${JSON.stringify(res.body)}`);
      const text = JSON.stringify(res.body);
      for (const trace of traces) assert.equal(text.includes(trace), false, `${path} shows ${trace}`);
    }
    const dryRun = await call(server, "POST", "/api/v1/guardrails/evaluate", {
      headers: { cookie, origin: server.origin },
      body: {
        key_hash: hash,
        model: "anthropic/claude-sonnet-4.5",
        messages: [{ role: "user", content: "hi" }],
      },
    });
    assert.equal(dryRun.status, 404, JSON.stringify(dryRun.body));
    // Their own view is intact: the lists above were filtered, not empty for everyone.
    const theirKeys = await call(server, "GET", "/api/v1/keys", as(theirs.key));
    assert.equal(theirKeys.body.data[0].hash, hash);
  });

  it("an unknown key is 401, an inference key 403 with its reason, a malformed body 400, and none of them stores a session (docs/api.md#console-sessions)", async () => {
    const org = await server.newOrg();
    const inference = await call(server, "POST", "/api/v1/keys", { key: org.key, body: { name: "app" } });
    assert.equal(inference.status, 201);
    const count = async () =>
      (await server.database.db.selectFrom("console_sessions").select("token_hash").execute()).length;
    const before = await count();

    const unknown = await call(server, "POST", "/api/v1/session", { body: { key: "sk-gr-mgmt-nope" } });
    assert.equal(unknown.status, 401);
    assert.deepEqual(unknown.body, { error: { code: 401, message: "Invalid API key" } });

    const wrongKind = await call(server, "POST", "/api/v1/session", { body: { key: inference.body.key } });
    assert.equal(wrongKind.status, 403);
    assert.equal(wrongKind.body.error.message, "Only management keys can perform this operation");
    assert.equal(typeof wrongKind.body.error.metadata.reason, "string");

    const malformed = await call(server, "POST", "/api/v1/session", { body: { key: 42, extra: true } });
    assert.equal(malformed.status, 400);
    assert.equal(malformed.body.error.message, "Invalid request parameters");
    assert.ok(malformed.body.error.metadata.issues.length >= 1);

    for (const res of [unknown, wrongKind, malformed]) assert.equal(res.headers.get("set-cookie"), null);
    assert.equal(await count(), before);
  });

  it("a cookie-signed write without Origin, or from another origin, is refused with 403 and changes nothing (docs/api.md#console-sessions)", async () => {
    const org = await server.newOrg();
    const { cookie } = await signIn(server, org.key);
    const names = async () =>
      (await call(server, "GET", "/api/v1/guardrails", { key: org.key })).body.data.map(
        (g: { name: string }) => g.name,
      );
    const before = await names();

    const missing = await call(server, "POST", "/api/v1/guardrails", {
      headers: { cookie },
      body: { name: "csrf-a" },
    });
    assert.equal(missing.status, 403);
    assert.equal(missing.body.error.message, "Cross-origin request refused");
    assert.match(missing.body.error.metadata.reason, /Origin/);

    const foreign = await call(server, "POST", "/api/v1/guardrails", {
      headers: { cookie, origin: "https://evil.example" },
      body: { name: "csrf-b" },
    });
    assert.equal(foreign.status, 403);
    assert.equal(foreign.body.error.metadata.origin, "https://evil.example");
    assert.equal(foreign.body.error.metadata.expected_origin, server.origin);

    // The same origin on another port is another origin.
    const port = new URL(server.origin).port;
    const otherPort = await call(server, "POST", "/api/v1/guardrails", {
      headers: { cookie, origin: server.origin.replace(`:${port}`, `:${Number(port) + 1}`) },
      body: { name: "csrf-c" },
    });
    assert.equal(otherPort.status, 403);

    assert.deepEqual(await names(), before);

    const same = await call(server, "POST", "/api/v1/guardrails", {
      headers: { cookie, origin: server.origin },
      body: { name: "from-console" },
    });
    assert.equal(same.status, 201, JSON.stringify(same.body));
    const audit = await call(server, "GET", "/api/v1/audit-log", { key: org.key });
    assert.equal(audit.status, 200);
    assert.ok(
      audit.body.data.some(
        (e: { actor_key_hash?: string; resource_id: string }) => e.resource_id === same.body.data.id,
      ),
      "the write is audited under the session's key",
    );
  });

  it("a sign-in posted from another origin is refused, so no site can sign a browser in to its organization (docs/api.md#console-sessions)", async () => {
    const org = await server.newOrg();
    const res = await call(server, "POST", "/api/v1/session", {
      body: { key: org.key },
      headers: { origin: "https://evil.example" },
    });
    assert.equal(res.status, 403);
    assert.equal(res.body.error.message, "Cross-origin request refused");
    assert.equal(res.headers.get("set-cookie"), null);
  });

  it("the cookie opens no inference route and no Bearer key is overridden by it (docs/api.md#console-sessions)", async () => {
    const org = await server.newOrg();
    const { cookie } = await signIn(server, org.key);
    const asInference = await call(server, "GET", "/api/v1/key", { headers: { cookie } });
    assert.equal(asInference.status, 401);
    const wrongBearer = await call(server, "GET", "/api/v1/guardrails", {
      headers: { cookie, authorization: "Bearer sk-gr-mgmt-wrong" },
    });
    assert.equal(wrongBearer.status, 401);
    assert.equal(wrongBearer.body.error.message, "Invalid API key");
  });

  it("sign-out ends the session on the server: the same cookie is 401 afterwards and its row is gone (docs/api.md#console-sessions)", async () => {
    const org = await server.newOrg();
    const { cookie } = await signIn(server, org.key);
    const token = cookie.slice("gr_session=".length);
    const refused = await call(server, "DELETE", "/api/v1/session", { headers: { cookie } });
    assert.equal(refused.status, 403, "sign-out is a write and checks Origin too");
    const out = await call(server, "DELETE", "/api/v1/session", {
      headers: { cookie, origin: server.origin },
    });
    assert.equal(out.status, 204);
    assert.match(out.headers.get("set-cookie") ?? "", /^gr_session=; Max-Age=0; .*HttpOnly/);
    const after = await call(server, "GET", "/api/v1/guardrails", { headers: { cookie } });
    assert.equal(after.status, 401);
    assert.equal(after.body.error.message, "Session expired or signed out");
    const rows = await server.database.db
      .selectFrom("console_sessions")
      .select("token_hash")
      .where("token_hash", "=", sha256(token))
      .execute();
    assert.equal(rows.length, 0);
  });
});

describe(`console sessions of a revoked key on ${TEST_DATABASE_KIND} (docs/api.md#console-sessions)`, () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });

  it("revoking the management key ends the sessions it was exchanged for (docs/api.md#console-sessions)", async () => {
    const org = await server.newOrg();
    const { cookie } = await signIn(server, org.key);
    assert.equal((await call(server, "GET", "/api/v1/guardrails", { headers: { cookie } })).status, 200);
    // As the command line's revoke does: the key row goes, and the change is announced.
    await server.database.db.deleteFrom("keys").where("hash", "=", sha256(org.key)).execute();
    server.deps.changes.bump({ keys: true });
    const after = await call(server, "GET", "/api/v1/guardrails", { headers: { cookie } });
    assert.equal(after.status, 401);
    assert.equal(after.body.error.message, "Session expired or signed out");
  });
});

describe(`console session expiry on ${TEST_DATABASE_KIND} (docs/api.md#console-sessions)`, () => {
  let server: TestServer;
  let now = new Date("2030-01-01T08:00:00.000Z");
  before(async () => {
    server = await startTestServer({ now: () => now });
  });
  after(async () => {
    await server.close();
  });

  it("a session works until its twelfth hour and is 401 from then on (docs/api.md#console-sessions)", async () => {
    const org = await server.newOrg();
    const { res, cookie } = await signIn(server, org.key);
    assert.equal(res.body.data.expires_at, "2030-01-01T20:00:00.000Z");
    now = new Date("2030-01-01T19:59:59.000Z");
    assert.equal((await call(server, "GET", "/api/v1/guardrails", { headers: { cookie } })).status, 200);
    now = new Date("2030-01-01T20:00:00.000Z");
    const expired = await call(server, "GET", "/api/v1/guardrails", { headers: { cookie } });
    assert.equal(expired.status, 401);
    assert.equal(expired.body.error.message, "Session expired or signed out");
  });
});

describe(`console sessions behind an HTTPS proxy (docs/api.md#console-sessions)`, () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ trustForwardedHost: true });
  });
  after(async () => {
    await server.close();
  });

  it("the cookie is Secure when the request came over HTTPS, and writes must carry the public https origin (docs/api.md#console-sessions)", async () => {
    const org = await server.newOrg();
    const proxied = { "x-forwarded-proto": "https", "x-forwarded-host": "console.example.com" };
    const { res, cookie } = await signIn(server, org.key, {
      ...proxied,
      origin: "https://console.example.com",
    });
    assert.match(res.headers.get("set-cookie") ?? "", /; Secure/);
    const plain = await call(server, "POST", "/api/v1/guardrails", {
      headers: { ...proxied, cookie, origin: "http://console.example.com" },
      body: { name: "downgraded" },
    });
    assert.equal(plain.status, 403);
    const ok = await call(server, "POST", "/api/v1/guardrails", {
      headers: { ...proxied, cookie, origin: "https://console.example.com" },
      body: { name: "proxied" },
    });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
  });
});

describe(`console sessions across two instances on one ${TEST_DATABASE_KIND} database (docs/api.md#console-sessions)`, () => {
  let first: TestServer;
  let second: TestServer;
  before(async () => {
    first = await startTestServer();
    second = await secondInstance(first);
  });
  after(async () => {
    await second.close();
    await first.close();
  });

  it("a session started on one instance works on the other, and signing out on that one ends it on the first (docs/api.md#console-sessions)", async () => {
    const org = await first.newOrg();
    const { cookie } = await signIn(first, org.key);
    const there = await call(second, "GET", "/api/v1/guardrails", { headers: { cookie } });
    assert.equal(there.status, 200, JSON.stringify(there.body));
    const written = await call(second, "POST", "/api/v1/guardrails", {
      headers: { cookie, origin: second.origin },
      body: { name: "via-second" },
    });
    assert.equal(written.status, 201, JSON.stringify(written.body));
    const out = await call(second, "DELETE", "/api/v1/session", {
      headers: { cookie, origin: second.origin },
    });
    assert.equal(out.status, 204);
    const back = await call(first, "GET", "/api/v1/guardrails", { headers: { cookie } });
    assert.equal(back.status, 401);
  });
});
