import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { assertCreateRefused, createGuardrail, getGuardrail } from "./guardrail-support.js";
import { currentKey, orgSteps } from "./org-support.js";

describe("apply_to: a filter reads requests, answers or both (docs/behaviour.md#apply-to)", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });

  it("apply_to is kept on builtin and custom filters as sent, and absent where it was not sent (docs/behaviour.md#apply-to)", async () => {
    const org = await server.newOrg();
    const res = await createGuardrail(server, org.key, {
      name: "answers",
      content_filter_builtins: [
        { slug: "email", action: "redact" },
        { slug: "credit-card", action: "block", apply_to: "response" },
        { slug: "secrets", action: "redact", apply_to: "both" },
        { slug: "phone", action: "flag", apply_to: "request" },
      ],
      content_filters: [
        { pattern: "ACME-\\d{6}", action: "redact", label: "[ACME]", apply_to: "response" },
        { pattern: "PRJ-\\d+", action: "block" },
      ],
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const builtins = [
      { slug: "email", action: "redact", label: "[EMAIL]" },
      { slug: "credit-card", action: "block", label: "[CREDIT_CARD]", apply_to: "response" },
      { slug: "secrets", action: "redact", label: "[SECRET]", apply_to: "both" },
      { slug: "phone", action: "flag", label: "[PHONE]", apply_to: "request" },
    ];
    const custom = [
      { pattern: "ACME-\\d{6}", action: "redact", label: "[ACME]", apply_to: "response" },
      { pattern: "PRJ-\\d+", action: "block", label: null },
    ];
    assert.deepEqual(res.body.data.content_filter_builtins, builtins);
    assert.deepEqual(res.body.data.content_filters, custom);
    const stored = await getGuardrail(server, org.key, res.body.data.id);
    assert.deepEqual(stored.content_filter_builtins, builtins);
    assert.deepEqual(stored.content_filters, custom);
  });

  it("an unknown apply_to is a 400 naming the field, and nothing is stored (docs/behaviour.md#apply-to)", async () => {
    const org = await server.newOrg();
    await assertCreateRefused(
      server,
      { name: "bad", content_filter_builtins: [{ slug: "email", action: "block", apply_to: "answers" }] },
      "/content_filter_builtins/0/apply_to",
    );
    await assertCreateRefused(
      server,
      { name: "bad", content_filters: [{ pattern: "x", action: "block", apply_to: "RESPONSE" }] },
      "/content_filters/0/apply_to",
    );
    const list = await orgSteps(server, org).list("/api/v1/guardrails");
    assert.equal(list.data.filter((g) => g.name === "bad").length, 0);
  });

  it("a slug may appear once per direction: once for requests and once for answers, never twice for one (docs/behaviour.md#apply-to)", async () => {
    const org = await server.newOrg();
    const ok = await createGuardrail(server, org.key, {
      name: "split",
      content_filter_builtins: [
        { slug: "email", action: "redact" },
        { slug: "email", action: "block", apply_to: "response" },
      ],
    });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    for (const second of ["both", "request", undefined]) {
      await assertCreateRefused(
        server,
        {
          name: "twice",
          content_filter_builtins: [
            { slug: "email", action: "redact" },
            { slug: "email", action: "block", ...(second ? { apply_to: second } : {}) },
          ],
        },
        "/content_filter_builtins/1/slug",
      );
    }
  });

  it("scan_scope belongs to filters that read requests: with apply_to response it is a 400 (docs/behaviour.md#apply-to)", async () => {
    await assertCreateRefused(
      server,
      {
        name: "scope",
        content_filter_builtins: [
          { slug: "regex-prompt-injection", action: "block", scan_scope: "user_only", apply_to: "response" },
        ],
      },
      "/content_filter_builtins/0/scan_scope",
    );
    const org = await server.newOrg();
    const res = await createGuardrail(server, org.key, {
      name: "answers-injection",
      content_filter_builtins: [{ slug: "regex-prompt-injection", action: "block", apply_to: "response" }],
    });
    assert.deepEqual(res.body.data.content_filter_builtins, [
      { slug: "regex-prompt-injection", action: "block", label: "[PROMPT_INJECTION]", apply_to: "response" },
    ]);
  });

  it("the effective policy combines each direction on its own, strictest action per slug or pattern; answer filters are listed with apply_to response (docs/behaviour.md#apply-to; docs/behaviour.md#combination)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const ws = (await steps.api.get(`/api/v1/workspaces/${org.workspaceId}`)).body.data;
    const key = await steps.key();
    await steps.patchGuardrail(ws.default_guardrail_id, {
      content_filter_builtins: [
        { slug: "email", action: "flag", apply_to: "both" },
        { slug: "phone", action: "block", apply_to: "response" },
      ],
      content_filters: [{ pattern: "ACME-\\d+", action: "redact", label: "[ACME]", apply_to: "both" }],
    });
    const keyG = await steps.guardrail({
      content_filter_builtins: [
        { slug: "email", action: "block", apply_to: "response" },
        { slug: "phone", action: "redact" },
      ],
      content_filters: [{ pattern: "ACME-\\d+", action: "block", label: "[ACME]" }],
    });
    await steps.assignKeys(keyG.id, [key.hash]);
    const res = await currentKey(server, key.secret);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const p = res.body.data.effective_policy;
    assert.deepEqual(p.content_filter_builtins, [
      { slug: "email", action: "flag", label: "[EMAIL]" },
      { slug: "phone", action: "redact", label: "[PHONE]" },
      { slug: "email", action: "block", label: "[EMAIL]", apply_to: "response" },
      { slug: "phone", action: "block", label: "[PHONE]", apply_to: "response" },
    ]);
    assert.deepEqual(p.content_filters, [
      { pattern: "ACME-\\d+", action: "block", label: "[ACME]" },
      { pattern: "ACME-\\d+", action: "redact", label: "[ACME]", apply_to: "response" },
    ]);
  });

  it("a filter that reads only answers does not touch the request; the same filter on both does (docs/behaviour.md#apply-to)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const ws = (await steps.api.get(`/api/v1/workspaces/${org.workspaceId}`)).body.data;
    const key = await steps.key();
    const prompt = "mail jane@example.com about ACME-123";
    const dryRun = async (apply_to: string) => {
      await steps.patchGuardrail(ws.default_guardrail_id, {
        content_filter_builtins: [{ slug: "email", action: "redact", apply_to }],
        content_filters: [{ pattern: "ACME-\\d+", action: "block", apply_to }],
      });
      const res = await steps.api.post("/api/v1/guardrails/evaluate", {
        key_hash: key.hash,
        model: "openai/gpt-5",
        messages: [{ role: "user", content: prompt }],
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body.data;
    };
    const answersOnly = await dryRun("response");
    assert.deepEqual(answersOnly.detections, []);
    assert.equal(answersOnly.messages[0].content, prompt);
    assert.equal(
      answersOnly.violations.some((v: { rule: string }) => v.rule.includes("filter")),
      false,
      JSON.stringify(answersOnly.violations),
    );
    const both = await dryRun("both");
    assert.notDeepEqual(both.detections, []);
    assert.equal(
      both.violations.some((v: { rule: string }) => v.rule.includes("filter")),
      true,
      JSON.stringify(both.violations),
    );
  });

  it("a request refused by a filter names only the guardrails whose filter reads requests (docs/behaviour.md#apply-to)", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const ws = (await steps.api.get(`/api/v1/workspaces/${org.workspaceId}`)).body.data;
    const key = await steps.key();
    await steps.patchGuardrail(ws.default_guardrail_id, {
      content_filter_builtins: [{ slug: "email", action: "block", apply_to: "response" }],
    });
    const reads = await steps.guardrail({ content_filter_builtins: [{ slug: "email", action: "block" }] });
    await steps.assignKeys(reads.id, [key.hash]);
    const res = await steps.api.post("/api/v1/guardrails/evaluate", {
      key_hash: key.hash,
      model: "openai/gpt-5",
      messages: [{ role: "user", content: "mail jane@example.com" }],
    });
    const refusal = res.body.data.violations.find((v: { rule: string }) => v.rule === "content_filter");
    assert.ok(refusal, JSON.stringify(res.body.data.violations));
    assert.deepEqual(refusal.metadata.guardrail_ids, [reads.id]);
  });
});
