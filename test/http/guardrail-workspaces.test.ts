import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { clientFor, startTestServer, type TestOrg, type TestServer } from "../helpers/server.js";
import {
  assertInvalid,
  createGuardrail,
  defaultFields,
  getGuardrail,
  ISO_UTC,
  issueText,
  listGuardrails,
} from "./guardrail-support.js";

describe("guardrails and workspaces: workspace_id on create, the workspace default guardrail (docs/behaviour.md#create-workspace; docs/behaviour.md#workspace-default)", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });

  /** A create with this body is a 400 naming `path`; the organization still has no guardrail. */
  async function assertCreateRefused(body: Record<string, unknown>, path: string) {
    const org = await server.newOrg();
    assertInvalid(await clientFor(server, org.key).post("/api/v1/guardrails", body), path);
    assert.deepEqual(await listGuardrails(server, org.key), [], "nothing is stored");
  }

  async function defaultGuardrailId(org: TestOrg, workspaceId: string): Promise<string> {
    const res = await clientFor(server, org.key).get(`/api/v1/workspaces/${workspaceId}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.data.default_guardrail_id;
  }

  async function assertNotMaterialized(org: TestOrg, workspaceId: string, id: string) {
    const got = await clientFor(server, org.key).get(`/api/v1/guardrails/${id}`);
    assert.equal(got.status, 404);
    assert.equal(got.body.error.message, "Resource not found");
    const ids = (await listGuardrails(server, org.key, workspaceId)).map((g) => g.id);
    assert.ok(!ids.includes(id), "absent from the list");
  }

  it("every workspace names a default_guardrail_id, a UUIDv5, distinct per workspace, stable across reads (docs/behaviour.md#workspace-default)", async () => {
    const org = await server.newOrg();
    const api = clientFor(server, org.key);
    const second = await api.post("/api/v1/workspaces", { name: "second" });
    assert.equal(second.status, 201);
    const a = await defaultGuardrailId(org, org.workspaceId);
    const b = await defaultGuardrailId(org, second.body.data.id);
    assert.match(a, /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.match(b, /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.notEqual(a, b);
    assert.equal(second.body.data.default_guardrail_id, b);
    assert.equal(await defaultGuardrailId(org, org.workspaceId), a);
  });

  it("before it is first written, GET is 404 and the list does not show it (docs/behaviour.md#workspace-default)", async () => {
    const org = await server.newOrg();
    const id = await defaultGuardrailId(org, org.workspaceId);
    await assertNotMaterialized(org, org.workspaceId, id);
  });

  it('the first PATCH materializes it: 200 with the fixed name "Workspace <id> Default", the patch applied, defaults elsewhere (docs/behaviour.md#workspace-default)', async () => {
    const org = await server.newOrg();
    const id = await defaultGuardrailId(org, org.workspaceId);
    const res = await clientFor(server, org.key).patch(`/api/v1/guardrails/${id}`, {
      allowed_data_regions: ["europe"],
      enforce_zdr_other: true,
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.ok(res.headers.get("etag"));
    const data = res.body.data;
    assert.match(data.created_at, ISO_UTC);
    assert.match(data.updated_at, ISO_UTC);
    assert.deepEqual(
      { ...data, created_at: null, updated_at: null },
      {
        ...defaultFields(),
        id,
        name: `Workspace ${org.workspaceId} Default`,
        workspace_id: org.workspaceId,
        created_at: null,
        updated_at: null,
        allowed_data_regions: ["europe"],
        enforce_zdr_other: true,
      },
    );
    assert.deepEqual(await getGuardrail(server, org.key, id), data);
    const listed = await listGuardrails(server, org.key, org.workspaceId);
    assert.deepEqual(
      listed.map((g) => g.id),
      [id],
    );
  });

  it("a non-default workspace's default guardrail materializes the same way, in that workspace (docs/behaviour.md#workspace-default)", async () => {
    const org = await server.newOrg();
    const api = clientFor(server, org.key);
    const ws = (await api.post("/api/v1/workspaces", { name: "team" })).body.data;
    await assertNotMaterialized(org, ws.id, ws.default_guardrail_id);
    const res = await api.patch(`/api/v1/guardrails/${ws.default_guardrail_id}`, {
      limit_usd: 50,
      reset_interval: "daily",
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.data.workspace_id, ws.id);
    assert.equal(res.body.data.name, `Workspace ${ws.id} Default`);
    assert.deepEqual([res.body.data.limit_usd, res.body.data.reset_interval], [50, "daily"]);
    assert.deepEqual(
      (await listGuardrails(server, org.key, ws.id)).map((g) => g.id),
      [ws.default_guardrail_id],
    );
    assert.deepEqual(await listGuardrails(server, org.key), [], "not in the default workspace's list");
  });

  it("a PATCH that changes its name is 400 naming /name, before and after materialization; nothing changes (docs/behaviour.md#workspace-default)", async () => {
    const org = await server.newOrg();
    const api = clientFor(server, org.key);
    const id = await defaultGuardrailId(org, org.workspaceId);
    const before = await api.patch(`/api/v1/guardrails/${id}`, { name: "Mine", description: "x" });
    assertInvalid(before, "/name");
    await assertNotMaterialized(org, org.workspaceId, id);

    const made = await api.patch(`/api/v1/guardrails/${id}`, { description: "first" });
    assert.equal(made.status, 200);
    const renamed = await api.patch(`/api/v1/guardrails/${id}`, { name: "Mine" });
    assertInvalid(renamed, "/name");
    assert.deepEqual(await getGuardrail(server, org.key, id), made.body.data);
  });

  it("a PATCH that sends its own name unchanged is 200 (docs/behaviour.md#workspace-default)", async () => {
    const org = await server.newOrg();
    const api = clientFor(server, org.key);
    const id = await defaultGuardrailId(org, org.workspaceId);
    const name = `Workspace ${org.workspaceId} Default`;
    const first = await api.patch(`/api/v1/guardrails/${id}`, { name });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(first.body.data.name, name);
    const again = await api.patch(`/api/v1/guardrails/${id}`, { name, description: "kept name" });
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.equal(again.body.data.description, "kept name");
    assert.equal(again.body.data.name, name);
  });

  it("later PATCHes update it like any guardrail: created_at stays, updated_at moves on (docs/behaviour.md#partial-update)", async () => {
    const org = await server.newOrg();
    const api = clientFor(server, org.key);
    const id = await defaultGuardrailId(org, org.workspaceId);
    const first = await api.patch(`/api/v1/guardrails/${id}`, { allowed_providers: ["openai"] });
    assert.equal(first.status, 200);
    const second = await api.patch(`/api/v1/guardrails/${id}`, { allowed_providers: null, description: "d" });
    assert.equal(second.status, 200, JSON.stringify(second.body));
    assert.equal(second.body.data.created_at, first.body.data.created_at);
    assert.ok(Date.parse(second.body.data.updated_at) >= Date.parse(first.body.data.updated_at));
    assert.deepEqual(
      { ...second.body.data, updated_at: null },
      { ...first.body.data, allowed_providers: null, description: "d", updated_at: null },
    );
    assert.notEqual(second.headers.get("etag"), first.headers.get("etag"));
  });

  it("another organization's workspace default id is 404 on PATCH and stays unmaterialized (docs/behaviour.md#organizations; docs/behaviour.md#workspace-default)", async () => {
    const org = await server.newOrg();
    const other = await server.newOrg();
    const theirs = await defaultGuardrailId(other, other.workspaceId);
    const res = await clientFor(server, org.key).patch(`/api/v1/guardrails/${theirs}`, { description: "x" });
    assert.equal(res.status, 404);
    assert.equal(res.body.error.message, "Resource not found");
    await assertNotMaterialized(other, other.workspaceId, theirs);
  });

  it("an invalid first PATCH is 400 and does not materialize it (docs/behaviour.md#guardrail-fields; docs/behaviour.md#workspace-default)", async () => {
    const org = await server.newOrg();
    const api = clientFor(server, org.key);
    const id = await defaultGuardrailId(org, org.workspaceId);
    assertInvalid(await api.patch(`/api/v1/guardrails/${id}`, { limit_usd: 5 }), "/reset_interval");
    assertInvalid(await api.patch(`/api/v1/guardrails/${id}`, { allowed_models: [] }), "/allowed_models");
    await assertNotMaterialized(org, org.workspaceId, id);
  });

  it("workspace_id places the guardrail; omitted, it is the default workspace (docs/behaviour.md#create-workspace)", async () => {
    const org = await server.newOrg();
    const api = clientFor(server, org.key);
    const ws = await api.post("/api/v1/workspaces", { name: "second" });
    assert.equal(ws.status, 201);
    const inDefault = await createGuardrail(server, org.key, { name: "default" });
    assert.equal(inDefault.body.data.workspace_id, org.workspaceId);
    const inSecond = await createGuardrail(server, org.key, {
      name: "second",
      workspace_id: ws.body.data.id,
    });
    assert.equal(inSecond.body.data.workspace_id, ws.body.data.id);
    const ids = (list: Record<string, unknown>[]) => list.map((g) => g.id);
    assert.deepEqual(ids(await listGuardrails(server, org.key)), [inDefault.body.data.id]);
    assert.deepEqual(ids(await listGuardrails(server, org.key, ws.body.data.id)), [inSecond.body.data.id]);
  });

  it("a workspace_id of another organization, unknown or not a UUID is 400; nothing is stored (docs/behaviour.md#organizations; docs/behaviour.md#create-workspace)", async () => {
    const other = await server.newOrg();
    for (const workspace_id of [other.workspaceId, "7d4f2a4c-1111-4222-8333-944455556666", "not-a-uuid"]) {
      await assertCreateRefused({ name: "w", workspace_id }, "/workspace_id");
    }
    assert.deepEqual(await listGuardrails(server, other.key), [], "the other organization got nothing");
  });

  it("after the default workspace is deleted, a create without workspace_id is 400 asking for it; with one it is 201 (docs/behaviour.md#create-workspace)", async () => {
    const org = await server.newOrg();
    const api = clientFor(server, org.key);
    // Creates in the default workspace first: an instance that remembers it must not use it once gone.
    for (const name of ["first in the default", "second in the default"]) {
      const made = await createGuardrail(server, org.key, { name });
      assert.equal(made.body.data.workspace_id, org.workspaceId);
    }
    const ws = await api.post("/api/v1/workspaces", { name: "remaining" });
    assert.equal(ws.status, 201);
    const deleted = await api.delete(`/api/v1/workspaces/${org.workspaceId}`);
    assert.equal(deleted.status, 200);
    const refused = await api.post("/api/v1/guardrails", { name: "where?" });
    assertInvalid(refused, "/workspace_id");
    assert.match(issueText(refused, "/workspace_id"), /workspace_id/);
    assert.deepEqual(await listGuardrails(server, org.key, ws.body.data.id), []);
    const made = await createGuardrail(server, org.key, { name: "here", workspace_id: ws.body.data.id });
    assert.equal(made.body.data.workspace_id, ws.body.data.id);
  });
});
