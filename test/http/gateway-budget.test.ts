import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { reserve } from "../../src/gateway/spend.js";
import { budgetStatuses, resolveKeyPolicy } from "../../src/services/effective-policy.js";
import { releaseExpired } from "../../src/services/release-expired-reservations.js";
import { clientFor } from "../helpers/server.js";
import { ask, chat, type GatewayBench, guardKey, orgWithKey, startGatewayBench } from "./gateway-support.js";

/** Sonnet costs $3 and $15 per million prompt and completion tokens: micro-dollars per token. */
const cost = (prompt: number, completion: number) => prompt * 3 + completion * 15;

async function budgetsOf(bench: GatewayBench, secret: string) {
  const res = await clientFor(bench.server, secret).get("/api/v1/key");
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data.budgets as {
    spent_usd: number;
    reserved_usd: number;
    remaining_usd: number;
    scope: string;
  }[];
}

describe("budgets on the request path (docs/behaviour.md#budgets; docs/gateway.md#budgets)", () => {
  let bench: GatewayBench;
  before(async () => {
    bench = await startGatewayBench();
  });
  after(async () => {
    await bench.close();
  });

  it("spend is the upstream's reported usage at the catalog's prices, recorded on the layer's window", async () => {
    const { steps, key } = await orgWithKey(bench);
    await guardKey(steps, key, { limit_usd: 1, reset_interval: "daily" });
    bench.script.next = () => ({ usage: { prompt_tokens: 1000, completion_tokens: 100 } });
    try {
      assert.equal((await chat(bench.server, key.secret, ask("hi"))).status, 200);
    } finally {
      bench.script.next = undefined;
    }
    const [budget] = await budgetsOf(bench, key.secret);
    assert.equal(budget?.spent_usd, cost(1000, 100) / 1e6);
    assert.equal(budget?.reserved_usd, 0);
  });

  it("a layer whose remaining budget is not positive is refused with guardrail, scope, limit, spend and resets_at", async () => {
    const { steps, key } = await orgWithKey(bench);
    const id = await guardKey(steps, key, { limit_usd: 0.01, reset_interval: "daily" });
    bench.script.next = () => ({ usage: { prompt_tokens: 1000, completion_tokens: 100 } });
    try {
      // 4,500 micro-dollars each: the third still starts with 1,000 left, the fourth finds none.
      for (let i = 0; i < 3; i++) assert.equal((await chat(bench.server, key.secret, ask("hi"))).status, 200);
      const refused = await chat(bench.server, key.secret, ask("hi"));
      assert.equal(refused.status, 403);
      const meta = refused.body.error.metadata;
      assert.equal(meta.reason, "budget_exhausted");
      assert.equal(meta.guardrail_id, id);
      assert.equal(meta.scope, "key");
      assert.equal(meta.limit_usd, 0.01);
      assert.equal(meta.spend_usd, (3 * cost(1000, 100)) / 1e6);
      assert.match(meta.resets_at, /^\d{4}-\d\d-\d\dT00:00:00\.000Z$/);
    } finally {
      bench.script.next = undefined;
    }
  });

  it("with 100 concurrent requests against one budget, spend never passes the limit by more than one request's cost", async () => {
    const { steps, key } = await orgWithKey(bench);
    const limit = 50_000;
    await guardKey(steps, key, { limit_usd: limit / 1e6, reset_interval: "monthly" });
    const each = cost(10, 300);
    // Slow enough that the requests overlap: each one's reservation is what keeps the others out.
    bench.script.next = () => ({ delayMs: 40, usage: { prompt_tokens: 10, completion_tokens: 300 } });
    let answers: number[];
    try {
      answers = await Promise.all(
        Array.from(
          { length: 100 },
          async () => (await chat(bench.server, key.secret, { ...ask("hi"), max_tokens: 300 })).status,
        ),
      );
    } finally {
      bench.script.next = undefined;
    }
    const served = answers.filter((s) => s === 200).length;
    // Refused: 403 once settled spend leaves too little, 429 while requests in flight hold it.
    const refused = answers.filter((s) => s === 403 || s === 429).length;
    assert.equal(served + refused, 100, `only 200, 403 and 429: ${answers}`);
    const [budget] = await budgetsOf(bench, key.secret);
    const spent = Math.round((budget?.spent_usd ?? 0) * 1e6);
    assert.equal(spent, served * each, "every served request is charged exactly once");
    assert.ok(spent <= limit + each, `spent ${spent} passes ${limit} by more than ${each}`);
    assert.ok(served < 100, "the budget refused the rest");
    assert.equal(budget?.reserved_usd, 0, "no reservation is left behind");
  });

  it("a member budget counts all the member's keys in the workspace", async () => {
    const { steps } = await orgWithKey(bench);
    await steps.member("bob");
    const first = await steps.key({ member_user_id: "bob" });
    const second = await steps.key({ member_user_id: "bob" });
    const g = await steps.guardrail({ limit_usd: 0.004, reset_interval: "weekly" });
    await steps.assignMembers(g.id, ["bob"]);
    bench.script.next = () => ({ usage: { prompt_tokens: 1000, completion_tokens: 100 } });
    try {
      assert.equal((await chat(bench.server, first.secret, ask("hi"))).status, 200);
      const refused = await chat(bench.server, second.secret, ask("hi"));
      assert.equal(refused.status, 403);
      assert.equal(refused.body.error.metadata.scope, "member");
    } finally {
      bench.script.next = undefined;
    }
  });

  it("an upstream failure releases the reservation: nothing is spent or held (502)", async () => {
    const { steps, key } = await orgWithKey(bench);
    await guardKey(steps, key, { limit_usd: 1, reset_interval: "daily" });
    bench.script.next = () => ({ status: 500 });
    try {
      const res = await chat(bench.server, key.secret, ask("hi"));
      assert.equal(res.status, 502);
      assert.equal(res.body.error.message, "Upstream provider error");
    } finally {
      bench.script.next = undefined;
    }
    const [budget] = await budgetsOf(bench, key.secret);
    assert.equal(budget?.spent_usd, 0);
    assert.equal(budget?.reserved_usd, 0);
  });

  it("a reservation left by a process that died is released once its hold expires", async () => {
    const { steps, key } = await orgWithKey(bench);
    await guardKey(steps, key, { limit_usd: 1, reset_interval: "daily" });
    const deps = bench.server.deps;
    const resolved = await resolveKeyPolicy(deps, key.hash);
    assert.ok(resolved);
    const checks = budgetStatuses(resolved.policy, deps.now(), { spent: [0], reserved: [0] }).map((b) => ({
      layer: b,
      window: b.window,
      spent_micros: 0,
      counts: true,
    }));
    const held = await reserve(deps, resolved.key, checks, 250_000, 0);
    assert.equal(held.ok, true);
    assert.equal((await budgetsOf(bench, key.secret))[0]?.reserved_usd, 0.25);
    assert.ok((await releaseExpired(deps)) >= 1);
    assert.equal((await budgetsOf(bench, key.secret))[0]?.reserved_usd, 0);
  });
});
