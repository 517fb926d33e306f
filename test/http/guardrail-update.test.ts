import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { standardAuthCases } from "../helpers/auth-cases.js";
import { call, clientFor, startTestServer, type TestOrg, type TestServer } from "../helpers/server.js";
import {
  assertInvalid,
  createGuardrail,
  FAMILIES,
  GEMINI,
  GPT5,
  getGuardrail,
  ISO_UTC,
  SONNET,
  zdrFlags,
} from "./guardrail-support.js";

/** A guardrail with every nullable property set, so that clearing and keeping are both visible. */
const FULL = {
  name: "Full",
  description: "before",
  allowed_data_regions: ["europe"],
  allowed_models: [SONNET.canonical, GPT5.canonical],
  allowed_providers: ["anthropic", "openai"],
  ignored_models: [GEMINI.canonical],
  ignored_providers: ["deepinfra"],
  content_filter_builtins: [{ slug: "email", action: "redact" }],
  content_filters: [{ pattern: "secret-\\d+", action: "block", label: "[S]" }],
  enforce_zdr_anthropic: true,
  include_byok_in_budgets: true,
  limit_usd: 10,
  reset_interval: "daily",
};

describe("PATCH /api/v1/guardrails/{id}: update a guardrail (docs/behaviour.md#guardrail-fields; docs/behaviour.md#partial-update)", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });

  async function made(org: TestOrg, body: Record<string, unknown> = FULL) {
    return (await createGuardrail(server, org.key, body)).body.data as Record<string, unknown>;
  }

  /** PATCH, expect 200, and check that GET returns the same data afterwards. */
  async function patchOk(org: TestOrg, id: unknown, body: Record<string, unknown>) {
    const res = await clientFor(server, org.key).patch(`/api/v1/guardrails/${id}`, body);
    assert.equal(res.status, 200, `${JSON.stringify(body)} → ${JSON.stringify(res.body)}`);
    assert.deepEqual(Object.keys(res.body), ["data"]);
    assert.deepEqual(await getGuardrail(server, org.key, String(id)), res.body.data);
    return res.body.data as Record<string, unknown>;
  }

  /** PATCH, expect a 400 naming one of the paths, and the stored guardrail unchanged. */
  async function patchRefused(
    org: TestOrg,
    stored: Record<string, unknown>,
    body: unknown,
    ...paths: string[]
  ) {
    const res = await clientFor(server, org.key).patch(`/api/v1/guardrails/${stored.id}`, body);
    assertInvalid(res, ...paths);
    assert.deepEqual(await getGuardrail(server, org.key, String(stored.id)), stored, JSON.stringify(body));
    return res;
  }

  describe("authentication (docs/behaviour.md#authentication)", () => {
    standardAuthCases(() => server, {
      method: "PATCH",
      path: async (org) => `/api/v1/guardrails/${(await made(org, { name: "auth" })).id}`,
      body: { name: "renamed" },
    });
  });

  it("200 {data}: only the supplied property changes, updated_at is set and not before created_at (docs/behaviour.md#partial-update)", async () => {
    const org = await server.newOrg();
    const stored = await made(org);
    assert.equal(stored.updated_at, null);
    const data = await patchOk(org, stored.id, { name: "Renamed" });
    assert.deepEqual({ ...data, updated_at: null }, { ...stored, name: "Renamed" });
    assert.match(String(data.updated_at), ISO_UTC);
    assert.ok(Date.parse(String(data.updated_at)) >= Date.parse(String(stored.created_at)));
  });

  it("each property sent alone changes that property and nothing else (docs/behaviour.md#partial-update)", async () => {
    const org = await server.newOrg();
    let expected = await made(org);
    const steps: [Record<string, unknown>, Record<string, unknown>][] = [
      [{ description: "after" }, { description: "after" }],
      [{ allowed_data_regions: ["us"] }, { allowed_data_regions: ["us"] }],
      [{ allowed_models: [GEMINI.slug] }, { allowed_models: [GEMINI.canonical] }],
      [{ allowed_providers: ["google-vertex"] }, { allowed_providers: ["google-vertex"] }],
      [{ ignored_models: [SONNET.slug, SONNET.canonical] }, { ignored_models: [SONNET.canonical] }],
      [{ ignored_providers: ["groq", "groq"] }, { ignored_providers: ["groq"] }],
      [{ enable_free_model_publication: true }, { enable_free_model_publication: true }],
      [{ enable_free_model_training: false }, { enable_free_model_training: false }],
      [{ enable_paid_model_training: false }, { enable_paid_model_training: false }],
      [{ enforce_zdr_other: true }, { enforce_zdr_other: true }],
      [{ include_byok_in_budgets: false }, { include_byok_in_budgets: false }],
      [{ limit_usd: 0.1 }, { limit_usd: 0.1 }],
      [{ reset_interval: "monthly" }, { reset_interval: "monthly" }],
      [{ name: "Final" }, { name: "Final" }],
    ];
    for (const [body, change] of steps) {
      const data = await patchOk(org, expected.id, body);
      assert.match(String(data.updated_at), ISO_UTC, "updated_at is set on every update");
      assert.ok(
        Date.parse(String(data.updated_at)) >= Date.parse(String(expected.updated_at ?? data.created_at)),
      );
      assert.deepEqual(data, { ...expected, ...change, updated_at: data.updated_at }, JSON.stringify(body));
      expected = data;
    }
  });

  it("null clears description, every list and both filter lists (docs/behaviour.md#empty-lists; docs/behaviour.md#partial-update)", async () => {
    const org = await server.newOrg();
    const stored = await made(org);
    const cleared = {
      description: null,
      allowed_data_regions: null,
      allowed_models: null,
      allowed_providers: null,
      ignored_models: null,
      ignored_providers: null,
      content_filter_builtins: null,
      content_filters: null,
    };
    const data = await patchOk(org, stored.id, cleared);
    assert.deepEqual(data, { ...stored, ...cleared, updated_at: data.updated_at });
  });

  it("lists replace the stored value whole, they are not merged (docs/behaviour.md#partial-update)", async () => {
    const org = await server.newOrg();
    const stored = await made(org);
    const data = await patchOk(org, stored.id, {
      allowed_models: [GEMINI.slug],
      allowed_providers: ["xai"],
      allowed_data_regions: ["us"],
      content_filters: [{ pattern: "other", action: "flag" }],
    });
    assert.deepEqual(data.allowed_models, [GEMINI.canonical]);
    assert.deepEqual(data.allowed_providers, ["xai"]);
    assert.deepEqual(data.allowed_data_regions, ["us"]);
    assert.deepEqual(data.content_filters, [{ pattern: "other", action: "flag", label: null }]);
  });

  it("include_byok_in_budgets is unchanged when omitted (docs/behaviour.md#budget-fields)", async () => {
    const org = await server.newOrg();
    const stored = await made(org, { name: "byok", include_byok_in_budgets: true });
    assert.equal((await patchOk(org, stored.id, { description: "x" })).include_byok_in_budgets, true);
    assert.equal(
      (await patchOk(org, stored.id, { include_byok_in_budgets: false })).include_byok_in_budgets,
      false,
    );
    assert.equal((await patchOk(org, stored.id, { name: "byok 2" })).include_byok_in_budgets, false);
  });

  it("with a stored limit, dropping only one of limit_usd/reset_interval is 400; changing one alone or clearing both is 200 (docs/behaviour.md#budget-fields)", async () => {
    const org = await server.newOrg();
    const stored = await made(org, { name: "limit", limit_usd: 10, reset_interval: "daily" });
    const res = await patchRefused(org, stored, { reset_interval: null });
    assert.ok(
      res.body.error.metadata.issues.some((i: { path: string }) =>
        ["/limit_usd", "/reset_interval"].includes(i.path),
      ),
      JSON.stringify(res.body),
    );
    await patchRefused(org, stored, { limit_usd: null });
    const raised = await patchOk(org, stored.id, { limit_usd: 20 });
    assert.deepEqual([raised.limit_usd, raised.reset_interval], [20, "daily"]);
    const weekly = await patchOk(org, stored.id, { reset_interval: "weekly" });
    assert.deepEqual([weekly.limit_usd, weekly.reset_interval], [20, "weekly"]);
    const none = await patchOk(org, stored.id, { limit_usd: null, reset_interval: null });
    assert.deepEqual([none.limit_usd, none.reset_interval], [null, null]);
  });

  it("without a stored limit, limit_usd alone or reset_interval alone is 400; both together are 200 (docs/behaviour.md#budget-fields)", async () => {
    const org = await server.newOrg();
    const stored = await made(org, { name: "no limit" });
    await patchRefused(org, stored, { limit_usd: 5 }, "/reset_interval");
    await patchRefused(org, stored, { reset_interval: "daily" }, "/limit_usd");
    const both = await patchOk(org, stored.id, { limit_usd: 5, reset_interval: "monthly" });
    assert.deepEqual([both.limit_usd, both.reset_interval], [5, "monthly"]);
  });

  it("enforce_zdr on update is copied into every family flag not sent, and returned null (docs/behaviour.md#enforce-zdr-deprecated)", async () => {
    const org = await server.newOrg();
    const stored = await made(org, { name: "zdr", enforce_zdr_anthropic: true });
    const allButC = await patchOk(org, stored.id, { enforce_zdr: true, enforce_zdr_google: false });
    assert.deepEqual(zdrFlags(allButC), {
      anthropic: true,
      openai: true,
      google: false,
      xai: true,
      other: true,
    });
    assert.equal(allButC.enforce_zdr, null);
    const onlyD = await patchOk(org, stored.id, { enforce_zdr: false, enforce_zdr_xai: true });
    assert.deepEqual(zdrFlags(onlyD), {
      ...Object.fromEntries(FAMILIES.map((f) => [f, false])),
      xai: true,
    });
    const plusB = await patchOk(org, stored.id, { enforce_zdr_openai: true });
    assert.deepEqual(zdrFlags(plusB), { ...zdrFlags(onlyD), openai: true });
    assert.equal(plusB.enforce_zdr, null);
  });

  it("workspace_id, id, created_at and updated_at in the body are 400 naming them (docs/behaviour.md#not-updatable)", async () => {
    const org = await server.newOrg();
    const stored = await made(org);
    const cases: Record<string, unknown> = {
      workspace_id: org.workspaceId,
      id: stored.id,
      created_at: stored.created_at,
      updated_at: "2030-01-01T00:00:00.000Z",
    };
    for (const [field, value] of Object.entries(cases)) {
      await patchRefused(org, stored, { [field]: value }, `/${field}`);
      await patchRefused(org, stored, { description: "sneaky", [field]: value }, `/${field}`);
    }
  });

  it("invalid values are 400 on update as on create and change nothing (docs/behaviour.md#guardrail-create; docs/behaviour.md#guardrail-fields)", async () => {
    const org = await server.newOrg();
    const stored = await made(org);
    const cases: [Record<string, unknown>, string][] = [
      [{ name: "" }, "/name"],
      [{ name: null }, "/name"],
      [{ name: "😀".repeat(201) }, "/name"],
      [{ description: "d".repeat(1001) }, "/description"],
      [{ allowed_models: [] }, "/allowed_models"],
      [{ allowed_providers: [] }, "/allowed_providers"],
      [{ ignored_models: [] }, "/ignored_models"],
      [{ ignored_providers: [] }, "/ignored_providers"],
      [{ allowed_data_regions: [] }, "/allowed_data_regions"],
      [{ allowed_data_regions: ["mars"] }, "/allowed_data_regions/0"],
      [{ allowed_models: [GPT5.slug, "no/such-model"] }, "/allowed_models/1"],
      [{ ignored_providers: ["nope"] }, "/ignored_providers/0"],
      [{ limit_usd: -1 }, "/limit_usd"],
      [{ limit_usd: "10" }, "/limit_usd"],
      [{ limit_usd: 0.0000001 }, "/limit_usd"],
      [{ reset_interval: "hourly" }, "/reset_interval"],
      [{ include_byok_in_budgets: "false" }, "/include_byok_in_budgets"],
      [{ allowed_modles: [GPT5.slug] }, "/allowed_modles"],
    ];
    for (const [body, path] of cases) await patchRefused(org, stored, body, path);
  });

  it('a non-UUID id, an unknown id and another organization\'s id are 404 "Resource not found" (docs/behaviour.md#organizations; docs/behaviour.md#update-not-found)', async () => {
    const org = await server.newOrg();
    const other = await server.newOrg();
    const theirs = await made(other, { name: "theirs" });
    for (const id of ["not-a-uuid", "123", "4b4a0a36-0000-4000-8000-000000000000", theirs.id]) {
      const res = await call(server, "PATCH", `/api/v1/guardrails/${id}`, {
        key: org.key,
        body: { name: "mine now" },
      });
      assert.equal(res.status, 404, String(id));
      assert.equal(res.body.error.code, 404);
      assert.equal(res.body.error.message, "Resource not found");
    }
    assert.deepEqual(await getGuardrail(server, other.key, String(theirs.id)), theirs);
  });
});
