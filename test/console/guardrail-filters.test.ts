import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import "../helpers/property-seed.js";
import type { Action, ApplyTo, BuiltinFilter, CustomFilter } from "../../console/src/api.js";
import {
  type BuiltinDraft,
  doesText,
  type FiltersDraft,
  filterItems,
  filtersDraftOf,
} from "../../console/src/guardrail-filters.js";
import { DEFAULT_CONFIG_FILE, loadCatalogFile } from "../../src/config.js";
import { Catalog } from "../../src/domain/catalog.js";
import { BUILTIN_SLUGS } from "../../src/domain/content-filters.js";
import { applyGuardrailBody, defaultPolicy, type GuardrailBody } from "../../src/domain/guardrail.js";

/**
 * The guardrail form's filters against the API's lists (docs/behaviour.md#console-apply-to): every
 * stored form read back, and what the form sends taken by the real guardrail rules
 * (src/domain/guardrail.ts) and read back to the same form.
 */

const catalog = new Catalog(loadCatalogFile(DEFAULT_CONFIG_FILE));
const families = catalog.familyIds();

/** What the service stores for the form's lists: the domain's own rules, no HTTP in between. */
function stored(d: FiltersDraft): { builtins: BuiltinFilter[] | null; custom: CustomFilter[] | null } {
  const items = filterItems(d);
  const body: GuardrailBody = {
    name: "g",
    content_filter_builtins:
      items.builtins.length > 0 ? (items.builtins as GuardrailBody["content_filter_builtins"]) : null,
    content_filters: items.custom.length > 0 ? items.custom : null,
  };
  const policy = applyGuardrailBody(defaultPolicy("g", families), body, catalog, { isCreate: true });
  return { builtins: policy.content_filter_builtins, custom: policy.content_filters };
}

