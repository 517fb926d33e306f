import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { changesOf, columnsOf, labelOf, valueText } from "../../console/src/audit-change.js";

/** An audit entry's change as the console lists it (docs/behaviour.md#console-audit-entries). */
describe("an audit entry's change, field by field (docs/behaviour.md#console-audit-entries)", () => {
  it("an update lists only the fields whose values differ, labelled plainly, with both values in words", () => {
    const changes = changesOf(
      { limit_usd: 5, reset_interval: "monthly", content_filters: null, enforce_zdr_anthropic: false },
      {
        limit_usd: 12.5,
        reset_interval: "monthly",
        content_filters: [{ pattern: "ticket-[0-9]+", action: "redact", label: "[TICKET]" }],
        enforce_zdr_anthropic: true,
      },
    );
    assert.deepEqual(changes, [
      { key: "limit_usd", label: "Budget limit", before: "$5.00", after: "$12.50" },
      {
        key: "content_filters",
        label: "Custom patterns",
        before: "none",
        after: "/ticket-[0-9]+/: redact as [TICKET]",
      },
      {
        key: "enforce_zdr_anthropic",
        label: "Zero data retention for anthropic models",
        before: "no",
        after: "yes",
      },
    ]);
  });

  it("a create lists the values it set, not its empty defaults nor the id and times shown beside it", () => {
    const changes = changesOf(null, {
      id: "0b1c",
      name: "pii",
      description: null,
      allowed_models: null,
      enable_free_model_publication: false,
      enable_paid_model_training: true,
      content_filter_builtins: [{ slug: "regex-prompt-injection", action: "block", scan_scope: "user_only" }],
      alert_thresholds: [50, 90],
      created_at: "2026-11-27T10:00:00Z",
      updated_at: null,
    });
    assert.deepEqual(
      changes.map((c) => [c.label, c.before, c.after]),
      [
        ["Name", undefined, "pii"],
        ["Paid models may train on prompts", undefined, "yes"],
        ["Builtin filters", undefined, "regex-prompt-injection: block (user only)"],
        ["Budget alerts at (%)", undefined, "50, 90"],
      ],
    );
  });

  it("a delete lists what was removed; an assignment its keys and count", () => {
    assert.deepEqual(
      changesOf({ name: "app", disabled: false }, null).map((c) => [c.label, c.before, c.after]),
      [["Name", "app", undefined]],
    );
    assert.deepEqual(
      changesOf(null, { key_hashes: ["a1", "b2"], assigned_count: 2 }).map((c) => [c.label, c.after]),
      [
        ["Keys", "a1, b2"],
        ["Newly assigned", "2"],
      ],
    );
  });

  it("a create needs only the values set, a delete only the values removed; the resource's own id is not repeated", () => {
    const created = changesOf(null, { hash: "ab12", name: "app", organization_id: "o1" }, "ab12");
    assert.deepEqual(
      created.map((c) => c.key),
      ["name"],
    );
    assert.deepEqual(columnsOf(created), { before: null, after: "Set to" });
    assert.deepEqual(columnsOf(changesOf({ name: "app" }, null)), { before: "Was", after: null });
    assert.deepEqual(columnsOf(changesOf({ name: "a" }, { name: "b" })), {
      before: "Before",
      after: "After",
    });
  });

  it("a filter's apply_to is said when the entry holds it, and nothing is added when it does not (docs/behaviour.md#apply-to)", () => {
    const changes = changesOf(
      {
        content_filter_builtins: [{ slug: "email", action: "redact" }],
        content_filters: [{ pattern: "t-[0-9]+", action: "flag", label: null }],
      },
      {
        content_filter_builtins: [
          { slug: "email", action: "redact", apply_to: "request" },
          { slug: "email", action: "block", apply_to: "response" },
          { slug: "regex-prompt-injection", action: "block", scan_scope: "user_only", apply_to: "both" },
        ],
        content_filters: [{ pattern: "t-[0-9]+", action: "redact", label: "[T]", apply_to: "response" }],
      },
    );
    assert.deepEqual(
      changes.map((c) => [c.label, c.before, c.after]),
      [
        [
          "Builtin filters",
          "email: redact",
          "email: redact on requests, email: block on answers, regex-prompt-injection: block (user only) on requests and answers",
        ],
        ["Custom patterns", "/t-[0-9]+/: flag", "/t-[0-9]+/: redact as [T] on answers"],
      ],
    );
  });

  it("labels and values unknown to the tables still read as words", () => {
    assert.equal(labelOf("some_new_field"), "Some new field");
    assert.equal(valueText("x", { a_b: 1, c: true }), "a b 1; c yes");
    assert.deepEqual(changesOf({ same: [1] }, { same: [1] }), []);
  });
});
