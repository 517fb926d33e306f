import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ResetInterval } from "../../src/domain/guardrail.js";
import {
  type AppliedGuardrail,
  type BudgetLayer,
  type BudgetScope,
  combinePolicies,
  type EffectivePolicy,
  type Layer,
} from "../../src/domain/policy.js";
import {
  FAMILIES,
  GEMINI,
  GPT5,
  GROK,
  guardrail,
  key,
  member,
  SONNET,
  workspaceDefault,
} from "./policy-support.js";

/** A table of named cases, one row per rule of docs/behaviour.md#combination; each row also runs reversed. */

const zdr = (...families: string[]) => Object.fromEntries(FAMILIES.map((f) => [f, families.includes(f)]));
const budget = (usd: number, reset_interval: ResetInterval, byok = false) => ({
  limit_micros: usd * 1_000_000,
  reset_interval,
  include_byok_in_budgets: byok,
});
const layer = (
  guardrail_id: string,
  layer: Layer,
  scope: BudgetScope,
  usd: number,
  reset_interval: ResetInterval,
  byok = false,
): BudgetLayer => ({
  guardrail_id,
  layer,
  scope,
  limit_micros: usd * 1_000_000,
  reset_interval,
  include_byok_in_budgets: byok,
});

/** Lists compared as sets: the order of a combined list carries no meaning. */
function normalized(p: Partial<EffectivePolicy>): Partial<EffectivePolicy> {
  const out: Record<string, unknown> = { ...p };
  for (const [field, value] of Object.entries(p)) {
    if (!Array.isArray(value)) continue;
    out[field] = [...value].sort((a: unknown, b: unknown) =>
      JSON.stringify(a) < JSON.stringify(b) ? -1 : JSON.stringify(a) > JSON.stringify(b) ? 1 : 0,
    );
  }
  return out as Partial<EffectivePolicy>;
}

interface Row {
  name: string;
  applied: AppliedGuardrail[];
  hasMember?: boolean;
  expected: Partial<EffectivePolicy>;
}

