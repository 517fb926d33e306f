import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { clientFor, startTestServer, type TestOrg, type TestServer } from "../helpers/server.js";
import { currentKey, INVALID_KEY, layersOf, orgSteps } from "./org-support.js";

/**
 * The effective policy of a key is cached, but every change to a guardrail, an assignment, a key or a
 * member is visible to the very next request (docs/behaviour.md#freshness). Each test first reads GET /api/v1/key
 * (filling the cache), makes one change, and reads again at once.
 */
describe("freshness of the effective policy (docs/behaviour.md#freshness)", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });

  /** A revoked key is unknown everywhere: on its own view and on a management route alike (docs/behaviour.md#bearer-keys). */
  async function assertRevoked(secret: string) {
    for (const path of ["/api/v1/key", "/api/v1/guardrails"]) {
      const res = await clientFor(server, secret).get(path);
      assert.equal(res.status, 401, path);
      assert.deepEqual(res.body, INVALID_KEY, path);
    }
  }

  async function setup(org: TestOrg) {
    const steps = orgSteps(server, org);
    await steps.member("m");
    const key = await steps.key({ member_user_id: "m" });
    const regions = async () => {
      const res = await currentKey(server, key.secret);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body.data.effective_policy.allowed_data_regions;
    };
    return { steps, key, regions };
  }

  it("a PATCH of the key's guardrail shows on the next request (docs/behaviour.md#freshness)", async () => {
    const { steps, key, regions } = await setup(await server.newOrg());
    const g = await steps.guardrail({ allowed_data_regions: ["us"] });
    await steps.assignKeys(g.id, [key.hash]);
    assert.deepEqual(await regions(), ["us"]);
    await steps.patchGuardrail(g.id, { allowed_data_regions: ["europe"] });
    assert.deepEqual(await regions(), ["europe"]);
    await steps.patchGuardrail(g.id, { allowed_data_regions: null });
    assert.equal(await regions(), null);
  });

  it("a PATCH of the member's guardrail shows on the next request (docs/behaviour.md#freshness)", async () => {
    const { steps, regions } = await setup(await server.newOrg());
    const g = await steps.guardrail({ allowed_data_regions: ["us", "global"] });
    await steps.assignMembers(g.id, ["m"]);
    assert.deepEqual(await regions(), ["global", "us"]);
    await steps.patchGuardrail(g.id, { allowed_data_regions: ["global"] });
    assert.deepEqual(await regions(), ["global"]);
  });

  it("assigning, moving and unassigning a key's guardrail show on the next request (docs/behaviour.md#freshness)", async () => {
    const { steps, key } = await setup(await server.newOrg());
    const g1 = await steps.guardrail();
    const g2 = await steps.guardrail();
    assert.deepEqual(layersOf(await currentKey(server, key.secret)), []);
    await steps.assignKeys(g1.id, [key.hash]);
    assert.deepEqual(layersOf(await currentKey(server, key.secret)), [["key", g1.id]]);
    await steps.assignKeys(g2.id, [key.hash]);
    assert.deepEqual(layersOf(await currentKey(server, key.secret)), [["key", g2.id]]);
    assert.equal(await steps.unassignKeys(g2.id, [key.hash]), 1);
    assert.deepEqual(layersOf(await currentKey(server, key.secret)), []);
  });

  it("assigning and unassigning the member's guardrail show on the next request (docs/behaviour.md#freshness)", async () => {
    const { steps, key } = await setup(await server.newOrg());
    const g = await steps.guardrail();
    assert.deepEqual(layersOf(await currentKey(server, key.secret)), []);
    await steps.assignMembers(g.id, ["m"]);
    assert.deepEqual(layersOf(await currentKey(server, key.secret)), [["member", g.id]]);
    assert.equal(await steps.unassignMembers(g.id, ["m"]), 1);
    assert.deepEqual(layersOf(await currentKey(server, key.secret)), []);
  });

  it("deleting a guardrail removes it from the next request's layers (docs/behaviour.md#freshness; docs/behaviour.md#guardrail-lifecycle)", async () => {
    const { steps, key } = await setup(await server.newOrg());
    const forKey = await steps.guardrail();
    const forMember = await steps.guardrail();
    await steps.assignKeys(forKey.id, [key.hash]);
    await steps.assignMembers(forMember.id, ["m"]);
    assert.deepEqual(layersOf(await currentKey(server, key.secret)), [
      ["member", forMember.id],
      ["key", forKey.id],
    ]);
    await steps.deleted(`/api/v1/guardrails/${forKey.id}`);
    assert.deepEqual(layersOf(await currentKey(server, key.secret)), [["member", forMember.id]]);
    await steps.deleted(`/api/v1/guardrails/${forMember.id}`);
    assert.deepEqual(layersOf(await currentKey(server, key.secret)), []);
  });

  it("materializing, changing and deleting the workspace default guardrail show on the next request (docs/behaviour.md#freshness; docs/behaviour.md#workspace-default)", async () => {
    const org = await server.newOrg();
    const { steps, key, regions } = await setup(org);
    const ws = (await steps.api.get(`/api/v1/workspaces/${org.workspaceId}`)).body.data;
    assert.equal(await regions(), null);
    await steps.patchGuardrail(ws.default_guardrail_id, { allowed_data_regions: ["europe"] });
    assert.deepEqual(await regions(), ["europe"]);
    assert.deepEqual(layersOf(await currentKey(server, key.secret)), [
      ["workspace_default", ws.default_guardrail_id],
    ]);
    await steps.patchGuardrail(ws.default_guardrail_id, { allowed_data_regions: ["us"] });
    assert.deepEqual(await regions(), ["us"]);
    await steps.deleted(`/api/v1/guardrails/${ws.default_guardrail_id}`);
    assert.equal(await regions(), null);
  });

  it("a member leaving a workspace loses that workspace's member guardrail: a key made after re-joining has none (docs/behaviour.md#freshness)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const a = await steps.workspace("a");
    await steps.member("m", { workspace_ids: [a.id] });
    const g = await steps.guardrail({ workspace_id: a.id });
    await steps.assignMembers(g.id, ["m"]);
    const before = await steps.key({ workspace_id: a.id, member_user_id: "m" });
    assert.deepEqual(layersOf(await currentKey(server, before.secret)), [["member", g.id]]);
    // A member who owns keys in a workspace cannot leave it; once the key is gone, leaving drops the assignment.
    await steps.deleted(`/api/v1/keys/${before.hash}`);
    const left = await steps.api.patch("/api/v1/members/m", { workspace_ids: [] });
    assert.equal(left.status, 200, JSON.stringify(left.body));
    const back = await steps.api.patch("/api/v1/members/m", { workspace_ids: [a.id] });
    assert.equal(back.status, 200, JSON.stringify(back.body));
    const after = await steps.key({ workspace_id: a.id, member_user_id: "m" });
    assert.deepEqual(layersOf(await currentKey(server, after.secret)), []);
  });

  it("deleting the key makes its very next request 401 Invalid API key (docs/behaviour.md#freshness; docs/behaviour.md#bearer-keys)", async () => {
    const { steps, key } = await setup(await server.newOrg());
    assert.equal((await currentKey(server, key.secret)).status, 200);
    assert.equal((await clientFor(server, key.secret).get("/api/v1/guardrails")).status, 403);
    await steps.deleted(`/api/v1/keys/${key.hash}`);
    await assertRevoked(key.secret);
  });

  it("deleting the key's member or its workspace makes the key's very next request 401 (docs/behaviour.md#freshness)", async () => {
    const org = await server.newOrg();
    const { steps, key } = await setup(org);
    const a = await steps.workspace("a");
    const inA = await steps.key({ workspace_id: a.id });
    assert.equal((await currentKey(server, key.secret)).status, 200);
    assert.equal((await currentKey(server, inA.secret)).status, 200);
    // Authentication is cached too: warm it on a management route (403 for an inference key).
    for (const k of [key, inA])
      assert.equal((await clientFor(server, k.secret).get("/api/v1/guardrails")).status, 403);
    await steps.deleted("/api/v1/members/m");
    await assertRevoked(key.secret);
    assert.equal((await currentKey(server, inA.secret)).status, 200);
    await steps.deleted(`/api/v1/workspaces/${a.id}`);
    await assertRevoked(inA.secret);
  });

  it("another organization's changes leave a key's policy as it was (docs/behaviour.md#organizations)", async () => {
    const { steps, key, regions } = await setup(await server.newOrg());
    const g = await steps.guardrail({ allowed_data_regions: ["us"] });
    await steps.assignKeys(g.id, [key.hash]);
    assert.deepEqual(await regions(), ["us"]);
    const stranger = orgSteps(server, await server.newOrg());
    assert.equal(
      (await stranger.api.patch(`/api/v1/guardrails/${g.id}`, { allowed_data_regions: ["europe"] })).status,
      404,
    );
    assert.equal((await stranger.api.delete(`/api/v1/keys/${key.hash}`)).status, 404);
    assert.deepEqual(await regions(), ["us"]);
  });
});