describe("the guardrail form's filters read and send apply_to (docs/behaviour.md#console-apply-to)", () => {
  it("reads every stored form back: no apply_to, request, response, both, and a slug once per direction (docs/behaviour.md#apply-to)", () => {
    const draft = filtersDraftOf(
      [
        { slug: "email", action: "redact" },
        { slug: "email", action: "block", apply_to: "response" },
        { slug: "phone", action: "flag", apply_to: "request" },
        { slug: "ssn", action: "block", apply_to: "both" },
        { slug: "secrets", action: "redact", apply_to: "response" },
        { slug: "regex-prompt-injection", action: "block", scan_scope: "user_only", apply_to: "both" },
      ],
      [
        { pattern: "a+", action: "redact", label: null },
        { pattern: "b+", action: "block", label: "[B]", apply_to: "response" },
        { pattern: "c+", action: "flag", label: null, apply_to: "both" },
        { pattern: "d+", action: "flag", label: null, apply_to: "request" },
      ],
    );
    assert.deepEqual(draft.builtins, {
      email: { request: "redact", response: "block" },
      phone: { request: "flag", response: "" },
      ssn: { request: "block", response: "block" },
      secrets: { request: "", response: "redact" },
      "regex-prompt-injection": { request: "block", response: "block" },
    });
    assert.equal(draft.injection_scope, "user_only");
    assert.deepEqual(
      draft.custom.map((c) => [c.pattern, c.action, c.label, c.apply_to]),
      [
        ["a+", "redact", "", "request"],
        ["b+", "block", "[B]", "response"],
        ["c+", "flag", "", "both"],
        ["d+", "flag", "", "request"],
      ],
    );
  });

  it("sends one item reading both when the two actions agree, one per direction otherwise, and a request-only filter without apply_to as before (docs/behaviour.md#apply-to)", () => {
    const items = filterItems({
      builtins: {
        email: { request: "redact", response: "block" },
        phone: { request: "flag", response: "" },
        ssn: { request: "block", response: "block" },
        secrets: { request: "", response: "redact" },
        address: { request: "", response: "" },
        "regex-prompt-injection": { request: "", response: "block" },
      },
      injection_scope: "user_only",
      custom: [
        { pattern: "a+", action: "redact", label: " ", apply_to: "request" },
        { pattern: "b+", action: "block", label: "[B]", apply_to: "response" },
      ],
    });
    assert.deepEqual(items.builtins, [
      { slug: "email", action: "redact" },
      { slug: "email", action: "block", apply_to: "response" },
      { slug: "phone", action: "flag" },
      { slug: "ssn", action: "block", apply_to: "both" },
      { slug: "secrets", action: "redact", apply_to: "response" },
      // The scan scope chooses among a request's messages: an answer filter has none.
      { slug: "regex-prompt-injection", action: "block", apply_to: "response" },
    ]);
    assert.deepEqual(items.custom, [
      { pattern: "a+", action: "redact", label: null },
      { pattern: "b+", action: "block", label: "[B]", apply_to: "response" },
    ]);
    assert.deepEqual(
      filterItems({
        builtins: { "regex-prompt-injection": { request: "flag", response: "flag" } },
        injection_scope: "user_only",
        custom: [],
      }).builtins,
      [{ slug: "regex-prompt-injection", action: "flag", apply_to: "both", scan_scope: "user_only" }],
    );
  });

  it("a guardrail without answer filters is sent exactly as the form sent it before apply_to (docs/behaviour.md#apply-to)", () => {
    const before = filtersDraftOf(
      [
        { slug: "email", action: "redact" },
        { slug: "regex-prompt-injection", action: "block", scan_scope: "all_messages" },
      ],
      [{ pattern: "t-[0-9]+", action: "redact", label: "[T]" }],
    );
    const items = filterItems(before);
    assert.deepEqual(items.builtins, [
      { slug: "email", action: "redact" },
      { slug: "regex-prompt-injection", action: "block", scan_scope: "all_messages" },
    ]);
    assert.deepEqual(items.custom, [{ pattern: "t-[0-9]+", action: "redact", label: "[T]" }]);
    assert.ok(JSON.stringify(items).indexOf("apply_to") === -1);
  });

  it("whatever the form holds, the service takes what it sends without an issue and it reads back to the same form (docs/behaviour.md#apply-to)", () => {
    const action = fc.constantFrom<Action | "">("", "block", "redact", "flag");
    // Plain objects, as the form's own are: deepEqual compares prototypes.
    const plain = { noNullPrototype: true };
    const builtin = fc.record<BuiltinDraft>({ request: action, response: action }, plain);
    const draftArb = fc.record<FiltersDraft>(
      {
        builtins: fc.dictionary(fc.constantFrom(...BUILTIN_SLUGS), builtin, {
          maxKeys: BUILTIN_SLUGS.length,
          ...plain,
        }),
        injection_scope: fc.constantFrom("user_only", "all_messages"),
        custom: fc.array(
          fc.record(
            {
              pattern: fc.constantFrom("a+", "ticket-[0-9]+", "x"),
              action: fc.constantFrom<Action>("block", "redact", "flag"),
              label: fc.constantFrom("", "[X]"),
              apply_to: fc.constantFrom<ApplyTo>("request", "response", "both"),
            },
            plain,
          ),
          { maxLength: 4 },
        ),
      },
      plain,
    );
    let answerFilters = 0;
    fc.assert(
      fc.property(draftArb, (d) => {
        const kept = stored(d);
        const back = filtersDraftOf(kept.builtins, kept.custom);
        // Slugs that are off in both directions are not sent, so they read back as absent.
        const on = Object.fromEntries(
          Object.entries(d.builtins).filter(([, b]) => b.request !== "" || b.response !== ""),
        );
        assert.deepEqual(back.builtins, on);
        assert.deepEqual(back.custom, d.custom);
        if (d.builtins["regex-prompt-injection"]?.request)
          assert.equal(back.injection_scope, d.injection_scope);
        if ((kept.builtins ?? []).some((f) => f.apply_to === "response")) answerFilters++;
      }),
      { numRuns: 200 },
    );
    // The draw really reached answer filters, so the property says something about them.
    assert.ok(answerFilters > 20, `${answerFilters} drafts with an answer filter`);
  });

  it("says what a filter reads beside its action whenever apply_to is set, and nothing more without it (docs/behaviour.md#console-apply-to)", () => {
    assert.equal(doesText({ action: "redact" }), "redact");
    assert.equal(doesText({ action: "redact", apply_to: "request" }), "redact on requests");
    assert.equal(doesText({ action: "block", apply_to: "response" }), "block on answers");
    assert.equal(doesText({ action: "flag", apply_to: "both" }), "flag on requests and answers");
  });
});
