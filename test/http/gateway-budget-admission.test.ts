import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { clientFor } from "../helpers/server.js";
import { ask, chat, type GatewayBench, guardKey, orgWithKey, startGatewayBench } from "./gateway-support.js";

/** $0.06 and $0.18 per million prompt and completion tokens in the default catalog. */
const MISTRAL_SMALL = "mistralai/mistral-small-3.2-24b-instruct";

async function budgetOf(bench: GatewayBench, secret: string) {
  const res = await clientFor(bench.server, secret).get("/api/v1/key");
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data.budgets[0] as { spent_usd: number; reserved_usd: number };
}

describe("budgets serve what they can pay for (docs/gateway.md#budgets)", () => {
  let bench: GatewayBench;
  before(async () => {
    bench = await startGatewayBench();
  });
  after(async () => {
    await bench.close();
  });

  it("a $0.05 daily budget serves at least 95 of 100 concurrent requests without max_tokens, each reserving the default allowance; nothing stays reserved", async () => {
    const { steps, key } = await orgWithKey(bench);
    const limit = 50_000;
    await guardKey(steps, key, { limit_usd: limit / 1e6, reset_interval: "daily" });
    // About $0.00015 each: 500 prompt tokens at 0.06 and 667 completion tokens at 0.18.
    const each = Math.ceil(500 * 0.06 + 667 * 0.18);
    bench.script.next = () => ({ delayMs: 40, usage: { prompt_tokens: 500, completion_tokens: 667 } });
    const before = bench.received.length;
    let answers: Awaited<ReturnType<typeof chat>>[];
    try {
      answers = await Promise.all(
        Array.from({ length: 100 }, () => chat(bench.server, key.secret, ask("hi", MISTRAL_SMALL))),
      );
    } finally {
      bench.script.next = undefined;
    }
    const served = answers.filter((a) => a.status === 200).length;
    assert.ok(served >= 95, `served ${served}: ${answers.map((a) => a.status)}`);
    const budget = await budgetOf(bench, key.secret);
    const spent = Math.round(budget.spent_usd * 1e6);
    assert.equal(spent, served * each, "every served request is charged once");
    assert.ok(spent <= limit + each);
    assert.equal(budget.reserved_usd, 0, "nothing stays reserved");
    // The allowance is what the answer may cost, so it is the forwarded output limit too.
    const forwarded = bench.received.slice(before);
    assert.ok(forwarded.every((r) => r.body.max_tokens === 2048));
    assert.ok(
      answers.filter((a) => a.status === 200).every((a) => a.headers["x-guardrails-max-tokens"] === "2048"),
    );
  });

  it("a burst on a nearly spent budget: capped while something is left, 429 budget_reserved with Retry-After while requests are in flight, 403 budget_exhausted once spend is settled at the limit", async () => {
    const { steps, key } = await orgWithKey(bench);
    await guardKey(steps, key, { limit_usd: 0.01, reset_interval: "daily" });
    // Sonnet at 3 and 15 per token; "hi" is a 10-token prompt bound (30): max_tokens 300 costs 4,530
    // at most, so two fit whole in 10,000 and the third gets the 940 left: (940 - 30) / 15 = 60 tokens.
    bench.script.next = () => ({ delayMs: 300, usage: { prompt_tokens: 1000, completion_tokens: 100 } });
    const before = bench.received.length;
    let answers: Awaited<ReturnType<typeof chat>>[];
    try {
      answers = await Promise.all(
        Array.from({ length: 6 }, () => chat(bench.server, key.secret, { ...ask("hi"), max_tokens: 300 })),
      );
    } finally {
      bench.script.next = undefined;
    }
    const statuses = answers.map((a) => a.status).sort();
    assert.deepEqual(statuses, [200, 200, 200, 429, 429, 429]);
    const caps = answers.filter((a) => a.status === 200).map((a) => a.headers["x-guardrails-max-tokens"]);
    assert.deepEqual(caps.sort(), ["60", undefined, undefined].sort());
    assert.deepEqual(
      bench.received
        .slice(before)
        .map((r) => r.body.max_tokens)
        .sort(),
      [300, 300, 60].sort(),
    );
    for (const held of answers.filter((a) => a.status === 429)) {
      assert.equal(held.headers["retry-after"], "1");
      const meta = held.body.error.metadata;
      assert.equal(meta.reason, "budget_reserved");
      assert.equal(meta.spend_usd, 0, "spend_usd is settled spend: nothing is settled yet");
      assert.ok(meta.reserved_usd > 0.0099, `reservations apart: ${meta.reserved_usd}`);
      assert.equal(held.body.error.message.startsWith("Budget held by requests in flight"), true);
    }
    // Settled: three answers at 4,500 each, over the limit.
    const after = await chat(bench.server, key.secret, { ...ask("hi"), max_tokens: 300 });
    assert.equal(after.status, 403);
    assert.equal(after.body.error.metadata.reason, "budget_exhausted");
    assert.equal(after.body.error.metadata.spend_usd, 0.0135);
    assert.equal(after.body.error.metadata.reserved_usd, 0);
    assert.equal(after.headers["retry-after"], undefined);
  });

  it("a request whose prompt and minimal answer cost more than the budget leaves is refused for itself, with the output tokens that would fit", async () => {
    const { steps, key } = await orgWithKey(bench);
    await guardKey(steps, key, { limit_usd: 0.0001, reset_interval: "daily" });
    // 100 micro-dollars: the prompt bound's 30, then 4 tokens at 15; a minimal answer is 16.
    const res = await chat(bench.server, key.secret, ask("hi"));
    assert.equal(res.status, 403);
    assert.equal(res.body.error.metadata.reason, "request_exceeds_budget");
    assert.equal(res.body.error.metadata.output_tokens_that_fit, 4);
    assert.equal(res.body.error.metadata.spend_usd, 0);
  });

  it("the dry run shows the cap the budgets would set and the request as it would be forwarded", async () => {
    const { org, steps, key } = await orgWithKey(bench);
    await guardKey(steps, key, { limit_usd: 0.001, reset_interval: "daily" });
    const res = await clientFor(bench.server, org.key).post("/api/v1/guardrails/evaluate", {
      key_hash: key.hash,
      ...ask("hi"),
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    // 1,000 micro-dollars: the prompt bound's 30, then 64 tokens at 15 (960).
    assert.equal(res.body.data.allowed, true);
    assert.equal(res.body.data.max_tokens_forwarded, 64);
    assert.equal(res.body.data.request.max_tokens, 64);
    assert.equal(res.body.data.reservation_usd, 0.00099);
  });
});
