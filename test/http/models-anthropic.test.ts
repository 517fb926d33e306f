import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { SONNET } from "./gateway-support.js";

/**
 * `GET /api/v1/models` answers an Anthropic client (one that sends `anthropic-version`) in the
 * Anthropic Models API's shape, and everyone else in the OpenAI-style shape, on the same path
 * (docs/gateway.md#anthropic-model-list).
 */
describe("the model list in the Anthropic shape (docs/gateway.md#anthropic-model-list)", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server?.close();
  });

  const get = async (path: string, headers: Record<string, string> = {}) => {
    const res = await fetch(`${server.origin}${path}`, { headers });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const ANTHROPIC = { "anthropic-version": "2023-06-01" };

  it("with anthropic-version, as Claude Code's gateway discovery asks (?limit=1000): the whole catalog as Anthropic model objects", async () => {
    const plain = await get("/api/v1/models");
    assert.equal(plain.status, 200);
    const catalog = (plain.body.data as { id: string; name: string }[]).map((m) => [m.id, m.name]);
    assert.ok(catalog.length > 20, "the catalog is larger than one default page");

    const res = await get("/api/v1/models?limit=1000", { ...ANTHROPIC, "x-api-key": "any-key" });
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body).sort(), ["data", "first_id", "has_more", "last_id"]);
    const data = res.body.data as Record<string, unknown>[];
    assert.deepEqual(
      data.map((m) => [m.id, m.display_name]),
      catalog,
    );
    for (const m of data) {
      assert.deepEqual(Object.keys(m).sort(), ["created_at", "display_name", "id", "type"]);
      assert.equal(m.type, "model");
      assert.match(m.created_at as string, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    }
    assert.equal(res.body.has_more, false);
    assert.equal(res.body.first_id, catalog[0]?.[0]);
    assert.equal(res.body.last_id, catalog[catalog.length - 1]?.[0]);
  });

  it("without the header the list keeps its OpenAI-style shape", async () => {
    const res = await get("/api/v1/models?limit=1000");
    assert.equal(res.status, 200);
    assert.equal(typeof res.body.total_count, "number");
    assert.equal((res.body.data as unknown[]).length, res.body.total_count);
    assert.equal("has_more" in res.body, false);
    const first = (res.body.data as Record<string, unknown>[])[0];
    assert.equal(first?.object, "model");
    assert.equal("display_name" in (first ?? {}), false);
  });

  it("pages: default 20, after_id and before_id walk the catalog in order, has_more says when to stop", async () => {
    const all = ((await get("/api/v1/models")).body.data as { id: string }[]).map((m) => m.id);
    const first = await get("/api/v1/models", ANTHROPIC);
    const ids = (p: { body: Record<string, unknown> }) => (p.body.data as { id: string }[]).map((m) => m.id);
    assert.deepEqual(ids(first), all.slice(0, 20));
    assert.equal(first.body.has_more, true);

    const second = await get(
      `/api/v1/models?limit=5&after_id=${encodeURIComponent(all[19] as string)}`,
      ANTHROPIC,
    );
    assert.deepEqual(ids(second), all.slice(20, 25));
    assert.equal(second.body.first_id, all[20]);
    assert.equal(second.body.last_id, all[24]);

    const back = await get(
      `/api/v1/models?limit=5&before_id=${encodeURIComponent(all[20] as string)}`,
      ANTHROPIC,
    );
    assert.deepEqual(ids(back), all.slice(15, 20));
    assert.equal(back.body.has_more, true);

    const last = await get(
      `/api/v1/models?limit=5&after_id=${encodeURIComponent(all[all.length - 1] as string)}`,
      ANTHROPIC,
    );
    assert.deepEqual(last.body, { data: [], has_more: false, first_id: null, last_id: null });
  });

  it("the Anthropic SDK's models.list walks every page and models.retrieve reads one model by its slug", async () => {
    const all = ((await get("/api/v1/models")).body.data as { id: string }[]).map((m) => m.id);
    const client = new Anthropic({ apiKey: "any-key", baseURL: `${server.origin}/api`, maxRetries: 0 });
    const listed: string[] = [];
    for await (const m of client.models.list({ limit: 7 })) listed.push(m.id);
    assert.deepEqual(listed, all);

    const one = await client.models.retrieve(SONNET);
    assert.equal(one.id, SONNET);
    assert.equal(one.type, "model");
    assert.equal(typeof one.display_name, "string");
    assert.equal(one.created_at, "1970-01-01T00:00:00Z");
  });

  it("one model by its slug, with the slash as is or encoded; an unknown slug is a 404 in the service's shape", async () => {
    for (const path of [`/api/v1/models/${SONNET}`, `/api/v1/models/${encodeURIComponent(SONNET)}`]) {
      const res = await get(path, ANTHROPIC);
      assert.equal(res.status, 200, path);
      assert.deepEqual(Object.keys(res.body).sort(), ["created_at", "display_name", "id", "type"]);
      assert.equal(res.body.id, SONNET);
      const plain = await get(path);
      assert.equal(plain.body.object, "model", path);
      assert.equal("display_name" in plain.body, false, path);
    }
    const missing = await get("/api/v1/models/nobody%2Fnothing", ANTHROPIC);
    assert.equal(missing.status, 404);
    assert.equal((missing.body.error as { code: number }).code, 404);
  });

  it("bad paging input is a 400 naming the parameter (docs/behaviour.md#errors)", async () => {
    const cases: [string, string][] = [
      ["limit=0", "/limit"],
      ["limit=1001", "/limit"],
      ["limit=abc", "/limit"],
      ["limit=-3", "/limit"],
      ["after_id=nobody%2Fnothing", "/after_id"],
      ["before_id=", "/before_id"],
      [`after_id=${encodeURIComponent(SONNET)}&before_id=${encodeURIComponent(SONNET)}`, "/before_id"],
    ];
    for (const [query, path] of cases) {
      const res = await get(`/api/v1/models?${query}`, ANTHROPIC);
      assert.equal(res.status, 400, query);
      const error = res.body.error as {
        code: number;
        message: string;
        metadata: { issues: { path: string }[] };
      };
      assert.equal(error.code, 400, query);
      assert.equal(error.message, "Invalid request parameters", query);
      assert.deepEqual(
        error.metadata.issues.map((i) => i.path),
        [path],
        query,
      );
    }
  });
});
