import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { call, startTestServer, type TestServer } from "../helpers/server.js";
import { GEMINI, GPT5, SONNET } from "./guardrail-support.js";
import { currentKey, INFERENCE_ONLY, INVALID_KEY, layersOf, MISSING_AUTH, orgSteps } from "./org-support.js";

const FAMILIES = ["anthropic", "openai", "google", "xai", "other"];

/** The effective policy of a key that no guardrail governs: nothing restricted, nothing enforced. */
function unrestricted(): Record<string, unknown> {
  const out: Record<string, unknown> = {
    allowed_data_regions: null,
    allowed_models: null,
    allowed_providers: null,
    ignored_models: [],
    ignored_providers: [],
    enable_free_model_publication: true,
    enable_free_model_training: true,
    enable_paid_model_training: true,
    content_filter_builtins: [],
    content_filters: [],
  };
  for (const f of FAMILIES) out[`enforce_zdr_${f}`] = false;
  return out;
}

describe("GET /api/v1/key: the calling key and its effective policy (docs/behaviour.md#current-key; docs/behaviour.md#combination)", () => {
  let server: TestServer;
  // A Wednesday afternoon, UTC; tests that need another instant set it and restore it.
  let clock = new Date("2025-03-12T15:30:00.000Z");
  before(async () => {
    server = await startTestServer({ now: () => clock });
  });
  after(async () => {
    await server.close();
  });

  it("without an Authorization header it is 401 Missing Authentication header (docs/behaviour.md#bearer-keys)", async () => {
    const res = await call(server, "GET", "/api/v1/key", { key: null });
    assert.equal(res.status, 401);
    assert.deepEqual(res.body, MISSING_AUTH);
  });

  it("an unknown key, a non-Bearer value or a bare Bearer is 401 Invalid API key (docs/behaviour.md#bearer-keys)", async () => {
    const org = await server.newOrg();
    const key = await orgSteps(server, org).key();
    for (const authorization of ["Bearer sk-gr-v1-not-a-real-key", `Basic ${key.secret}`, "Bearer"]) {
      const res = await call(server, "GET", "/api/v1/key", { key: null, headers: { authorization } });
      assert.equal(res.status, 401, authorization);
      assert.deepEqual(res.body, INVALID_KEY, authorization);
    }
  });

  it('a management key is 403 "Only inference keys can perform this operation" (docs/behaviour.md#current-key; docs/behaviour.md#key-kinds)', async () => {
    const org = await server.newOrg();
    const res = await call(server, "GET", "/api/v1/key", { key: org.key });
    assert.equal(res.status, 403);
    assert.deepEqual(res.body, INFERENCE_ONLY);
  });

  it("a key no guardrail governs: its identity, no guardrails, no restriction, no budgets (docs/behaviour.md#current-key)", async () => {
    const org = await server.newOrg();
    const key = await orgSteps(server, org).key({ name: "plain" });
    const res = await currentKey(server, key.secret);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body, {
      data: {
        hash: key.hash,
        name: "plain",
        label: key.label,
        organization_id: org.organizationId,
        workspace_id: org.workspaceId,
        member_user_id: null,
        creator_user_id: null,
        expires_at: null,
        is_management_key: false,
        is_provisioning_key: false,
        is_free_tier: false,
        limit: null,
        limit_remaining: null,
        limit_reset: null,
        include_byok_in_limit: false,
        usage: 0,
        usage_daily: 0,
        usage_weekly: 0,
        usage_monthly: 0,
        byok_usage: 0,
        byok_usage_daily: 0,
        byok_usage_weekly: 0,
        byok_usage_monthly: 0,
        rate_limit: { requests: -1, interval: "10s", note: "This field is deprecated and safe to ignore." },
        free_model_daily_requests: { limit: -1, remaining: -1, used: 0 },
        guardrails: [],
        allowed_data_regions: ["global", "europe", "us"],
        effective_policy: unrestricted(),
        budgets: [],
      },
    });
  });

  it("allowed_data_regions is the intersection of the workspace default, member and key guardrails (docs/behaviour.md#combination)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const ws = (await steps.api.get(`/api/v1/workspaces/${org.workspaceId}`)).body.data;
    await steps.member("m");
    const key = await steps.key({ member_user_id: "m" });
    const regions = async () => {
      const res = await currentKey(server, key.secret);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      // The top-level list is the reference SDK's: every region where the policy has no restriction.
      assert.deepEqual(
        res.body.data.effective_policy.allowed_data_regions ?? ["global", "europe", "us"],
        res.body.data.allowed_data_regions,
      );
      return res.body.data.effective_policy.allowed_data_regions;
    };
    assert.equal(await regions(), null);
    const wsDefault = await steps.patchGuardrail(ws.default_guardrail_id, {
      allowed_data_regions: ["europe", "us"],
    });
    assert.deepEqual((await regions()).sort(), ["europe", "us"]);
    const memberG = await steps.guardrail({ allowed_data_regions: ["global", "europe"] });
    await steps.assignMembers(memberG.id, ["m"]);
    assert.deepEqual(await regions(), ["europe"]);
    const keyG = await steps.guardrail({ allowed_data_regions: ["europe", "global", "us"] });
    await steps.assignKeys(keyG.id, [key.hash]);
    assert.deepEqual(await regions(), ["europe"]);
    // The key's own guardrail takes part too: excluding europe leaves nothing allowed.
    await steps.patchGuardrail(keyG.id, { allowed_data_regions: ["us", "global"] });
    assert.deepEqual(await regions(), []);
    const res = await currentKey(server, key.secret);
    assert.deepEqual(layersOf(res), [
      ["workspace_default", wsDefault.id],
      ["member", memberG.id],
      ["key", keyG.id],
    ]);
    // Each listed guardrail is the stored guardrail, tagged with its layer.
    for (const g of res.body.data.guardrails) {
      const { layer, ...rest } = g;
      assert.deepEqual({ data: rest }, (await steps.api.get(`/api/v1/guardrails/${g.id}`)).body, layer);
    }
  });

  it("the member's guardrail applies only in the key's workspace, and only to the member's keys (docs/behaviour.md#layers)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const a = await steps.workspace("a");
    await steps.member("m", { workspace_ids: [a.id] });
    const inA = await steps.guardrail({ workspace_id: a.id, allowed_data_regions: ["us"] });
    await steps.assignMembers(inA.id, ["m"]);
    const homeKey = await steps.key({ member_user_id: "m" });
    const awayKey = await steps.key({ workspace_id: a.id, member_user_id: "m" });
    const strangerKey = await steps.key({ workspace_id: a.id });
    assert.deepEqual(layersOf(await currentKey(server, homeKey.secret)), []);
    assert.deepEqual(layersOf(await currentKey(server, awayKey.secret)), [["member", inA.id]]);
    assert.deepEqual(layersOf(await currentKey(server, strangerKey.secret)), []);
    // The workspace default that applies is the key's workspace's, not the organization default's.
    const defaultA = await steps.patchGuardrail(a.default_guardrail_id, { enforce_zdr_openai: true });
    assert.deepEqual(layersOf(await currentKey(server, homeKey.secret)), []);
    assert.deepEqual(layersOf(await currentKey(server, strangerKey.secret)), [
      ["workspace_default", defaultA.id],
    ]);
  });

  it("the effective policy combines the layers: allowed lists intersect, ignored lists unite, ZDR if any, enable_* if all, strictest filter (docs/behaviour.md#combination)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const ws = (await steps.api.get(`/api/v1/workspaces/${org.workspaceId}`)).body.data;
    await steps.member("m");
    const key = await steps.key({ member_user_id: "m" });
    await steps.patchGuardrail(ws.default_guardrail_id, {
      allowed_models: [SONNET.slug, GPT5.slug, GEMINI.slug],
      ignored_providers: ["azure"],
      content_filter_builtins: [{ slug: "email", action: "flag" }],
      content_filters: [{ pattern: "secret-\\d+", action: "flag", label: "S" }],
    });
    const memberG = await steps.guardrail({
      allowed_models: [GPT5.canonical, SONNET.slug],
      ignored_providers: ["together"],
      ignored_models: [GEMINI.slug],
      enforce_zdr_google: true,
      enable_paid_model_training: false,
      content_filter_builtins: [{ slug: "email", action: "block" }],
    });
    const keyG = await steps.guardrail({
      allowed_providers: ["anthropic", "openai"],
      ignored_providers: ["azure"],
      enable_free_model_training: false,
      content_filters: [{ pattern: "secret-\\d+", action: "redact", label: "S" }],
      content_filter_builtins: [{ slug: "phone", action: "redact" }],
    });
    await steps.assignMembers(memberG.id, ["m"]);
    await steps.assignKeys(keyG.id, [key.hash]);
    const res = await currentKey(server, key.secret);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const zdr = Object.fromEntries(FAMILIES.map((f) => [`enforce_zdr_${f}`, f === "google"]));
    assert.deepEqual(res.body.data.effective_policy, {
      ...unrestricted(),
      ...zdr,
      allowed_models: [SONNET.canonical, GPT5.canonical].sort(),
      allowed_providers: ["anthropic", "openai"],
      ignored_models: [GEMINI.canonical],
      ignored_providers: ["azure", "together"],
      enable_free_model_publication: false,
      enable_free_model_training: false,
      enable_paid_model_training: false,
      content_filter_builtins: [
        { slug: "email", action: "block", label: "[EMAIL]" },
        { slug: "phone", action: "redact", label: "[PHONE]" },
      ],
      content_filters: [{ pattern: "secret-\\d+", action: "redact", label: "S" }],
    });
  });

  it("budgets: one entry per layer and scope, nothing spent, in the current UTC calendar window (docs/behaviour.md#budget-windows)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const ws = (await steps.api.get(`/api/v1/workspaces/${org.workspaceId}`)).body.data;
    await steps.member("m");
    const owned = await steps.key({ member_user_id: "m" });
    const unowned = await steps.key();
    const d = await steps.patchGuardrail(ws.default_guardrail_id, {
      limit_usd: 10,
      reset_interval: "monthly",
    });
    const mg = await steps.guardrail({ limit_usd: 20.5, reset_interval: "weekly" });
    const kg = await steps.guardrail({ limit_usd: 0.000001, reset_interval: "daily" });
    const nobudget = await steps.guardrail({ allowed_data_regions: ["us"] });
    await steps.assignMembers(mg.id, ["m"]);
    await steps.assignKeys(kg.id, [owned.hash]);
    await steps.assignKeys(nobudget.id, [unowned.hash]);
    const monthly = {
      reset_interval: "monthly",
      window_start: "2025-03-01T00:00:00.000Z",
      resets_at: "2025-04-01T00:00:00.000Z",
    };
    const budget = (guardrail_id: string, layer: string, scope: string, limit: number, w: object) => ({
      guardrail_id,
      layer,
      scope,
      limit_usd: limit,
      spent_usd: 0,
      reserved_usd: 0,
      remaining_usd: limit,
      ...w,
    });
    const budgetsOf = async (secret: string) => {
      const res = await currentKey(server, secret);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body.data.budgets
        .map((b: Record<string, unknown>) => {
          const { include_byok_in_budgets: _ignored, ...rest } = b;
          return rest;
        })
        .sort((x: { layer: string; scope: string }, y: { layer: string; scope: string }) =>
          `${x.layer}/${x.scope}`.localeCompare(`${y.layer}/${y.scope}`),
        );
    };
    assert.deepEqual(await budgetsOf(owned.secret), [
      budget(kg.id, "key", "key", 0.000001, {
        reset_interval: "daily",
        window_start: "2025-03-12T00:00:00.000Z",
        resets_at: "2025-03-13T00:00:00.000Z",
      }),
      budget(mg.id, "member", "member", 20.5, {
        reset_interval: "weekly",
        window_start: "2025-03-10T00:00:00.000Z",
        resets_at: "2025-03-17T00:00:00.000Z",
      }),
      budget(d.id, "workspace_default", "key", 10, monthly),
      budget(d.id, "workspace_default", "member", 10, monthly),
    ]);
    // Without a member the workspace default counts the key alone; a guardrail without a budget adds none.
    assert.deepEqual(await budgetsOf(unowned.secret), [
      budget(d.id, "workspace_default", "key", 10, monthly),
    ]);
  });

  it("budget windows follow the UTC calendar at its edges: Sunday night, Monday 00:00, year end, leap day (docs/behaviour.md#budget-windows)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const key = await steps.key();
    const g = await steps.guardrail({ limit_usd: 1, reset_interval: "weekly" });
    await steps.assignKeys(g.id, [key.hash]);
    const cases: [string, string, string, string][] = [
      ["2025-03-16T23:59:59.999Z", "weekly", "2025-03-10T00:00:00.000Z", "2025-03-17T00:00:00.000Z"],
      ["2025-03-17T00:00:00.000Z", "weekly", "2025-03-17T00:00:00.000Z", "2025-03-24T00:00:00.000Z"],
      ["2024-12-31T23:59:59.999Z", "weekly", "2024-12-30T00:00:00.000Z", "2025-01-06T00:00:00.000Z"],
      ["2024-12-31T23:59:59.999Z", "monthly", "2024-12-01T00:00:00.000Z", "2025-01-01T00:00:00.000Z"],
      ["2024-02-29T12:00:00.000Z", "monthly", "2024-02-01T00:00:00.000Z", "2024-03-01T00:00:00.000Z"],
      ["2024-02-29T23:59:59.999Z", "daily", "2024-02-29T00:00:00.000Z", "2024-03-01T00:00:00.000Z"],
      ["2025-01-01T00:00:00.000Z", "daily", "2025-01-01T00:00:00.000Z", "2025-01-02T00:00:00.000Z"],
    ];
    const saved = clock;
    try {
      for (const [now, reset_interval, window_start, resets_at] of cases) {
        await steps.patchGuardrail(g.id, { reset_interval });
        clock = new Date(now);
        const res = await currentKey(server, key.secret);
        assert.equal(res.status, 200);
        const [b] = res.body.data.budgets;
        assert.deepEqual(
          { reset_interval: b.reset_interval, window_start: b.window_start, resets_at: b.resets_at },
          { reset_interval, window_start, resets_at },
          `${now} ${reset_interval}`,
        );
        clock = saved;
      }
    } finally {
      clock = saved;
    }
  });
});
