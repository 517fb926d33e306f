import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { assertInvalid, assertNotFound, ISO, orgSteps, sha256, UUID } from "./org-support.js";

describe("member assignments (docs/behaviour.md#member-assignments)", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });

  it("assigning answers {assigned_count}; both lists show the SDK's MemberAssignment with the workspace (docs/behaviour.md#assignment-lists)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const g = await steps.guardrail();
    await steps.member("ann");
    await steps.member("ben");
    const res = await steps.api.post(`/api/v1/guardrails/${g.id}/assignments/members`, {
      member_user_ids: ["ann", "ben"],
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body, { assigned_count: 2 });
    const list = await steps.api.get(`/api/v1/guardrails/${g.id}/assignments/members`);
    assert.equal(list.status, 200);
    assert.equal(list.body.total_count, 2);
    assert.deepEqual(list.body.data.map((a: { user_id: string }) => a.user_id).sort(), ["ann", "ben"]);
    for (const a of list.body.data) {
      assert.deepEqual(Object.keys(a).sort(), [
        "assigned_by",
        "created_at",
        "guardrail_id",
        "id",
        "organization_id",
        "user_id",
        "workspace_id",
      ]);
      assert.match(a.id, UUID);
      assert.equal(a.organization_id, org.organizationId);
      assert.equal(a.workspace_id, org.workspaceId);
      assert.equal(a.guardrail_id, g.id);
      assert.equal(a.assigned_by, sha256(org.key));
      assert.match(a.created_at, ISO);
    }
    assert.deepEqual(await steps.list("/api/v1/guardrails/assignments/members"), list.body);
  });

  it("unknown and foreign user ids are skipped; the same pair again counts 0 (docs/behaviour.md#assignment-counts; docs/behaviour.md#organizations)", async () => {
    const org = await server.newOrg();
    const stranger = orgSteps(server, await server.newOrg());
    await stranger.member("foreign");
    const steps = orgSteps(server, org);
    const g = await steps.guardrail();
    await steps.member("ann");
    assert.equal(await steps.assignMembers(g.id, ["nobody", "foreign", "ann", "ann"]), 1);
    const before = await steps.list("/api/v1/guardrails/assignments/members");
    assert.deepEqual(
      before.data.map((a) => a.user_id),
      ["ann"],
    );
    assert.equal(await steps.assignMembers(g.id, ["ann"]), 0);
    assert.deepEqual(await steps.list("/api/v1/guardrails/assignments/members"), before);
    assert.equal((await stranger.list("/api/v1/guardrails/assignments/members")).total_count, 0);
  });

  it("one guardrail per member per workspace: a second guardrail in the same workspace moves it, one in another workspace adds (docs/behaviour.md#assignment-counts)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const a = await steps.workspace("a");
    await steps.member("m", { workspace_ids: [a.id] });
    const home1 = await steps.guardrail({ name: "home 1" });
    const home2 = await steps.guardrail({ name: "home 2" });
    const inA = await steps.guardrail({ name: "in a", workspace_id: a.id });
    assert.equal(await steps.assignMembers(home1.id, ["m"]), 1);
    assert.equal(await steps.assignMembers(inA.id, ["m"]), 1);
    assert.equal(await steps.assignMembers(home2.id, ["m"]), 1);
    const all = await steps.list("/api/v1/guardrails/assignments/members");
    assert.deepEqual(
      all.data.map((x) => [x.workspace_id, x.guardrail_id]).sort(),
      [
        [org.workspaceId, home2.id],
        [a.id, inA.id],
      ].sort(),
    );
    assert.equal((await steps.list(`/api/v1/guardrails/${home1.id}/assignments/members`)).total_count, 0);
  });

  it("a member outside the guardrail's workspace is 400 naming /member_user_ids/<i>; nothing is stored (docs/behaviour.md#assignment-counts)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const a = await steps.workspace("a");
    await steps.member("inside", { workspace_ids: [a.id] });
    await steps.member("outside");
    const g = await steps.guardrail({ workspace_id: a.id });
    assertInvalid(
      await steps.api.post(`/api/v1/guardrails/${g.id}/assignments/members`, {
        member_user_ids: ["inside", "outside"],
      }),
      "/member_user_ids/1",
    );
    assert.equal((await steps.assignmentState()).members.total_count, 0);
  });

  it("unassigning answers {unassigned_count}: only this guardrail's pairs count; others stay (docs/behaviour.md#assignment-counts)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const g1 = await steps.guardrail();
    const g2 = await steps.guardrail();
    for (const id of ["a", "b", "c"]) await steps.member(id);
    await steps.assignMembers(g1.id, ["a", "b"]);
    await steps.assignMembers(g2.id, ["c"]);
    const res = await steps.api.post(`/api/v1/guardrails/${g1.id}/assignments/members/remove`, {
      member_user_ids: ["a", "c", "nobody"],
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body, { unassigned_count: 1 });
    const all = await steps.list("/api/v1/guardrails/assignments/members");
    assert.deepEqual(
      all.data.map((x) => [x.user_id, x.guardrail_id]).sort(),
      [
        ["b", g1.id],
        ["c", g2.id],
      ].sort(),
    );
  });

  it("the member assignment lists page with offset and limit; total_count is the whole count (docs/behaviour.md#assignment-lists)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const g = await steps.guardrail();
    const ids = ["m0", "m1", "m2", "m3"];
    for (const id of ids) {
      await steps.member(id);
      await steps.assignMembers(g.id, [id]);
    }
    for (const [query, expected] of [
      ["?limit=3", ids.slice(0, 3)],
      ["?offset=3&limit=3", ids.slice(3)],
    ] as const) {
      for (const path of [
        `/api/v1/guardrails/${g.id}/assignments/members`,
        "/api/v1/guardrails/assignments/members",
      ]) {
        const res = await steps.api.get(`${path}${query}`);
        assert.equal(res.status, 200);
        assert.equal(res.body.total_count, 4);
        assert.deepEqual(
          res.body.data.map((a: { user_id: string }) => a.user_id),
          expected,
          `${path}${query}`,
        );
      }
    }
  });
});

