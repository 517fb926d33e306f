import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { clientFor, startTestServer, type TestOrg, type TestServer } from "../helpers/server.js";

const NOT_FOUND = { error: { code: 404, message: "Resource not found" } };

describe("guardrail lifecycle: list, get, delete (docs/behaviour.md#guardrail-lifecycle)", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });

  async function createGuardrails(org: TestOrg, count: number, extra: Record<string, unknown> = {}) {
    const api = clientFor(server, org.key);
    const ids: string[] = [];
    // One after the other: the order of creation is the order the list must show.
    for (let i = 0; i < count; i++) {
      const res = await api.post("/api/v1/guardrails", { name: `g-${i}`, ...extra });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      ids.push(res.body.data.id);
    }
    return ids;
  }

  it("the list is {data, total_count}, ordered by creation, 50 items by default (docs/behaviour.md#guardrail-list)", async () => {
    const org = await server.newOrg();
    const api = clientFor(server, org.key);
    const ids = await createGuardrails(org, 55);
    const first = await api.get("/api/v1/guardrails");
    assert.equal(first.status, 200);
    assert.deepEqual(Object.keys(first.body).sort(), ["data", "total_count"]);
    assert.equal(first.body.total_count, 55);
    assert.deepEqual(
      first.body.data.map((g: { id: string }) => g.id),
      ids.slice(0, 50),
    );
    const all = await api.get("/api/v1/guardrails?limit=100");
    assert.deepEqual(
      all.body.data.map((g: { id: string }) => g.id),
      ids,
    );
  });

  it("offset and limit page through the list; total_count stays the whole count (docs/behaviour.md#pagination)", async () => {
    const org = await server.newOrg();
    const api = clientFor(server, org.key);
    const ids = await createGuardrails(org, 7);
    const cases: [string, string[]][] = [
      ["offset=0&limit=3", ids.slice(0, 3)],
      ["offset=3&limit=3", ids.slice(3, 6)],
      ["offset=6&limit=3", ids.slice(6)],
      ["offset=7&limit=3", []],
      ["offset=100", []],
      ["limit=1", ids.slice(0, 1)],
      ["limit=100", ids],
    ];
    for (const [query, expected] of cases) {
      const res = await api.get(`/api/v1/guardrails?${query}`);
      assert.equal(res.status, 200, query);
      assert.equal(res.body.total_count, 7, query);
      assert.deepEqual(
        res.body.data.map((g: { id: string }) => g.id),
        expected,
        query,
      );
    }
  });

  it("limit outside 1..100, a negative offset or a non-number is 400 naming the parameter (docs/behaviour.md#pagination; docs/behaviour.md#invalid-request)", async () => {
    const org = await server.newOrg();
    const api = clientFor(server, org.key);
    await createGuardrails(org, 1);
    const cases: [string, string][] = [
      ["limit=0", "/limit"],
      ["limit=101", "/limit"],
      ["limit=-1", "/limit"],
      ["limit=abc", "/limit"],
      ["limit=1.5", "/limit"],
      ["offset=-1", "/offset"],
      ["offset=x", "/offset"],
      ["workspace_id=not-a-uuid", "/workspace_id"],
      ["color=red", "/color"],
    ];
    for (const [query, path] of cases) {
      const res = await api.get(`/api/v1/guardrails?${query}`);
      assert.equal(res.status, 400, query);
      assert.equal(res.body.error.code, 400, query);
      assert.equal(res.body.error.message, "Invalid request parameters", query);
      const paths = res.body.error.metadata.issues.map((i: { path: string }) => i.path);
      assert.ok(paths.includes(path), `${query}: ${JSON.stringify(paths)}`);
    }
  });

  it("without workspace_id the list shows the default workspace's guardrails; with it, that workspace's (docs/behaviour.md#guardrail-list)", async () => {
    const org = await server.newOrg();
    const api = clientFor(server, org.key);
    const ws = await api.post("/api/v1/workspaces", { name: "second" });
    assert.equal(ws.status, 201);
    const inDefault = await createGuardrails(org, 2);
    const inSecond = await createGuardrails(org, 3, { workspace_id: ws.body.data.id });
    const ids = (res: { body: { data: { id: string }[] } }) => res.body.data.map((g) => g.id);

    const plain = await api.get("/api/v1/guardrails");
    assert.equal(plain.body.total_count, 2);
    assert.deepEqual(ids(plain), inDefault);
    const named = await api.get(`/api/v1/guardrails?workspace_id=${org.workspaceId}`);
    assert.deepEqual(ids(named), inDefault);
    const second = await api.get(`/api/v1/guardrails?workspace_id=${ws.body.data.id}`);
    assert.equal(second.body.total_count, 3);
    assert.deepEqual(ids(second), inSecond);
    for (const g of second.body.data) assert.equal(g.workspace_id, ws.body.data.id);
  });

  it("a workspace's default guardrail is absent from the list and 404 until first written (docs/behaviour.md#workspace-default)", async () => {
    const org = await server.newOrg();
    const api = clientFor(server, org.key);
    const ws = await api.get(`/api/v1/workspaces/${org.workspaceId}`);
    const defaultId = ws.body.data.default_guardrail_id;
    const before = await api.get("/api/v1/guardrails");
    assert.deepEqual(before.body, { data: [], total_count: 0 });
    assert.deepEqual((await api.get(`/api/v1/guardrails/${defaultId}`)).body, NOT_FOUND);
    const patched = await api.patch(`/api/v1/guardrails/${defaultId}`, { allowed_data_regions: ["europe"] });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    const after = await api.get("/api/v1/guardrails");
    assert.equal(after.body.total_count, 1);
    assert.deepEqual(after.body.data, [patched.body.data]);
  });

  it("GET one answers 200 {data} equal to what the create answered, with an ETag (docs/behaviour.md#guardrail-read; docs/behaviour.md#concurrency)", async () => {
    const org = await server.newOrg();
    const api = clientFor(server, org.key);
    const created = await api.post("/api/v1/guardrails", {
      name: "read me",
      description: "d",
      allowed_data_regions: ["europe", "us"],
      limit_usd: 12.5,
      reset_interval: "weekly",
    });
    assert.equal(created.status, 201);
    const got = await api.get(`/api/v1/guardrails/${created.body.data.id}`);
    assert.equal(got.status, 200);
    assert.deepEqual(got.body, { data: created.body.data });
    assert.ok(got.headers.get("etag"), "ETag header");
    assert.equal(got.headers.get("etag"), created.headers.get("etag"));
    const listed = await api.get("/api/v1/guardrails");
    assert.deepEqual(listed.body.data, [created.body.data]);
  });

  it("DELETE answers 200 {deleted: true}; afterwards GET, PATCH and DELETE are 404 and the list drops it (docs/behaviour.md#guardrail-delete)", async () => {
    const org = await server.newOrg();
    const api = clientFor(server, org.key);
    const [keep, gone] = (await createGuardrails(org, 2)) as [string, string];
    const del = await api.delete(`/api/v1/guardrails/${gone}`);
    assert.equal(del.status, 200);
    assert.deepEqual(del.body, { deleted: true });
    assert.deepEqual((await api.get(`/api/v1/guardrails/${gone}`)).body, NOT_FOUND);
    const again = await api.delete(`/api/v1/guardrails/${gone}`);
    assert.equal(again.status, 404);
    assert.deepEqual(again.body, NOT_FOUND);
    const patch = await api.patch(`/api/v1/guardrails/${gone}`, { name: "back?" });
    assert.equal(patch.status, 404);
    assert.deepEqual(patch.body, NOT_FOUND);
    const list = await api.get("/api/v1/guardrails");
    assert.equal(list.body.total_count, 1);
    assert.deepEqual(
      list.body.data.map((g: { id: string }) => g.id),
      [keep],
    );
    assert.equal((await api.get(`/api/v1/guardrails/${keep}`)).status, 200);
  });

  it("another organization's guardrail is 404 on GET, PATCH and DELETE and stays unchanged (docs/behaviour.md#organizations)", async () => {
    const owner = await server.newOrg();
    const stranger = await server.newOrg();
    const mine = clientFor(server, owner.key);
    const theirs = clientFor(server, stranger.key);
    const created = await mine.post("/api/v1/guardrails", { name: "private", description: "x" });
    const id = created.body.data.id;
    for (const res of [
      await theirs.get(`/api/v1/guardrails/${id}`),
      await theirs.patch(`/api/v1/guardrails/${id}`, { name: "taken over" }),
      await theirs.delete(`/api/v1/guardrails/${id}`),
    ]) {
      assert.equal(res.status, 404);
      assert.deepEqual(res.body, NOT_FOUND);
    }
    const still = await mine.get(`/api/v1/guardrails/${id}`);
    assert.deepEqual(still.body, { data: created.body.data });
  });

  it("another organization's guardrails are absent from lists, and its workspace id is refused as a filter (docs/behaviour.md#organizations)", async () => {
    const owner = await server.newOrg();
    const stranger = await server.newOrg();
    await createGuardrails(owner, 3);
    const theirs = clientFor(server, stranger.key);
    const list = await theirs.get("/api/v1/guardrails");
    assert.deepEqual(list.body, { data: [], total_count: 0 });
    // A workspace id of another organization is indistinguishable from one that does not exist.
    const foreign = await theirs.get(`/api/v1/guardrails?workspace_id=${owner.workspaceId}`);
    const missing = await theirs.get("/api/v1/guardrails?workspace_id=00000000-0000-4000-8000-000000000000");
    assert.equal(foreign.status, 400);
    assert.deepEqual(foreign.body, missing.body);
    assert.equal(foreign.body.error.metadata.issues[0].path, "/workspace_id");
  });

  it("an id in the path that is not a UUID is 404 on GET, PATCH and DELETE (docs/behaviour.md#update-not-found)", async () => {
    const org = await server.newOrg();
    const api = clientFor(server, org.key);
    await createGuardrails(org, 1);
    for (const id of ["not-a-uuid", "123", "00000000-0000-0000-0000-00000000000g"]) {
      for (const res of [
        await api.get(`/api/v1/guardrails/${id}`),
        await api.patch(`/api/v1/guardrails/${id}`, { name: "n" }),
        await api.delete(`/api/v1/guardrails/${id}`),
      ]) {
        assert.equal(res.status, 404, id);
        assert.deepEqual(res.body, NOT_FOUND, id);
      }
    }
    assert.equal((await api.get("/api/v1/guardrails")).body.total_count, 1);
  });
});
