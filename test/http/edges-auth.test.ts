import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { call, clientFor, startTestServer, type TestOrg, type TestServer } from "../helpers/server.js";

/**
 * Smaller edges: guessing keys is throttled per client, a key in a query string never reaches the
 * log, browsers are told not to sniff types, and a foreign workspace is refused alike on every list.
 */

describe("failed authentication is throttled per client (docs/api.md#limits)", () => {
  let server: TestServer;
  let org: TestOrg;
  before(async () => {
    server = await startTestServer();
    org = await server.newOrg();
  });
  after(async () => {
    await server.close();
  });

  it("after 100 unknown keys in a minute the client gets 429 with Retry-After, while a known key still works", async () => {
    // Known valid before the burst: it stays admitted from the warm cache.
    assert.equal((await clientFor(server, org.key).get("/api/v1/guardrails")).status, 200);
    const statuses: number[] = [];
    for (let i = 0; i < 105; i++) {
      const res = await call(server, "GET", "/api/v1/guardrails", { key: `sk-gr-v1-guess-${i}` });
      statuses.push(res.status);
      if (res.status === 429) {
        assert.equal(res.body.error.code, 429);
        assert.equal(res.body.error.metadata.reason, "authentication_throttled");
        assert.ok(Number(res.headers.get("retry-after")) >= 1);
      }
    }
    assert.deepEqual(
      statuses.slice(0, 100).filter((s) => s !== 401),
      [],
    );
    assert.deepEqual(statuses.slice(100), [429, 429, 429, 429, 429]);
    assert.equal((await clientFor(server, org.key).get("/api/v1/guardrails")).status, 200);
  });
});

describe("log safety, nosniff and list consistency", () => {
  let server: TestServer;
  let org: TestOrg;
  let stranger: TestOrg;
  const lines: string[] = [];
  before(async () => {
    server = await startTestServer({ logLines: lines });
    org = await server.newOrg();
    stranger = await server.newOrg();
  });
  after(async () => {
    await server.close();
  });

  it("an API key put in the query string is not written to the log (docs/api.md#authentication)", async () => {
    const secret = `${org.key}`;
    await call(server, "GET", `/api/v1/guardrails?api_key=${encodeURIComponent(secret)}&limit=5`, {
      key: org.key,
    });
    await call(server, "GET", `/api/v1/models?key=${encodeURIComponent(secret)}`, { key: null });
    const logged = lines.join("\n");
    assert.ok(!logged.includes(secret), "the secret reached the log");
    assert.ok(logged.includes("api_key=[REDACTED]&limit=5"), logged.slice(0, 2000));
  });

  it("every answer carries X-Content-Type-Options: nosniff, errors and the reference included", async () => {
    for (const [path, key] of [
      ["/api/v1/guardrails", org.key],
      ["/api/v1/guardrails", null],
      ["/api/v1/nowhere", null],
      ["/healthz", null],
      ["/api/v1/openapi.json", null],
      ["/docs/", null],
    ] as const) {
      const res = await call(server, "GET", path, { key });
      assert.equal(res.headers.get("x-content-type-options"), "nosniff", `${path} ${res.status}`);
    }
  });

  it("GET /keys?workspace_id=<another organization's> is a 400 like GET /guardrails (docs/api.md#workspaces-and-keys)", async () => {
    const api = clientFor(server, org.key);
    for (const path of ["/api/v1/keys", "/api/v1/guardrails"]) {
      const res = await api.get(`${path}?workspace_id=${stranger.workspaceId}`);
      assert.equal(res.status, 400, `${path}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error.message, "Invalid request parameters");
      assert.equal(res.body.error.metadata.issues[0].path, "/workspace_id");
    }
    const own = await api.get(`/api/v1/keys?workspace_id=${org.workspaceId}`);
    assert.equal(own.status, 200);
  });
});
