import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ChatText } from "../../src/domain/chat-texts.js";
import { checkPatterns, MAX_GUARDRAIL_PATTERN_COST } from "../../src/domain/content-filters.js";
import { compileFilters, SET_MAX_COST, scanTexts } from "../../src/domain/content-scan.js";
import { DETECTORS } from "../../src/domain/detectors/index.js";
import { patternCost, UNICODE_CLASS_COST } from "../../src/domain/pattern-cost.js";

const flag = (pattern: string) => ({ pattern, action: "flag" as const, label: null });
const text = (value: string) => ({ text: value, role: "user", json: false }) as unknown as ChatText;

describe("the scan cost of a pattern (docs/api.md#pattern-limits)", () => {
  const cases: [string, number][] = [
    ["abc", 3],
    ["a[ab]{999}c", 1001],
    ["(?:q[ab]{999}c|r[ab]{999}d|s[ab]{999}e)", 3003],
    ["(?:x{10}){50}", 500],
    ["x{2,5}", 5],
    ["x{3,}", 3],
    ["x*y+z?", 6],
    ["x{,3}", 5],
    ["(?i)internal use only", 17],
    ["(?P<n>ab){3}", 6],
    ["(?<n>ab)?", 3],
    ["[]a]{5}", 5],
    ["[[:alpha:]]{4}", 4],
    ["\\Qa.b*c\\E{3}", 7],
    ["\\pL{12}", 12 * UNICODE_CLASS_COST],
    ["[\\p{Greek}\\d]", UNICODE_CLASS_COST],
    ["[à-ÿ]", UNICODE_CLASS_COST],
    ["[^a-z]{4}", 4],
    ["\\S.\\w", 3],
    ["😀{2}", 2],
    ["(?:)(?:)", 0],
  ];
  for (const [pattern, cost] of cases) {
    it(`${pattern} costs ${cost}`, () => assert.equal(patternCost(pattern), cost));
  }

  it("every pattern RE2 accepts is scanned to the end: the estimate stops on any text", () => {
    for (const pattern of ["(", ")", "\\", "[", "[\\", "\\x{", "\\p{", "\\Q", "(?", "{1,2"]) {
      assert.equal(typeof patternCost(pattern), "number", pattern);
    }
  });
});

describe("write-time bounds and the sets the request path builds (docs/api.md#pattern-limits)", () => {
  it("a guardrail at the bound passes; one position more is named with its limit", () => {
    assert.deepEqual(checkPatterns([flag(`a[ab]{${MAX_GUARDRAIL_PATTERN_COST - 2}}c`)]), []);
    const [problem] = checkPatterns([flag("ok"), flag(`a[ab]{${MAX_GUARDRAIL_PATTERN_COST - 1}}c`)]);
    assert.deepEqual(
      { ...problem, pattern_error: undefined },
      {
        index: 1,
        pattern_error: undefined,
        limit: "pattern_cost",
        cost: MAX_GUARDRAIL_PATTERN_COST + 1,
        max_cost: MAX_GUARDRAIL_PATTERN_COST,
      },
    );
  });

  it("patterns go into sets of at most the set bound; costlier ones run alone", () => {
    const filters = compileFilters(
      {
        content_filter_builtins: [],
        content_filters: [flag("a[ab]{98}c"), flag("b[ab]{98}c"), flag("c[ab]{98}c"), flag("d[ab]{298}c")],
      },
      DETECTORS,
    );
    assert.deepEqual(
      filters.groups
        .map((g) => ({ members: g.members, set: g.set !== null }))
        .sort((a, b) => (a.members[0] ?? 0) - (b.members[0] ?? 0)),
      [
        { members: [0, 1], set: true },
        { members: [2], set: false },
        { members: [3], set: false },
      ],
    );
    assert.equal(filters.customCost, 100 + 100 + 100 + 300);
  });

  it("the heaviest set the bound admits compiles: Unicode classes and plain text", () => {
    for (const cls of ["\\pL", "(?i)[\\pL\\pN\\pP\\pS\\pM]", "[^\\pL]", "\\P{Han}"]) {
      const patterns = Array.from({ length: Math.floor(SET_MAX_COST / (UNICODE_CLASS_COST + 1)) }, (_, i) =>
        flag(`${cls}${i % 10}`),
      );
      const filters = compileFilters({ content_filter_builtins: [], content_filters: patterns }, DETECTORS);
      assert.equal(filters.groups.length, 1, cls);
      assert.notEqual(filters.groups[0]?.set, null, cls);
    }
    const literals = compileFilters(
      { content_filter_builtins: [], content_filters: [flag("x".repeat(128)), flag("y".repeat(128))] },
      DETECTORS,
    );
    assert.notEqual(literals.groups[0]?.set, null);
  });

  it("a set that fails on a text leaves its patterns to run one by one: the scan still finds every match", () => {
    const filters = compileFilters(
      { content_filter_builtins: [], content_filters: [flag("alpha"), flag("beta")] },
      DETECTORS,
    );
    const group = filters.groups[0];
    assert.ok(group?.set);
    const failing = {
      match(): number[] {
        throw new Error("RE2.Set matching failed: out of memory.");
      },
    };
    filters.groups = [{ ...group, set: failing as unknown as typeof group.set }];
    const result = scanTexts(filters, [text("alpha and beta")]);
    assert.deepEqual(
      result.hits.map((h) => h.filter),
      [
        { type: "custom", pattern: "alpha" },
        { type: "custom", pattern: "beta" },
      ],
    );
  });

  it("a stored pattern that does not compile is recorded, and scanning without it is refused", () => {
    const filters = compileFilters(
      { content_filter_builtins: [], content_filters: [flag("fine"), flag("(?<=x)y")] },
      DETECTORS,
    );
    assert.equal(filters.custom.length, 1);
    assert.deepEqual(
      filters.broken.map((b) => b.pattern),
      ["(?<=x)y"],
    );
    assert.throws(() => scanTexts(filters, [text("fine")]), /does not compile/);
  });
});
