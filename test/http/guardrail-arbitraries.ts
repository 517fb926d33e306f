import { readFileSync } from "node:fs";
import fc from "fast-check";
import { defaultFields, FAMILIES } from "./guardrail-support.js";

/**
 * fast-check arbitraries of guardrail bodies, valid and invalid, drawn from the real catalog
 * (config/default.json), and a small model of what a valid body does to a guardrail (docs/behaviour.md#guardrail-defaults; docs/behaviour.md#model-lists; docs/behaviour.md#content-filters).
 */

interface CatalogFile {
  providers: { id: string }[];
  models: { slug: string; canonical_slug: string }[];
}
const catalog = JSON.parse(
  readFileSync(new URL("../../config/default.json", import.meta.url), "utf8"),
) as CatalogFile;

/** Slug or canonical slug → canonical slug (docs/behaviour.md#model-lists). */
export const CANONICAL = new Map<string, string>();
for (const m of catalog.models) {
  CANONICAL.set(m.slug, m.canonical_slug);
  CANONICAL.set(m.canonical_slug, m.canonical_slug);
}
const MODEL_IDS = [...CANONICAL.keys()];
const PROVIDER_IDS = catalog.providers.map((p) => p.id);
const REGIONS = ["global", "europe", "us"] as const;
const ACTIONS = ["block", "redact", "flag"] as const;
const INTERVALS = ["daily", "weekly", "monthly"] as const;
const BOOLEAN_FIELDS = [
  "enable_free_model_publication",
  "enable_free_model_training",
  "enable_paid_model_training",
];
const LIST_FIELDS = ["allowed_models", "ignored_models", "allowed_providers", "ignored_providers"] as const;
export const BUILTIN_LABELS: Record<string, string> = {
  email: "[EMAIL]",
  phone: "[PHONE]",
  ssn: "[SSN]",
  "credit-card": "[CREDIT_CARD]",
  "ip-address": "[IP_ADDRESS]",
  secrets: "[SECRET]",
  "person-name": "[PERSON_NAME]",
  address: "[ADDRESS]",
  "regex-prompt-injection": "[PROMPT_INJECTION]",
};
const INJECTION = "regex-prompt-injection";
/** Patterns in the common JavaScript/RE2 syntax (docs/behaviour.md#custom-filters). */
const SAFE_PATTERNS = [
  "\\d{3}-\\d{4}",
  "secret",
  "[a-z]+@example\\.com",
  "(foo|bar)+",
  "^hello$",
  "\\bword\\b",
  "a.*b",
];
const ZDR_KEYS = FAMILIES.map((f) => `enforce_zdr_${f}`);

export type Body = Record<string, unknown>;

// ---------- valid bodies ----------

/** Any Unicode but U+0000, which every request body refuses (the NUL test in bad-input.test.ts). */
const textArb = (constraints: { minLength?: number; maxLength: number }) =>
  fc.string({ unit: "binary", ...constraints }).filter((s) => !s.includes("\0"));

/** 1..200 code points of any Unicode (docs/behaviour.md#name-and-description), with the bounds. */
const nameArb = fc.oneof(
  { weight: 8, arbitrary: textArb({ minLength: 1, maxLength: 200 }) },
  { weight: 1, arbitrary: fc.constantFrom("😀".repeat(200), "n".repeat(200), "é") },
);
const descriptionArb = fc.oneof(
  { weight: 6, arbitrary: textArb({ maxLength: 1000 }) },
  { weight: 1, arbitrary: fc.constantFrom("😀".repeat(1000), "") },
  { weight: 2, arbitrary: fc.constant(null) },
);
const nullableList = <T>(item: fc.Arbitrary<T>, maxLength: number) =>
  fc.oneof(
    { weight: 1, arbitrary: fc.constant(null) },
    { weight: 3, arbitrary: fc.array(item, { minLength: 1, maxLength }) },
  );

const builtinsArb = fc.shuffledSubarray(Object.keys(BUILTIN_LABELS), { minLength: 1 }).chain((slugs) =>
  fc.tuple(
    ...slugs.map((slug) =>
      fc.record(
        {
          slug: fc.constant(slug),
          action: fc.constantFrom(...ACTIONS),
          // A label sent for a builtin is accepted and ignored (docs/behaviour.md#builtin-filters).
          label: fc.string({ maxLength: 100 }).filter((s) => !s.includes("\0")),
          ...(slug === INJECTION ? { scan_scope: fc.constantFrom("user_only", "all_messages") } : {}),
        },
        { requiredKeys: ["slug", "action"] },
      ),
    ),
  ),
);
const patternArb = fc.oneof(fc.constantFrom(...SAFE_PATTERNS), fc.stringMatching(/^[A-Za-z0-9 ]{1,20}$/));
const customFilterArb = fc.record(
  {
    pattern: patternArb,
    action: fc.constantFrom(...ACTIONS),
    label: fc.oneof(textArb({ maxLength: 100 }), fc.constant(null)),
  },
  { requiredKeys: ["pattern", "action"] },
);
/** USD with at most six decimals, 0 .. 1e9, computed from whole micro-dollars so it is exact on the wire. */
const limitArb = fc
  .tuple(fc.integer({ min: 0, max: 1_000_000_000 }), fc.integer({ min: 0, max: 999_999 }), fc.boolean())
  .map(([usd, micros, whole]) => (whole ? usd : ((usd % 1_000_000_000) * 1_000_000 + micros) / 1_000_000));
