import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { OpenRouter } from "@openrouter/sdk";
import type { ActivityItem } from "@openrouter/sdk/models";
import { BadRequestResponseError, ForbiddenResponseError } from "@openrouter/sdk/models/errors";
import { clientFor, TEST_DATABASE_KIND, type TestOrg } from "../helpers/server.js";
import {
  ask,
  chat,
  type GatewayBench,
  LLAMA,
  providerKey,
  SONNET,
  startGatewayBench,
  upstreamKeyOf,
} from "./gateway-support.js";
import { type MadeKey, orgSteps } from "./org-support.js";

/** The scripted 1,000 prompt and 100 completion tokens: Sonnet at 3 and 15 dollars a million tokens. */
const SONNET_USD = 0.0045;
/** ... and Llama 3.1 8B at 0.02 and 0.05. */
const LLAMA_USD = 0.000025;
const SONNET_PERMASLUG = "anthropic/claude-4.5-sonnet-20250929";
const LLAMA_PERMASLUG = "meta-llama/llama-3.1-8b-instruct-20240723";

/**
 * GET /api/v1/activity driven by the official SDK with its strict response validation on: a call
 * whose answer does not match the SDK's ActivityResponse fails, so every successful call proves the
 * shape, and the asserts check the grouping against spend made at known instants.
 */