const ROWS: Row[] = [
  {
    name: "allowed models intersect",
    applied: [
      key(guardrail({ allowed_models: [SONNET, GPT5, GEMINI] })),
      member(guardrail({ allowed_models: [GPT5, GEMINI, GROK] })),
    ],
    expected: { allowed_models: [GPT5, GEMINI] },
  },
  {
    name: "allowed providers intersect",
    applied: [
      key(guardrail({ allowed_providers: ["openai", "azure", "anthropic"] })),
      workspaceDefault(guardrail({ allowed_providers: ["azure", "openai", "xai"] })),
    ],
    expected: { allowed_providers: ["azure", "openai"] },
  },
  {
    name: "allowed regions intersect",
    applied: [
      key(guardrail({ allowed_data_regions: ["global", "europe"] })),
      member(guardrail({ allowed_data_regions: ["europe", "us"] })),
    ],
    expected: { allowed_data_regions: ["europe"] },
  },
  {
    name: "null is no restriction: null ∩ X = X for models, providers and regions",
    applied: [
      key(guardrail({ allowed_models: [SONNET], allowed_providers: null, allowed_data_regions: ["us"] })),
      member(
        guardrail({ allowed_models: null, allowed_providers: ["anthropic"], allowed_data_regions: null }),
      ),
    ],
    expected: { allowed_models: [SONNET], allowed_providers: ["anthropic"], allowed_data_regions: ["us"] },
  },
  {
    name: "all null stays null (no restriction)",
    applied: [key(guardrail()), member(guardrail()), workspaceDefault(guardrail())],
    hasMember: true,
    expected: { allowed_models: null, allowed_providers: null, allowed_data_regions: null },
  },
  {
    name: "an empty intersection allows nothing ([], not null)",
    applied: [
      key(
        guardrail({
          allowed_models: [SONNET],
          allowed_providers: ["anthropic"],
          allowed_data_regions: ["us"],
        }),
      ),
      member(
        guardrail({
          allowed_models: [GPT5],
          allowed_providers: ["openai"],
          allowed_data_regions: ["europe"],
        }),
      ),
    ],
    expected: { allowed_models: [], allowed_providers: [], allowed_data_regions: [] },
  },
  {
    name: "ignored models unite (null contributes nothing)",
    applied: [
      key(guardrail({ ignored_models: [SONNET, GPT5] })),
      member(guardrail({ ignored_models: [GPT5, GROK] })),
      workspaceDefault(guardrail({ ignored_models: null })),
    ],
    hasMember: true,
    expected: { ignored_models: [SONNET, GPT5, GROK] },
  },
  {
    name: "ignored providers unite; all null unite to []",
    applied: [
      key(guardrail({ ignored_providers: ["groq"] })),
      member(guardrail({ ignored_providers: ["together", "groq"] })),
    ],
    expected: { ignored_providers: ["groq", "together"], ignored_models: [] },
  },
  {
    name: "a vendor ZDR flag applies if any guardrail sets it, per family incl. 'other'",
    applied: [
      key(guardrail({ enforce_zdr: zdr("vendor_a") })),
      member(guardrail({ enforce_zdr: zdr("other") })),
      workspaceDefault(guardrail({ enforce_zdr: zdr() })),
    ],
    hasMember: true,
    expected: { enforce_zdr: zdr("vendor_a", "other") },
  },
  {
    name: "a ZDR flag missing from a stored guardrail counts as not set",
    applied: [key(guardrail({ enforce_zdr: { vendor_b: true } })), member(guardrail({ enforce_zdr: {} }))],
    expected: { enforce_zdr: zdr("vendor_b") },
  },
  {
    name: "enable_free_model_publication holds only if every guardrail grants it",
    applied: [
      key(guardrail({ enable_free_model_publication: true })),
      member(guardrail({ enable_free_model_publication: false })),
    ],
    expected: { enable_free_model_publication: false, enable_free_model_training: true },
  },
  {
    name: "enable_free_model_training holds only if every guardrail grants it",
    applied: [key(guardrail()), workspaceDefault(guardrail({ enable_free_model_training: false }))],
    expected: { enable_free_model_training: false, enable_paid_model_training: true },
  },
  {
    name: "enable_paid_model_training holds only if every guardrail grants it",
    applied: [member(guardrail({ enable_paid_model_training: false })), key(guardrail())],
    expected: { enable_paid_model_training: false, enable_free_model_training: true },
  },
  {
    name: "a permission every guardrail grants holds",
    applied: [
      key(guardrail({ enable_free_model_publication: true })),
      member(guardrail({ enable_free_model_publication: true })),
    ],
    expected: {
      enable_free_model_publication: true,
      enable_free_model_training: true,
      enable_paid_model_training: true,
    },
  },
  {
    name: "no guardrails at all: no restriction and everything permitted",
    applied: [],
    expected: {
      allowed_data_regions: null,
      allowed_models: null,
      allowed_providers: null,
      ignored_models: [],
      ignored_providers: [],
      enforce_zdr: zdr(),
      enable_free_model_publication: true,
      enable_free_model_training: true,
      enable_paid_model_training: true,
      content_filter_builtins: [],
      content_filters: [],
      budgets: [],
    },
  },
  {
    name: "content filters unite (builtin and custom)",
    applied: [
      key(
        guardrail({
          content_filter_builtins: [{ slug: "email", action: "redact" }],
          content_filters: [{ pattern: "secret", action: "block", label: null }],
        }),
      ),
      member(
        guardrail({
          content_filter_builtins: [{ slug: "ssn", action: "block" }],
          content_filters: [{ pattern: "\\d{3}-\\d{4}", action: "flag", label: "[NUM]" }],
        }),
      ),
      workspaceDefault(guardrail({ content_filter_builtins: null, content_filters: null })),
    ],
    hasMember: true,
    expected: {
      content_filter_builtins: [
        { slug: "email", action: "redact" },
        { slug: "ssn", action: "block" },
      ],
      content_filters: [
        { pattern: "secret", action: "block", label: null },
        { pattern: "\\d{3}-\\d{4}", action: "flag", label: "[NUM]" },
      ],
    },
  },
  ...(
    [
      ["flag", "redact", "redact"],
      ["redact", "block", "block"],
      ["flag", "block", "block"],
    ] as const
  ).flatMap(([weaker, stronger, winner]): Row[] => [
    {
      name: `same builtin slug: ${stronger} beats ${weaker} (block > redact > flag)`,
      applied: [
        key(guardrail({ content_filter_builtins: [{ slug: "phone", action: weaker }] })),
        member(guardrail({ content_filter_builtins: [{ slug: "phone", action: stronger }] })),
      ],
      expected: { content_filter_builtins: [{ slug: "phone", action: winner }] },
    },
    {
      name: `same custom pattern: ${stronger} beats ${weaker} (block > redact > flag), its label with it`,
      applied: [
        key(guardrail({ content_filters: [{ pattern: "secret", action: weaker, label: "[WEAK]" }] })),
        workspaceDefault(
          guardrail({ content_filters: [{ pattern: "secret", action: stronger, label: "[STRONG]" }] }),
        ),
      ],
      expected: { content_filters: [{ pattern: "secret", action: winner, label: "[STRONG]" }] },
    },
  ]),
  {
    name: "prompt injection: all_messages wins over user_only, and the strictest action still wins",
    applied: [
      key(
        guardrail({
          content_filter_builtins: [
            { slug: "regex-prompt-injection", action: "block", scan_scope: "user_only" },
          ],
        }),
      ),
      member(
        guardrail({
          content_filter_builtins: [
            { slug: "regex-prompt-injection", action: "flag", scan_scope: "all_messages" },
          ],
        }),
      ),
    ],
    expected: {
      content_filter_builtins: [
        { slug: "regex-prompt-injection", action: "block", scan_scope: "all_messages" },
      ],
    },
  },
  {
    name: "prompt injection: user_only everywhere stays user_only",
    applied: [
      key(
        guardrail({
          content_filter_builtins: [
            { slug: "regex-prompt-injection", action: "redact", scan_scope: "user_only" },
          ],
        }),
      ),
      member(
        guardrail({
          content_filter_builtins: [
            { slug: "regex-prompt-injection", action: "flag", scan_scope: "user_only" },
          ],
        }),
      ),
    ],
    expected: {
      content_filter_builtins: [
        { slug: "regex-prompt-injection", action: "redact", scan_scope: "user_only" },
      ],
    },
  },
  {
    name: "budget of the key's guardrail: a layer of scope key",
    applied: [key(guardrail(budget(50, "daily", true), "k"))],
    hasMember: true,
    expected: { budgets: [layer("k", "key", "key", 50, "daily", true)] },
  },
  {
    name: "budget of the member's guardrail: a layer of scope member (all the member's keys)",
    applied: [member(guardrail(budget(20, "weekly"), "m"))],
    hasMember: true,
    expected: { budgets: [layer("m", "member", "member", 20, "weekly")] },
  },
  {
    name: "budget of the workspace default, key with a member: layers of scope member and key",
    applied: [workspaceDefault(guardrail(budget(10, "monthly"), "w"))],
    hasMember: true,
    expected: {
      budgets: [
        layer("w", "workspace_default", "member", 10, "monthly"),
        layer("w", "workspace_default", "key", 10, "monthly"),
      ],
    },
  },
  {
    name: "budget of the workspace default, key without a member: only a layer of scope key",
    applied: [workspaceDefault(guardrail(budget(10, "monthly"), "w"))],
    hasMember: false,
    expected: { budgets: [layer("w", "workspace_default", "key", 10, "monthly")] },
  },
  {
    name: "every budget is kept on its own, even two of the same interval",
    applied: [
      workspaceDefault(guardrail(budget(10, "daily"), "w")),
      member(guardrail(budget(20, "daily"), "m")),
      key(guardrail(budget(5, "daily"), "k")),
      key(guardrail(budget(7, "weekly", true), "k2")),
    ],
    hasMember: true,
    expected: {
      budgets: [
        layer("w", "workspace_default", "member", 10, "daily"),
        layer("w", "workspace_default", "key", 10, "daily"),
        layer("m", "member", "member", 20, "daily"),
        layer("k", "key", "key", 5, "daily"),
        layer("k2", "key", "key", 7, "weekly", true),
      ],
    },
  },
  {
    name: "guardrails without a budget give no layer",
    applied: [workspaceDefault(guardrail()), member(guardrail(budget(3, "monthly"), "m")), key(guardrail())],
    hasMember: true,
    expected: { budgets: [layer("m", "member", "member", 3, "monthly")] },
  },
];

describe("combinePolicies: one row per rule (docs/behaviour.md#combination)", () => {
  for (const row of ROWS) {
    it(`${row.name} (docs/behaviour.md#combination)`, () => {
      for (const applied of [row.applied, [...row.applied].reverse()]) {
        const actual = combinePolicies(applied, FAMILIES, row.hasMember ?? false);
        const picked = Object.fromEntries(
          Object.keys(row.expected).map((f) => [f, actual[f as keyof EffectivePolicy]]),
        );
        assert.deepEqual(normalized(picked), normalized(row.expected));
      }
    });
  }

  it("same pattern and action with labels null and '' combine the same whichever comes first (docs/behaviour.md#combination: order-independent)", () => {
    const nullLabel = key(
      guardrail({ content_filters: [{ pattern: "secret", action: "redact", label: null }] }),
    );
    const emptyLabel = member(
      guardrail({ content_filters: [{ pattern: "secret", action: "redact", label: "" }] }),
    );
    assert.deepEqual(
      combinePolicies([nullLabel, emptyLabel], FAMILIES, true).content_filters,
      combinePolicies([emptyLabel, nullLabel], FAMILIES, true).content_filters,
    );
  });
});