/** limit_usd and reset_interval go together (docs/behaviour.md#budget-fields), set or cleared as a pair. */
const budgetArb = fc.oneof(
  fc.record({ limit_usd: limitArb, reset_interval: fc.constantFrom(...INTERVALS) }),
  fc.constant({ limit_usd: null, reset_interval: null }),
  fc.constant({}),
);

function policyRecord() {
  const shape: Record<string, fc.Arbitrary<unknown>> = {
    name: nameArb,
    description: descriptionArb,
    allowed_data_regions: nullableList(fc.constantFrom(...REGIONS), 6),
    allowed_models: nullableList(fc.constantFrom(...MODEL_IDS), 5),
    ignored_models: nullableList(fc.constantFrom(...MODEL_IDS), 5),
    allowed_providers: nullableList(fc.constantFrom(...PROVIDER_IDS), 5),
    ignored_providers: nullableList(fc.constantFrom(...PROVIDER_IDS), 5),
    content_filter_builtins: fc.oneof(fc.constant(null), builtinsArb),
    content_filters: fc.oneof(fc.constant(null), fc.array(customFilterArb, { minLength: 1, maxLength: 4 })),
    enforce_zdr: fc.oneof(fc.boolean(), fc.constant(null)),
    include_byok_in_budgets: fc.boolean(),
  };
  for (const key of [...BOOLEAN_FIELDS, ...ZDR_KEYS]) shape[key] = fc.boolean();
  return shape;
}

/** A valid create body: name required, anything else optional (docs/behaviour.md#guardrail-create). */
export function validCreateBody(options: { budget: boolean } = { budget: true }): fc.Arbitrary<Body> {
  return fc
    .tuple(
      fc.record(policyRecord(), { requiredKeys: ["name"] }),
      options.budget ? budgetArb : fc.constant({}),
    )
    .map(([body, budget]) => ({ ...body, ...budget }));
}

/** A valid update body: every property optional (docs/behaviour.md#partial-update). */
export function validUpdateBody(options: { budget: boolean } = { budget: true }): fc.Arbitrary<Body> {
  return fc
    .tuple(fc.record(policyRecord(), { requiredKeys: [] }), options.budget ? budgetArb : fc.constant({}))
    .map(([body, budget]) => ({ ...body, ...budget }));
}

// ---------- the model of a valid body ----------

/** The fields a fresh guardrail named `name` returns, minus id, workspace_id, created_at, updated_at. */
export function initialState(name: string): Body {
  const fields = defaultFields();
  delete fields.updated_at;
  return { ...fields, name };
}

const unique = <T>(items: T[]) => [...new Set(items)];

/** What a valid body does to the returned fields (docs/behaviour.md#guardrail-fields; docs/behaviour.md#content-filters; docs/behaviour.md#partial-update). */
export function applyBody(state: Body, body: Body): Body {
  const next: Body = { ...state };
  for (const key of [
    "name",
    "description",
    "include_byok_in_budgets",
    "limit_usd",
    "reset_interval",
    ...BOOLEAN_FIELDS,
  ]) {
    if (key in body) next[key] = body[key];
  }
  if ("allowed_data_regions" in body) {
    const v = body.allowed_data_regions as string[] | null;
    next.allowed_data_regions = v === null ? null : unique(v);
  }
  for (const key of LIST_FIELDS) {
    if (!(key in body)) continue;
    const v = body[key] as string[] | null;
    const models = key.endsWith("_models");
    next[key] = v === null ? null : unique(models ? v.map((m) => CANONICAL.get(m) as string) : v);
  }
  if ("content_filter_builtins" in body) {
    const v = body.content_filter_builtins as { slug: string; action: string; scan_scope?: string }[] | null;
    next.content_filter_builtins =
      v?.map((f) => ({
        slug: f.slug,
        action: f.action,
        label: BUILTIN_LABELS[f.slug],
        ...(f.slug === INJECTION ? { scan_scope: f.scan_scope ?? "all_messages" } : {}),
      })) ?? null;
  }
  if ("content_filters" in body) {
    const v = body.content_filters as { pattern: string; action: string; label?: string | null }[] | null;
    next.content_filters =
      v?.map((f) => ({ pattern: f.pattern, action: f.action, label: f.label ?? null })) ?? null;
  }
  // enforce_zdr is copied into every family flag the request does not set, never stored (docs/behaviour.md#enforce-zdr-deprecated).
  for (const key of ZDR_KEYS) {
    if (typeof body[key] === "boolean") next[key] = body[key];
    else if (typeof body.enforce_zdr === "boolean") next[key] = body.enforce_zdr;
  }
  next.enforce_zdr = null;
  return next;
}