describe(`GET /api/v1/activity through the reference SDK's analytics.getUserActivity, on ${TEST_DATABASE_KIND} (docs/api.md#activity)`, () => {
  let bench: GatewayBench;
  let clock = new Date("2026-11-09T23:59:59.999Z");
  let org: TestOrg;
  let other: TestOrg;
  let adaKey: MadeKey;
  let secondKey: MadeKey;
  let otherKey: MadeKey;
  let secondWorkspace: string;
  /** The provider each model was routed to, as the upstream saw it (by the provider key it got). */
  const routed = new Map<string, string>();
  const providerNames = new Map<string, string>();

  async function spend(key: MadeKey, model: string, at: string): Promise<void> {
    clock = new Date(at);
    const res = await chat(bench.server, key.secret, ask("hello", model));
    assert.equal(res.status, 200, res.text);
    const auth = String(upstreamKeyOf(bench.received.at(-1)));
    const provider = [...providerNames.keys()].find((id) => auth === providerKey(id));
    assert.ok(provider, auth);
    // The catalog routes a model the same way every time here, so one provider per model.
    assert.equal(routed.get(model) ?? provider, provider);
    routed.set(model, provider);
  }

  before(async () => {
    delete process.env.OPENROUTER_API_KEY;
    delete process.env.OPENROUTER_BASE_URL;
    bench = await startGatewayBench({ now: () => clock });
    for (const p of bench.server.deps.catalog.providers) providerNames.set(p.id, p.name);
    org = await bench.server.newOrg();
    const steps = orgSteps(bench.server, org);
    await steps.member("ada");
    adaKey = await steps.key({ creator_user_id: "ada" });
    secondWorkspace = (await steps.workspace("second")).id;
    secondKey = await steps.key({ workspace_id: secondWorkspace });
    other = await bench.server.newOrg();
    otherKey = await orgSteps(bench.server, other).key();
    bench.script.next = () => ({ usage: { prompt_tokens: 1000, completion_tokens: 100 } });
    // Asked on 2026-12-10, the report covers 2026-11-10 to 2026-12-09: the first instant of its
    // first day and the last of its last day count; the day before and today do not.
    await spend(adaKey, SONNET, "2026-11-09T23:59:59.999Z");
    await spend(adaKey, SONNET, "2026-11-10T00:00:00.000Z");
    await spend(adaKey, SONNET, "2026-11-10T08:00:00.000Z");
    await spend(adaKey, LLAMA, "2026-11-10T09:00:00.000Z");
    await spend(otherKey, SONNET, "2026-11-10T10:00:00.000Z");
    await spend(secondKey, SONNET, "2026-12-09T23:59:59.999Z");
    await spend(adaKey, SONNET, "2026-12-10T00:00:00.000Z");
    bench.script.next = undefined;
    clock = new Date("2026-12-10T12:00:00.000Z");
  });
  after(async () => {
    await bench.close();
  });

  const sdk = (apiKey: string) =>
    new OpenRouter({ apiKey, serverURL: bench.server.baseUrl, retryConfig: { strategy: "none" } });

  function item(date: string, model: string, requests: number, usd: number): ActivityItem {
    const provider = routed.get(model) ?? "";
    return {
      date,
      model,
      modelPermaslug: model === SONNET ? SONNET_PERMASLUG : LLAMA_PERMASLUG,
      endpointId: "",
      providerName: providerNames.get(provider) ?? provider,
      usage: usd,
      byokUsageInference: 0,
      requests,
      promptTokens: 1000 * requests,
      completionTokens: 100 * requests,
      reasoningTokens: 0,
    };
  }

  it("one row per UTC day, model and provider over the last 30 completed days: the day before them and today are left out", async () => {
    const res = await sdk(org.key).analytics.getUserActivity();
    assert.deepEqual(res.data, [
      item("2026-11-10", SONNET, 2, 2 * SONNET_USD),
      item("2026-11-10", LLAMA, 1, LLAMA_USD),
      item("2026-12-09", SONNET, 1, SONNET_USD),
    ]);
  });

  it("date picks one day of them; filters by key hash, member and workspace", async () => {
    const admin = sdk(org.key);
    assert.deepEqual((await admin.analytics.getUserActivity({ date: "2026-12-09" })).data, [
      item("2026-12-09", SONNET, 1, SONNET_USD),
    ]);
    assert.deepEqual((await admin.analytics.getUserActivity({ apiKeyHash: secondKey.hash })).data, [
      item("2026-12-09", SONNET, 1, SONNET_USD),
    ]);
    assert.deepEqual((await admin.analytics.getUserActivity({ userId: "ada" })).data, [
      item("2026-11-10", SONNET, 2, 2 * SONNET_USD),
      item("2026-11-10", LLAMA, 1, LLAMA_USD),
    ]);
    assert.deepEqual((await admin.analytics.getUserActivity({ workspaceId: secondWorkspace })).data, [
      item("2026-12-09", SONNET, 1, SONNET_USD),
    ]);
    assert.deepEqual((await admin.analytics.getUserActivity({ userId: "nobody" })).data, []);
  });

  it("group_by=workspace splits rows per workspace and names it on each; otherwise no row carries one", async () => {
    const admin = sdk(org.key);
    const split = await admin.analytics.getUserActivity({ groupBy: "workspace" });
    assert.deepEqual(split.data, [
      { ...item("2026-11-10", SONNET, 2, 2 * SONNET_USD), workspaceId: org.workspaceId },
      { ...item("2026-11-10", LLAMA, 1, LLAMA_USD), workspaceId: org.workspaceId },
      { ...item("2026-12-09", SONNET, 1, SONNET_USD), workspaceId: secondWorkspace },
    ]);
    const raw = await clientFor(bench.server, org.key).get("/api/v1/activity");
    assert.equal(raw.status, 200);
    assert.ok(
      raw.body.data.every((r: Record<string, unknown>) => !("workspace_id" in r)),
      JSON.stringify(raw.body),
    );
  });

  it("another organization sees only its own spend, and nothing when it names this organization's key, member or workspace", async () => {
    const theirs = sdk(other.key);
    assert.deepEqual((await theirs.analytics.getUserActivity()).data, [
      item("2026-11-10", SONNET, 1, SONNET_USD),
    ]);
    for (const filter of [{ apiKeyHash: adaKey.hash }, { userId: "ada" }, { workspaceId: secondWorkspace }]) {
      assert.deepEqual((await theirs.analytics.getUserActivity(filter)).data, [], JSON.stringify(filter));
    }
  });

  it("a bad date, one outside the 30 completed days (today included) or an unknown parameter is 400 in the error envelope naming it", async () => {
    for (const date of ["2026-02-30", "10/12/2026", "2026-11-09", "2026-12-10"]) {
      const err = await sdk(org.key)
        .analytics.getUserActivity({ date })
        .then(
          (value) => assert.fail(`${date}: expected a rejection, got ${JSON.stringify(value)}`),
          (e: unknown) => e,
        );
      assert.ok(err instanceof BadRequestResponseError, `${date}: ${String(err)}`);
    }
    const api = clientFor(bench.server, org.key);
    for (const [query, path] of [
      ["date=2026-02-30", "/date"],
      ["date=2026-11-09", "/date"],
      ["date=2026-12-10", "/date"],
      ["group_by=model", "/group_by"],
      ["api_key_hash=not-a-hash", "/api_key_hash"],
      ["workspace_id=nope", "/workspace_id"],
      ["colour=red", "/colour"],
    ] as const) {
      const res = await api.get(`/api/v1/activity?${query}`);
      assert.equal(res.status, 400, query);
      assert.equal(res.body.error.code, 400);
      assert.equal(res.body.error.message, "Invalid request parameters");
      assert.ok(
        res.body.error.metadata.issues.some((i: { path: string }) => i.path === path),
        `${query}: ${JSON.stringify(res.body.error.metadata.issues)}`,
      );
    }
  });

  it("an inference key is refused (403): the report needs a management key", async () => {
    const err = await sdk(adaKey.secret)
      .analytics.getUserActivity()
      .then(
        (value) => assert.fail(`expected a rejection, got ${JSON.stringify(value)}`),
        (e: unknown) => e,
      );
    assert.ok(err instanceof ForbiddenResponseError, String(err));
  });
});
