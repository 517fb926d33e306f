import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import "../helpers/property-seed.js";
import { microsToUsd, usdToMicros } from "../../src/domain/money.js";

describe("money is integer micro-dollars (docs/behaviour.md#money-and-ids)", () => {
  it("amounts with at most six decimals convert exactly, both ways", () => {
    for (const [usd, micros] of [
      [0, 0],
      [0.1, 100_000],
      [0.3, 300_000],
      [1.000001, 1_000_001],
      [50, 50_000_000],
      [123456.789012, 123_456_789_012],
      [999_999_999.999999, 999_999_999_999_999],
    ] as const) {
      assert.equal(usdToMicros(usd), micros, String(usd));
      assert.equal(microsToUsd(micros), usd, String(micros));
    }
  });

  it("amounts finer than a micro-dollar are refused, not rounded", () => {
    for (const usd of [1.0000001, 5e-7, 0.0000015, 10.1234567])
      assert.equal(usdToMicros(usd), undefined, String(usd));
  });

  it("any whole number of micro-dollars up to the limit round-trips through USD", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1_000_000_000_000_000 }), (micros) => {
        assert.equal(usdToMicros(microsToUsd(micros)), micros);
      }),
    );
  });
});
