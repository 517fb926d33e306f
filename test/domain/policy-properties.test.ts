import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import "../helpers/property-seed.js";
import type { Region } from "../../src/domain/catalog.js";
import type { BuiltinFilter, CustomFilter } from "../../src/domain/content-filters.js";
import {
  type AppliedGuardrail,
  type BudgetLayer,
  combinePolicies,
  type Layer,
} from "../../src/domain/policy.js";
import { FAMILIES, GEMINI, GPT5, GROK, guardrail, SONNET } from "./policy-support.js";

/**
 * Properties of policy combination (docs/behaviour.md#combination): it does not depend on the order of the
 * guardrails, and adding a guardrail never widens what is allowed. A small universe of models,
 * providers and regions keeps the intersections non-trivial.
 */

const MODELS = [SONNET, GPT5, GEMINI, GROK];
const PROVIDERS = ["anthropic", "openai", "azure", "groq"];
const REGIONS: Region[] = ["global", "europe", "us"];
const ACTIONS = ["block", "redact", "flag"] as const;
const STRICTNESS = { flag: 0, redact: 1, block: 2 } as const;
const LAYERS: Layer[] = ["workspace_default", "member", "key"];

/** Stored guardrails are plain JSON objects, never null-prototype ones. */
const PLAIN = { noNullPrototype: true } as const;
const nullable = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null, freq: 3 });
const builtinArb: fc.Arbitrary<BuiltinFilter> = fc.oneof(
  fc.record(
    {
      slug: fc.constantFrom("email" as const, "phone" as const, "ssn" as const),
      action: fc.constantFrom(...ACTIONS),
    },
    PLAIN,
  ),
  fc.record(
    {
      slug: fc.constant("regex-prompt-injection" as const),
      action: fc.constantFrom(...ACTIONS),
      scan_scope: fc.constantFrom("user_only" as const, "all_messages" as const),
    },
    PLAIN,
  ),
);
const customArb: fc.Arbitrary<CustomFilter> = fc.record(
  {
    pattern: fc.constantFrom("secret", "\\d{3}-\\d{4}", "(foo|bar)+"),
    action: fc.constantFrom(...ACTIONS),
    label: fc.constantFrom(null, "", "[A]", "[B]"),
  },
  PLAIN,
);
const policyArb = fc.record(
  {
    allowed_models: nullable(fc.subarray(MODELS)),
    allowed_providers: nullable(fc.subarray(PROVIDERS)),
    allowed_data_regions: nullable(fc.subarray(REGIONS)),
    ignored_models: nullable(fc.subarray(MODELS)),
    ignored_providers: nullable(fc.subarray(PROVIDERS)),
    // A slug or pattern appears at most once per guardrail (docs/behaviour.md#custom-filters).
    content_filter_builtins: nullable(fc.uniqueArray(builtinArb, { selector: (f) => f.slug, maxLength: 4 })),
    content_filters: nullable(fc.uniqueArray(customArb, { selector: (f) => f.pattern, maxLength: 3 })),
    enable_free_model_publication: fc.boolean(),
    enable_free_model_training: fc.boolean(),
    enable_paid_model_training: fc.boolean(),
    enforce_zdr: fc.record(Object.fromEntries(FAMILIES.map((f) => [f, fc.boolean()])), PLAIN),
    include_byok_in_budgets: fc.boolean(),
    budget: nullable(
      fc.record(
        {
          limit_micros: fc.integer({ min: 1, max: 1e12 }),
          reset_interval: fc.constantFrom("daily" as const, "weekly" as const, "monthly" as const),
        },
        PLAIN,
      ),
    ),
    layer: fc.constantFrom(...LAYERS),
  },
  PLAIN,
);
/** 0..4 applied guardrails, each with its own id. */
const appliedListArb = fc.array(policyArb, { maxLength: 4 }).map((policies) =>
  policies.map(
    ({ budget: b, layer, ...policy }, i): AppliedGuardrail => ({
      layer,
      guardrail: guardrail(
        { ...policy, limit_micros: b?.limit_micros ?? null, reset_interval: b?.reset_interval ?? null },
        `00000000-0000-4000-8000-0000000000${i}${i}`,
      ),
    }),
  ),
);

