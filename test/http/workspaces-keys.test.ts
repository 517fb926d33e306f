import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { call, clientFor, startTestServer, type TestOrg, type TestServer } from "../helpers/server.js";

const NOT_FOUND = { error: { code: 404, message: "Resource not found" } };
const INVALID_KEY = { error: { code: 401, message: "Invalid API key" } };
const MANAGEMENT_ONLY = { error: { code: 403, message: "Only management keys can perform this operation" } };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

describe("workspaces (docs/behaviour.md#workspaces)", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });

  it("a new organization lists exactly its default workspace, with is_default true (docs/behaviour.md#default-workspace)", async () => {
    const org = await server.newOrg();
    const res = await clientFor(server, org.key).get("/api/v1/workspaces");
    assert.equal(res.status, 200);
    assert.equal(res.body.total_count, 1);
    assert.equal(res.body.data.length, 1);
    const ws = res.body.data[0];
    assert.deepEqual(Object.keys(ws).sort(), [
      "created_at",
      "created_by",
      "default_guardrail_id",
      "default_image_model",
      "default_provider_sort",
      "default_text_model",
      "description",
      "id",
      "io_logging_api_key_ids",
      "io_logging_sampling_rate",
      "is_data_discount_logging_enabled",
      "is_default",
      "is_observability_broadcast_enabled",
      "is_observability_io_logging_enabled",
      "name",
      "slug",
      "updated_at",
    ]);
    assert.equal(ws.slug, "default");
    assert.equal(ws.id, org.workspaceId);
    assert.equal(ws.is_default, true);
    assert.match(ws.default_guardrail_id, UUID);
    assert.notEqual(ws.default_guardrail_id, ws.id);
    assert.match(ws.created_at, ISO);
  });

  it("POST creates a workspace: 201 with Location, is_default false, readable by GET and in the list (docs/behaviour.md#workspaces)", async () => {
    const org = await server.newOrg();
    const api = clientFor(server, org.key);
    const created = await api.post("/api/v1/workspaces", { name: "Research" });
    assert.equal(created.status, 201);
    const ws = created.body.data;
    assert.equal(ws.name, "Research");
    assert.equal(ws.is_default, false);
    assert.match(ws.id, UUID);
    assert.match(ws.default_guardrail_id, UUID);
    assert.match(ws.created_at, ISO);
    assert.equal(created.headers.get("location"), `/api/v1/workspaces/${ws.id}`);
    const got = await api.get(`/api/v1/workspaces/${ws.id}`);
    assert.equal(got.status, 200);
    assert.deepEqual(got.body, { data: ws });
    const list = await api.get("/api/v1/workspaces");
    assert.equal(list.body.total_count, 2);
    assert.deepEqual(list.body.data[1], ws);
  });

  it("a workspace body without a name, with an empty name or an unknown property is 400 and stores nothing (docs/behaviour.md#refusals-change-nothing)", async () => {
    const org = await server.newOrg();
    const api = clientFor(server, org.key);
    const cases: [unknown, string][] = [
      [{}, "/name"],
      [{ name: "" }, "/name"],
      [{ name: 5 }, "/name"],
      [{ name: "x".repeat(201) }, "/name"],
      [{ name: "ok", is_default: true }, "/is_default"],
    ];
    for (const [body, path] of cases) {
      const res = await api.post("/api/v1/workspaces", body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.error.message, "Invalid request parameters");
      const paths = res.body.error.metadata.issues.map((i: { path: string }) => i.path);
      assert.ok(paths.includes(path), `${JSON.stringify(body)}: ${JSON.stringify(paths)}`);
    }
    assert.equal((await api.get("/api/v1/workspaces")).body.total_count, 1);
  });

  it("deleting a workspace deletes its guardrails and keys; its keys then get 401 (docs/behaviour.md#workspace-deletion; docs/behaviour.md#bearer-keys)", async () => {
    const org = await server.newOrg();
    const api = clientFor(server, org.key);
    const ws = (await api.post("/api/v1/workspaces", { name: "doomed" })).body.data;
    const g = await api.post("/api/v1/guardrails", { name: "in doomed", workspace_id: ws.id });
    assert.equal(g.status, 201);
    const key = await api.post("/api/v1/keys", { name: "k", workspace_id: ws.id });
    assert.equal(key.status, 201);
    const keep = await api.post("/api/v1/guardrails", { name: "in default" });
    // While the workspace lives, its key is a valid inference key (403 here, not 401).
    assert.deepEqual(
      (await call(server, "GET", "/api/v1/guardrails", { key: key.body.key })).body,
      MANAGEMENT_ONLY,
    );

    const del = await api.delete(`/api/v1/workspaces/${ws.id}`);
    assert.equal(del.status, 200);
    assert.deepEqual(del.body, { deleted: true });

    assert.deepEqual((await api.get(`/api/v1/workspaces/${ws.id}`)).body, NOT_FOUND);
    assert.deepEqual((await api.get(`/api/v1/guardrails/${g.body.data.id}`)).body, NOT_FOUND);
    assert.deepEqual((await api.get(`/api/v1/keys/${key.body.data.hash}`)).body, NOT_FOUND);
    assert.deepEqual((await api.get("/api/v1/keys")).body, { data: [], total_count: 0 });
    const after = await call(server, "GET", "/api/v1/guardrails", { key: key.body.key });
    assert.equal(after.status, 401);
    assert.deepEqual(after.body, INVALID_KEY);
    const again = await api.delete(`/api/v1/workspaces/${ws.id}`);
    assert.equal(again.status, 404);
    assert.deepEqual(again.body, NOT_FOUND);
    // The rest of the organization is untouched.
    assert.equal((await api.get(`/api/v1/guardrails/${keep.body.data.id}`)).status, 200);
    assert.equal((await api.get("/api/v1/workspaces")).body.total_count, 1);
  });

  it("after the default workspace is deleted, a create without workspace_id is 400 asking for it (docs/behaviour.md#create-workspace)", async () => {
    const org = await server.newOrg();
    const api = clientFor(server, org.key);
    const other = (await api.post("/api/v1/workspaces", { name: "other" })).body.data;
    assert.equal((await api.delete(`/api/v1/workspaces/${org.workspaceId}`)).status, 200);
    const res = await api.post("/api/v1/guardrails", { name: "where?" });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.message, "Invalid request parameters");
    assert.equal(res.body.error.metadata.issues[0].path, "/workspace_id");
    const ok = await api.post("/api/v1/guardrails", { name: "here", workspace_id: other.id });
    assert.equal(ok.status, 201);
    const list = await api.get(`/api/v1/guardrails?workspace_id=${other.id}`);
    assert.deepEqual(list.body, { data: [ok.body.data], total_count: 1 });
  });

  it("another organization's workspace is 404 on GET and DELETE, absent from lists, and survives (docs/behaviour.md#organizations)", async () => {
    const owner = await server.newOrg();
    const stranger = await server.newOrg();
    const theirs = clientFor(server, stranger.key);
    for (const res of [
      await theirs.get(`/api/v1/workspaces/${owner.workspaceId}`),
      await theirs.delete(`/api/v1/workspaces/${owner.workspaceId}`),
    ]) {
      assert.equal(res.status, 404);
      assert.deepEqual(res.body, NOT_FOUND);
    }
    const list = await theirs.get("/api/v1/workspaces");
    assert.deepEqual(
      list.body.data.map((w: { id: string }) => w.id),
      [stranger.workspaceId],
    );
    assert.equal(
      (await clientFor(server, owner.key).get(`/api/v1/workspaces/${owner.workspaceId}`)).status,
      200,
    );
  });

  it("a workspace id in the path that is neither a UUID nor a slug of the organization is 404 (docs/behaviour.md#organizations; docs/api.md#workspaces-and-keys)", async () => {
    const org = await server.newOrg();
    const api = clientFor(server, org.key);
    for (const id of ["no-such-slug", "1", "not-a-uuid"]) {
      for (const res of [
        await api.get(`/api/v1/workspaces/${id}`),
        await api.delete(`/api/v1/workspaces/${id}`),
      ]) {
        assert.equal(res.status, 404, id);
        assert.deepEqual(res.body, NOT_FOUND, id);
      }
    }
    assert.equal((await api.get("/api/v1/workspaces")).body.total_count, 1);
  });
});

