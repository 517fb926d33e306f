import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type RouteUnderTest, standardAuthCases } from "../helpers/auth-cases.js";
import { startTestServer, type TestOrg, type TestServer } from "../helpers/server.js";
import { assertInvalid, ISO, orgSteps, sha256, UUID } from "./org-support.js";

interface Entry {
  id: string;
  action: string;
  resource_type: string;
  resource_id: string;
  actor_key_hash: string;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  created_at: string;
}

describe("the audit log (docs/behaviour.md#audit-log)", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });

  /** Where each organization's own changes begin: after the entries of its creation. */
  const changesSince = new Map<string, string>();

  async function auditLog(org: TestOrg, query = ""): Promise<{ data: Entry[]; total_count: number }> {
    const since = changesSince.get(org.organizationId);
    const narrowed = since ? `${query}${query ? "&" : "?"}since=${encodeURIComponent(since)}` : query;
    const res = await orgSteps(server, org).api.get(`/api/v1/audit-log${narrowed}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(Object.keys(res.body).sort(), ["data", "total_count"]);
    return res.body;
  }

  /**
   * A new organization whose log, as auditLog reads it, starts empty: its creation's two entries
   * (organization.create and its first key's key.create, by `system`; docs/behaviour.md#audit-log)
   * are checked here and left out of what the tests read after.
   */
  async function newOrg(): Promise<TestOrg> {
    const org = await server.newOrg();
    const creation = await auditLog(org);
    assert.deepEqual(
      creation.data.map((e) => [e.action, e.resource_type, e.actor_key_hash]),
      [
        ["key.create", "key", "system"],
        ["organization.create", "organization", "system"],
      ],
    );
    const last = Date.parse(creation.data[0]?.created_at ?? "");
    // Every later change is stamped after the creation: wait out the millisecond it shares.
    while (Date.now() <= last) await new Promise((resolve) => setImmediate(resolve));
    changesSince.set(org.organizationId, new Date(last + 1).toISOString());
    return org;
  }

  it("a guardrail create is one entry: action, resource, the acting key's SHA-256, before null, after the guardrail (docs/behaviour.md#audit-log)", async () => {
    const org = await newOrg();
    assert.deepEqual(await auditLog(org), { data: [], total_count: 0 });
    const g = await orgSteps(server, org).guardrail({ name: "audited", allowed_data_regions: ["us"] });
    const log = await auditLog(org);
    assert.equal(log.total_count, 1);
    const [entry] = log.data;
    assert.ok(entry);
    assert.deepEqual(Object.keys(entry).sort(), [
      "action",
      "actor_key_hash",
      "after",
      "before",
      "created_at",
      "id",
      "resource_id",
      "resource_type",
    ]);
    assert.match(entry.id, UUID);
    assert.equal(entry.action, "guardrail.create");
    assert.equal(entry.resource_type, "guardrail");
    assert.equal(entry.resource_id, g.id);
    assert.equal(entry.actor_key_hash, sha256(org.key));
    assert.equal(entry.before, null);
    assert.deepEqual(entry.after, g);
    assert.match(entry.created_at, ISO);
  });

  it("every management change is recorded, newest first, with its resource and the acting key (docs/behaviour.md#audit-log)", async () => {
    const org = await newOrg();
    const steps = orgSteps(server, org);
    const ws = await steps.workspace("audited");
    await steps.member("m", { workspace_ids: [ws.id] });
    const key = await steps.key({ member_user_id: "m" });
    const g = await steps.guardrail();
    await steps.patchGuardrail(g.id, { description: "changed" });
    await steps.assignKeys(g.id, [key.hash]);
    await steps.unassignKeys(g.id, [key.hash]);
    await steps.assignMembers(g.id, ["m"]);
    await steps.unassignMembers(g.id, ["m"]);
    assert.equal((await steps.api.patch("/api/v1/members/m", { name: "Em" })).status, 200);
    await steps.deleted(`/api/v1/keys/${key.hash}`);
    await steps.deleted(`/api/v1/guardrails/${g.id}`);
    await steps.deleted("/api/v1/members/m");
    await steps.deleted(`/api/v1/workspaces/${ws.id}`);
    const expected: [string, string, string][] = [
      ["workspace.create", "workspace", ws.id],
      ["member.create", "member", "m"],
      ["key.create", "key", key.hash],
      ["guardrail.create", "guardrail", g.id],
      ["guardrail.update", "guardrail", g.id],
      ["guardrail.assign_keys", "guardrail", g.id],
      ["guardrail.unassign_keys", "guardrail", g.id],
      ["guardrail.assign_members", "guardrail", g.id],
      ["guardrail.unassign_members", "guardrail", g.id],
      ["member.update", "member", "m"],
      ["key.delete", "key", key.hash],
      ["guardrail.delete", "guardrail", g.id],
      ["member.delete", "member", "m"],
      ["workspace.delete", "workspace", ws.id],
    ];
    const log = await auditLog(org, "?limit=100");
    assert.equal(log.total_count, expected.length);
    assert.deepEqual(
      log.data.map((e) => [e.action, e.resource_type, e.resource_id]),
      expected.reverse(),
    );
    for (const e of log.data) {
      assert.equal(e.actor_key_hash, sha256(org.key), e.action);
      assert.match(e.created_at, ISO);
    }
    const times = log.data.map((e) => e.created_at);
    assert.deepEqual([...times].sort().reverse(), times, "newest first");
    // No secret is ever written to the log.
    assert.ok(!JSON.stringify(log).includes(key.secret));
    assert.ok(!JSON.stringify(log).includes(org.key));
  });

  it("before and after hold the values around each change: update, delete, member update (docs/behaviour.md#audit-log)", async () => {
    const org = await newOrg();
    const steps = orgSteps(server, org);
    const created = await steps.guardrail({ name: "v1" });
    const updated = await steps.patchGuardrail(created.id, {
      name: "v2",
      limit_usd: 3,
      reset_interval: "daily",
    });
    await steps.deleted(`/api/v1/guardrails/${created.id}`);
    const m = await steps.member("m", { name: "Old" });
    const m2 = (await steps.api.patch("/api/v1/members/m", { name: "New" })).body.data;
    const key = await steps.key();
    await steps.deleted(`/api/v1/keys/${key.hash}`);
    await steps.deleted("/api/v1/members/m");
    const log = await auditLog(org);
    const byAction = new Map(log.data.map((e) => [e.action, e]));
    // An update records the properties it changed (implementation choice), with their values around it.
    const changed = ["limit_usd", "name", "reset_interval", "updated_at"];
    const pick = (o: Record<string, unknown>) => Object.fromEntries(changed.map((k) => [k, o[k]]));
    assert.deepEqual(byAction.get("guardrail.update")?.before, pick(created));
    assert.deepEqual(byAction.get("guardrail.update")?.after, pick(updated));
    assert.deepEqual(byAction.get("guardrail.delete")?.before, updated);
    assert.equal(byAction.get("guardrail.delete")?.after, null);
    // The member as stored: the spend a member object carries is read, not changed, so not audited.
    const stored = ({
      user_id,
      organization_id,
      name,
      email,
      workspace_ids,
      created_at,
      updated_at,
    }: typeof m) => ({
      user_id,
      organization_id,
      name,
      email,
      workspace_ids,
      created_at,
      updated_at,
    });
    assert.deepEqual(byAction.get("member.create")?.after, stored(m));
    assert.deepEqual(byAction.get("member.update")?.before, stored(m));
    assert.deepEqual(byAction.get("member.update")?.after, stored(m2));
    assert.equal(byAction.get("member.delete")?.before?.user_id, "m");
    assert.equal(byAction.get("member.delete")?.after, null);
    assert.equal(byAction.get("key.create")?.before, null);
    assert.equal(byAction.get("key.create")?.after?.hash, key.hash);
    assert.equal(byAction.get("key.delete")?.before?.hash, key.hash);
    assert.equal(byAction.get("key.delete")?.after, null);
  });

  it("materializing the workspace default guardrail is recorded with before null (docs/behaviour.md#audit-log; docs/behaviour.md#workspace-default)", async () => {
    const org = await newOrg();
    const steps = orgSteps(server, org);
    const ws = (await steps.api.get(`/api/v1/workspaces/${org.workspaceId}`)).body.data;
    const g = await steps.patchGuardrail(ws.default_guardrail_id, { allowed_data_regions: ["europe"] });
    const [entry] = (await auditLog(org)).data;
    assert.equal(entry?.resource_id, ws.default_guardrail_id);
    assert.equal(entry?.before, null);
    assert.deepEqual(entry?.after, g);
  });

  it("resource_id filters the log; offset and limit page it; total_count is the filtered count (docs/behaviour.md#audit-log)", async () => {
    const org = await newOrg();
    const steps = orgSteps(server, org);
    const g = await steps.guardrail({ name: "n0" });
    for (let i = 1; i <= 4; i++) await steps.patchGuardrail(g.id, { name: `n${i}` });
    const other = await steps.guardrail();
    const filtered = await auditLog(org, `?resource_id=${g.id}`);
    assert.equal(filtered.total_count, 5);
    assert.deepEqual(
      filtered.data.map((e) => e.after?.name),
      ["n4", "n3", "n2", "n1", "n0"],
    );
    const page = await auditLog(org, `?resource_id=${g.id}&offset=1&limit=2`);
    assert.equal(page.total_count, 5);
    assert.deepEqual(
      page.data.map((e) => e.after?.name),
      ["n3", "n2"],
    );
    assert.equal((await auditLog(org, "?limit=1")).data[0]?.resource_id, other.id);
    assert.equal((await auditLog(org)).total_count, 6);
    assert.deepEqual(await auditLog(org, "?resource_id=nothing"), { data: [], total_count: 0 });
    for (const query of ["?limit=0", "?limit=101", "?offset=-1", "?action=x"]) {
      assert.equal((await steps.api.get(`/api/v1/audit-log${query}`)).status, 400, query);
    }
  });

  it("a change that fails leaves no entry: 400s from validation and from the rules, 404, 409 (docs/behaviour.md#audit-log)", async () => {
    const org = await newOrg();
    const steps = orgSteps(server, org);
    const a = await steps.workspace("a");
    const ws = (await steps.api.get(`/api/v1/workspaces/${org.workspaceId}`)).body.data;
    await steps.member("owner", { workspace_ids: [a.id] });
    const inA = await steps.key({ workspace_id: a.id, member_user_id: "owner" });
    const g = await steps.guardrail();
    await steps.patchGuardrail(ws.default_guardrail_id, { description: "materialized" });
    const before = await auditLog(org, "?limit=100");
    const api = steps.api;
    assertInvalid(await api.post("/api/v1/guardrails", { name: "" }), "/name");
    assertInvalid(
      await api.patch(`/api/v1/guardrails/${ws.default_guardrail_id}`, { name: "renamed" }),
      "/name",
    );
    assertInvalid(
      await api.post(`/api/v1/guardrails/${g.id}/assignments/keys`, { key_hashes: [inA.hash] }),
      "/key_hashes/0",
    );
    assertInvalid(
      await api.post(`/api/v1/guardrails/${ws.default_guardrail_id}/assignments/members`, {
        member_user_ids: ["owner"],
      }),
      "/id",
    );
    assertInvalid(await api.patch("/api/v1/members/owner", { workspace_ids: [] }), "/workspace_ids");
    assertInvalid(await api.post("/api/v1/members", { user_id: "owner" }), "/user_id");
    assertInvalid(await api.post("/api/v1/keys", { name: "k", member_user_id: "nobody" }), "/member_user_id");
    const stale = await api.patch(
      `/api/v1/guardrails/${g.id}`,
      { name: "y" },
      { headers: { "if-match": '"stale"' } },
    );
    assert.equal(stale.status, 409, JSON.stringify(stale.body));
    assert.equal((await api.delete("/api/v1/members/nobody")).status, 404);
    assert.equal((await api.delete(`/api/v1/guardrails/${crypto.randomUUID()}`)).status, 404);
    assert.deepEqual(await auditLog(org, "?limit=100"), before);
  });

  it("organizations do not see each other's entries, not even by resource_id (docs/behaviour.md#organizations)", async () => {
    const one = await newOrg();
    const two = await newOrg();
    const g = await orgSteps(server, one).guardrail();
    await orgSteps(server, two).guardrail();
    const theirs = await auditLog(two);
    assert.equal(theirs.total_count, 1);
    assert.ok(theirs.data.every((e) => e.actor_key_hash === sha256(two.key)));
    assert.deepEqual(await auditLog(two, `?resource_id=${g.id}`), { data: [], total_count: 0 });
    assert.equal((await auditLog(one, `?resource_id=${g.id}`)).total_count, 1);
  });
});

describe("the audit log: authentication (docs/behaviour.md#authentication)", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });
  const route: RouteUnderTest = { method: "GET", path: () => "/api/v1/audit-log" };
  describe("GET /api/v1/audit-log", () => {
    standardAuthCases(() => server, route);
  });
});

describe("the audit log's filters by actor, resource type and time (docs/api.md#audit-log-get-apiv1audit-log)", () => {
  let server: TestServer;
  let clock = new Date("2026-03-01T10:00:00.000Z");
  before(async () => {
    server = await startTestServer({ now: () => clock });
  });
  after(async () => {
    await server.close();
  });

  it("since is included and until excluded, on the UTC instant whatever the offset written; resource_type and actor_key_hash narrow the same list (docs/api.md#audit-log-get-apiv1audit-log)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const get = async (query: string) => {
      const res = await steps.api.get(`/api/v1/audit-log${query}`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body as { data: Entry[]; total_count: number };
    };
    clock = new Date("2026-03-01T10:00:00.000Z");
    await steps.guardrail({ name: "at ten" });
    clock = new Date("2026-03-01T11:00:00.000Z");
    await steps.key();
    clock = new Date("2026-03-01T12:00:00.000Z");
    await steps.guardrail({ name: "at noon" });

    const window = await get(
      `?since=${encodeURIComponent("2026-03-01T11:00:00Z")}&until=2026-03-01T12:00:00Z`,
    );
    assert.deepEqual(
      window.data.map((e) => e.resource_type),
      ["key"],
    );
    // 13:00 at +02:00 is 11:00 UTC: the same instant as above, written another way.
    const offset = await get(`?since=${encodeURIComponent("2026-03-01T13:00:00+02:00")}`);
    assert.deepEqual(
      offset.data.map((e) => e.created_at),
      ["2026-03-01T12:00:00.000Z", "2026-03-01T11:00:00.000Z"],
    );
    const guardrails = await get("?resource_type=guardrail");
    assert.equal(guardrails.total_count, 2);
    assert.deepEqual(
      guardrails.data.map((e) => e.after?.name),
      ["at noon", "at ten"],
    );
    assert.equal((await get(`?actor_key_hash=${sha256(org.key)}`)).total_count, 3);
    assert.deepEqual(await get("?actor_key_hash=cli"), { data: [], total_count: 0 });
    assertInvalid(await steps.api.get("/api/v1/audit-log?since=yesterday"), "/since");
    assertInvalid(await steps.api.get("/api/v1/audit-log?until=2026-13-01T00:00:00Z"), "/until");
  });
});
