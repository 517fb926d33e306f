import assert from "node:assert/strict";
import { it } from "node:test";
import { call, type TestOrg, type TestServer } from "./server.js";

export interface RouteUnderTest {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  /** The path; may depend on the organization's resources (made fresh for each case). */
  path: (org: TestOrg) => Promise<string> | string;
  body?: unknown;
}

/**
 * The standard authentication cases every management route gets (CONTRIBUTING.md#tests):
 * no header → 401, a bad key → 401, an inference key → 403 (docs/behaviour.md#key-kinds).
 */
export function standardAuthCases(server: () => TestServer, route: RouteUnderTest): void {
  const label = `${route.method} ${typeof route.path === "function" ? "route" : route.path}`;
  it(`${label}: no Authorization header is 401 "Missing Authentication header" (docs/behaviour.md#bearer-keys)`, async () => {
    const org = await server().newOrg();
    const res = await call(server(), route.method, await route.path(org), { key: null, body: route.body });
    assert.equal(res.status, 401);
    assert.deepEqual(res.body, { error: { code: 401, message: "Missing Authentication header" } });
  });
  it(`${label}: an unknown key or a non-Bearer value is 401 "Invalid API key" (docs/behaviour.md#bearer-keys)`, async () => {
    const org = await server().newOrg();
    const path = await route.path(org);
    for (const authorization of ["Bearer sk-gr-v1-not-a-real-key", `Basic ${org.key}`, "Bearer"]) {
      const res = await call(server(), route.method, path, {
        key: null,
        body: route.body,
        headers: { authorization },
      });
      assert.equal(res.status, 401, authorization);
      assert.equal(res.body.error.message, "Invalid API key");
    }
  });
  it(`${label}: an inference key is 403 "Only management keys can perform this operation" (docs/behaviour.md#key-kinds)`, async () => {
    const org = await server().newOrg();
    const created = await call(server(), "POST", "/api/v1/keys", {
      key: org.key,
      body: { name: "inference" },
    });
    assert.equal(created.status, 201);
    const res = await call(server(), route.method, await route.path(org), {
      key: created.body.key,
      body: route.body,
    });
    assert.equal(res.status, 403);
    assert.deepEqual(res.body, {
      error: { code: 403, message: "Only management keys can perform this operation" },
    });
  });
}
