import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { standardAuthCases } from "../helpers/auth-cases.js";
import { clientFor, startTestServer, type TestServer } from "../helpers/server.js";
import {
  assertCreateRefused,
  createGuardrail,
  defaultFields,
  FAMILIES,
  GEMINI,
  GPT5,
  GUARDRAIL_FIELDS,
  getGuardrail,
  ISO_UTC,
  issueText,
  SONNET,
  zdrFlags,
} from "./guardrail-support.js";

const LIST_FIELDS = [
  "allowed_data_regions",
  "allowed_models",
  "allowed_providers",
  "ignored_models",
  "ignored_providers",
] as const;

describe("POST /api/v1/guardrails: create a guardrail (docs/behaviour.md#guardrail-create; docs/behaviour.md#guardrail-fields)", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });

  const assertRefused = (body: Record<string, unknown>, ...paths: string[]) =>
    assertCreateRefused(server, body, ...paths);

  describe("authentication (docs/behaviour.md#authentication)", () => {
    standardAuthCases(() => server, {
      method: "POST",
      path: () => "/api/v1/guardrails",
      body: { name: "a" },
    });
  });

  it("only name is required: 201 {data} with every Guardrail field and the defaults (docs/behaviour.md#guardrail-defaults)", async () => {
    const org = await server.newOrg();
    const before = Date.now();
    const res = await createGuardrail(server, org.key, { name: "Only a name" });
    const after = Date.now();
    assert.deepEqual(Object.keys(res.body), ["data"]);
    const data = res.body.data;
    assert.deepEqual(Object.keys(data).sort(), GUARDRAIL_FIELDS);
    assert.match(data.id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.match(data.created_at, ISO_UTC);
    const created = Date.parse(data.created_at);
    assert.ok(created >= before - 1000 && created <= after + 1000, data.created_at);
    const { id: _id, created_at: _created, ...rest } = data;
    assert.deepEqual(rest, { name: "Only a name", workspace_id: org.workspaceId, ...defaultFields() });
  });

  it("Location names the new guardrail and ETag is its entity tag, the same GET gives (docs/behaviour.md#guardrail-create; docs/behaviour.md#concurrency)", async () => {
    const org = await server.newOrg();
    const res = await createGuardrail(server, org.key, { name: "headers" });
    const location = res.headers.get("location") ?? "";
    assert.ok(location.endsWith(`/api/v1/guardrails/${res.body.data.id}`), location);
    const etag = res.headers.get("etag");
    assert.ok(etag, "create returns an ETag");
    const got = await clientFor(server, org.key).get(new URL(location, server.origin).pathname);
    assert.equal(got.status, 200);
    assert.deepEqual(got.body.data, res.body.data);
    assert.equal(got.headers.get("etag"), etag);
  });

  it("every property sent is stored and returned, the same on a later GET (docs/behaviour.md#guardrail-fields)", async () => {
    const org = await server.newOrg();
    const body = {
      name: "Everything",
      description: "all the properties",
      allowed_data_regions: ["europe", "us"],
      allowed_models: [SONNET.canonical, GPT5.canonical],
      allowed_providers: ["anthropic", "openai"],
      ignored_models: [GEMINI.canonical],
      ignored_providers: ["deepinfra"],
      content_filter_builtins: [{ slug: "email", action: "redact", label: "[EMAIL]" }],
      content_filters: [{ pattern: "secret-\\d+", action: "block", label: "SECRET" }],
      enable_free_model_publication: true,
      enable_free_model_training: false,
      enable_paid_model_training: false,
      enforce_zdr_anthropic: true,
      enforce_zdr_openai: false,
      enforce_zdr_google: true,
      enforce_zdr_xai: false,
      enforce_zdr_other: true,
      include_byok_in_budgets: true,
      limit_usd: 25.5,
      reset_interval: "weekly",
      alert_thresholds: [50, 100],
      workspace_id: org.workspaceId,
    };
    const res = await createGuardrail(server, org.key, body);
    const { id, created_at, ...rest } = res.body.data;
    assert.deepEqual(rest, { ...body, enforce_zdr: null, updated_at: null });
    assert.deepEqual(await getGuardrail(server, org.key, id), res.body.data);
    assert.ok(created_at);
  });

  it("a missing, empty or non-string name is 400 naming /name (docs/behaviour.md#guardrail-create)", async () => {
    await assertRefused({ description: "no name" }, "/name");
    await assertRefused({ name: "" }, "/name");
    await assertRefused({ name: 5 }, "/name");
    await assertRefused({ name: null }, "/name");
  });

  it("name length counts code points: 200 emoji are accepted, 201 are 400 (docs/behaviour.md#name-and-description)", async () => {
    const org = await server.newOrg();
    for (const name of ["😀".repeat(200), "a".repeat(200), "x"]) {
      const res = await createGuardrail(server, org.key, { name });
      assert.equal(res.body.data.name, name);
    }
    await assertRefused({ name: "😀".repeat(201) }, "/name");
    await assertRefused({ name: "a".repeat(201) }, "/name");
  });

  it("description is at most 1000 code points; 1001 is 400 (docs/behaviour.md#name-and-description)", async () => {
    const org = await server.newOrg();
    for (const description of ["😀".repeat(1000), "d".repeat(1000), ""]) {
      const res = await createGuardrail(server, org.key, { name: "d", description });
      assert.equal(res.body.data.description, description);
    }
    await assertRefused({ name: "d", description: "😀".repeat(1001) }, "/description");
    await assertRefused({ name: "d", description: "d".repeat(1001) }, "/description");
    await assertRefused({ name: "d", description: 7 }, "/description");
  });

  it("an unknown property is 400 naming it: a misspelled restriction is never dropped (docs/behaviour.md#strict-bodies)", async () => {
    const res = await assertRefused({ name: "typo", allowed_model: [GPT5.slug] }, "/allowed_model");
    assert.deepEqual(
      res.body.error.metadata.issues.map((i: { path: string }) => i.path),
      ["/allowed_model"],
    );
    await assertRefused({ name: "typo", enforce_zdr_vendor_z: true }, "/enforce_zdr_vendor_z");
    await assertRefused({ name: "typo", limit: 10 }, "/limit");
  });

  it('types are strict: "10" for limit_usd and "true" for a boolean are 400, not coerced (docs/behaviour.md#strict-bodies)', async () => {
    await assertRefused({ name: "t", limit_usd: "10", reset_interval: "daily" }, "/limit_usd");
    await assertRefused({ name: "t", include_byok_in_budgets: "true" }, "/include_byok_in_budgets");
    await assertRefused({ name: "t", enable_free_model_training: 1 }, "/enable_free_model_training");
    await assertRefused({ name: "t", enforce_zdr_anthropic: "false" }, "/enforce_zdr_anthropic");
    await assertRefused({ name: "t", enforce_zdr: "true" }, "/enforce_zdr");
    await assertRefused({ name: "t", allowed_models: GPT5.slug }, "/allowed_models");
  });

  for (const field of LIST_FIELDS) {
    it(`an empty ${field} array is 400 naming /${field} (docs/behaviour.md#empty-lists)`, async () => {
      await assertRefused({ name: "empty", [field]: [] }, `/${field}`);
    });
  }

  it("null lists are accepted and mean no restriction (docs/behaviour.md#empty-lists)", async () => {
    const org = await server.newOrg();
    const body: Record<string, unknown> = {
      name: "nulls",
      content_filter_builtins: null,
      content_filters: null,
    };
    for (const field of LIST_FIELDS) body[field] = null;
    const res = await createGuardrail(server, org.key, body);
    for (const field of Object.keys(body).filter((k) => k !== "name")) {
      assert.equal(res.body.data[field], null, field);
    }
  });

  it("allowed_data_regions takes global, europe and us, collapses duplicates, refuses other values (docs/behaviour.md#region-lists)", async () => {
    const org = await server.newOrg();
    const all = await createGuardrail(server, org.key, {
      name: "regions",
      allowed_data_regions: ["us", "global", "us", "europe", "global"],
    });
    assert.deepEqual([...all.body.data.allowed_data_regions].sort(), ["europe", "global", "us"]);
    const one = await createGuardrail(server, org.key, { name: "eu", allowed_data_regions: ["europe"] });
    assert.deepEqual(one.body.data.allowed_data_regions, ["europe"]);
    await assertRefused({ name: "r", allowed_data_regions: ["europe", "asia"] }, "/allowed_data_regions/1");
    await assertRefused({ name: "r", allowed_data_regions: ["EU"] }, "/allowed_data_regions/0");
  });

  it("models may be named by slug or canonical slug, are stored as the canonical slug, duplicates collapse (docs/behaviour.md#model-lists)", async () => {
    const org = await server.newOrg();
    const res = await createGuardrail(server, org.key, {
      name: "models",
      allowed_models: [SONNET.slug, SONNET.canonical, GPT5.slug],
      ignored_models: [GEMINI.slug, GEMINI.slug],
    });
    assert.deepEqual([...res.body.data.allowed_models].sort(), [SONNET.canonical, GPT5.canonical].sort());
    assert.deepEqual(res.body.data.ignored_models, [GEMINI.canonical]);
    assert.deepEqual(await getGuardrail(server, org.key, res.body.data.id), res.body.data);
  });

  it("an unknown model is 400 naming it at /<list>/<index> (docs/behaviour.md#model-lists)", async () => {
    for (const field of ["allowed_models", "ignored_models"]) {
      const res = await assertRefused({ name: "m", [field]: [GPT5.slug, "nobody/no-model"] }, `/${field}/1`);
      assert.match(issueText(res, `/${field}/1`), /nobody\/no-model/);
    }
  });

  it("providers must be provider ids of the catalog; an unknown one is 400 naming it (docs/behaviour.md#provider-lists)", async () => {
    const org = await server.newOrg();
    const res = await createGuardrail(server, org.key, {
      name: "providers",
      allowed_providers: ["anthropic", "google-vertex"],
      ignored_providers: ["together"],
    });
    assert.deepEqual([...res.body.data.allowed_providers].sort(), ["anthropic", "google-vertex"]);
    assert.deepEqual(res.body.data.ignored_providers, ["together"]);
    for (const field of ["allowed_providers", "ignored_providers"]) {
      const bad = await assertRefused({ name: "p", [field]: ["openai", "no-such-provider"] }, `/${field}/1`);
      assert.match(issueText(bad, `/${field}/1`), /no-such-provider/);
    }
  });

  it("limit_usd without reset_interval, and the reverse, are 400 (docs/behaviour.md#budget-fields)", async () => {
    await assertRefused({ name: "l", limit_usd: 10 }, "/reset_interval");
    await assertRefused({ name: "l", limit_usd: 10, reset_interval: null }, "/reset_interval");
    await assertRefused({ name: "l", reset_interval: "daily" }, "/limit_usd");
    await assertRefused({ name: "l", reset_interval: "monthly", limit_usd: null }, "/limit_usd");
    const org = await server.newOrg();
    const none = await createGuardrail(server, org.key, {
      name: "none",
      limit_usd: null,
      reset_interval: null,
    });
    assert.equal(none.body.data.limit_usd, null);
    assert.equal(none.body.data.reset_interval, null);
  });

  it("reset_interval is daily, weekly or monthly; anything else is 400 (docs/behaviour.md#budget-fields)", async () => {
    const org = await server.newOrg();
    for (const reset_interval of ["daily", "weekly", "monthly"]) {
      const res = await createGuardrail(server, org.key, {
        name: reset_interval,
        limit_usd: 1,
        reset_interval,
      });
      assert.equal(res.body.data.reset_interval, reset_interval);
    }
    await assertRefused({ name: "l", limit_usd: 1, reset_interval: "yearly" }, "/reset_interval");
    await assertRefused({ name: "l", limit_usd: 1, reset_interval: "Daily" }, "/reset_interval");
  });

  it("limit_usd is at least 0: a negative limit is 400, 0 is accepted (docs/behaviour.md#budget-fields)", async () => {
    await assertRefused({ name: "l", limit_usd: -1, reset_interval: "daily" }, "/limit_usd");
    await assertRefused({ name: "l", limit_usd: -0.000001, reset_interval: "daily" }, "/limit_usd");
    const org = await server.newOrg();
    const zero = await createGuardrail(server, org.key, {
      name: "zero",
      limit_usd: 0,
      reset_interval: "daily",
    });
    assert.equal(zero.body.data.limit_usd, 0);
  });

  it("limit_usd is kept exactly to the micro-dollar; finer amounts are 400 (docs/behaviour.md#budget-fields)", async () => {
    const org = await server.newOrg();
    for (const limit_usd of [0.1, 0.000001, 1234.567891, 0.3, 1000000]) {
      const res = await createGuardrail(server, org.key, {
        name: "exact",
        limit_usd,
        reset_interval: "daily",
      });
      assert.equal(res.body.data.limit_usd, limit_usd);
      assert.equal((await getGuardrail(server, org.key, res.body.data.id)).limit_usd, limit_usd);
    }
    await assertRefused({ name: "l", limit_usd: 0.0000001, reset_interval: "daily" }, "/limit_usd");
    await assertRefused({ name: "l", limit_usd: 1.0000005, reset_interval: "daily" }, "/limit_usd");
  });

  it("enforce_zdr is copied into every family flag not sent explicitly, never stored, returned null (docs/behaviour.md#enforce-zdr-deprecated)", async () => {
    const org = await server.newOrg();
    const allButB = await createGuardrail(server, org.key, {
      name: "zdr",
      enforce_zdr: true,
      enforce_zdr_openai: false,
    });
    assert.deepEqual(zdrFlags(allButB.body.data), {
      anthropic: true,
      openai: false,
      google: true,
      xai: true,
      other: true,
    });
    assert.equal(allButB.body.data.enforce_zdr, null);
    const stored = await getGuardrail(server, org.key, allButB.body.data.id);
    assert.deepEqual(stored, allButB.body.data);

    const onlyA = await createGuardrail(server, org.key, {
      name: "zdr-a",
      enforce_zdr: false,
      enforce_zdr_anthropic: true,
    });
    assert.deepEqual(zdrFlags(onlyA.body.data), {
      ...Object.fromEntries(FAMILIES.map((f) => [f, false])),
      anthropic: true,
    });
    assert.equal(onlyA.body.data.enforce_zdr, null);

    const onlyOther = await createGuardrail(server, org.key, { name: "zdr-other", enforce_zdr_other: true });
    assert.deepEqual(zdrFlags(onlyOther.body.data), {
      ...Object.fromEntries(FAMILIES.map((f) => [f, false])),
      other: true,
    });
  });

  it("include_byok_in_budgets and the enable_* permissions are stored as sent (docs/behaviour.md#data-policy-permissions)", async () => {
    const org = await server.newOrg();
    const res = await createGuardrail(server, org.key, {
      name: "flags",
      include_byok_in_budgets: true,
      enable_free_model_publication: true,
      enable_free_model_training: false,
      enable_paid_model_training: false,
    });
    const data = await getGuardrail(server, org.key, res.body.data.id);
    assert.equal(data.include_byok_in_budgets, true);
    assert.equal(data.enable_free_model_publication, true);
    assert.equal(data.enable_free_model_training, false);
    assert.equal(data.enable_paid_model_training, false);
  });
});
