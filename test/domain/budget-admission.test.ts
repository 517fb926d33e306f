import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { admit, priceOf, tokensPaidBy } from "../../src/domain/budget-admission.js";

/** A prompt that costs 100 micro-dollars, and 2 micro-dollars per output token. */
const price = { promptMicros: 100, perOutputTokenMicros: 2 };
const layer = (limit: number, spent = 0, reserved = 0) => ({
  limit_micros: limit,
  spent_micros: spent,
  reserved_micros: reserved,
});

describe("the sized admission of a request on its budgets (docs/gateway.md#budgets)", () => {
  // Wanted: 1,000 output tokens (2,100 micro-dollars in all); minimal answer: 16 tokens (132).
  const table: {
    rule: string;
    layers: ReturnType<typeof layer>[];
    expect: Record<string, unknown>;
  }[] = [
    {
      rule: "the remainder covers the worst case: admitted uncapped, reserving the worst case",
      layers: [layer(10_000, 1_000, 1_000)],
      expect: { admitted: true, tokens: 1000, capped: false, amount_micros: 2100 },
    },
    {
      rule: "the remainder covers exactly the worst case: admitted uncapped",
      layers: [layer(2_100)],
      expect: { admitted: true, tokens: 1000, capped: false, amount_micros: 2100 },
    },
    {
      rule: "the remainder covers only a capped answer: admitted with the output it pays for",
      layers: [layer(10_000, 9_000, 401)],
      // 599 left: the prompt's 100, then 249 tokens at 2 (598).
      expect: { admitted: true, tokens: 249, capped: true, amount_micros: 598 },
    },
    {
      rule: "the tightest of several layers sizes the cap",
      layers: [layer(1_000_000), layer(10_000, 9_700), layer(5_000, 0, 4_500)],
      expect: { admitted: true, tokens: 100, capped: true, amount_micros: 300 },
    },
    {
      rule: "the remainder covers exactly a minimal answer: admitted with it",
      layers: [layer(1_132, 1_000)],
      expect: { admitted: true, tokens: 16, capped: true, amount_micros: 132 },
    },
    {
      rule: "settled spend at the limit: budget_exhausted",
      layers: [layer(1_000, 1_000)],
      expect: { admitted: false, index: 0, reason: "budget_exhausted", tokens_that_fit: 0 },
    },
    {
      rule: "settled spend over the limit: budget_exhausted",
      layers: [layer(1_000, 1_200)],
      expect: { admitted: false, index: 0, reason: "budget_exhausted", tokens_that_fit: 0 },
    },
    {
      rule: "settled spend leaves less than a minimal answer: request_exceeds_budget, with the tokens that fit",
      layers: [layer(1_000, 870)],
      expect: { admitted: false, index: 0, reason: "request_exceeds_budget", tokens_that_fit: 15 },
    },
    {
      rule: "a limit below the prompt's cost: request_exceeds_budget with no tokens",
      layers: [layer(50)],
      expect: { admitted: false, index: 0, reason: "request_exceeds_budget", tokens_that_fit: 0 },
    },
    {
      rule: "the remainder is held by requests in flight: budget_reserved, with what would fit once they settle",
      layers: [layer(1_000, 0, 900)],
      expect: { admitted: false, index: 0, reason: "budget_reserved", tokens_that_fit: 450 },
    },
    {
      rule: "the first refusing layer in order decides",
      layers: [layer(10_000), layer(1_000, 0, 1_000), layer(1_000, 1_000)],
      expect: { admitted: false, index: 1, reason: "budget_reserved", tokens_that_fit: 450 },
    },
  ];
  for (const row of table) {
    it(row.rule, () => {
      assert.deepEqual(admit(row.layers, price, 1000, 16), row.expect);
    });
  }

  it("a capped admission never reserves more than the tightest remainder, and its tokens cost no more than it reserves", () => {
    for (let room = 132; room < 2_200; room += 7) {
      const a = admit([layer(room)], { promptMicros: 33.3, perOutputTokenMicros: 0.18 }, 100_000, 16);
      assert.ok(a.admitted, `room ${room}`);
      assert.ok(a.amount_micros <= room, `reserved ${a.amount_micros} of ${room}`);
      assert.ok(priceOf({ promptMicros: 33.3, perOutputTokenMicros: 0.18 }, a.tokens) <= a.amount_micros);
    }
  });

  it("a request that wants fewer tokens than the minimal answer is judged on what it wants", () => {
    assert.deepEqual(admit([layer(120)], price, 10, 16), {
      admitted: true,
      tokens: 10,
      capped: false,
      amount_micros: 120,
    });
  });

  it("free output is never capped: the prompt alone decides", () => {
    const free = { promptMicros: 0, perOutputTokenMicros: 0 };
    assert.equal(tokensPaidBy(free, 0), Number.POSITIVE_INFINITY);
    assert.deepEqual(admit([layer(1, 0, 0)], free, 500, 16), {
      admitted: true,
      tokens: 500,
      capped: false,
      amount_micros: 0,
    });
  });
});
