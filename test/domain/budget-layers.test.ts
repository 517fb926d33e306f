import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { budgetWindow } from "../../src/domain/budget-window.js";
import { applyKeyLimit, NO_KEY_LIMIT, presentKeyLimit } from "../../src/domain/key-limit.js";
import { budgetLayers, counterIdOf, counterSubject } from "../../src/domain/policy.js";
import { guardrail, key, member, workspaceDefault } from "./policy-support.js";

describe("budget layers: one list, in the order they are checked (docs/gateway.md#budgets)", () => {
  const g = (id: string, limit: number) =>
    guardrail({ limit_micros: limit, reset_interval: "daily", include_byok_in_budgets: false }, id);

  it("the key's own limit first, then the guardrails' budgets (key, member, workspace default), then the workspace's from daily to lifetime", () => {
    const layers = budgetLayers([workspaceDefault(g("w", 1)), member(g("m", 2)), key(g("k", 3))], true, {
      key_limit: { limit_micros: 4, reset_interval: "lifetime", include_byok: true },
      workspace: [
        { limit_micros: 9, reset_interval: "lifetime", include_byok: false },
        { limit_micros: 5, reset_interval: "daily", include_byok: false },
        { limit_micros: 7, reset_interval: "monthly", include_byok: false },
      ],
    });
    assert.deepEqual(
      layers.map((l) => [l.layer, l.scope, l.guardrail_id, l.reset_interval, l.limit_micros]),
      [
        ["key_limit", "key", null, "lifetime", 4],
        ["key", "key", "k", "daily", 3],
        ["member", "member", "m", "daily", 2],
        ["workspace_default", "key", "w", "daily", 1],
        ["workspace_default", "member", "w", "daily", 1],
        ["workspace_budget", "workspace", null, "daily", 5],
        ["workspace_budget", "workspace", null, "monthly", 7],
        ["workspace_budget", "workspace", null, "lifetime", 9],
      ],
    );
    assert.equal(layers[0]?.include_byok_in_budgets, true, "the key limit's include_byok_in_limit");
  });

  it("counters: a guardrail's under its id, the others under their kind; subjects the key, the member in the workspace, the workspace", () => {
    const k = { hash: "h", workspace_id: "ws", member_user_id: "ada" };
    assert.equal(counterIdOf({ guardrail_id: "g1", layer: "key" }), "g1");
    assert.equal(counterIdOf({ guardrail_id: null, layer: "key_limit" }), "key_limit");
    assert.equal(counterIdOf({ guardrail_id: null, layer: "workspace_budget" }), "workspace_budget");
    assert.deepEqual(
      (["key", "member", "workspace"] as const).map((s) => counterSubject(k, s)),
      ["h", "ws:ada", "ws"],
    );
  });

  it("a lifetime window starts at the epoch and never resets", () => {
    const w = budgetWindow("lifetime", new Date("2026-11-24T12:00:00Z"));
    assert.equal(w.start.toISOString(), "1970-01-01T00:00:00.000Z");
    assert.equal(w.resetsAt, null);
  });
});

describe("a key's own limit (docs/api.md#key-limits)", () => {
  it("fields not sent keep their value; null removes the limit or makes it a lifetime one", () => {
    const set = applyKeyLimit(NO_KEY_LIMIT, { limit: 2.5, limit_reset: "weekly" });
    assert.deepEqual(set, { limit_micros: 2_500_000, limit_reset: "weekly", include_byok_in_limit: false });
    assert.deepEqual(applyKeyLimit(set, { include_byok_in_limit: true }), {
      ...set,
      include_byok_in_limit: true,
    });
    assert.deepEqual(applyKeyLimit(set, { limit_reset: null }), { ...set, limit_reset: null });
    assert.deepEqual(applyKeyLimit(set, { limit: null }), { ...set, limit_micros: null });
  });

  it("refuses a negative limit, one finer than a micro-dollar, one over the maximum and an unknown interval, all at once", () => {
    for (const [input, paths] of [
      [{ limit: -0.01 }, ["/limit"]],
      [{ limit: 0.0000001 }, ["/limit"]],
      [{ limit: 2e9 }, ["/limit"]],
      [{ limit: 1, limit_reset: "yearly" }, ["/limit_reset"]],
      [{ limit: -1, limit_reset: "hourly" }, ["/limit", "/limit_reset"]],
    ] as const) {
      assert.throws(
        () => applyKeyLimit(NO_KEY_LIMIT, input),
        (err: { metadata?: { issues?: { path: string }[] } }) => {
          assert.deepEqual(
            err.metadata?.issues?.map((i) => i.path),
            paths,
            JSON.stringify(input),
          );
          return true;
        },
      );
    }
    assert.equal(applyKeyLimit(NO_KEY_LIMIT, { limit: 0 }).limit_micros, 0, "a $0 limit is a limit");
  });

  it("limit_remaining is the limit minus settled spend, never below 0, and null without a limit", () => {
    const limit = { limit_micros: 1_000_000, limit_reset: null, include_byok_in_limit: false };
    assert.equal(presentKeyLimit(limit, 250_000).limit_remaining, 0.75);
    assert.equal(presentKeyLimit(limit, 1_500_000).limit_remaining, 0);
    assert.deepEqual(presentKeyLimit(NO_KEY_LIMIT, 5), {
      limit: null,
      limit_remaining: null,
      limit_reset: null,
      include_byok_in_limit: false,
    });
  });
});
