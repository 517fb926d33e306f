import assert from "node:assert/strict";
import { after, before, describe } from "node:test";
import { type RouteUnderTest, standardAuthCases } from "../helpers/auth-cases.js";
import { call, startTestServer, type TestOrg, type TestServer } from "../helpers/server.js";

/**
 * Every management route, each method and path, gets the standard authentication cases
 * (CONTRIBUTING.md#tests; docs/behaviour.md#authentication).
 */
describe("authentication of every management route (docs/behaviour.md#authentication)", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });

  const made = async (org: TestOrg, path: string, body: unknown): Promise<Record<string, unknown>> => {
    const res = await call(server, "POST", path, { key: org.key, body });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.data;
  };
  const guardrailPath = async (org: TestOrg) =>
    `/api/v1/guardrails/${(await made(org, "/api/v1/guardrails", { name: "g" })).id}`;
  const workspacePath = async (org: TestOrg) =>
    `/api/v1/workspaces/${(await made(org, "/api/v1/workspaces", { name: "w" })).id}`;
  const keyPath = async (org: TestOrg) =>
    `/api/v1/keys/${(await made(org, "/api/v1/keys", { name: "k" })).hash}`;

  const routes: [string, RouteUnderTest][] = [
    ["GET /api/v1/guardrails", { method: "GET", path: () => "/api/v1/guardrails" }],
    ["POST /api/v1/guardrails", { method: "POST", path: () => "/api/v1/guardrails", body: { name: "auth" } }],
    ["GET /api/v1/guardrails/{id}", { method: "GET", path: guardrailPath }],
    ["PATCH /api/v1/guardrails/{id}", { method: "PATCH", path: guardrailPath, body: { name: "renamed" } }],
    ["DELETE /api/v1/guardrails/{id}", { method: "DELETE", path: guardrailPath }],
    ["GET /api/v1/workspaces", { method: "GET", path: () => "/api/v1/workspaces" }],
    ["POST /api/v1/workspaces", { method: "POST", path: () => "/api/v1/workspaces", body: { name: "auth" } }],
    ["GET /api/v1/workspaces/{id}", { method: "GET", path: workspacePath }],
    ["DELETE /api/v1/workspaces/{id}", { method: "DELETE", path: workspacePath }],
    ["GET /api/v1/keys", { method: "GET", path: () => "/api/v1/keys" }],
    ["POST /api/v1/keys", { method: "POST", path: () => "/api/v1/keys", body: { name: "auth" } }],
    ["GET /api/v1/keys/{hash}", { method: "GET", path: keyPath }],
    ["DELETE /api/v1/keys/{hash}", { method: "DELETE", path: keyPath }],
  ];
  for (const [label, route] of routes) {
    describe(label, () => {
      standardAuthCases(() => server, route);
    });
  }
});
