import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { call, clientFor, startTestServer, type TestOrg, type TestServer } from "../helpers/server.js";

/**
 * A route the service does not have says which method and path were asked, without echoing
 * anything secret-looking; a resource that does not exist still answers the bare 404.
 */
describe("unknown routes and methods (docs/behaviour.md#unknown-routes)", () => {
  let server: TestServer;
  let org: TestOrg;
  before(async () => {
    server = await startTestServer();
    org = await server.newOrg();
  });
  after(async () => {
    await server.close();
  });

  const noSuchRoute = (method: string, path: string) => ({
    error: {
      code: 404,
      message: "Resource not found",
      metadata: { reason: "no_such_route", method, path, api_reference: "/docs" },
    },
  });

  it("a 404 for an unknown route names the method and path, and points at the API reference", async () => {
    for (const [method, path] of [
      ["GET", "/api/v1/guardrail"],
      ["POST", "/api/v1/chat/completion"],
      ["PATCH", "/api/v1/keys/abc/extra"],
    ] as const) {
      const res = await call(server, method, path, { key: org.key, body: method === "GET" ? undefined : {} });
      assert.equal(res.status, 404, `${method} ${path}`);
      assert.deepEqual(res.body, noSuchRoute(method, path));
    }
    // The reference the 404 points at is served.
    assert.equal((await call(server, "GET", "/docs")).status < 400, true);
  });

  it("the path is shown without its query string, and a segment that looks like a key is masked", async () => {
    const res = await call(server, "GET", `/api/v1/${org.key}/guardrails?api_key=${org.key}&limit=5`);
    assert.deepEqual(res.body, noSuchRoute("GET", "/api/v1/[REDACTED]/guardrails"));
    const text = JSON.stringify(res.body);
    assert.ok(!text.includes(org.key.slice(12)), "no part of the secret is echoed");
    assert.ok(!text.includes("api_key"), "the query string is not echoed");
    for (const segment of ["sk-proj-abc123", "sk_live_abc", "Bearer%20abc", "x-sk-gr-v1-abc"]) {
      const masked = await call(server, "GET", `/v1/${segment}`);
      assert.deepEqual(masked.body, noSuchRoute("GET", "/v1/[REDACTED]"), segment);
    }
  });

  it("a long segment that is not one of our ids is replaced by its length, and the path is bounded", async () => {
    const token = "ghp_0123456789abcdefghijABCDEFGHIJ0123456789";
    const long = await call(server, "GET", `/api/v2/${token}`);
    assert.deepEqual(long.body, noSuchRoute("GET", `/api/v2/[${token.length} characters]`));
    // A UUID and a key hash are ids, shown whole.
    const uuid = "00000000-0000-4000-8000-000000000000";
    const hash = "ab".repeat(32);
    const ids = await call(server, "GET", `/api/v1/nothing/${uuid}/${hash}`);
    assert.deepEqual(ids.body, noSuchRoute("GET", `/api/v1/nothing/${uuid}/${hash}`));
    const many = `/x${"/abcdefghij".repeat(100)}`;
    const capped = await call(server, "GET", many);
    assert.equal(capped.status, 404);
    assert.equal(capped.body.error.metadata.path, `${many.slice(0, 200)}...`);
  });

  it("a known path with another method is 405 with Allow, naming the method, the path and the methods it takes", async () => {
    const id = "00000000-0000-4000-8000-000000000000";
    const res = await call(server, "PUT", `/api/v1/guardrails/${id}?api_key=${org.key}`, {
      key: org.key,
      body: { name: "x" },
    });
    assert.equal(res.status, 405);
    assert.equal(res.headers.get("allow"), "DELETE, GET, PATCH");
    assert.deepEqual(res.body, {
      error: {
        code: 405,
        message: "Method not allowed",
        metadata: {
          reason: "method_not_allowed",
          method: "PUT",
          path: `/api/v1/guardrails/${id}`,
          allow: ["DELETE", "GET", "PATCH"],
        },
      },
    });
    const chat = await call(server, "GET", "/api/v1/chat/completions");
    assert.equal(chat.status, 405);
    assert.deepEqual(chat.body.error.metadata.allow, ["POST"]);
    assert.equal(chat.headers.get("allow"), "POST");
  });

  it("an unknown resource on a route that exists keeps the bare 404 (docs/behaviour.md#update-not-found)", async () => {
    const api = clientFor(server, org.key);
    for (const path of [
      "/api/v1/guardrails/00000000-0000-4000-8000-000000000000",
      "/api/v1/guardrails/not-a-uuid",
      `/api/v1/keys/${"0".repeat(64)}`,
      "/api/v1/guardrails/%zz",
    ]) {
      const res = await api.get(path);
      assert.equal(res.status, 404, path);
      assert.deepEqual(res.body, { error: { code: 404, message: "Resource not found" } }, path);
    }
  });
});