describe("inference keys (docs/behaviour.md#key-kinds; docs/behaviour.md#keys)", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });

  async function makeKey(org: TestOrg, body: Record<string, unknown> = { name: "app key" }) {
    const res = await clientFor(server, org.key).post("/api/v1/keys", body);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res;
  }

  it("POST /keys answers 201 {data, key}; the hash is the SHA-256 hex of the secret (docs/behaviour.md#key-secrets)", async () => {
    const org = await server.newOrg();
    const res = await makeKey(org, { name: "app key" });
    assert.deepEqual(Object.keys(res.body).sort(), ["data", "key"]);
    const { data, key } = res.body;
    assert.equal(typeof key, "string");
    // At least 128 random bits: more than 22 characters of base64url beyond any prefix.
    assert.ok(key.length >= 32, key);
    assert.equal(data.hash, sha256(key));
    assert.match(data.hash, /^[0-9a-f]{64}$/);
    assert.equal(data.name, "app key");
    assert.equal(data.workspace_id, org.workspaceId);
    assert.equal(typeof data.label, "string");
    assert.ok(!data.label.includes(key), "the label is not the secret");
    assert.match(data.created_at, ISO);
    assert.equal(res.headers.get("location"), `/api/v1/keys/${data.hash}`);
    assert.equal(res.headers.get("cache-control"), "no-store");
    const two = await makeKey(org, { name: "app key" });
    assert.notEqual(two.body.key, key);
  });

  it("the secret never appears again: not in GET /keys nor GET /keys/<hash> (docs/behaviour.md#key-secrets)", async () => {
    const org = await server.newOrg();
    const res = await makeKey(org);
    const api = clientFor(server, org.key);
    const list = await api.get("/api/v1/keys");
    assert.equal(list.status, 200);
    assert.equal(list.body.total_count, 1);
    assert.deepEqual(list.body.data, [res.body.data]);
    const one = await api.get(`/api/v1/keys/${res.body.data.hash}`);
    assert.equal(one.status, 200);
    assert.deepEqual(one.body, { data: res.body.data });
    for (const body of [list.body, one.body]) {
      const text = JSON.stringify(body);
      assert.ok(!text.includes(res.body.key), "secret leaked");
      // Nor a long run of it (a label may show a few characters).
      assert.ok(!text.includes(res.body.key.slice(-20)), "secret tail leaked");
    }
  });

  it("a key can be created in a named workspace; another organization's or an unknown workspace is 400 (docs/behaviour.md#organizations)", async () => {
    const org = await server.newOrg();
    const stranger = await server.newOrg();
    const api = clientFor(server, org.key);
    const ws = (await api.post("/api/v1/workspaces", { name: "second" })).body.data;
    const res = await makeKey(org, { name: "there", workspace_id: ws.id });
    assert.equal(res.body.data.workspace_id, ws.id);
    for (const workspace_id of [stranger.workspaceId, "00000000-0000-4000-8000-000000000000"]) {
      const bad = await api.post("/api/v1/keys", { name: "nope", workspace_id });
      assert.equal(bad.status, 400);
      assert.equal(bad.body.error.message, "Invalid request parameters");
      assert.equal(bad.body.error.metadata.issues[0].path, "/workspace_id");
    }
    const filtered = await api.get(`/api/v1/keys?workspace_id=${ws.id}`);
    assert.deepEqual(filtered.body, { data: [res.body.data], total_count: 1 });
    assert.equal((await api.get("/api/v1/keys")).body.total_count, 1);
  });

  it("DELETE /keys/<hash> answers {deleted: true}; the key then gets 401 Invalid API key (docs/behaviour.md#bearer-keys; docs/behaviour.md#keys)", async () => {
    const org = await server.newOrg();
    const res = await makeKey(org);
    const api = clientFor(server, org.key);
    const before = await call(server, "GET", "/api/v1/workspaces", { key: res.body.key });
    assert.deepEqual(before.body, MANAGEMENT_ONLY);
    const del = await api.delete(`/api/v1/keys/${res.body.data.hash}`);
    assert.equal(del.status, 200);
    assert.deepEqual(del.body, { deleted: true });
    const after = await call(server, "GET", "/api/v1/workspaces", { key: res.body.key });
    assert.equal(after.status, 401);
    assert.deepEqual(after.body, INVALID_KEY);
    assert.deepEqual((await api.get(`/api/v1/keys/${res.body.data.hash}`)).body, NOT_FOUND);
    const again = await api.delete(`/api/v1/keys/${res.body.data.hash}`);
    assert.equal(again.status, 404);
    assert.deepEqual(again.body, NOT_FOUND);
    assert.deepEqual((await api.get("/api/v1/keys")).body, { data: [], total_count: 0 });
  });

  it("an inference key is 403 on every management endpoint (docs/behaviour.md#key-kinds)", async () => {
    const org = await server.newOrg();
    const res = await makeKey(org);
    const gid = (await clientFor(server, org.key).post("/api/v1/guardrails", { name: "g" })).body.data.id;
    const routes: [string, string, unknown?][] = [
      ["GET", "/api/v1/guardrails"],
      ["POST", "/api/v1/guardrails", { name: "x" }],
      ["GET", `/api/v1/guardrails/${gid}`],
      ["PATCH", `/api/v1/guardrails/${gid}`, { name: "x" }],
      ["DELETE", `/api/v1/guardrails/${gid}`],
      ["GET", "/api/v1/workspaces"],
      ["POST", "/api/v1/workspaces", { name: "x" }],
      ["GET", `/api/v1/workspaces/${org.workspaceId}`],
      ["DELETE", `/api/v1/workspaces/${org.workspaceId}`],
      ["GET", "/api/v1/keys"],
      ["POST", "/api/v1/keys", { name: "x" }],
      ["GET", `/api/v1/keys/${res.body.data.hash}`],
      ["DELETE", `/api/v1/keys/${res.body.data.hash}`],
    ];
    for (const [method, path, body] of routes) {
      const r = await call(server, method, path, { key: res.body.key, body });
      assert.equal(r.status, 403, `${method} ${path}`);
      assert.deepEqual(r.body, MANAGEMENT_ONLY, `${method} ${path}`);
    }
    const api = clientFor(server, org.key);
    assert.equal((await api.get(`/api/v1/guardrails/${gid}`)).body.data.name, "g");
    assert.equal((await api.get("/api/v1/keys")).body.total_count, 1);
    assert.equal((await api.get("/api/v1/workspaces")).body.total_count, 1);
  });

  it("another organization's key is 404 on GET and DELETE and keeps working (docs/behaviour.md#organizations)", async () => {
    const owner = await server.newOrg();
    const stranger = await server.newOrg();
    const res = await makeKey(owner);
    const theirs = clientFor(server, stranger.key);
    for (const r of [
      await theirs.get(`/api/v1/keys/${res.body.data.hash}`),
      await theirs.delete(`/api/v1/keys/${res.body.data.hash}`),
    ]) {
      assert.equal(r.status, 404);
      assert.deepEqual(r.body, NOT_FOUND);
    }
    assert.deepEqual((await theirs.get("/api/v1/keys")).body, { data: [], total_count: 0 });
    const still = await call(server, "GET", "/api/v1/keys", { key: res.body.key });
    assert.deepEqual(still.body, MANAGEMENT_ONLY);
  });

  it("management keys are not managed over HTTP: their hash is 404 on GET and DELETE and they keep working (implementation choice)", async () => {
    const org = await server.newOrg();
    const api = clientFor(server, org.key);
    const hash = sha256(org.key);
    assert.deepEqual((await api.get(`/api/v1/keys/${hash}`)).body, NOT_FOUND);
    assert.deepEqual((await api.delete(`/api/v1/keys/${hash}`)).body, NOT_FOUND);
    assert.deepEqual((await api.get("/api/v1/keys")).body, { data: [], total_count: 0 });
    assert.equal((await api.get("/api/v1/workspaces")).status, 200);
  });

  it("a key body without a name or with an unknown property is 400 and stores nothing (docs/behaviour.md#refusals-change-nothing)", async () => {
    const org = await server.newOrg();
    const api = clientFor(server, org.key);
    for (const [body, path] of [
      [{}, "/name"],
      [{ name: "" }, "/name"],
      [{ name: "k", kind: "management" }, "/kind"],
      [{ name: "k", workspace_id: "nope" }, "/workspace_id"],
    ] as [unknown, string][]) {
      const res = await api.post("/api/v1/keys", body);
      assert.equal(res.status, 400, JSON.stringify(body));
      const paths = res.body.error.metadata.issues.map((i: { path: string }) => i.path);
      assert.ok(paths.includes(path), `${JSON.stringify(body)}: ${JSON.stringify(paths)}`);
    }
    assert.deepEqual((await api.get("/api/v1/keys")).body, { data: [], total_count: 0 });
  });
});
