import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Catalog, type CatalogData } from "../../src/domain/catalog.js";
import { AppError } from "../../src/domain/errors.js";
import {
  applyGuardrailBody,
  defaultPolicy,
  type GuardrailBody,
  type GuardrailPolicy,
  ifMatchSatisfied,
} from "../../src/domain/guardrail.js";

const endpoint = {
  region: "global",
  zdr: true,
  trains_on_data: false,
  publishes_prompts: false,
  free: false,
  byok: false,
} as const;
const data: CatalogData = {
  zdr_families: [
    { id: "vendor_a", name: "A", authors: ["anthropic"] },
    { id: "vendor_b", name: "B", authors: ["openai"] },
  ],
  providers: ["openai", "anthropic"].map((id) => ({
    id,
    name: id,
    base_url: "http://x",
    api_key_env: "K",
    byok: false,
    timeout_ms: 1,
  })),
  models: [
    {
      slug: "openai/gpt-x",
      canonical_slug: "openai/gpt-x-2025-01-01",
      name: "X",
      author: "openai",
      context_length: 1000,
      max_output_tokens: 100,
      pricing: { prompt_usd_per_million_tokens: 1, completion_usd_per_million_tokens: 2 },
      endpoints: [{ provider: "openai", ...endpoint }],
    },
  ],
};
const catalog = new Catalog(data);
const base = defaultPolicy("g", catalog.familyIds());

function apply(body: GuardrailBody, current: GuardrailPolicy = base, isCreate = true) {
  return applyGuardrailBody(current, body, catalog, { isCreate });
}

function issuesOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof AppError);
    assert.equal(err.status, 400);
    return ((err.metadata?.issues ?? []) as { path: string }[]).map((i) => i.path);
  }
  assert.fail("expected a 400");
}

