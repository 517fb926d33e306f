import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type RouteUnderTest, standardAuthCases } from "../helpers/auth-cases.js";
import { startTestServer, type TestOrg, type TestServer } from "../helpers/server.js";
import { assertInvalid, assertNotFound, ISO, orgSteps, sha256, UNKNOWN_UUID, UUID } from "./org-support.js";

const KEY_ASSIGNMENT_FIELDS = [
  "assigned_by",
  "created_at",
  "guardrail_id",
  "id",
  "key_hash",
  "key_label",
  "key_name",
];

describe("key assignments (docs/behaviour.md#key-assignments)", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });

  it("assigning answers {assigned_count}; the guardrail's list and the list of all show the SDK's KeyAssignment (docs/behaviour.md#assignment-lists)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const g = await steps.guardrail();
    const k1 = await steps.key({ name: "first" });
    const k2 = await steps.key({ name: "second" });
    const res = await steps.api.post(`/api/v1/guardrails/${g.id}/assignments/keys`, {
      key_hashes: [k1.hash, k2.hash],
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body, { assigned_count: 2 });
    const list = await steps.api.get(`/api/v1/guardrails/${g.id}/assignments/keys`);
    assert.equal(list.status, 200);
    assert.equal(list.body.total_count, 2);
    const byHash = new Map(list.body.data.map((a: { key_hash: string }) => [a.key_hash, a]));
    for (const k of [k1, k2]) {
      const a = byHash.get(k.hash) as Record<string, unknown>;
      assert.deepEqual(Object.keys(a).sort(), KEY_ASSIGNMENT_FIELDS);
      assert.match(a.id as string, UUID);
      assert.equal(a.guardrail_id, g.id);
      assert.equal(a.key_name, k.name);
      assert.equal(a.key_label, k.label);
      assert.equal(a.assigned_by, sha256(org.key));
      assert.match(a.created_at as string, ISO);
    }
    assert.deepEqual(await steps.list("/api/v1/guardrails/assignments/keys"), list.body);
  });

  it("re-assigning the same pair counts 0 and keeps the assignment; a hash twice in one request counts once (docs/behaviour.md#assignment-counts)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const g = await steps.guardrail();
    const k = await steps.key();
    assert.equal(await steps.assignKeys(g.id, [k.hash, k.hash]), 1);
    const before = await steps.list(`/api/v1/guardrails/${g.id}/assignments/keys`);
    assert.equal(await steps.assignKeys(g.id, [k.hash]), 0);
    assert.deepEqual(await steps.list(`/api/v1/guardrails/${g.id}/assignments/keys`), before);
  });

  it("unknown hashes, another organization's key and a management key's hash are skipped and not counted (docs/behaviour.md#assignment-counts; docs/behaviour.md#organizations)", async () => {
    const org = await server.newOrg();
    const stranger = await server.newOrg();
    const steps = orgSteps(server, org);
    const foreign = await orgSteps(server, stranger).key();
    const g = await steps.guardrail();
    const k = await steps.key();
    const count = await steps.assignKeys(g.id, ["f".repeat(64), foreign.hash, sha256(org.key), k.hash, "x"]);
    assert.equal(count, 1);
    const list = await steps.list("/api/v1/guardrails/assignments/keys");
    assert.deepEqual(
      list.data.map((a) => a.key_hash),
      [k.hash],
    );
    assert.equal(
      (await orgSteps(server, stranger).list("/api/v1/guardrails/assignments/keys")).total_count,
      0,
    );
  });

  it("a key holds one guardrail: assigning it to another one moves it and counts 1 (docs/behaviour.md#assignment-counts)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const g1 = await steps.guardrail({ name: "one" });
    const g2 = await steps.guardrail({ name: "two" });
    const k = await steps.key();
    assert.equal(await steps.assignKeys(g1.id, [k.hash]), 1);
    assert.equal(await steps.assignKeys(g2.id, [k.hash]), 1);
    assert.deepEqual(await steps.list(`/api/v1/guardrails/${g1.id}/assignments/keys`), {
      data: [],
      total_count: 0,
    });
    const all = await steps.list("/api/v1/guardrails/assignments/keys");
    assert.equal(all.total_count, 1);
    assert.equal(all.data[0]?.guardrail_id, g2.id);
    assert.equal(all.data[0]?.key_hash, k.hash);
  });

  it("concurrent assignments of one key to several guardrails leave it with exactly one (docs/behaviour.md#key-assignments)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const k = await steps.key();
    const gs = [
      await steps.guardrail(),
      await steps.guardrail(),
      await steps.guardrail(),
      await steps.guardrail(),
    ];
    const results = await Promise.all(
      gs.map((g) => steps.api.post(`/api/v1/guardrails/${g.id}/assignments/keys`, { key_hashes: [k.hash] })),
    );
    for (const res of results) assert.deepEqual([res.status, res.body], [200, { assigned_count: 1 }]);
    const all = await steps.list("/api/v1/guardrails/assignments/keys");
    assert.equal(all.total_count, 1);
    assert.ok(gs.some((g) => g.id === all.data[0]?.guardrail_id));
  });

  it("a key of another workspace is 400 naming /key_hashes/<i>, and nothing of the request is stored (docs/behaviour.md#assignment-counts)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const ws = await steps.workspace();
    const g = await steps.guardrail();
    const home = await steps.key();
    const away = await steps.key({ workspace_id: ws.id });
    const before = await steps.assignmentState();
    assertInvalid(
      await steps.api.post(`/api/v1/guardrails/${g.id}/assignments/keys`, {
        key_hashes: [home.hash, away.hash],
      }),
      "/key_hashes/1",
    );
    assert.deepEqual(await steps.assignmentState(), before);
    assert.equal(before.keys.total_count, 0);
  });

  it("the workspace default guardrail cannot be assigned: 400 once materialized, 404 before (docs/behaviour.md#workspace-default)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const ws = (await steps.api.get(`/api/v1/workspaces/${org.workspaceId}`)).body.data;
    const k = await steps.key();
    await steps.member("m");
    const keysPath = `/api/v1/guardrails/${ws.default_guardrail_id}/assignments/keys`;
    const membersPath = `/api/v1/guardrails/${ws.default_guardrail_id}/assignments/members`;
    assertNotFound(await steps.api.post(keysPath, { key_hashes: [k.hash] }));
    assertNotFound(await steps.api.post(membersPath, { member_user_ids: ["m"] }));
    await steps.patchGuardrail(ws.default_guardrail_id, { allowed_data_regions: ["europe"] });
    assertInvalid(await steps.api.post(keysPath, { key_hashes: [k.hash] }), "/id");
    assertInvalid(await steps.api.post(membersPath, { member_user_ids: ["m"] }), "/id");
    const state = await steps.assignmentState();
    assert.equal(state.keys.total_count + state.members.total_count, 0);
  });

  it("an unknown, malformed or foreign guardrail id is 404 on every per-guardrail route (docs/behaviour.md#guardrail-lifecycle; docs/behaviour.md#organizations)", async () => {
    const org = await server.newOrg();
    const stranger = orgSteps(server, await server.newOrg());
    const foreign = await stranger.guardrail();
    const foreignKey = await stranger.key();
    await stranger.assignKeys(foreign.id, [foreignKey.hash]);
    const steps = orgSteps(server, org);
    const k = await steps.key();
    await steps.member("m");
    for (const id of [UNKNOWN_UUID, "not-a-uuid", foreign.id]) {
      const base = `/api/v1/guardrails/${id}/assignments`;
      assertNotFound(await steps.api.post(`${base}/keys`, { key_hashes: [k.hash] }));
      assertNotFound(await steps.api.post(`${base}/keys/remove`, { key_hashes: [foreignKey.hash] }));
      assertNotFound(await steps.api.get(`${base}/keys`));
      assertNotFound(await steps.api.post(`${base}/members`, { member_user_ids: ["m"] }));
      assertNotFound(await steps.api.post(`${base}/members/remove`, { member_user_ids: ["m"] }));
      assertNotFound(await steps.api.get(`${base}/members`));
    }
    assert.equal((await stranger.list(`/api/v1/guardrails/${foreign.id}/assignments/keys`)).total_count, 1);
  });

  it("unassigning answers {unassigned_count}: only pairs of this guardrail count; others stay (docs/behaviour.md#assignment-counts)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const g1 = await steps.guardrail();
    const g2 = await steps.guardrail();
    const [a, b, c] = [await steps.key(), await steps.key(), await steps.key()];
    await steps.assignKeys(g1.id, [a.hash, b.hash]);
    await steps.assignKeys(g2.id, [c.hash]);
    const res = await steps.api.post(`/api/v1/guardrails/${g1.id}/assignments/keys/remove`, {
      key_hashes: [a.hash, c.hash, "f".repeat(64)],
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body, { unassigned_count: 1 });
    const all = await steps.list("/api/v1/guardrails/assignments/keys");
    assert.deepEqual(
      all.data.map((x) => [x.key_hash, x.guardrail_id]).sort(),
      [
        [b.hash, g1.id],
        [c.hash, g2.id],
      ].sort(),
    );
    assert.equal(await steps.unassignKeys(g1.id, [a.hash]), 0);
  });

  it("malformed assignment bodies are 400 naming the property and store nothing (docs/behaviour.md#invalid-request)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const g = await steps.guardrail();
    const k = await steps.key();
    const cases: [string, unknown, string][] = [
      ["keys", {}, "/key_hashes"],
      ["keys", { key_hashes: [] }, "/key_hashes"],
      ["keys", { key_hashes: k.hash }, "/key_hashes"],
      ["keys", { key_hashes: [5] }, "/key_hashes/0"],
      ["keys", { key_hashes: [k.hash], guardrail_id: g.id }, "/guardrail_id"],
      ["keys/remove", { key_hashes: [] }, "/key_hashes"],
      ["members", { member_user_ids: [] }, "/member_user_ids"],
      ["members", { key_hashes: [k.hash] }, "/member_user_ids"],
      ["members/remove", { member_user_ids: [""] }, "/member_user_ids/0"],
    ];
    for (const [route, body, path] of cases) {
      assertInvalid(await steps.api.post(`/api/v1/guardrails/${g.id}/assignments/${route}`, body), path);
    }
    const state = await steps.assignmentState();
    assert.equal(state.keys.total_count + state.members.total_count, 0);
  });

  it("the key assignment lists page with offset and limit in assignment order; total_count is the whole count (docs/behaviour.md#assignment-lists)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const g = await steps.guardrail();
    const other = await steps.guardrail();
    const hashes: string[] = [];
    for (let i = 0; i < 5; i++) {
      const k = await steps.key({ name: `k${i}` });
      await steps.assignKeys(g.id, [k.hash]);
      hashes.push(k.hash);
    }
    await steps.assignKeys(other.id, [(await steps.key()).hash]);
    const cases: [string, string[]][] = [
      ["?limit=2", hashes.slice(0, 2)],
      ["?offset=2&limit=2", hashes.slice(2, 4)],
      ["?offset=4", hashes.slice(4)],
      ["?offset=9", []],
    ];
    for (const [query, expected] of cases) {
      const res = await steps.api.get(`/api/v1/guardrails/${g.id}/assignments/keys${query}`);
      assert.equal(res.status, 200, query);
      assert.equal(res.body.total_count, 5, query);
      assert.deepEqual(
        res.body.data.map((a: { key_hash: string }) => a.key_hash),
        expected,
        query,
      );
    }
    const all = await steps.api.get("/api/v1/guardrails/assignments/keys?limit=3");
    assert.equal(all.body.total_count, 6);
    assert.equal(all.body.data.length, 3);
    for (const query of ["?limit=0", "?limit=101", "?offset=-1", "?page=2"]) {
      assert.equal(
        (await steps.api.get(`/api/v1/guardrails/${g.id}/assignments/keys${query}`)).status,
        400,
        query,
      );
      assert.equal((await steps.api.get(`/api/v1/guardrails/assignments/keys${query}`)).status, 400, query);
    }
  });
});

