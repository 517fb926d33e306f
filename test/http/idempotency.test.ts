import assert from "node:assert/strict";
import { createHash, randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { clientFor, startTestServer, type TestOrg, type TestServer } from "../helpers/server.js";

/** The three creating routes that honour Idempotency-Key, each with how to count what it created. */
const ROUTES = [
  { path: "/api/v1/guardrails", body: { name: "idem" }, other: { name: "idem, changed" }, id: "id" },
  { path: "/api/v1/workspaces", body: { name: "idem" }, other: { name: "idem, changed" }, id: "id" },
  { path: "/api/v1/keys", body: { name: "idem" }, other: { name: "idem, changed" }, id: "hash" },
] as const;

describe("Idempotency-Key on creating requests", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });

  async function count(org: TestOrg, path: string): Promise<number> {
    const res = await clientFor(server, org.key).get(`${path}?limit=100`);
    assert.equal(res.status, 200);
    return res.body.total_count;
  }

  for (const route of ROUTES) {
    it(`POST ${route.path}: a retry with the same key and body replays the first 201 and creates nothing`, async () => {
      const org = await server.newOrg();
      const api = clientFor(server, org.key);
      const headers = { "idempotency-key": randomUUID() };
      const before = await count(org, route.path);
      const first = await api.post(route.path, route.body, { headers });
      assert.equal(first.status, 201, JSON.stringify(first.body));
      assert.equal(first.headers.get("idempotent-replayed"), null);
      const second = await api.post(route.path, route.body, { headers });
      assert.equal(second.status, 201);
      assert.equal(second.headers.get("idempotent-replayed"), "true");
      assert.deepEqual(second.body, first.body);
      assert.equal(second.body.data[route.id], first.body.data[route.id]);
      assert.equal(second.headers.get("location"), first.headers.get("location"));
      assert.equal(await count(org, route.path), before + 1);
    });

    it(`POST ${route.path}: the same key with another body is 400 and creates nothing`, async () => {
      const org = await server.newOrg();
      const api = clientFor(server, org.key);
      const headers = { "idempotency-key": randomUUID() };
      const first = await api.post(route.path, route.body, { headers });
      assert.equal(first.status, 201);
      const before = await count(org, route.path);
      const reused = await api.post(route.path, route.other, { headers });
      assert.equal(reused.status, 400);
      assert.equal(reused.body.error.code, 400);
      assert.equal(reused.body.error.message, "Invalid request parameters");
      assert.equal(reused.body.error.metadata.issues[0].path, "/headers/idempotency-key");
      assert.equal(await count(org, route.path), before);
      // The original request can still be replayed.
      const replay = await api.post(route.path, route.body, { headers });
      assert.deepEqual(replay.body, first.body);
    });

    it(`POST ${route.path}: the same key in another organization is independent`, async () => {
      const a = await server.newOrg();
      const b = await server.newOrg();
      const headers = { "idempotency-key": `shared-${randomUUID()}` };
      const before = await count(b, route.path);
      const fromA = await clientFor(server, a.key).post(route.path, route.body, { headers });
      const fromB = await clientFor(server, b.key).post(route.path, route.body, { headers });
      assert.equal(fromA.status, 201);
      assert.equal(fromB.status, 201);
      assert.equal(fromB.headers.get("idempotent-replayed"), null);
      assert.notEqual(fromB.body.data[route.id], fromA.body.data[route.id]);
      assert.equal(await count(b, route.path), before + 1);
      // B's replay is B's own first response, not A's.
      const replayB = await clientFor(server, b.key).post(route.path, route.body, { headers });
      assert.deepEqual(replayB.body, fromB.body);
    });
  }

  it("POST /api/v1/keys: the replay returns the same secret, and it is the one key that exists (docs/behaviour.md#key-secrets)", async () => {
    const org = await server.newOrg();
    const api = clientFor(server, org.key);
    const headers = { "idempotency-key": randomUUID() };
    const first = await api.post("/api/v1/keys", { name: "retried" }, { headers });
    const second = await api.post("/api/v1/keys", { name: "retried" }, { headers });
    assert.equal(second.headers.get("idempotent-replayed"), "true");
    assert.equal(second.body.key, first.body.key);
    assert.equal(second.body.data.hash, createHash("sha256").update(second.body.key).digest("hex"));
    const list = await api.get("/api/v1/keys");
    assert.deepEqual(list.body, { data: [first.body.data], total_count: 1 });
    // The replayed secret authenticates (an inference key: 403 on management, not 401).
    const probe = await clientFor(server, second.body.key).get("/api/v1/keys");
    assert.equal(probe.status, 403);
  });

  it("10 concurrent requests with the same key and body create exactly one guardrail", async () => {
    const org = await server.newOrg();
    const api = clientFor(server, org.key);
    const headers = { "idempotency-key": randomUUID() };
    const body = { name: "raced", allowed_data_regions: ["europe"] };
    const results = await Promise.all(
      Array.from({ length: 10 }, () => api.post("/api/v1/guardrails", body, { headers })),
    );
    const created = results.filter((r) => r.status === 201);
    for (const r of results) {
      // A retry that meets its twin in progress may be told to try again, but never creates a second.
      if (r.status !== 201) {
        assert.deepEqual(r.body, {
          error: { code: 409, message: "Resource conflict. Please try again later." },
        });
      }
    }
    assert.ok(created.length >= 1);
    const ids = new Set(created.map((r) => r.body.data.id));
    assert.equal(ids.size, 1);
    assert.equal(created.filter((r) => r.headers.get("idempotent-replayed") === null).length, 1);
    const list = await api.get("/api/v1/guardrails");
    assert.equal(list.body.total_count, 1);
    assert.equal(list.body.data[0].id, [...ids][0]);
  });

  it("an Idempotency-Key that is empty, too long or not visible ASCII is 400 and creates nothing", async () => {
    const org = await server.newOrg();
    const api = clientFor(server, org.key);
    for (const key of ["", "k".repeat(256), "with space"]) {
      const res = await api.post(
        "/api/v1/guardrails",
        { name: "x" },
        { headers: { "idempotency-key": key } },
      );
      assert.equal(res.status, 400, JSON.stringify(key));
      assert.equal(res.body.error.metadata.issues[0].path, "/headers/idempotency-key");
    }
    assert.equal(await count(org, "/api/v1/guardrails"), 0);
  });

  it("without Idempotency-Key two identical requests create two guardrails", async () => {
    const org = await server.newOrg();
    const api = clientFor(server, org.key);
    const a = await api.post("/api/v1/guardrails", { name: "twice" });
    const b = await api.post("/api/v1/guardrails", { name: "twice" });
    assert.notEqual(a.body.data.id, b.body.data.id);
    assert.equal(await count(org, "/api/v1/guardrails"), 2);
  });
});