/** null means everything: is `after` a subset of `before`? */
function narrowerOrEqual<T>(after: T[] | null, before: T[] | null): boolean {
  if (before === null) return true;
  if (after === null) return false;
  return after.every((x) => before.includes(x));
}

describe("combinePolicies: properties (docs/behaviour.md#combination)", () => {
  it("combination is order-independent: any permutation of the guardrails gives the same policy", () => {
    fc.assert(
      fc.property(
        appliedListArb.chain((list) =>
          fc.tuple(
            fc.constant(list),
            fc.shuffledSubarray(list, { minLength: list.length, maxLength: list.length }),
          ),
        ),
        fc.boolean(),
        ([original, shuffled], hasMember) => {
          assert.deepEqual(
            combinePolicies(shuffled, FAMILIES, hasMember),
            combinePolicies(original, FAMILIES, hasMember),
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  it("adding a guardrail never widens what is allowed: fewer or equal models, providers, regions, permissions; never a weaker filter, a dropped ZDR flag or a lost budget layer", () => {
    const extra = appliedListArb.filter((l) => l.length > 0).map((l) => l[0] as AppliedGuardrail);
    fc.assert(
      fc.property(appliedListArb, extra, fc.boolean(), (gs, g, hasMember) => {
        const added = { ...g, guardrail: { ...g.guardrail, id: "00000000-0000-4000-8000-0000000000ff" } };
        const before = combinePolicies(gs, FAMILIES, hasMember);
        const after = combinePolicies([...gs, added], FAMILIES, hasMember);
        assert.ok(narrowerOrEqual(after.allowed_models, before.allowed_models), "allowed_models widened");
        assert.ok(
          narrowerOrEqual(after.allowed_providers, before.allowed_providers),
          "allowed_providers widened",
        );
        assert.ok(
          narrowerOrEqual(after.allowed_data_regions, before.allowed_data_regions),
          "allowed_data_regions widened",
        );
        assert.ok(
          narrowerOrEqual(before.ignored_models, after.ignored_models),
          "an ignored model was dropped",
        );
        assert.ok(
          narrowerOrEqual(before.ignored_providers, after.ignored_providers),
          "an ignored provider was dropped",
        );
        for (const family of FAMILIES) {
          assert.ok(
            !before.enforce_zdr[family] || after.enforce_zdr[family],
            `ZDR flag ${family} went true→false`,
          );
        }
        for (const flag of [
          "enable_free_model_publication",
          "enable_free_model_training",
          "enable_paid_model_training",
        ] as const) {
          assert.ok(before[flag] || !after[flag], `${flag} went false→true`);
        }
        for (const f of before.content_filter_builtins) {
          const kept = after.content_filter_builtins.find((a) => a.slug === f.slug);
          assert.ok(kept, `builtin ${f.slug} lost`);
          assert.ok(STRICTNESS[kept.action] >= STRICTNESS[f.action], `builtin ${f.slug} weakened`);
          if (f.scan_scope === "all_messages")
            assert.equal(kept.scan_scope, "all_messages", "scan scope narrowed");
        }
        for (const f of before.content_filters) {
          const kept = after.content_filters.find((a) => a.pattern === f.pattern);
          assert.ok(kept, `custom filter ${f.pattern} lost`);
          assert.ok(STRICTNESS[kept.action] >= STRICTNESS[f.action], `custom filter ${f.pattern} weakened`);
        }
        for (const layer of before.budgets) {
          assert.ok(
            after.budgets.some((b: BudgetLayer) => JSON.stringify(b) === JSON.stringify(layer)),
            `budget layer ${layer.layer}/${layer.scope}/${layer.guardrail_id} lost`,
          );
        }
      }),
      { numRuns: 500 },
    );
  });
});