describe("applying a guardrail body (pure rules: docs/behaviour.md#guardrail-fields, docs/behaviour.md#partial-update)", () => {
  const cases: {
    name: string;
    body: GuardrailBody;
    current?: GuardrailPolicy;
    isCreate?: boolean;
    expect: Partial<GuardrailPolicy>;
  }[] = [
    {
      name: "defaults (docs/behaviour.md#guardrail-defaults)",
      body: {},
      expect: {
        enable_free_model_training: true,
        enable_paid_model_training: true,
        enable_free_model_publication: false,
        enforce_zdr: { vendor_a: false, vendor_b: false, other: false },
      },
    },
    {
      name: "enforce_zdr is copied into every family flag not sent (docs/behaviour.md#enforce-zdr-deprecated)",
      body: { enforce_zdr: true, enforce_zdr_vendor_b: false },
      expect: { enforce_zdr: { vendor_a: true, vendor_b: false, other: true } },
    },
    {
      name: "enforce_zdr null copies nothing",
      body: { enforce_zdr: null, enforce_zdr_other: true },
      expect: { enforce_zdr: { vendor_a: false, vendor_b: false, other: true } },
    },
    {
      name: "a slug is stored as the canonical slug; duplicates collapse (docs/behaviour.md#model-lists)",
      body: { allowed_models: ["openai/gpt-x", "openai/gpt-x-2025-01-01"] },
      expect: { allowed_models: ["openai/gpt-x-2025-01-01"] },
    },
    {
      name: "regions collapse duplicates (docs/behaviour.md#region-lists)",
      body: { allowed_data_regions: ["us", "us", "europe"] },
      expect: { allowed_data_regions: ["us", "europe"] },
    },
    {
      name: "limit_usd is kept as micro-dollars",
      body: { limit_usd: 0.1, reset_interval: "weekly" },
      expect: { limit_micros: 100_000, reset_interval: "weekly" },
    },
    {
      name: "on update the stored reset_interval counts (docs/behaviour.md#budget-fields)",
      body: { limit_usd: 3 },
      current: { ...base, limit_micros: 1, reset_interval: "daily" },
      isCreate: false,
      expect: { limit_micros: 3_000_000, reset_interval: "daily" },
    },
    {
      name: "both null clears the budget",
      body: { limit_usd: null, reset_interval: null },
      current: { ...base, limit_micros: 1, reset_interval: "daily" },
      isCreate: false,
      expect: { limit_micros: null, reset_interval: null },
    },
    {
      name: "null clears a list (docs/behaviour.md#partial-update)",
      body: { allowed_providers: null },
      current: { ...base, allowed_providers: ["openai"] },
      isCreate: false,
      expect: { allowed_providers: null },
    },
    {
      name: "the builtin label is the system's; scan_scope defaults for prompt injection (docs/behaviour.md#scan-scope)",
      body: { content_filter_builtins: [{ slug: "regex-prompt-injection", action: "flag", label: "mine" }] },
      expect: {
        content_filter_builtins: [
          { slug: "regex-prompt-injection", action: "flag", scan_scope: "all_messages" },
        ],
      },
    },
    {
      name: "a custom filter without label redacts with null label (docs/behaviour.md#custom-filters)",
      body: { content_filters: [{ pattern: "a+b", action: "redact" }] },
      expect: { content_filters: [{ pattern: "a+b", action: "redact", label: null }] },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const out = apply(c.body, c.current, c.isCreate ?? true);
      for (const [k, v] of Object.entries(c.expect)) assert.deepEqual(out[k as keyof GuardrailPolicy], v, k);
    });
  }

  const refusals: {
    name: string;
    body: GuardrailBody;
    current?: GuardrailPolicy;
    isCreate?: boolean;
    paths: string[];
  }[] = [
    {
      name: "limit_usd without reset_interval (docs/behaviour.md#budget-fields)",
      body: { limit_usd: 5 },
      paths: ["/reset_interval"],
    },
    {
      name: "reset_interval without limit_usd (docs/behaviour.md#budget-fields)",
      body: { reset_interval: "daily" },
      paths: ["/limit_usd"],
    },
    {
      name: "clearing one half of a stored budget (docs/behaviour.md#budget-fields)",
      body: { reset_interval: null },
      current: { ...base, limit_micros: 1, reset_interval: "daily" },
      isCreate: false,
      paths: ["/reset_interval"],
    },
    {
      name: "a limit finer than a micro-dollar",
      body: { limit_usd: 0.0000001, reset_interval: "daily" },
      paths: ["/limit_usd"],
    },
    {
      name: "a limit above the bound",
      body: { limit_usd: 2e9, reset_interval: "daily" },
      paths: ["/limit_usd"],
    },
    {
      name: "an unknown model is named (docs/behaviour.md#model-lists)",
      body: { ignored_models: ["openai/gpt-x", "nope/none"] },
      paths: ["/ignored_models/1"],
    },
    {
      name: "an unknown provider is named (docs/behaviour.md#provider-lists)",
      body: { allowed_providers: ["nobody"] },
      paths: ["/allowed_providers/0"],
    },
    {
      name: "the same builtin slug twice (docs/behaviour.md#builtin-filters)",
      body: {
        content_filter_builtins: [
          { slug: "email", action: "flag" },
          { slug: "email", action: "block" },
        ],
      },
      paths: ["/content_filter_builtins/1/slug"],
    },
    {
      name: "scan_scope outside prompt injection (docs/behaviour.md#scan-scope)",
      body: { content_filter_builtins: [{ slug: "email", action: "flag", scan_scope: "user_only" }] },
      paths: ["/content_filter_builtins/0/scan_scope"],
    },
    {
      name: "a pattern needing backtracking (docs/behaviour.md#custom-filters)",
      body: {
        content_filters: [
          { pattern: "ok", action: "flag" },
          { pattern: "(a)\\1", action: "flag" },
        ],
      },
      paths: ["/content_filters/1/pattern"],
    },
  ];
  for (const r of refusals) {
    it(`refuses ${r.name}`, () => {
      assert.deepEqual(
        issuesOf(() => apply(r.body, r.current, r.isCreate ?? true)),
        r.paths,
      );
    });
  }

  it("names every offending property at once, not only the first", () => {
    const paths = issuesOf(() => apply({ allowed_models: ["x"], allowed_providers: ["y"], limit_usd: 1 }));
    assert.deepEqual(paths.sort(), ["/allowed_models/0", "/allowed_providers/0", "/reset_interval"]);
  });

  it("the name of a workspace default guardrail is fixed (docs/behaviour.md#workspace-default)", () => {
    const fixed = { isCreate: false, fixedName: "Workspace w Default" };
    assert.deepEqual(
      (() => {
        try {
          applyGuardrailBody(base, { name: "other" }, catalog, fixed);
        } catch (err) {
          return (err as AppError).status;
        }
      })(),
      400,
    );
    assert.equal(
      applyGuardrailBody(base, { name: "Workspace w Default" }, catalog, fixed).name,
      "Workspace w Default",
    );
  });
});

describe("If-Match (docs/behaviour.md#concurrency)", () => {
  const current = { version: 3 };
  for (const [header, expected] of [
    ['"3"', true],
    ['W/"3"', true],
    ['"1", "3"', true],
    ["*", true],
    ['"2"', false],
    ["3", false],
    ["", false],
  ] as const) {
    it(`If-Match ${JSON.stringify(header)} ${expected ? "matches" : "does not match"} version 3`, () => {
      assert.equal(ifMatchSatisfied(header, current), expected);
    });
  }
  it("If-Match * does not match a guardrail that does not exist", () => {
    assert.equal(ifMatchSatisfied("*", undefined), false);
  });
});
