import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { call, startTestServer, type TestServer } from "../helpers/server.js";

describe("health, catalog and documentation endpoints", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });

  it("GET /healthz answers 200 without a key", async () => {
    const res = await call(server, "GET", "/healthz");
    assert.equal(res.status, 200);
    assert.equal(res.body.status, "ok");
  });

  it("GET /readyz answers 200 while the database answers", async () => {
    const res = await call(server, "GET", "/readyz");
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { status: "ready" });
  });

  it("GET /api/v1/models returns the catalog {data, links, total_count} with at least 20 models", async () => {
    const res = await call(server, "GET", "/api/v1/models");
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body).sort(), ["data", "links", "total_count"]);
    assert.ok(Array.isArray(res.body.data));
    assert.ok(res.body.data.length >= 20, `${res.body.data.length} models`);
    assert.equal(res.body.total_count, res.body.data.length);
    const slugs = new Set<string>();
    for (const m of res.body.data) {
      assert.equal(typeof m.id, "string");
      assert.equal(typeof m.canonical_slug, "string");
      assert.ok(!slugs.has(m.id), `duplicate model ${m.id}`);
      slugs.add(m.id);
    }
  });

  it("each model's links.details answers its endpoints, with whether the provider is configured; an unknown model is 404", async () => {
    const models = (await call(server, "GET", "/api/v1/models")).body.data as {
      id: string;
      endpoints: unknown[];
      links: { details: string };
    }[];
    for (const m of models) {
      const res = await call(server, "GET", m.links.details);
      assert.equal(res.status, 200, m.links.details);
      assert.equal(res.body.data.id, m.id);
      assert.equal(res.body.data.endpoints.length, m.endpoints.length);
    }
    const local = await call(server, "GET", "/api/v1/models/meta-llama/llama-3.1-8b-instruct/endpoints");
    // The test server configures no provider keys: only the keyless local provider is available.
    for (const e of local.body.data.endpoints as { provider: string; available: boolean }[]) {
      assert.equal(e.available, e.provider === "local", e.provider);
    }
    const sonnet = await call(server, "GET", "/api/v1/models/anthropic/claude-sonnet-4.5/endpoints");
    assert.ok(sonnet.body.data.endpoints.every((e: { available: boolean }) => e.available === false));
    assert.equal((await call(server, "GET", "/api/v1/models/acme/nothing/endpoints")).status, 404);
  });

  it("the model list says, endpoint by endpoint, whether this installation can serve it: with no provider keys only local is available (docs/gateway.md#servable-models)", async () => {
    const models = (await call(server, "GET", "/api/v1/models")).body.data as {
      id: string;
      endpoints: { provider: string; available: boolean }[];
      links: { details: string };
    }[];
    for (const m of models) {
      for (const e of m.endpoints) assert.equal(e.available, e.provider === "local", `${m.id} ${e.provider}`);
      const details = await call(server, "GET", m.links.details);
      assert.deepEqual(
        details.body.data.endpoints.map((e: { available: boolean }) => e.available),
        m.endpoints.map((e) => e.available),
        m.id,
      );
    }
    const servable = models.filter((m) => m.endpoints.some((e) => e.available)).map((m) => m.id);
    assert.ok(servable.includes("meta-llama/llama-3.1-8b-instruct"), servable.join(", "));
    assert.ok(!servable.includes("anthropic/claude-sonnet-4.5"));
    const one = await call(server, "GET", "/api/v1/models/meta-llama%2Fllama-3.1-8b-instruct");
    assert.equal(one.status, 200);
    assert.ok(one.body.endpoints.some((e: { provider: string; available: boolean }) => e.available));
  });

  it("every catalog model can be named in allowed_models, by slug and by canonical slug (docs/behaviour.md#model-lists)", async () => {
    const org = await server.newOrg();
    const models = (await call(server, "GET", "/api/v1/models")).body.data as {
      id: string;
      canonical_slug: string;
    }[];
    const bySlug = await call(server, "POST", "/api/v1/guardrails", {
      key: org.key,
      body: { name: "all by slug", allowed_models: models.map((m) => m.id) },
    });
    assert.equal(bySlug.status, 201, JSON.stringify(bySlug.body));
    const canonical = [...new Set(models.map((m) => m.canonical_slug))].sort();
    assert.deepEqual([...bySlug.body.data.allowed_models].sort(), canonical);
  });

  it("GET /api/v1/openapi.json is an OpenAPI 3.1 document with create and update of guardrails", async () => {
    const res = await call(server, "GET", "/api/v1/openapi.json");
    assert.equal(res.status, 200);
    assert.match(res.body.openapi, /^3\.1\./);
    const paths = res.body.paths;
    assert.ok(paths["/api/v1/guardrails"]?.post, "POST /api/v1/guardrails");
    assert.ok(paths["/api/v1/guardrails/{id}"]?.patch, "PATCH /api/v1/guardrails/{id}");
    for (const path of ["/api/v1/workspaces", "/api/v1/keys"]) assert.ok(paths[path]?.post, `POST ${path}`);
    assert.ok(paths["/api/v1/guardrails"].post.requestBody, "the create has a request body schema");
  });

  it("GET /docs answers 200 HTML after redirects", async () => {
    const res = await fetch(`${server.origin}/docs`, { redirect: "follow" });
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /text\/html/);
    assert.match(await res.text(), /<html/i);
  });
});