describe("deleting what an assignment hangs on removes the assignment (docs/behaviour.md#assignment-cleanup)", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });

  it("deleting a guardrail removes its key and member assignments and nothing else; its lists are then 404 (docs/behaviour.md#assignments)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const doomed = await steps.guardrail();
    const kept = await steps.guardrail();
    const [k1, k2] = [await steps.key(), await steps.key()];
    await steps.member("a");
    await steps.member("b");
    await steps.assignKeys(doomed.id, [k1.hash]);
    await steps.assignKeys(kept.id, [k2.hash]);
    await steps.assignMembers(doomed.id, ["a"]);
    await steps.assignMembers(kept.id, ["b"]);
    await steps.deleted(`/api/v1/guardrails/${doomed.id}`);
    const state = await steps.assignmentState();
    assert.deepEqual(
      state.keys.data.map((x: { guardrail_id: string; key_hash: string }) => [x.guardrail_id, x.key_hash]),
      [[kept.id, k2.hash]],
    );
    assert.deepEqual(
      state.members.data.map((x: { guardrail_id: string; user_id: string }) => [x.guardrail_id, x.user_id]),
      [[kept.id, "b"]],
    );
    assertNotFound(await steps.api.get(`/api/v1/guardrails/${doomed.id}/assignments/keys`));
    assertNotFound(await steps.api.get(`/api/v1/guardrails/${doomed.id}/assignments/members`));
    // The key itself survives and can take a new guardrail.
    assert.equal(await steps.assignKeys(kept.id, [k1.hash]), 1);
  });

  it("deleting a key removes its assignment (docs/behaviour.md#assignment-cleanup)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const g = await steps.guardrail();
    const [k1, k2] = [await steps.key(), await steps.key()];
    await steps.assignKeys(g.id, [k1.hash, k2.hash]);
    await steps.deleted(`/api/v1/keys/${k1.hash}`);
    const list = await steps.list(`/api/v1/guardrails/${g.id}/assignments/keys`);
    assert.deepEqual(
      list.data.map((x) => x.key_hash),
      [k2.hash],
    );
    assert.equal(list.total_count, 1);
  });

  it("deleting a workspace removes the assignments of its keys, its members and its guardrails; other workspaces keep theirs (docs/behaviour.md#assignment-cleanup)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const a = await steps.workspace("a");
    await steps.member("m", { workspace_ids: [a.id] });
    const gHome = await steps.guardrail({ name: "home" });
    const gA = await steps.guardrail({ name: "a", workspace_id: a.id });
    const kHome = await steps.key();
    const kA = await steps.key({ workspace_id: a.id });
    await steps.assignKeys(gHome.id, [kHome.hash]);
    await steps.assignKeys(gA.id, [kA.hash]);
    await steps.assignMembers(gHome.id, ["m"]);
    await steps.assignMembers(gA.id, ["m"]);
    await steps.deleted(`/api/v1/workspaces/${a.id}`);
    const state = await steps.assignmentState();
    assert.deepEqual(
      state.keys.data.map((x: { guardrail_id: string; key_hash: string }) => [x.guardrail_id, x.key_hash]),
      [[gHome.id, kHome.hash]],
    );
    assert.deepEqual(
      state.members.data.map((x: { guardrail_id: string; workspace_id: string }) => [
        x.guardrail_id,
        x.workspace_id,
      ]),
      [[gHome.id, org.workspaceId]],
    );
  });
});
