import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { call, clientFor, startTestServer, type TestServer } from "../helpers/server.js";
import { assertInvalid, assertNotFound, INVALID_KEY, orgSteps, UUID } from "./org-support.js";

const MANAGEMENT_ONLY = { error: { code: 403, message: "Only management keys can perform this operation" } };

describe("members and their workspaces (docs/behaviour.md#members)", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });

  it("PATCH workspace_ids replaces the member's workspaces, always keeping the default one (docs/behaviour.md#members)", async () => {
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

  it("leaving a workspace drops the member's assignment there and keeps the one in a workspace still held (docs/behaviour.md#members)", async () => {
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

  it("a member who owns keys in a workspace cannot leave it: 400 naming /workspace_ids, nothing changes (docs/behaviour.md#members)", async () => {
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

  it("DELETE removes the member, the keys it owns (then 401) and every assignment hanging on them (docs/behaviour.md#members)", async () => {
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

  it("deleting a workspace removes it from its members; deleting the default one stops adding it (docs/behaviour.md#members)", async () => {
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

describe("keys owned by members (docs/behaviour.md#members)", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });

  it("POST /keys with member_user_id records the owner; GET /keys/<hash> shows it (docs/behaviour.md#members)", async () => {
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

  it("member_user_id naming no member, another organization's member, or a member outside the key's workspace is 400 and stores no key (docs/behaviour.md#members)", async () => {
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

  it("a key owned by a member is an inference key like any other (docs/behaviour.md#key-kinds)", async () => {
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
