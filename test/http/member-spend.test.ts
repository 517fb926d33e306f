import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { clientFor } from "../helpers/server.js";
import { ask, chat, type GatewayBench, startGatewayBench } from "./gateway-support.js";
import { orgSteps } from "./org-support.js";

/** 1,000 prompt and 100 completion tokens of Sonnet cost 4,500 µ$. */
const USAGE = { prompt_tokens: 1000, completion_tokens: 100 };

describe("a member carries its spend per UTC window beside its budget (docs/api.md#members)", () => {
  let bench: GatewayBench;
  let clock = new Date("2025-02-28T10:00:00.000Z");
  before(async () => {
    bench = await startGatewayBench({ now: () => clock });
  });
  after(async () => {
    await bench.close();
  });

  it("usage, usage_daily, usage_weekly and usage_monthly sum the member's keys from the window's start; limit and limit_remaining are the member budget's", async () => {
    const org = await bench.server.newOrg();
    const steps = orgSteps(bench.server, org);
    await steps.member("ana");
    await steps.member("bo");
    const g = await steps.guardrail({ limit_usd: 1, reset_interval: "monthly" });
    assert.equal(await steps.assignMembers(g.id, ["ana"]), 1);
    const key = await steps.key({ member_user_id: "ana" });
    bench.script.next = () => ({ usage: USAGE });
    try {
      // Friday of the previous month, Saturday the 1st, Monday the 10th, Wednesday the 12th (today).
      for (const at of [
        "2025-02-28T10:00:00Z",
        "2025-03-01T10:00:00Z",
        "2025-03-10T00:00:00Z",
        "2025-03-12T23:59:59Z",
      ]) {
        clock = new Date(at);
        assert.equal((await chat(bench.server, key.secret, ask("hi"))).status, 200);
      }
    } finally {
      bench.script.next = undefined;
    }
    const api = clientFor(bench.server, org.key);
    const ana = await api.get("/api/v1/members/ana");
    assert.equal(ana.status, 200, JSON.stringify(ana.body));
    const d = ana.body.data;
    assert.deepEqual(
      [d.usage, d.usage_daily, d.usage_weekly, d.usage_monthly],
      [0.018, 0.0045, 0.009, 0.0135],
    );
    assert.equal(d.byok_usage, 0);
    assert.equal(d.limit, 1);
    assert.equal(d.limit_remaining, 0.9865);
    assert.equal(d.limit_reset, "monthly");
    assert.equal(d.budgets.length, 1);
    assert.equal(d.budgets[0].guardrail_id, g.id);
    assert.equal(d.budgets[0].resets_at, "2025-04-01T00:00:00.000Z");

    const list = await api.get("/api/v1/members");
    assert.equal(list.status, 200);
    const byId = Object.fromEntries(list.body.data.map((m: { user_id: string }) => [m.user_id, m]));
    assert.equal(byId.ana.usage_monthly, 0.0135);
    assert.deepEqual(
      [byId.bo.usage, byId.bo.usage_daily, byId.bo.limit, byId.bo.limit_remaining],
      [0, 0, null, null],
    );
    assert.deepEqual(byId.bo.budgets, []);

    // Another organization's member of the same id has spent nothing.
    const other = await bench.server.newOrg();
    await orgSteps(bench.server, other).member("ana");
    const theirs = await clientFor(bench.server, other.key).get("/api/v1/members/ana");
    assert.equal(theirs.body.data.usage, 0);
  });
});
