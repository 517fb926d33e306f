import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { clientFor, type TestOrg } from "../helpers/server.js";
import { ask, chat, clockedBench, GPT_41, MISTRAL_SMALL, USAGE_4500 } from "./gateway-support.js";
import { orgSteps, UNKNOWN_UUID } from "./org-support.js";

describe("workspace budgets: set, read and deleted through the API, enforced over all the workspace's keys (docs/api.md#workspace-budgets, docs/gateway.md#budgets)", () => {
  const bench = clockedBench(new Date("2026-11-24T12:00:00.000Z"));

  async function setBudget(org: TestOrg, ref: string, interval: string, body: Record<string, unknown>) {
    const res = await clientFor(bench.server, org.key).put(
      `/api/v1/workspaces/${ref}/budgets/${interval}`,
      body,
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body;
  }

  it("PUT sets one budget per interval (again: replaces its limit), GET reads one or all, DELETE removes it; by id or slug", async () => {
    bench.clock = new Date("2026-11-24T12:00:00.000Z");
    const org = await bench.server.newOrg();
    const api = clientFor(bench.server, org.key);
    const ws = (await api.post("/api/v1/workspaces", { name: "Research", slug: "research" })).body.data;
    const daily = await setBudget(org, ws.id, "daily", { limit_usd: 5 });
    assert.deepEqual(daily.include_byok_in_budgets, false);
    assert.equal(daily.data.workspace_id, ws.id);
    assert.equal(daily.data.limit_usd, 5);
    assert.equal(daily.data.reset_interval, "daily");
    const lifetime = await setBudget(org, "research", "lifetime", {
      limit_usd: 100,
      include_byok_in_budgets: true,
    });
    assert.equal(lifetime.data.reset_interval, null, "a lifetime budget never resets");
    assert.equal(lifetime.include_byok_in_budgets, true);
    bench.clock = new Date("2026-11-24T13:00:00.000Z");
    const again = await setBudget(org, ws.id, "daily", { limit_usd: 7.5 });
    assert.equal(again.data.id, daily.data.id, "the same budget, its limit replaced");
    assert.equal(again.data.created_at, daily.data.created_at);
    assert.equal(again.data.updated_at, "2026-11-24T13:00:00.000Z");
    assert.equal(again.include_byok_in_budgets, true, "workspace-wide, kept when not sent");

    // Limits decrease as the interval narrows: a weekly budget must lie between the daily and the lifetime one.
    for (const limit of [7.5, 7, 100, 101]) {
      const res = await api.put(`/api/v1/workspaces/${ws.id}/budgets/weekly`, { limit_usd: limit });
      assert.equal(res.status, 400, `weekly ${limit}`);
      assert.equal(res.body.error.metadata.reason, "budget_order");
    }

    const list = (await api.get(`/api/v1/workspaces/${ws.id}/budgets`)).body;
    assert.deepEqual(
      list.data.map((b: { reset_interval: string | null; limit_usd: number }) => [
        b.reset_interval,
        b.limit_usd,
      ]),
      [
        ["daily", 7.5],
        [null, 100],
      ],
    );
    assert.equal(list.include_byok_in_budgets, true);
    const one = await api.get("/api/v1/workspaces/research/budgets/daily");
    assert.equal(one.status, 200);
    assert.deepEqual(one.body.data, again.data);
    assert.equal((await api.get(`/api/v1/workspaces/${ws.id}/budgets/weekly`)).status, 404);

    assert.deepEqual((await api.delete(`/api/v1/workspaces/${ws.id}/budgets/daily`)).body, { deleted: true });
    assert.deepEqual((await api.delete(`/api/v1/workspaces/${ws.id}/budgets/daily`)).body, { deleted: true });
    assert.equal((await api.get(`/api/v1/workspaces/${ws.id}/budgets`)).body.data.length, 1);
    const audit = (await api.get("/api/v1/audit-log?limit=100")).body.data.map(
      (e: { action: string }) => e.action,
    );
    assert.deepEqual(audit.filter((a: string) => a.startsWith("workspace.budget")).sort(), [
      "workspace.budget_delete",
      "workspace.budget_set",
      "workspace.budget_set",
      "workspace.budget_set",
    ]);
  });

  it("bad input is 400 in the error envelope and changes nothing; another organization's workspace is 404", async () => {
    const org = await bench.server.newOrg();
    const api = clientFor(bench.server, org.key);
    const path = `/api/v1/workspaces/${org.workspaceId}/budgets`;
    await setBudget(org, org.workspaceId, "weekly", { limit_usd: 3 });
    for (const [interval, body] of [
      ["weekly", { limit_usd: 0 }],
      ["weekly", { limit_usd: -2 }],
      ["weekly", { limit_usd: 0.0000001 }],
      ["weekly", { limit_usd: "3" }],
      ["weekly", {}],
      ["weekly", { limit_usd: 3, extra: true }],
      ["yearly", { limit_usd: 3 }],
    ] as const) {
      const res = await api.put(`${path}/${interval}`, body);
      assert.equal(res.status, 400, `${interval} ${JSON.stringify(body)}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error.message, "Invalid request parameters");
      assert.equal(typeof res.body.error.metadata, "object");
    }
    const after = (await api.get(path)).body.data;
    assert.deepEqual(
      after.map((b: { limit_usd: number }) => b.limit_usd),
      [3],
    );
    const other = await bench.server.newOrg();
    const theirs = clientFor(bench.server, other.key);
    assert.equal((await theirs.get(path)).status, 404);
    assert.equal((await theirs.get(`${path}/weekly`)).status, 404);
    assert.equal((await theirs.put(`${path}/weekly`, { limit_usd: 1000 })).status, 404);
    assert.equal((await theirs.delete(`${path}/weekly`)).status, 404);
    assert.equal((await theirs.get(`/api/v1/workspaces/${UNKNOWN_UUID}/budgets`)).status, 404);
    assert.deepEqual(
      (await api.get(path)).body.data.map((b: { limit_usd: number }) => b.limit_usd),
      [3],
    );
  });

  it("counts every key of the workspace together and refuses with 403 budget_exhausted naming the workspace_budget layer; keys of another workspace are not held", async () => {
    bench.clock = new Date("2026-11-24T12:00:00.000Z");
    const org = await bench.server.newOrg();
    const steps = orgSteps(bench.server, org);
    const [k1, k2] = [await steps.key(), await steps.key()];
    const elsewhere = await steps.key({ workspace_id: (await steps.workspace()).id });
    await setBudget(org, org.workspaceId, "daily", { limit_usd: 0.009 });
    const statuses = await bench.withUsage(USAGE_4500, async () => [
      (await chat(bench.server, k1.secret, { ...ask("hi"), max_tokens: 100 })).status,
      (await chat(bench.server, k2.secret, { ...ask("hi"), max_tokens: 100 })).status,
    ]);
    assert.deepEqual(statuses, [200, 200], "9,000 of 9,000 spent between the two keys");
    const refused = await chat(bench.server, k1.secret, ask("hi"));
    assert.equal(refused.status, 403);
    assert.match(
      refused.body.error.message,
      /^Budget exhausted: the daily workspace budget of \$0.009 for this workspace is spent; it resets at 2026-11-25T00:00:00.000Z$/,
    );
    assert.deepEqual(
      [
        refused.body.error.metadata.reason,
        refused.body.error.metadata.layer,
        refused.body.error.metadata.scope,
      ],
      ["budget_exhausted", "workspace_budget", "workspace"],
    );
    assert.equal(refused.body.error.metadata.guardrail_id, null);
    assert.equal(refused.body.error.metadata.spend_usd, 0.009);
    assert.equal((await chat(bench.server, elsewhere.secret, ask("hi"))).status, 200);

    const current = (await clientFor(bench.server, k2.secret).get("/api/v1/key")).body.data;
    assert.deepEqual(
      current.budgets.map((b: { layer: string; scope: string; spent_usd: number; resets_at: string }) => [
        b.layer,
        b.scope,
        b.spent_usd,
        b.resets_at,
      ]),
      [["workspace_budget", "workspace", 0.009, "2026-11-25T00:00:00.000Z"]],
    );
    const object = (await clientFor(bench.server, org.key).get(`/api/v1/keys/${k2.hash}`)).body.data;
    assert.deepEqual(
      object.budgets.map((b: { layer: string; spent_usd: number; remaining_usd: number }) => [
        b.layer,
        b.spent_usd,
        b.remaining_usd,
      ]),
      [["workspace_budget", 0.009, 0]],
    );
    assert.equal(object.limit, null, "the key's own limit is not the workspace's");

    // The next day the daily budget starts again.
    bench.clock = new Date("2026-11-25T00:00:01.000Z");
    assert.equal((await chat(bench.server, k1.secret, ask("hi"))).status, 200);
  });

  it("layers are checked in order: the key's own limit, the guardrails' budgets, then the workspace's; the first that refuses answers", async () => {
    bench.clock = new Date("2026-11-24T12:00:00.000Z");
    const org = await bench.server.newOrg();
    const steps = orgSteps(bench.server, org);
    await setBudget(org, org.workspaceId, "monthly", { limit_usd: 0.0045 });
    await setBudget(org, org.workspaceId, "lifetime", { limit_usd: 1 });
    const capped = await steps.key({ limit: 0.0045, limit_reset: "weekly" });
    const guarded = await steps.key();
    const g = await steps.guardrail({ limit_usd: 0.0045, reset_interval: "daily" });
    await steps.assignKeys(g.id, [guarded.hash]);
    assert.equal(
      (
        await bench.withUsage(USAGE_4500, () =>
          chat(bench.server, capped.secret, { ...ask("hi"), max_tokens: 100 }),
        )
      ).status,
      200,
    );
    // Spent on every layer of the key: its own limit is checked first.
    const first = await chat(bench.server, capped.secret, ask("hi"));
    assert.equal(first.status, 403);
    assert.equal(first.body.error.metadata.layer, "key_limit");
    // Another key of the workspace: its guardrail still has room, the workspace's monthly budget has none.
    const second = await chat(bench.server, guarded.secret, ask("hi"));
    assert.equal(second.status, 403);
    assert.equal(second.body.error.metadata.layer, "workspace_budget");
    assert.equal(second.body.error.metadata.reset_interval, "monthly");
    const layers = (await clientFor(bench.server, org.key).get(`/api/v1/keys/${capped.hash}`)).body.data
      .budgets;
    assert.deepEqual(
      layers.map((b: { layer: string; reset_interval: string }) => `${b.layer}/${b.reset_interval}`),
      ["key_limit/weekly", "workspace_budget/monthly", "workspace_budget/lifetime"],
    );

    // The dry run shows the same layers and the same refusal, reserving nothing.
    const dry = await clientFor(bench.server, org.key).post("/api/v1/guardrails/evaluate", {
      key_hash: guarded.hash,
      ...ask("hi"),
    });
    assert.equal(dry.status, 200, JSON.stringify(dry.body));
    assert.equal(dry.body.data.allowed, false);
    assert.equal(dry.body.data.error.metadata.layer, "workspace_budget");
    assert.deepEqual(
      dry.body.data.budgets.map((b: { layer: string; scope: string; resets_at: string | null }) => [
        b.layer,
        b.scope,
        b.resets_at,
      ]),
      [
        ["key", "key", "2026-11-25T00:00:00.000Z"],
        ["workspace_budget", "workspace", "2026-12-01T00:00:00.000Z"],
        ["workspace_budget", "workspace", null],
      ],
    );
  });

  it("bring-your-own-key spend counts on the workspace's budgets only with include_byok_in_budgets", async () => {
    const org = await bench.server.newOrg();
    const steps = orgSteps(bench.server, org);
    const key = await steps.key();
    const byokOnly = await steps.guardrail({ allowed_providers: ["azure"] });
    await steps.assignKeys(byokOnly.id, [key.hash]);
    // A budget of one micro-dollar pays for no request; bring-your-own-key spend does not count on it.
    await setBudget(org, org.workspaceId, "lifetime", { limit_usd: 0.000001 });
    const own = await chat(bench.server, (await steps.key()).secret, ask("hi"));
    assert.equal(own.status, 403);
    assert.equal(own.body.error.metadata.reason, "request_exceeds_budget");
    assert.equal((await chat(bench.server, key.secret, ask("hi", GPT_41))).status, 200);
    await setBudget(org, org.workspaceId, "lifetime", { limit_usd: 0.000001, include_byok_in_budgets: true });
    const refused = await chat(bench.server, key.secret, ask("hi", GPT_41));
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.metadata.layer, "workspace_budget");
  });

  it("a budget set on a workspace that already spent in the window starts from that spend", async () => {
    bench.clock = new Date("2026-11-24T12:00:00.000Z");
    const org = await bench.server.newOrg();
    const steps = orgSteps(bench.server, org);
    const [k1, k2] = [await steps.key(), await steps.key()];
    await bench.withUsage(USAGE_4500, () => chat(bench.server, k1.secret, ask("hi")));
    await setBudget(org, org.workspaceId, "daily", { limit_usd: 0.004 });
    const [state] = (await clientFor(bench.server, k2.secret).get("/api/v1/key")).body.data.budgets;
    assert.deepEqual([state.layer, state.spent_usd], ["workspace_budget", 0.0045]);
    const refused = await chat(bench.server, k2.secret, ask("hi"));
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.metadata.reason, "budget_exhausted");
  });

  it("a workspace deleted takes its budgets with it", async () => {
    const org = await bench.server.newOrg();
    const api = clientFor(bench.server, org.key);
    const ws = (await api.post("/api/v1/workspaces", { name: "Temp" })).body.data;
    await setBudget(org, ws.id, "daily", { limit_usd: 1 });
    assert.equal((await api.delete(`/api/v1/workspaces/${ws.id}`)).status, 200);
    assert.equal((await api.get(`/api/v1/workspaces/${ws.id}/budgets`)).status, 404);
  });

  it("100 concurrent requests from four keys against a $0.05 daily workspace budget: at least 95 served, spend within one request's cost, nothing stays reserved", async () => {
    bench.clock = new Date("2026-11-24T12:00:00.000Z");
    const org = await bench.server.newOrg();
    const steps = orgSteps(bench.server, org);
    const keys = [await steps.key(), await steps.key(), await steps.key(), await steps.key()];
    const limit = 50_000;
    await setBudget(org, org.workspaceId, "daily", { limit_usd: limit / 1e6 });
    // About $0.00015 each: 500 prompt tokens at 0.06 and 667 completion tokens at 0.18.
    const each = Math.ceil(500 * 0.06 + 667 * 0.18);
    const answers = await bench.withUsage(
      { prompt_tokens: 500, completion_tokens: 667 },
      () =>
        Promise.all(
          Array.from({ length: 100 }, (_, i) =>
            chat(bench.server, keys[i % 4]?.secret ?? "", ask("hi", MISTRAL_SMALL)),
          ),
        ),
      40,
    );
    const served = answers.filter((a) => a.status === 200).length;
    assert.ok(served >= 95, `served ${served}: ${answers.map((a) => a.status)}`);
    const [state] = (await clientFor(bench.server, keys[0]?.secret ?? "").get("/api/v1/key")).body.data
      .budgets;
    const spent = Math.round(state.spent_usd * 1e6);
    assert.equal(spent, served * each, "every served request is charged once");
    assert.ok(spent <= limit + each);
    assert.equal(state.reserved_usd, 0, "nothing stays reserved");
  });

  it("100 concurrent requests from four keys against a tight workspace budget: spend passes it by at most one request's cost, nothing stays reserved", async () => {
    bench.clock = new Date("2026-11-24T12:00:00.000Z");
    const org = await bench.server.newOrg();
    const steps = orgSteps(bench.server, org);
    const keys = [await steps.key(), await steps.key(), await steps.key(), await steps.key()];
    const each = 4500;
    const limit = 20 * each + each / 2;
    await setBudget(org, org.workspaceId, "weekly", { limit_usd: limit / 1e6 });
    const answers = await bench.withUsage(
      USAGE_4500,
      () =>
        Promise.all(
          Array.from({ length: 100 }, (_, i) =>
            chat(bench.server, keys[i % 4]?.secret ?? "", { ...ask("hi"), max_tokens: 300 }),
          ),
        ),
      20,
    );
    const served = answers.filter((a) => a.status === 200).length;
    const refused = answers.filter((a) => a.status === 403 || a.status === 429).length;
    assert.equal(served + refused, 100, `only 200, 403 and 429: ${answers.map((a) => a.status)}`);
    assert.ok(served < 100 && served >= 20, `served ${served}`);
    const [state] = (await clientFor(bench.server, keys[1]?.secret ?? "").get("/api/v1/key")).body.data
      .budgets;
    const spent = Math.round(state.spent_usd * 1e6);
    assert.equal(spent, served * each, "every served request is charged once");
    assert.ok(spent <= limit + each, `spent ${spent} passes ${limit} by more than ${each}`);
    assert.equal(state.reserved_usd, 0, "nothing stays reserved");
  });
});
