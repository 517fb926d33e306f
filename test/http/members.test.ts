import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type RouteUnderTest, standardAuthCases } from "../helpers/auth-cases.js";
import { startTestServer, type TestOrg, type TestServer } from "../helpers/server.js";
import { assertInvalid, assertNotFound, ISO, orgSteps, UNKNOWN_UUID } from "./org-support.js";

describe("members (docs/behaviour.md#members)", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });

  it("POST /members answers 201 {data} with every field; GET and the list return the same member (docs/behaviour.md#members)", async () => {
    const org = await server.newOrg();
    const { api } = orgSteps(server, org);
    const res = await api.post("/api/v1/members", { user_id: "alice@example.com", name: "Alice" });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const m = res.body.data;
    assert.deepEqual(Object.keys(m).sort(), [
      "budgets",
      "byok_usage",
      "byok_usage_daily",
      "byok_usage_monthly",
      "byok_usage_weekly",
      "created_at",
      "email",
      "limit",
      "limit_remaining",
      "limit_reset",
      "name",
      "organization_id",
      "updated_at",
      "usage",
      "usage_daily",
      "usage_monthly",
      "usage_weekly",
      "user_id",
      "workspace_ids",
    ]);
    assert.equal(m.user_id, "alice@example.com");
    assert.equal(m.organization_id, org.organizationId);
    assert.equal(m.name, "Alice");
    assert.equal(m.email, null);
    assert.deepEqual(m.workspace_ids, [org.workspaceId]);
    assert.match(m.created_at, ISO);
    assert.equal(m.updated_at, null);
    assert.deepEqual((await api.get("/api/v1/members/alice@example.com")).body, { data: m });
    assert.deepEqual((await api.get("/api/v1/members")).body, { data: [m], total_count: 1 });
  });

  it("workspace_ids on create: the named workspaces plus the default one, duplicates collapsed (docs/behaviour.md#members)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const a = await steps.workspace("a");
    const b = await steps.workspace("b");
    const m = await steps.member("bob", { workspace_ids: [a.id, b.id, a.id], email: "bob@example.com" });
    assert.deepEqual([...m.workspace_ids].sort(), [org.workspaceId, a.id, b.id].sort());
    assert.equal(m.workspace_ids.length, 3);
    assert.equal(m.email, "bob@example.com");
    const explicitDefault = await steps.member("carol", { workspace_ids: [org.workspaceId] });
    assert.deepEqual(explicitDefault.workspace_ids, [org.workspaceId]);
  });

  it("a duplicate user_id is 400 naming /user_id and leaves the first member unchanged (docs/behaviour.md#members)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const first = await steps.member("dup", { name: "first" });
    const res = await steps.api.post("/api/v1/members", { user_id: "dup", name: "second" });
    assertInvalid(res, "/user_id");
    assert.deepEqual(await steps.list("/api/v1/members"), { data: [first], total_count: 1 });
  });

  it("concurrent creates of one user_id make one member: one 201, the others 400 (docs/behaviour.md#members)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        steps.api.post("/api/v1/members", { user_id: "race", name: `n${i}` }),
      ),
    );
    assert.deepEqual(results.map((r) => r.status).sort(), [201, 400, 400, 400, 400, 400]);
    for (const r of results.filter((x) => x.status === 400)) assertInvalid(r, "/user_id");
    assert.equal((await steps.list("/api/v1/members")).total_count, 1);
  });

  it("the same user_id in two organizations is two independent members (docs/behaviour.md#organizations)", async () => {
    const one = orgSteps(server, await server.newOrg());
    const two = orgSteps(server, await server.newOrg());
    const a = await one.member("shared", { name: "in one" });
    const b = await two.member("shared", { name: "in two" });
    assert.notEqual(a.organization_id, b.organization_id);
    assert.equal((await one.api.get("/api/v1/members/shared")).body.data.name, "in one");
    assert.equal((await two.api.get("/api/v1/members/shared")).body.data.name, "in two");
  });

  it("an unknown, foreign or malformed workspace id is 400 naming /workspace_ids/<i> and stores nothing (docs/behaviour.md#members; docs/behaviour.md#organizations)", async () => {
    const org = await server.newOrg();
    const stranger = await server.newOrg();
    const steps = orgSteps(server, org);
    for (const bad of [UNKNOWN_UUID, stranger.workspaceId, "not-a-uuid"]) {
      const res = await steps.api.post("/api/v1/members", {
        user_id: "x",
        workspace_ids: [org.workspaceId, bad],
      });
      assertInvalid(res, "/workspace_ids/1");
    }
    assert.deepEqual(await steps.list("/api/v1/members"), { data: [], total_count: 0 });
  });

  it("malformed member bodies are 400 naming the property and store nothing (docs/behaviour.md#invalid-request)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const cases: [unknown, string][] = [
      [{}, "/user_id"],
      [{ user_id: "" }, "/user_id"],
      [{ user_id: 7 }, "/user_id"],
      [{ user_id: "has space" }, "/user_id"],
      [{ user_id: "a/b" }, "/user_id"],
      [{ user_id: "ok", name: 5 }, "/name"],
      [{ user_id: "ok", workspace_ids: "nope" }, "/workspace_ids"],
      [{ user_id: "ok", role: "admin" }, "/role"],
    ];
    for (const [body, path] of cases) assertInvalid(await steps.api.post("/api/v1/members", body), path);
    assert.deepEqual(await steps.list("/api/v1/members"), { data: [], total_count: 0 });
  });

  it('a user_id of "." or ".." is 400: URL parsers resolve such a path segment away, so the member could never be addressed (docs/behaviour.md#members)', async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    for (const user_id of [".", ".."])
      assertInvalid(await steps.api.post("/api/v1/members", { user_id }), "/user_id");
    assert.deepEqual(await steps.list("/api/v1/members"), { data: [], total_count: 0 });
  });

  it("a user_id with URL-special characters is addressable by its percent-encoded path (docs/behaviour.md#members)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    for (const userId of ["a+b@example.com", "100%", "ä-ö", "a?b", "a#b", "x.y"]) {
      const m = await steps.member(userId);
      const path = `/api/v1/members/${encodeURIComponent(userId)}`;
      assert.deepEqual((await steps.api.get(path)).body, { data: m }, userId);
      assert.equal((await steps.api.patch(path, { name: "n" })).body.data?.user_id, userId, userId);
      assert.equal((await steps.api.delete(path)).status, 200, userId);
    }
    assert.equal((await steps.list("/api/v1/members")).total_count, 0);
  });

  it("GET /members pages with offset and limit in creation order; total_count is the whole count (docs/behaviour.md#members)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await steps.member(`m${i}`)).user_id);
    const cases: [string, string[]][] = [
      ["", ids],
      ["?limit=2", ids.slice(0, 2)],
      ["?offset=2&limit=2", ids.slice(2, 4)],
      ["?offset=4&limit=2", ids.slice(4)],
      ["?offset=5", []],
    ];
    for (const [query, expected] of cases) {
      const res = await steps.api.get(`/api/v1/members${query}`);
      assert.equal(res.status, 200, query);
      assert.equal(res.body.total_count, 5, query);
      assert.deepEqual(
        res.body.data.map((m: { user_id: string }) => m.user_id),
        expected,
        query,
      );
    }
    for (const query of ["?limit=0", "?limit=101", "?offset=-1", "?limit=x", "?sort=name"]) {
      assert.equal((await steps.api.get(`/api/v1/members${query}`)).status, 400, query);
    }
  });

  it("an unknown member and another organization's member are 404 on GET, PATCH and DELETE; the member survives (docs/behaviour.md#organizations)", async () => {
    const owner = orgSteps(server, await server.newOrg());
    const stranger = orgSteps(server, await server.newOrg());
    const m = await owner.member("private", { name: "keep" });
    for (const [steps, id] of [
      [stranger, "private"],
      [owner, "nobody"],
    ] as const) {
      assertNotFound(await steps.api.get(`/api/v1/members/${id}`));
      assertNotFound(await steps.api.patch(`/api/v1/members/${id}`, { name: "taken" }));
      assertNotFound(await steps.api.delete(`/api/v1/members/${id}`));
    }
    assert.deepEqual((await owner.api.get("/api/v1/members/private")).body, { data: m });
    assert.deepEqual(await stranger.list("/api/v1/members"), { data: [], total_count: 0 });
  });

  it("PATCH changes only the given fields, null clears name and email, and sets updated_at (docs/behaviour.md#members)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const ws = await steps.workspace();
    const m = await steps.member("pat", { name: "Pat", email: "pat@example.com", workspace_ids: [ws.id] });
    const renamed = await steps.api.patch("/api/v1/members/pat", { name: "Patricia" });
    assert.equal(renamed.status, 200, JSON.stringify(renamed.body));
    assert.deepEqual(renamed.body.data, { ...m, name: "Patricia", updated_at: renamed.body.data.updated_at });
    assert.match(renamed.body.data.updated_at, ISO);
    const cleared = await steps.api.patch("/api/v1/members/pat", { name: null, email: null });
    assert.equal(cleared.body.data.name, null);
    assert.equal(cleared.body.data.email, null);
    assert.deepEqual(cleared.body.data.workspace_ids, m.workspace_ids);
    assert.deepEqual((await steps.api.get("/api/v1/members/pat")).body, { data: cleared.body.data });
  });

  it("malformed PATCH bodies are 400 and change nothing (docs/behaviour.md#invalid-request)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const m = await steps.member("pat", { name: "Pat" });
    const cases: [unknown, string][] = [
      [{ user_id: "other" }, "/user_id"],
      [{ name: 1 }, "/name"],
      [{ workspace_ids: [UNKNOWN_UUID] }, "/workspace_ids/0"],
      [{ workspace_ids: ["nope"] }, "/workspace_ids/0"],
    ];
    for (const [body, path] of cases) assertInvalid(await steps.api.patch("/api/v1/members/pat", body), path);
    assert.deepEqual((await steps.api.get("/api/v1/members/pat")).body, { data: m });
  });
});

describe("members: authentication of every route (docs/behaviour.md#authentication)", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });
  const memberPath = async (org: TestOrg) => {
    await orgSteps(server, org).member("m");
    return "/api/v1/members/m";
  };
  const routes: [string, RouteUnderTest][] = [
    ["POST /api/v1/members", { method: "POST", path: () => "/api/v1/members", body: { user_id: "x" } }],
    ["GET /api/v1/members", { method: "GET", path: () => "/api/v1/members" }],
    ["GET /api/v1/members/{user_id}", { method: "GET", path: memberPath }],
    ["PATCH /api/v1/members/{user_id}", { method: "PATCH", path: memberPath, body: { name: "x" } }],
    ["DELETE /api/v1/members/{user_id}", { method: "DELETE", path: memberPath }],
  ];
  for (const [label, route] of routes) {
    describe(label, () => {
      standardAuthCases(() => server, route);
    });
  }
});
