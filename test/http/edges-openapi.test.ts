import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { call, startTestServer, type TestOrg, type TestServer } from "../helpers/server.js";

/** The OpenAPI document names every answer each operation can give, with its body schema. */

// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is arbitrary JSON walked here.
type Doc = any;

describe("the OpenAPI document is complete (docs/api.md#errors)", () => {
  let server: TestServer;
  let org: TestOrg;
  let doc: Doc;
  before(async () => {
    server = await startTestServer();
    org = await server.newOrg();
    doc = (await call(server, "GET", "/api/v1/openapi.json")).body;
  });
  after(async () => {
    await server.close();
  });

  it("GET /key, GET /audit-log, POST /chat/completions, POST /guardrails/evaluate and the model routes document their 200 body", () => {
    for (const [path, method] of [
      ["/api/v1/key", "get"],
      ["/api/v1/audit-log", "get"],
      ["/api/v1/chat/completions", "post"],
      ["/api/v1/guardrails/evaluate", "post"],
      ["/api/v1/models", "get"],
      ["/api/v1/models/{author}/{name}/endpoints", "get"],
    ]) {
      const ok = doc.paths[path as string][method as string].responses["200"];
      assert.ok(ok?.content?.["application/json"]?.schema, `${method} ${path}`);
    }
  });

  it("every operation documents 400 and 500, a path id 404, a body 413 and 415, a key 401, 403 and 429, each with the error body", () => {
    for (const [path, item] of Object.entries<Doc>(doc.paths)) {
      for (const [method, op] of Object.entries<Doc>(item)) {
        const statuses = new Set(Object.keys(op.responses));
        const expected = ["400", "500"];
        if ((op.parameters ?? []).some((p: Doc) => p.in === "path")) expected.push("404");
        if (op.requestBody) expected.push("413", "415");
        if (!Array.isArray(op.security) || op.security.length > 0) expected.push("401", "403", "429");
        for (const status of expected) {
          assert.ok(statuses.has(status), `${method} ${path} lacks ${status}`);
          assert.ok(
            op.responses[status].content?.["application/json"]?.schema,
            `${method} ${path} ${status}`,
          );
        }
      }
    }
  });

  it("a path id of any length that fits in the request head is a 404, as for any unknown id", async () => {
    for (const path of ["/api/v1/guardrails/", "/api/v1/keys/", "/api/v1/members/", "/api/v1/workspaces/"]) {
      for (const length of [2049, 8000]) {
        const res = await call(server, "GET", `${path}${"a".repeat(length)}`, { key: org.key });
        assert.equal(res.status, 404, `${path} ${length}: ${JSON.stringify(res.body).slice(0, 200)}`);
        assert.deepEqual(res.body, { error: { code: 404, message: "Resource not found" } });
      }
    }
  });
});
