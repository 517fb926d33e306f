import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type RouteUnderTest, standardAuthCases } from "../helpers/auth-cases.js";
import { call, clientFor, startTestServer, type TestOrg, type TestServer } from "../helpers/server.js";
import {
  assertInvalid,
  assertNotFound,
  INVALID_KEY,
  ISO,
  orgSteps,
  UNKNOWN_UUID,
  UUID,
} from "./org-support.js";

const MANAGEMENT_ONLY = { error: { code: 403, message: "Only management keys can perform this operation" } };

describe("members (issue 3)", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });

  it("POST /members answers 201 {data} with every field; GET and the list return the same member (issue 3, members)", async () => {
    const org = await server.newOrg();
    const { api } = orgSteps(server, org);
    const res = await api.post("/api/v1/members", { user_id: "alice@example.com", name: "Alice" });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const m = res.body.data;
    assert.deepEqual(Object.keys(m).sort(), [
      "created_at",
      "email",
      "name",
      "organization_id",
      "updated_at",
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

  it("workspace_ids on create: the named workspaces plus the default one, duplicates collapsed (issue 3, members)", async () => {
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

  it("a duplicate user_id is 400 naming /user_id and leaves the first member unchanged (issue 3, members)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const first = await steps.member("dup", { name: "first" });
    const res = await steps.api.post("/api/v1/members", { user_id: "dup", name: "second" });
    assertInvalid(res, "/user_id");
    assert.deepEqual(await steps.list("/api/v1/members"), { data: [first], total_count: 1 });
  });

  it("the same user_id in two organizations is two independent members (decisions §2)", async () => {
    const one = orgSteps(server, await server.newOrg());
    const two = orgSteps(server, await server.newOrg());
    const a = await one.member("shared", { name: "in one" });
    const b = await two.member("shared", { name: "in two" });
    assert.notEqual(a.organization_id, b.organization_id);
    assert.equal((await one.api.get("/api/v1/members/shared")).body.data.name, "in one");
    assert.equal((await two.api.get("/api/v1/members/shared")).body.data.name, "in two");
  });

  it("an unknown, foreign or malformed workspace id is 400 naming /workspace_ids/<i> and stores nothing (issue 3; decisions §2)", async () => {
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

  it("malformed member bodies are 400 naming the property and store nothing (decisions §3)", async () => {
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

  it("GET /members pages with offset and limit in creation order; total_count is the whole count (issue 3)", async () => {
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

  it("an unknown member and another organization's member are 404 on GET, PATCH and DELETE; the member survives (decisions §2)", async () => {
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

  it("PATCH changes only the given fields, null clears name and email, and sets updated_at (issue 3)", async () => {
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

  it("malformed PATCH bodies are 400 and change nothing (decisions §3)", async () => {
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

  it("PATCH workspace_ids replaces the member's workspaces, always keeping the default one (issue 3)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const a = await steps.workspace("a");
    const b = await steps.workspace("b");
    await steps.member("w", { workspace_ids: [a.id] });
    const moved = await steps.api.patch("/api/v1/members/w", { workspace_ids: [b.id] });
    assert.equal(moved.status, 200, JSON.stringify(moved.body));
    assert.deepEqual([...moved.body.data.workspace_ids].sort(), [org.workspaceId, b.id].sort());
    const emptied = await steps.api.patch("/api/v1/members/w", { workspace_ids: [] });
    assert.deepEqual(emptied.body.data.workspace_ids, [org.workspaceId]);
    assert.deepEqual((await steps.api.get("/api/v1/members/w")).body.data.workspace_ids, [org.workspaceId]);
  });

  it("leaving a workspace drops the member's assignment there and keeps the one in a workspace still held (issue 3)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const a = await steps.workspace("a");
    await steps.member("leaver", { workspace_ids: [a.id] });
    const inA = await steps.guardrail({ workspace_id: a.id });
    const inDefault = await steps.guardrail();
    assert.equal(await steps.assignMembers(inA.id, ["leaver"]), 1);
    assert.equal(await steps.assignMembers(inDefault.id, ["leaver"]), 1);
    const res = await steps.api.patch("/api/v1/members/leaver", { workspace_ids: [] });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(await steps.list(`/api/v1/guardrails/${inA.id}/assignments/members`), {
      data: [],
      total_count: 0,
    });
    const kept = await steps.list(`/api/v1/guardrails/${inDefault.id}/assignments/members`);
    assert.deepEqual(
      kept.data.map((x) => x.user_id),
      ["leaver"],
    );
  });

  it("a member who owns keys in a workspace cannot leave it: 400 naming /workspace_ids, nothing changes (issue 3)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const a = await steps.workspace("a");
    const m = await steps.member("owner", { workspace_ids: [a.id] });
    const key = await steps.key({ workspace_id: a.id, member_user_id: "owner" });
    const g = await steps.guardrail({ workspace_id: a.id });
    await steps.assignMembers(g.id, ["owner"]);
    const before = await steps.assignmentState();
    assertInvalid(
      await steps.api.patch("/api/v1/members/owner", { workspace_ids: [], name: "x" }),
      "/workspace_ids",
    );
    assert.deepEqual((await steps.api.get("/api/v1/members/owner")).body, { data: m });
    assert.deepEqual(await steps.assignmentState(), before);
    // Once the key is gone, the member may leave.
    await steps.deleted(`/api/v1/keys/${key.hash}`);
    const res = await steps.api.patch("/api/v1/members/owner", { workspace_ids: [] });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.data.workspace_ids, [org.workspaceId]);
  });

  it("DELETE removes the member, the keys it owns (then 401) and every assignment hanging on them (issue 3)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const a = await steps.workspace("a");
    await steps.member("gone", { workspace_ids: [a.id] });
    await steps.member("stays");
    const owned = await steps.key({ member_user_id: "gone" });
    const ownedInA = await steps.key({ workspace_id: a.id, member_user_id: "gone" });
    const other = await steps.key({ member_user_id: "stays" });
    const g = await steps.guardrail();
    const gA = await steps.guardrail({ workspace_id: a.id });
    await steps.assignKeys(g.id, [owned.hash, other.hash]);
    await steps.assignKeys(gA.id, [ownedInA.hash]);
    await steps.assignMembers(g.id, ["gone", "stays"]);
    await steps.assignMembers(gA.id, ["gone"]);

    const del = await steps.api.delete("/api/v1/members/gone");
    assert.equal(del.status, 200, JSON.stringify(del.body));
    assert.deepEqual(del.body, { deleted: true });
    assertNotFound(await steps.api.get("/api/v1/members/gone"));
    for (const key of [owned, ownedInA]) {
      assertNotFound(await steps.api.get(`/api/v1/keys/${key.hash}`));
      const res = await call(server, "GET", "/api/v1/key", { key: key.secret });
      assert.equal(res.status, 401);
      assert.deepEqual(res.body, INVALID_KEY);
    }
    const state = await steps.assignmentState();
    assert.deepEqual(
      state.keys.data.map((x: { key_hash: string }) => x.key_hash),
      [other.hash],
    );
    assert.deepEqual(
      state.members.data.map((x: { user_id: string }) => x.user_id),
      ["stays"],
    );
    assert.equal((await steps.list("/api/v1/keys")).total_count, 1);
    assertNotFound(await steps.api.delete("/api/v1/members/gone"));
  });

  it("deleting a workspace removes it from its members; deleting the default one stops adding it (issue 3)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const a = await steps.workspace("a");
    await steps.member("m", { workspace_ids: [a.id] });
    await steps.deleted(`/api/v1/workspaces/${a.id}`);
    assert.deepEqual((await steps.api.get("/api/v1/members/m")).body.data.workspace_ids, [org.workspaceId]);
    const b = await steps.workspace("b");
    await steps.deleted(`/api/v1/workspaces/${org.workspaceId}`);
    assert.deepEqual((await steps.api.get("/api/v1/members/m")).body.data.workspace_ids, []);
    const fresh = await steps.member("n", { workspace_ids: [b.id] });
    assert.deepEqual(fresh.workspace_ids, [b.id]);
  });
});

describe("keys owned by members (issue 3)", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });

  it("POST /keys with member_user_id records the owner; GET /keys/<hash> shows it (issue 3)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const a = await steps.workspace();
    await steps.member("owner", { workspace_ids: [a.id] });
    const key = await steps.key({ workspace_id: a.id, member_user_id: "owner" });
    const got = await steps.api.get(`/api/v1/keys/${key.hash}`);
    assert.equal(got.body.data.member_user_id, "owner");
    assert.equal(got.body.data.workspace_id, a.id);
    const unowned = await steps.key();
    assert.equal((await steps.api.get(`/api/v1/keys/${unowned.hash}`)).body.data.member_user_id, null);
  });

  it("member_user_id naming no member, another organization's member, or a member outside the key's workspace is 400 and stores no key (issue 3)", async () => {
    const org = await server.newOrg();
    const stranger = orgSteps(server, await server.newOrg());
    await stranger.member("foreign");
    const steps = orgSteps(server, org);
    const a = await steps.workspace();
    await steps.member("home-only");
    const cases: Record<string, unknown>[] = [
      { member_user_id: "nobody" },
      { member_user_id: "foreign" },
      { member_user_id: "home-only", workspace_id: a.id },
    ];
    for (const extra of cases) {
      assertInvalid(await steps.api.post("/api/v1/keys", { name: "k", ...extra }), "/member_user_id");
    }
    assertInvalid(await steps.api.post("/api/v1/keys", { name: "k", member_user_id: "" }), "/member_user_id");
    assert.deepEqual(await steps.list("/api/v1/keys"), { data: [], total_count: 0 });
  });

  it("a key owned by a member is an inference key like any other (decisions §2)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    await steps.member("owner");
    const key = await steps.key({ member_user_id: "owner" });
    const res = await clientFor(server, key.secret).get("/api/v1/members");
    assert.equal(res.status, 403);
    assert.deepEqual(res.body, MANAGEMENT_ONLY);
    assert.match((await steps.api.get("/api/v1/members/owner")).body.data.organization_id, UUID);
  });
});

describe("members: authentication of every route (decisions §2)", () => {
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
