import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { clientFor, startTestServer, type TestServer } from "../helpers/server.js";
import { BUILTIN_LABELS } from "./guardrail-arbitraries.js";
import { assertCreateRefused, assertInvalid, createGuardrail, getGuardrail } from "./guardrail-support.js";

const ACTIONS = ["block", "redact", "flag"];

describe("content filters on create and update (docs/behaviour.md#content-filters)", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });

  const assertRefused = (body: Record<string, unknown>, ...paths: string[]) =>
    assertCreateRefused(server, { name: "f", ...body }, ...paths);

  for (const action of ACTIONS) {
    it(`every builtin slug accepts action ${action}; the label returned is the system's even when one is sent (docs/behaviour.md#builtin-filters)`, async () => {
      const org = await server.newOrg();
      const sent = Object.keys(BUILTIN_LABELS).map((slug) => ({ slug, action, label: "my own label" }));
      const res = await createGuardrail(server, org.key, { name: action, content_filter_builtins: sent });
      const expected = Object.entries(BUILTIN_LABELS).map(([slug, label]) =>
        slug === "regex-prompt-injection"
          ? { slug, action, label, scan_scope: "all_messages" }
          : { slug, action, label },
      );
      assert.deepEqual(res.body.data.content_filter_builtins, expected);
      assert.deepEqual(
        (await getGuardrail(server, org.key, res.body.data.id)).content_filter_builtins,
        expected,
      );
    });
  }

  it("scan_scope user_only or all_messages is kept on regex-prompt-injection; the default is all_messages (docs/behaviour.md#scan-scope)", async () => {
    const org = await server.newOrg();
    for (const scan_scope of ["user_only", "all_messages"]) {
      const res = await createGuardrail(server, org.key, {
        name: scan_scope,
        content_filter_builtins: [{ slug: "regex-prompt-injection", action: "block", scan_scope }],
      });
      assert.deepEqual(res.body.data.content_filter_builtins, [
        { slug: "regex-prompt-injection", action: "block", label: "[PROMPT_INJECTION]", scan_scope },
      ]);
    }
    await assertRefused(
      {
        content_filter_builtins: [
          { slug: "regex-prompt-injection", action: "block", scan_scope: "everything" },
        ],
      },
      "/content_filter_builtins/0/scan_scope",
    );
  });

  it("an empty filter list is 400 like every empty list; null removes the filters (docs/behaviour.md#empty-lists)", async () => {
    await assertRefused({ content_filter_builtins: [] }, "/content_filter_builtins");
    await assertRefused({ content_filters: [] }, "/content_filters");
    const org = await server.newOrg();
    const created = await createGuardrail(server, org.key, {
      name: "f",
      content_filters: [{ pattern: "x+", action: "flag" }],
      content_filter_builtins: [{ slug: "email", action: "flag" }],
    });
    const cleared = await clientFor(server, org.key).patch(`/api/v1/guardrails/${created.body.data.id}`, {
      content_filters: null,
      content_filter_builtins: null,
    });
    assert.equal(cleared.status, 200);
    assert.equal(cleared.body.data.content_filters, null);
    assert.equal(cleared.body.data.content_filter_builtins, null);
  });

  it("scan_scope on any other builtin slug is 400 naming it (docs/behaviour.md#scan-scope)", async () => {
    for (const slug of Object.keys(BUILTIN_LABELS).filter((s) => s !== "regex-prompt-injection")) {
      await assertRefused(
        {
          content_filter_builtins: [
            { slug: "regex-prompt-injection", action: "flag" },
            { slug, action: "redact", scan_scope: "all_messages" },
          ],
        },
        "/content_filter_builtins/1/scan_scope",
      );
    }
  });

  it("the same builtin slug twice in one list is 400, even with different actions (docs/behaviour.md#builtin-filters)", async () => {
    await assertRefused(
      {
        content_filter_builtins: [
          { slug: "email", action: "block" },
          { slug: "phone", action: "flag" },
          { slug: "email", action: "redact" },
        ],
      },
      "/content_filter_builtins/2/slug",
    );
  });

  it("an unknown builtin slug, an unknown action, a missing action or an unknown property is 400 (docs/behaviour.md#builtin-filters; docs/behaviour.md#strict-bodies)", async () => {
    await assertRefused(
      { content_filter_builtins: [{ slug: "passport", action: "block" }] },
      "/content_filter_builtins/0/slug",
    );
    await assertRefused(
      { content_filter_builtins: [{ slug: "email", action: "delete" }] },
      "/content_filter_builtins/0/action",
    );
    await assertRefused(
      { content_filter_builtins: [{ slug: "email" }] },
      "/content_filter_builtins/0/action",
    );
    await assertRefused(
      { content_filter_builtins: [{ slug: "email", action: "block", severity: "high" }] },
      "/content_filter_builtins/0/severity",
    );
    await assertRefused(
      { content_filters: [{ pattern: "a", action: "erase" }] },
      "/content_filters/0/action",
    );
    await assertRefused(
      { content_filters: [{ pattern: "a", action: "block", flags: "i" }] },
      "/content_filters/0/flags",
    );
  });

  it("a custom filter's label is optional and may be null, and has at most 100 characters (docs/behaviour.md#custom-filters)", async () => {
    const org = await server.newOrg();
    const res = await createGuardrail(server, org.key, {
      name: "labels",
      content_filters: [
        { pattern: "alpha", action: "redact" },
        { pattern: "beta", action: "redact", label: null },
        { pattern: "gamma", action: "flag", label: "L".repeat(100) },
      ],
    });
    assert.deepEqual(res.body.data.content_filters, [
      { pattern: "alpha", action: "redact", label: null },
      { pattern: "beta", action: "redact", label: null },
      { pattern: "gamma", action: "flag", label: "L".repeat(100) },
    ]);
    await assertRefused(
      { content_filters: [{ pattern: "x", action: "redact", label: "L".repeat(101) }] },
      "/content_filters/0/label",
    );
  });

  it("a custom pattern has 1 to 10000 characters (docs/api.md#guardrails, docs/api.md#pattern-limits)", async () => {
    const org = await server.newOrg();
    // 10,000 characters within the scan cost bound: empty groups cost nothing to scan.
    const long = `${"a".repeat(252)}${"(?:)".repeat(2437)}`;
    assert.equal(long.length, 10_000);
    const res = await createGuardrail(server, org.key, {
      name: "long",
      content_filters: [{ pattern: long, action: "block" }],
    });
    assert.equal(res.body.data.content_filters[0].pattern, long);
    await assertRefused(
      { content_filters: [{ pattern: "", action: "block" }] },
      "/content_filters/0/pattern",
    );
    await assertRefused(
      { content_filters: [{ pattern: `${long}a`, action: "block" }] },
      "/content_filters/0/pattern",
    );
    await assertRefused({ content_filters: [{ action: "block" }] }, "/content_filters/0/pattern");
  });

  it("at most 50 custom filters per guardrail: 50 are accepted, 51 are 400 (docs/behaviour.md#custom-filters)", async () => {
    const org = await server.newOrg();
    const filters = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ pattern: `word${i}`, action: "flag" }));
    const res = await createGuardrail(server, org.key, { name: "fifty", content_filters: filters(50) });
    assert.equal(res.body.data.content_filters.length, 50);
    await assertRefused({ content_filters: filters(51) }, "/content_filters");
  });

  const BAD_PATTERNS: [string, string][] = [
    ["lookahead", "secret(?=key)"],
    ["negative lookahead", "a(?!b)"],
    ["lookbehind", "(?<=api_)key"],
    ["negative lookbehind", "(?<!x)y"],
    ["backreference", "(\\w)\\1"],
    ["named backreference", "(?<q>['\"]).*\\k<q>"],
    ["unbalanced parenthesis", "(abc"],
    ["bad quantifier", "*abc"],
    ["unterminated class", "[a-z"],
  ];
  for (const [kind, pattern] of BAD_PATTERNS) {
    it(`a custom pattern with ${kind} is 400 with metadata.reason invalid_regex_pattern and the filter index (docs/behaviour.md#custom-filters)`, async () => {
      const res = await assertRefused(
        {
          content_filters: [
            { pattern: "fine", action: "flag" },
            { pattern, action: "block" },
          ],
        },
        "/content_filters/1/pattern",
      );
      assert.equal(res.body.error.metadata.reason, "invalid_regex_pattern");
      assert.equal(res.body.error.metadata.filter_index, 1);
    });
  }

  it("valid RE2 patterns are accepted and returned as sent (docs/behaviour.md#custom-filters)", async () => {
    const org = await server.newOrg();
    const patterns = [
      "[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\\.[A-Za-z]{2,}",
      "\\b\\d{3}-\\d{2}-\\d{4}\\b",
      "sk-[a-zA-Z0-9]{20,}",
      "(?:foo|bar)+baz?",
      "^ignore (all )?previous instructions$",
    ];
    const res = await createGuardrail(server, org.key, {
      name: "re2",
      content_filters: patterns.map((pattern) => ({ pattern, action: "redact", label: "[X]" })),
    });
    assert.deepEqual(
      res.body.data.content_filters.map((f: { pattern: string }) => f.pattern),
      patterns,
    );
  });

  it("PATCH validates filters the same way and leaves the guardrail unchanged on 400 (docs/behaviour.md#content-filters; docs/behaviour.md#partial-update)", async () => {
    const org = await server.newOrg();
    const api = clientFor(server, org.key);
    const made = await createGuardrail(server, org.key, {
      name: "patch-filters",
      content_filter_builtins: [{ slug: "email", action: "redact" }],
      content_filters: [{ pattern: "one", action: "block" }],
    });
    const id = made.body.data.id;
    const cases: [Record<string, unknown>, string][] = [
      [{ content_filters: [{ pattern: "(?=x)", action: "block" }] }, "/content_filters/0/pattern"],
      [
        { content_filter_builtins: [{ slug: "ssn", action: "block", scan_scope: "user_only" }] },
        "/content_filter_builtins/0/scan_scope",
      ],
      [
        {
          content_filter_builtins: [
            { slug: "ssn", action: "block" },
            { slug: "ssn", action: "flag" },
          ],
        },
        "/content_filter_builtins/1/slug",
      ],
      [{ content_filter_builtins: [{ slug: "nope", action: "block" }] }, "/content_filter_builtins/0/slug"],
    ];
    for (const [body, path] of cases) {
      const res = await api.patch(`/api/v1/guardrails/${id}`, body);
      assertInvalid(res, path);
      assert.deepEqual(await getGuardrail(server, org.key, id), made.body.data, JSON.stringify(body));
    }
    const replaced = await api.patch(`/api/v1/guardrails/${id}`, {
      content_filter_builtins: [{ slug: "regex-prompt-injection", action: "flag", scan_scope: "user_only" }],
      content_filters: [{ pattern: "two", action: "redact", label: "[TWO]" }],
    });
    assert.equal(replaced.status, 200, JSON.stringify(replaced.body));
    assert.deepEqual(replaced.body.data.content_filter_builtins, [
      {
        slug: "regex-prompt-injection",
        action: "flag",
        label: "[PROMPT_INJECTION]",
        scan_scope: "user_only",
      },
    ]);
    assert.deepEqual(replaced.body.data.content_filters, [
      { pattern: "two", action: "redact", label: "[TWO]" },
    ]);
  });
});
