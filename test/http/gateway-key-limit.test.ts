import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { clientFor } from "../helpers/server.js";
import {
  ask,
  chat,
  clockedBench,
  GPT_41,
  guardKey,
  MISTRAL_SMALL,
  orgWithKey,
  USAGE_4500,
} from "./gateway-support.js";
import { type MadeKey, orgSteps } from "./org-support.js";

interface KeyBudgetState {
  guardrail_id: string | null;
  layer: string;
  scope: string;
  reset_interval: string;
  limit_usd: number;
  spent_usd: number;
  reserved_usd: number;
  remaining_usd: number;
  resets_at: string | null;
}

describe("a key's own limit is a budget layer of the gateway (docs/gateway.md#budgets, docs/api.md#keys)", () => {
  const bench = clockedBench(new Date("2026-11-24T12:00:00.000Z"));

  /** A key with the given limit fields, as the create answered it. */
  async function newKey(steps: ReturnType<typeof orgSteps>, limit: Record<string, unknown>) {
    return (await steps.key(limit)) as MadeKey & Record<string, unknown>;
  }

  async function keyObject(org: { key: string }, hash: string) {
    const res = await clientFor(bench.server, org.key).get(`/api/v1/keys/${hash}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.data as Record<string, unknown> & { budgets: KeyBudgetState[] };
  }

  it("is charged like a guardrail budget, capped when little is left, then refused 403 budget_exhausted naming the key_limit layer; the key objects show it", async () => {
    bench.clock = new Date("2026-11-24T12:00:00.000Z");
    const org = await bench.server.newOrg();
    const steps = orgSteps(bench.server, org);
    const key = await newKey(steps, { limit: 0.01, limit_reset: "daily" });
    assert.equal(key.limit, 0.01);
    assert.equal(key.limit_remaining, 0.01);
    assert.equal(key.limit_reset, "daily");
    const answers = await bench.withUsage(USAGE_4500, async () => {
      const out = [];
      // max_tokens 300 reserves 30 + 4,500 and each answer spends 4,500: two fit whole in 10,000, and
      // the third gets what the 1,000 left pays for beside its prompt, (1,000 - 30) / 15 tokens.
      for (let i = 0; i < 4; i++)
        out.push(await chat(bench.server, key.secret, { ...ask("hi"), max_tokens: 300 }));
      return out;
    });
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 200, 200, 403],
    );
    assert.deepEqual(
      answers.slice(0, 3).map((a) => a.headers["x-guardrails-max-tokens"]),
      [undefined, undefined, "64"],
    );
    const refusal = answers[3]?.body.error;
    assert.equal(refusal.code, 403);
    assert.match(refusal.message, /^Budget exhausted: the daily key limit of \$0.01 for this key is spent/);
    assert.deepEqual(
      {
        reason: refusal.metadata.reason,
        layer: refusal.metadata.layer,
        guardrail_id: refusal.metadata.guardrail_id,
        scope: refusal.metadata.scope,
        reset_interval: refusal.metadata.reset_interval,
        limit_usd: refusal.metadata.limit_usd,
        spend_usd: refusal.metadata.spend_usd,
        reserved_usd: refusal.metadata.reserved_usd,
        resets_at: refusal.metadata.resets_at,
      },
      {
        reason: "budget_exhausted",
        layer: "key_limit",
        guardrail_id: null,
        scope: "key",
        reset_interval: "daily",
        limit_usd: 0.01,
        spend_usd: 0.0135,
        reserved_usd: 0,
        resets_at: "2026-11-25T00:00:00.000Z",
      },
    );

    const current = await clientFor(bench.server, key.secret).get("/api/v1/key");
    assert.equal(current.status, 200);
    assert.equal(current.body.data.limit, 0.01);
    assert.equal(current.body.data.limit_remaining, 0);
    assert.equal(current.body.data.limit_reset, "daily");
    assert.equal(current.body.data.include_byok_in_limit, false);
    assert.deepEqual(
      current.body.data.budgets.map((b: KeyBudgetState) => [
        b.layer,
        b.spent_usd,
        b.reserved_usd,
        b.remaining_usd,
      ]),
      [["key_limit", 0.0135, 0, 0]],
      "spend past the limit leaves nothing remaining, never less",
    );
    const object = await keyObject(org, key.hash);
    assert.equal(object.limit, 0.01);
    assert.equal(object.limit_remaining, 0);
    assert.equal(object.usage_daily, 0.0135);
    assert.deepEqual(object.budgets, [
      {
        guardrail_id: null,
        layer: "key_limit",
        workspace_id: org.workspaceId,
        scope: "key",
        reset_interval: "daily",
        limit_usd: 0.01,
        spent_usd: 0.0135,
        reserved_usd: 0,
        remaining_usd: 0,
        resets_at: "2026-11-25T00:00:00.000Z",
      },
    ]);
  });

  it("sits beside the key's guardrail budgets: the first layer that refuses answers, and every layer is listed on the key", async () => {
    bench.clock = new Date("2026-11-24T12:00:00.000Z");
    const { org, steps, key } = await orgWithKey(bench);
    const guardrailId = await guardKey(steps, key, { limit_usd: 1, reset_interval: "monthly" });
    const patched = await clientFor(bench.server, org.key).patch(`/api/v1/keys/${key.hash}`, { limit: 0 });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.equal(patched.body.data.limit, 0);
    assert.equal(patched.body.data.limit_reset, null, "no limit_reset: the key's lifetime");
    const refused = await chat(bench.server, key.secret, ask("hi"));
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.metadata.layer, "key_limit");
    assert.equal(refused.body.error.metadata.resets_at, null);
    assert.match(
      refused.body.error.message,
      /the lifetime key limit of \$0 for this key is spent; it does not reset$/,
    );
    const object = await keyObject(org, key.hash);
    assert.deepEqual(
      object.budgets.map((b) => [b.layer, b.guardrail_id, b.reset_interval]),
      [
        ["key_limit", null, "lifetime"],
        ["key", guardrailId, "monthly"],
      ],
    );
    // Removing the limit removes the layer: the guardrail's budget alone governs again.
    const removed = await clientFor(bench.server, org.key).patch(`/api/v1/keys/${key.hash}`, { limit: null });
    assert.equal(removed.body.data.limit, null);
    assert.equal(removed.body.data.limit_remaining, null);
    assert.equal((await chat(bench.server, key.secret, ask("hi"))).status, 200);
  });

  it("a limit set on a key that already spent in the window starts from that spend: limit_remaining and the gateway hold only what is left", async () => {
    bench.clock = new Date("2026-11-24T12:00:00.000Z");
    const { org, key } = await orgWithKey(bench);
    assert.equal(
      (await bench.withUsage(USAGE_4500, () => chat(bench.server, key.secret, ask("hi")))).status,
      200,
    );
    const api = clientFor(bench.server, org.key);
    const set = await api.patch(`/api/v1/keys/${key.hash}`, { limit: 0.005, limit_reset: "daily" });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    assert.equal(set.body.data.limit_remaining, 0.0005, "$0.005 less the $0.0045 spent today");
    // What is left pays for (500 - 30) / 15 output tokens beside the prompt.
    const capped = await bench.withUsage({ prompt_tokens: 10, completion_tokens: 31 }, () =>
      chat(bench.server, key.secret, { ...ask("hi"), max_tokens: 100 }),
    );
    assert.equal(capped.status, 200);
    assert.equal(capped.headers["x-guardrails-max-tokens"], "31");
    // A weekly limit counts the week's spend, which includes today's.
    const weekly = await api.patch(`/api/v1/keys/${key.hash}`, { limit: 1, limit_reset: "weekly" });
    assert.equal(
      weekly.body.data.limit_remaining,
      Math.round((1 - 0.0045 - (30 + 31 * 15) / 1e6) * 1e6) / 1e6,
    );
  });

  it("a request that cannot fit even a minimal answer in what the limit leaves is refused for itself, with the output tokens that would fit", async () => {
    bench.clock = new Date("2026-11-24T12:00:00.000Z");
    const org = await bench.server.newOrg();
    const key = await newKey(orgSteps(bench.server, org), { limit: 0.0002 });
    const res = await chat(bench.server, key.secret, ask("hi"));
    assert.equal(res.status, 403);
    assert.equal(res.body.error.metadata.reason, "request_exceeds_budget");
    assert.equal(res.body.error.metadata.layer, "key_limit");
    // (200 - 30) / 15 output tokens fit: fewer than the minimal 16.
    assert.equal(res.body.error.metadata.output_tokens_that_fit, 11);
  });

  it("a daily limit starts again at UTC midnight; a lifetime limit (no limit_reset) never does", async () => {
    bench.clock = new Date("2026-11-24T23:59:00.000Z");
    const org = await bench.server.newOrg();
    const steps = orgSteps(bench.server, org);
    const daily = await newKey(steps, { limit: 0.004, limit_reset: "daily" });
    const lifetime = await newKey(steps, { limit: 0.004 });
    const statuses = async () =>
      bench.withUsage(USAGE_4500, async () => [
        (await chat(bench.server, daily.secret, { ...ask("hi"), max_tokens: 100 })).status,
        (await chat(bench.server, lifetime.secret, { ...ask("hi"), max_tokens: 100 })).status,
      ]);
    assert.deepEqual(await statuses(), [200, 200]);
    assert.deepEqual(await statuses(), [403, 403], "each limit is spent (4,500 of 4,000)");
    bench.clock = new Date("2026-11-25T00:00:30.000Z");
    assert.deepEqual(await statuses(), [200, 403], "the next day: the daily limit serves again");
    assert.equal((await keyObject(org, daily.hash)).limit_remaining, 0);
    const fresh = await keyObject(org, lifetime.hash);
    assert.deepEqual(
      fresh.budgets.map((b) => [b.reset_interval, b.spent_usd, b.resets_at]),
      [["lifetime", 0.0045, null]],
    );
    bench.clock = new Date("2026-11-25T10:00:00.000Z");
    assert.equal(
      (await keyObject(org, daily.hash)).limit_remaining,
      0,
      "the second day's request spent it again",
    );
  });

  it("bring-your-own-key spend counts on the limit only with include_byok_in_limit", async () => {
    bench.clock = new Date("2026-11-24T12:00:00.000Z");
    const org = await bench.server.newOrg();
    const steps = orgSteps(bench.server, org);
    const without = await newKey(steps, { limit: 0 });
    const withByok = await newKey(steps, { limit: 0, include_byok_in_limit: true });
    assert.equal(withByok.include_byok_in_limit, true);
    // Only azure (bring-your-own-key) may serve these keys.
    const byokOnly = await steps.guardrail({ allowed_providers: ["azure"] });
    await steps.assignKeys(byokOnly.id, [without.hash, withByok.hash]);
    const served = await chat(bench.server, without.secret, ask("hi", GPT_41));
    assert.equal(served.status, 200, JSON.stringify(served.body));
    const refused = await chat(bench.server, withByok.secret, ask("hi", GPT_41));
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.metadata.layer, "key_limit");
    // The same key without bring-your-own-key is held by its $0 limit.
    await steps.unassignKeys(byokOnly.id, [without.hash]);
    const own = await chat(bench.server, without.secret, ask("hi", GPT_41));
    assert.equal(own.status, 403);
    assert.equal(own.body.error.metadata.layer, "key_limit");
  });

  it("bad limit fields are 400 in the error envelope with an issue per field, and change nothing", async () => {
    const org = await bench.server.newOrg();
    const api = clientFor(bench.server, org.key);
    for (const [body, path] of [
      [{ limit: -1 }, "/limit"],
      [{ limit: 0.0000001 }, "/limit"],
      [{ limit: 2_000_000_000 }, "/limit"],
      [{ limit: "ten" }, "/limit"],
      [{ limit_reset: "yearly" }, "/limit_reset"],
      [{ include_byok_in_limit: "yes" }, "/include_byok_in_limit"],
    ] as const) {
      const res = await api.post("/api/v1/keys", { name: "bad", ...body });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.error.message, "Invalid request parameters");
      const paths = JSON.stringify(res.body.error.metadata);
      assert.ok(paths.includes(path), `${JSON.stringify(body)}: ${paths}`);
    }
    assert.equal((await api.get("/api/v1/keys?include_disabled=true")).body.data.length, 0);
    const key = await orgSteps(bench.server, org).key({ limit: 5, limit_reset: "weekly" });
    const bad = await api.patch(`/api/v1/keys/${key.hash}`, { name: "renamed", limit: 0.0000001 });
    assert.equal(bad.status, 400);
    const stored = (await api.get(`/api/v1/keys/${key.hash}`)).body.data;
    assert.deepEqual([stored.name, stored.limit, stored.limit_reset], ["key", 5, "weekly"]);
  });

  it("100 concurrent requests against a $0.05 daily key limit: at least 95 served, spend within one request's cost, nothing stays reserved", async () => {
    bench.clock = new Date("2026-11-24T12:00:00.000Z");
    const org = await bench.server.newOrg();
    const limit = 50_000;
    const key = await newKey(orgSteps(bench.server, org), { limit: limit / 1e6, limit_reset: "daily" });
    // About $0.00015 each: 500 prompt tokens at 0.06 and 667 completion tokens at 0.18.
    const each = Math.ceil(500 * 0.06 + 667 * 0.18);
    const answers = await bench.withUsage(
      { prompt_tokens: 500, completion_tokens: 667 },
      () =>
        Promise.all(
          Array.from({ length: 100 }, () => chat(bench.server, key.secret, ask("hi", MISTRAL_SMALL))),
        ),
      40,
    );
    const served = answers.filter((a) => a.status === 200).length;
    assert.ok(served >= 95, `served ${served}: ${answers.map((a) => a.status)}`);
    const [state] = (await keyObject(org, key.hash)).budgets;
    const spent = Math.round((state?.spent_usd ?? 0) * 1e6);
    assert.equal(spent, served * each, "every served request is charged once");
    assert.ok(spent <= limit + each);
    assert.equal(state?.reserved_usd, 0, "nothing stays reserved");
  });

  it("100 concurrent requests against a tight key limit: spend passes it by at most one request's cost, the rest refused, nothing stays reserved", async () => {
    bench.clock = new Date("2026-11-24T12:00:00.000Z");
    const org = await bench.server.newOrg();
    // 4,530 reserved and 4,500 spent per request: 20 and a half requests' worth.
    const each = 4500;
    const limit = 20 * each + each / 2;
    const key = await newKey(orgSteps(bench.server, org), { limit: limit / 1e6, limit_reset: "monthly" });
    const answers = await bench.withUsage(
      USAGE_4500,
      () =>
        Promise.all(
          Array.from({ length: 100 }, () =>
            chat(bench.server, key.secret, { ...ask("hi"), max_tokens: 300 }),
          ),
        ),
      20,
    );
    const served = answers.filter((a) => a.status === 200).length;
    const refused = answers.filter((a) => a.status === 403 || a.status === 429).length;
    assert.equal(served + refused, 100, `only 200, 403 and 429: ${answers.map((a) => a.status)}`);
    assert.ok(
      answers.filter((a) => a.status !== 200).every((a) => a.body.error.metadata.layer === "key_limit"),
      "every refusal names the key limit",
    );
    const [state] = (await keyObject(org, key.hash)).budgets;
    const spent = Math.round((state?.spent_usd ?? 0) * 1e6);
    assert.equal(spent, served * each, "every served request is charged once");
    assert.ok(spent <= limit + each, `spent ${spent} passes ${limit} by more than ${each}`);
    assert.ok(served < 100 && served >= 20, `served ${served}`);
    assert.equal(state?.reserved_usd, 0, "nothing stays reserved");
  });
});