// ---------- invalid bodies ----------

/**
 * One way to break a body. `phase` says which check finds it: the schema (types, lengths, unknown
 * properties) or the catalog and cross-field rules that run once the shape is right. `paths` are the
 * issue paths that must be named (an issue path equal to one, or below it, counts).
 */
export interface Corruption {
  group: string;
  phase: "schema" | "semantic";
  patch: Body;
  paths: string[];
  regexIndex?: number;
}

/** RFC 6901: "~" is "~0" and "/" is "~1" inside a JSON Pointer token. */
const pointerToken = (key: string) => key.replaceAll("~", "~0").replaceAll("/", "~1");
const KNOWN_KEYS = new Set([
  ...Object.keys(policyRecord()),
  "limit_usd",
  "reset_interval",
  "alert_thresholds",
  "workspace_id",
  "id",
  "created_at",
  "updated_at",
]);

const schemaCase = (field: string, values: unknown[]): fc.Arbitrary<Corruption> =>
  fc
    .constantFrom(...values)
    .map((value) => ({ group: field, phase: "schema", patch: { [field]: value }, paths: [`/${field}`] }));

const unknownKey = fc
  .oneof(
    fc.constantFrom(
      "colour",
      "allowedModels",
      "limit",
      "enforce_zdr_anthropic",
      "enforce_zdr_vendor_e",
      "content_filter",
      "Name",
    ),
    fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 30 }),
  )
  // "/" and "~" in a name have their own test (pointer escaping); prototype names are refused earlier.
  .filter(
    (k) => !KNOWN_KEYS.has(k) && !/[/~]/.test(k) && !["__proto__", "constructor", "prototype"].includes(k),
  )
  .map(unknownKeyCorruption);

/** Unknown property names holding "/" or "~", the characters a JSON Pointer escapes (RFC 6901). */
export const pointerKeyArb = fc
  .tuple(
    fc.string({ unit: "grapheme-ascii", maxLength: 8 }),
    fc.constantFrom("/", "~", "~1", "/~"),
    fc.string({ unit: "grapheme-ascii", maxLength: 8 }),
  )
  .map(([a, special, b]) => `${a}${special}${b}`)
  .filter((k) => !KNOWN_KEYS.has(k));

/** An unknown property: its issue path is a JSON Pointer, so "/" and "~" in the name are escaped. */
export function unknownKeyCorruption(key: string): Corruption {
  return { group: `unknown:${key}`, phase: "schema", patch: { [key]: 1 }, paths: [`/${pointerToken(key)}`] };
}

/** A list of valid items with one bad item placed at a random index. */
const withBadItem = (field: string, good: string[], bad: string) =>
  fc.tuple(fc.subarray(good, { maxLength: 3 }), fc.nat()).map(([items, at]): Corruption => {
    const index = at % (items.length + 1);
    const list = [...items.slice(0, index), bad, ...items.slice(index)];
    return { group: field, phase: "semantic", patch: { [field]: list }, paths: [`/${field}/${index}`] };
  });

const badRegex = fc
  .tuple(
    fc.array(fc.constantFrom(...SAFE_PATTERNS), { maxLength: 3 }),
    fc.nat(),
    fc.constantFrom("(?=x)", "(?!x)", "(?<=a)b", "(?<!a)b", "(a)\\1", "[", "(", "*a"),
  )
  .map(([good, at, bad]): Corruption => {
    const index = at % (good.length + 1);
    const patterns = [...good.slice(0, index), bad, ...good.slice(index)];
    return {
      group: "content_filters",
      phase: "semantic",
      patch: { content_filters: patterns.map((pattern) => ({ pattern, action: "block" })) },
      paths: [`/content_filters/${index}/pattern`],
      regexIndex: index,
    };
  });

