import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { OpenRouter } from "@openrouter/sdk";
import {
  BadRequestResponseError,
  ConflictResponseError,
  ForbiddenResponseError,
  NotFoundResponseError,
  UnauthorizedResponseError,
} from "@openrouter/sdk/models/errors";
import { clientFor, startTestServer, type TestOrg, type TestServer } from "../helpers/server.js";

/**
 * The official SDK pointed at our server is a real client (decisions, introduction): the
 * openrouter-compat catalog names the vendor families anthropic, openai, google and xai, the wire names
 * the SDK knows (docs/behaviour.md#zdr-flags).
 */
const COMPAT_CONFIG = fileURLToPath(new URL("../../config/openrouter-compat.json", import.meta.url));
const SONNET = { slug: "anthropic/claude-sonnet-4.5", canonical: "anthropic/claude-4.5-sonnet-20250929" };
const UNKNOWN_ID = "00000000-0000-4000-8000-000000000000";

describe("the official SDK @openrouter/sdk as a client of the guardrail API (docs/behaviour.md#authentication; docs/behaviour.md#error-messages; docs/behaviour.md#guardrail-create)", () => {
  let server: TestServer;
  before(async () => {
    // The SDK falls back to these variables; the tests pass everything explicitly.
    delete process.env.OPENROUTER_API_KEY;
    delete process.env.OPENROUTER_BASE_URL;
    server = await startTestServer({ configFile: COMPAT_CONFIG });
  });
  after(async () => {
    await server.close();
  });

  const sdk = (apiKey?: string) =>
    new OpenRouter({
      ...(apiKey !== undefined ? { apiKey } : {}),
      serverURL: server.baseUrl,
      retryConfig: { strategy: "none" },
    });

  /** Rejects with an error of `type`, whose status and message are the given ones; returns it. */
  async function rejectsWith<E extends Error & { statusCode: number }>(
    promise: Promise<unknown>,
    type: new (...args: never[]) => E,
    statusCode: number,
    message: string,
  ): Promise<E> {
    const err = await promise.then(
      (value) => assert.fail(`expected ${type.name}, got ${JSON.stringify(value)}`),
      (e: unknown) => e,
    );
    assert.ok(err instanceof type, `expected ${type.name}, got ${String(err)}`);
    assert.equal(err.statusCode, statusCode);
    assert.equal(err.message, message);
    return err;
  }

  async function inferenceKey(org: TestOrg): Promise<string> {
    const res = await fetch(`${server.baseUrl}/keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${org.key}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "inference" }),
    });
    assert.equal(res.status, 201);
    return ((await res.json()) as { key: string }).key;
  }

  it("a guardrail with answer filters reads through the SDK's strict validation without apply_to, which the SDK's types lack; apply_to sent through the SDK is dropped (docs/api.md#the-reference-sdk; docs/behaviour.md#apply-to)", async () => {
    const org = await server.newOrg();
    const client = sdk(org.key);
    const made = await clientFor(server, org.key).post("/api/v1/guardrails", {
      name: "answers",
      content_filter_builtins: [
        { slug: "email", action: "redact" },
        { slug: "email", action: "block", apply_to: "response" },
      ],
      content_filters: [{ pattern: "secret", action: "flag", apply_to: "both" }],
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const read = (await client.guardrails.get({ id: made.body.data.id })).data;
    assert.deepEqual(read.contentFilterBuiltins, [
      { slug: "email", action: "redact", label: "[EMAIL]" },
      { slug: "email", action: "block", label: "[EMAIL]" },
    ]);
    assert.deepEqual(read.contentFilters, [{ pattern: "secret", action: "flag", label: null }]);

    // The SDK's request type has no apply_to (a cast passes it); its encoder leaves it out.
    const item = { slug: "phone", action: "block", applyTo: "response", apply_to: "response" } as unknown as {
      slug: "phone";
      action: "block";
    };
    const sent = await client.guardrails.create({
      createGuardrailRequest: { name: "through the sdk", contentFilterBuiltins: [item] },
    });
    const stored = await clientFor(server, org.key).get(`/api/v1/guardrails/${sent.data.id}`);
    assert.deepEqual(stored.body.data.content_filter_builtins, [
      { slug: "phone", action: "block", label: "[PHONE]" },
    ]);
  });

  it("create (201), get, list, update with camelCase fields and delete round-trip through the SDK (docs/behaviour.md#guardrail-create; docs/behaviour.md#partial-update; docs/behaviour.md#guardrail-delete)", async () => {
    const org = await server.newOrg();
    const client = sdk(org.key);

    // guardrails.create accepts only a 201 (any other status is an SDK error), so success proves it.
    const created = await client.guardrails.create({
      createGuardrailRequest: {
        name: "sdk guardrail",
        description: "made by the SDK",
        limitUsd: 5,
        resetInterval: "daily",
        allowedModels: [SONNET.slug],
        contentFilterBuiltins: [{ slug: "email", action: "redact" }],
        enforceZdrAnthropic: true,
      },
    });
    const g = created.data;
    assert.equal(g.name, "sdk guardrail");
    assert.equal(g.workspaceId, org.workspaceId);
    assert.equal(g.limitUsd, 5);
    assert.equal(g.resetInterval, "daily");
    assert.deepEqual(g.allowedModels, [SONNET.canonical]);
    assert.deepEqual(g.contentFilterBuiltins, [{ slug: "email", action: "redact", label: "[EMAIL]" }]);
    assert.equal(g.enforceZdrAnthropic, true);
    assert.equal(g.enforceZdrOpenai, false);
    assert.equal(g.includeByokInBudgets, false);
    assert.equal(g.updatedAt, null);

    assert.deepEqual((await client.guardrails.get({ id: g.id })).data, g);

    const page = await client.guardrails.list();
    assert.equal(page.result.totalCount, 1);
    assert.deepEqual(page.result.data, [g]);

    const updated = await client.guardrails.update({
      id: g.id,
      updateGuardrailRequest: {
        limitUsd: 12.345678,
        resetInterval: "weekly",
        enforceZdrOpenai: true,
        enforceZdrXai: true,
        description: null,
        allowedModels: null,
        allowedDataRegions: ["europe", "us"],
        includeByokInBudgets: true,
      },
    });
    const u = updated.data;
    assert.equal(u.id, g.id);
    assert.equal(u.name, "sdk guardrail");
    assert.equal(u.limitUsd, 12.345678);
    assert.equal(u.resetInterval, "weekly");
    assert.equal(u.enforceZdrOpenai, true);
    assert.equal(u.enforceZdrXai, true);
    assert.equal(u.enforceZdrAnthropic, true, "a flag not sent is unchanged");
    assert.equal(u.enforceZdrGoogle, false);
    assert.equal(u.description, null);
    assert.equal(u.allowedModels, null);
    assert.deepEqual(u.allowedDataRegions, ["europe", "us"]);
    assert.equal(u.includeByokInBudgets, true);
    assert.equal(typeof u.updatedAt, "string");
    assert.deepEqual((await client.guardrails.get({ id: g.id })).data, u);

    // On the wire the flags carry the compat preset's family names, the ones the SDK reads.
    const raw = await clientFor(server, org.key).get(`/api/v1/guardrails/${g.id}`);
    assert.equal(raw.body.data.enforce_zdr_openai, true);
    assert.equal(raw.body.data.enforce_zdr_xai, true);
    assert.equal(raw.body.data.enforce_zdr_vendor_b, undefined);

    assert.deepEqual(await client.guardrails.delete({ id: g.id }), { deleted: true });
    await rejectsWith(client.guardrails.get({ id: g.id }), NotFoundResponseError, 404, "Resource not found");
    assert.equal((await client.guardrails.list()).result.totalCount, 0);
  });

  it("no key and an unknown key are UnauthorizedResponseError 401 (docs/behaviour.md#bearer-keys)", async () => {
    await rejectsWith(
      sdk().guardrails.list(),
      UnauthorizedResponseError,
      401,
      "Missing Authentication header",
    );
    await rejectsWith(
      sdk().guardrails.create({ createGuardrailRequest: { name: "x" } }),
      UnauthorizedResponseError,
      401,
      "Missing Authentication header",
    );
    const bad = sdk("sk-gr-v1-not-a-real-key");
    await rejectsWith(bad.guardrails.list(), UnauthorizedResponseError, 401, "Invalid API key");
    await rejectsWith(
      bad.guardrails.get({ id: UNKNOWN_ID }),
      UnauthorizedResponseError,
      401,
      "Invalid API key",
    );
  });

  it("an inference key on create is ForbiddenResponseError 403 and creates nothing (docs/behaviour.md#key-kinds)", async () => {
    const org = await server.newOrg();
    const err = await rejectsWith(
      sdk(await inferenceKey(org)).guardrails.create({ createGuardrailRequest: { name: "x" } }),
      ForbiddenResponseError,
      403,
      "Only management keys can perform this operation",
    );
    assert.equal(err.error.code, 403);
    assert.equal((await sdk(org.key).guardrails.list()).result.totalCount, 0);
  });

  it("get, update and delete of an unknown id are NotFoundResponseError 404 'Resource not found' (docs/behaviour.md#update-not-found; docs/behaviour.md#guardrail-delete)", async () => {
    const org = await server.newOrg();
    const client = sdk(org.key);
    await rejectsWith(
      client.guardrails.get({ id: UNKNOWN_ID }),
      NotFoundResponseError,
      404,
      "Resource not found",
    );
    await rejectsWith(
      client.guardrails.update({ id: UNKNOWN_ID, updateGuardrailRequest: { name: "x" } }),
      NotFoundResponseError,
      404,
      "Resource not found",
    );
    await rejectsWith(
      client.guardrails.get({ id: "not-a-uuid" }),
      NotFoundResponseError,
      404,
      "Resource not found",
    );
    await rejectsWith(
      client.guardrails.delete({ id: UNKNOWN_ID }),
      NotFoundResponseError,
      404,
      "Resource not found",
    );
    // Another organization's guardrail is indistinguishable from a missing one (docs/behaviour.md#organizations).
    const other = await server.newOrg();
    const theirs = await sdk(other.key).guardrails.create({ createGuardrailRequest: { name: "theirs" } });
    await rejectsWith(
      client.guardrails.get({ id: theirs.data.id }),
      NotFoundResponseError,
      404,
      "Resource not found",
    );
  });

  it("limitUsd without resetInterval on create is BadRequestResponseError 400 naming /reset_interval, nothing stored (docs/behaviour.md#invalid-request; docs/behaviour.md#budget-fields)", async () => {
    const org = await server.newOrg();
    const client = sdk(org.key);
    const err = await rejectsWith(
      client.guardrails.create({ createGuardrailRequest: { name: "budget", limitUsd: 10 } }),
      BadRequestResponseError,
      400,
      "Invalid request parameters",
    );
    assert.equal(err.error.code, 400);
    const issues = (err.error.metadata as { issues: { path: string }[] }).issues;
    assert.ok(
      issues.some((i) => i.path === "/reset_interval"),
      JSON.stringify(issues),
    );
    assert.equal((await client.guardrails.list()).result.totalCount, 0);
  });

  it("an update with a stale If-Match (sent through the SDK's per-call headers) is ConflictResponseError 409 and changes nothing (docs/behaviour.md#concurrency)", async () => {
    const org = await server.newOrg();
    const client = sdk(org.key);
    const g = (await client.guardrails.create({ createGuardrailRequest: { name: "v1" } })).data;
    const first = await clientFor(server, org.key).get(`/api/v1/guardrails/${g.id}`);
    const staleTag = first.headers.get("etag");
    assert.ok(staleTag);
    const v2 = (await client.guardrails.update({ id: g.id, updateGuardrailRequest: { name: "v2" } })).data;
    await rejectsWith(
      client.guardrails.update(
        { id: g.id, updateGuardrailRequest: { name: "v3" } },
        { headers: { "if-match": staleTag } },
      ),
      ConflictResponseError,
      409,
      "Resource conflict. Please try again later.",
    );
    assert.deepEqual((await client.guardrails.get({ id: g.id })).data, v2);
  });

  it("with the openrouter-compat preset the OpenAPI create body names the SDK's flags enforce_zdr_anthropic/openai/google/xai/other (docs/behaviour.md#zdr-flags)", async () => {
    const res = await clientFor(server, null).get("/api/v1/openapi.json");
    assert.equal(res.status, 200);
    const schema = res.body.paths["/api/v1/guardrails"].post.requestBody.content["application/json"].schema;
    const flags = Object.keys(schema.properties)
      .filter((p) => p.startsWith("enforce_zdr_"))
      .sort();
    assert.deepEqual(
      flags,
      ["anthropic", "google", "openai", "other", "xai"].map((f) => `enforce_zdr_${f}`),
    );
    assert.equal(schema.additionalProperties, false);
  });
});