describe("assignments: authentication of every route (docs/behaviour.md#authentication)", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });
  const guardrailBase = async (org: TestOrg) =>
    `/api/v1/guardrails/${(await orgSteps(server, org).guardrail()).id}/assignments`;
  const keys = { key_hashes: ["f".repeat(64)] };
  const members = { member_user_ids: ["m"] };
  const routes: [string, RouteUnderTest][] = [
    [
      "POST .../assignments/keys",
      { method: "POST", path: async (o) => `${await guardrailBase(o)}/keys`, body: keys },
    ],
    [
      "POST .../assignments/keys/remove",
      { method: "POST", path: async (o) => `${await guardrailBase(o)}/keys/remove`, body: keys },
    ],
    ["GET .../assignments/keys", { method: "GET", path: async (o) => `${await guardrailBase(o)}/keys` }],
    [
      "POST .../assignments/members",
      { method: "POST", path: async (o) => `${await guardrailBase(o)}/members`, body: members },
    ],
    [
      "POST .../assignments/members/remove",
      { method: "POST", path: async (o) => `${await guardrailBase(o)}/members/remove`, body: members },
    ],
    [
      "GET .../assignments/members",
      { method: "GET", path: async (o) => `${await guardrailBase(o)}/members` },
    ],
    [
      "GET /api/v1/guardrails/assignments/keys",
      { method: "GET", path: () => "/api/v1/guardrails/assignments/keys" },
    ],
    [
      "GET /api/v1/guardrails/assignments/members",
      { method: "GET", path: () => "/api/v1/guardrails/assignments/members" },
    ],
  ];
  for (const [label, route] of routes) {
    describe(label, () => {
      standardAuthCases(() => server, route);
    });
  }
});