const aFilter = { pattern: "a", action: "block" };
const budgetCases: Corruption[] = [
  { group: "budget", phase: "semantic", patch: { limit_usd: 5 }, paths: ["/reset_interval"] },
  { group: "budget", phase: "semantic", patch: { reset_interval: "daily" }, paths: ["/limit_usd"] },
  {
    group: "budget",
    phase: "semantic",
    patch: { limit_usd: null, reset_interval: "weekly" },
    paths: ["/limit_usd"],
  },
  {
    group: "budget",
    phase: "semantic",
    patch: { limit_usd: 5, reset_interval: null },
    paths: ["/reset_interval"],
  },
  {
    group: "budget",
    phase: "semantic",
    patch: { limit_usd: 0.0000005, reset_interval: "daily" },
    paths: ["/limit_usd"],
  },
  {
    group: "budget",
    phase: "semantic",
    patch: { limit_usd: 1e10, reset_interval: "daily" },
    paths: ["/limit_usd"],
  },
  {
    group: "budget",
    phase: "schema",
    patch: { limit_usd: "10", reset_interval: "daily" },
    paths: ["/limit_usd"],
  },
  {
    group: "budget",
    phase: "schema",
    patch: { limit_usd: -1, reset_interval: "daily" },
    paths: ["/limit_usd"],
  },
  {
    group: "budget",
    phase: "schema",
    patch: { limit_usd: 5, reset_interval: "hourly" },
    paths: ["/reset_interval"],
  },
  {
    group: "budget",
    phase: "schema",
    patch: { limit_usd: 5, reset_interval: 1 },
    paths: ["/reset_interval"],
  },
];

/** One corruption of any kind. */
export const corruptionArb: fc.Arbitrary<Corruption> = fc.oneof(
  unknownKey,
  schemaCase("name", ["", "x".repeat(201), "😀".repeat(201), 5, null, true, ["n"]]),
  schemaCase("description", ["d".repeat(1001), "😀".repeat(1001), 5, false, []]),
  schemaCase("allowed_data_regions", [[], ["mars"], "global", [null], ["GLOBAL"]]),
  fc.constantFrom(...LIST_FIELDS).chain((f) => schemaCase(f, [[], [""], "openai/gpt-5", [5], {}])),
  schemaCase("content_filter_builtins", [
    [{ slug: "nope", action: "block" }],
    [{ slug: "email", action: "delete" }],
    [{ slug: "email" }],
    [{ slug: "email", action: "block", extra: 1 }],
    [{ slug: "email", action: "block", label: 5 }],
    "email",
  ]),
  schemaCase("content_filters", [
    [{ pattern: "", action: "block" }],
    [{ pattern: "a" }],
    [{ pattern: "a", action: "nope" }],
    [{ pattern: 5, action: "block" }],
    [{ ...aFilter, label: "l".repeat(101) }],
    [{ ...aFilter, extra: true }],
    [{ pattern: "a".repeat(10_001), action: "block" }],
    Array.from({ length: 51 }, () => aFilter),
  ]),
  fc
    .constantFrom(...BOOLEAN_FIELDS, ...ZDR_KEYS, "include_byok_in_budgets")
    .chain((f) => schemaCase(f, ["true", 1, null, {}])),
  schemaCase("enforce_zdr", ["true", 0, []]),
  fc.constantFrom(...budgetCases),
  fc
    .constantFrom("allowed_models", "ignored_models")
    .chain((f) => withBadItem(f, MODEL_IDS, "nope/not-a-model")),
  fc
    .constantFrom("allowed_providers", "ignored_providers")
    .chain((f) => withBadItem(f, PROVIDER_IDS, "not-a-provider")),
  fc.constantFrom(...Object.keys(BUILTIN_LABELS)).map(
    (slug): Corruption => ({
      group: "content_filter_builtins",
      phase: "semantic",
      patch: {
        content_filter_builtins: [
          { slug, action: "block" },
          { slug: "ssn", action: "redact" },
          { slug, action: "flag" },
        ],
      },
      paths: [slug === "ssn" ? "/content_filter_builtins/1/slug" : "/content_filter_builtins/2/slug"],
    }),
  ),
  fc.constantFrom(...Object.keys(BUILTIN_LABELS).filter((s) => s !== INJECTION)).map(
    (slug): Corruption => ({
      group: "content_filter_builtins",
      phase: "semantic",
      patch: {
        content_filter_builtins: [
          { slug: INJECTION, action: "block" },
          { slug, action: "block", scan_scope: "user_only" },
        ],
      },
      paths: ["/content_filter_builtins/1/scan_scope"],
    }),
  ),
  badRegex,
);

/** 1..3 corruptions touching different properties. */
export const corruptionsArb = fc.uniqueArray(corruptionArb, {
  minLength: 1,
  maxLength: 3,
  selector: (c) => c.group,
});
