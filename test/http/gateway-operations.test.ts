import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { clientFor } from "../helpers/server.js";
import {
  ask,
  chat,
  type GatewayBench,
  guardKey,
  orgWithKey,
  SONNET,
  startGatewayBench,
} from "./gateway-support.js";

/** The dry run, /metrics and the logs of the request path (docs/gateway.md#operations). */
describe("dry run, metrics and logs of the request path (docs/gateway.md#operations)", () => {
  let bench: GatewayBench;
  const logLines: string[] = [];
  before(async () => {
    bench = await startGatewayBench({ logLines });
  });
  after(async () => {
    await bench.close();
  });

  describe("POST /api/v1/guardrails/evaluate", () => {
    it("returns the decision with every reason, the redacted messages and the chosen endpoints; nothing is forwarded or spent", async () => {
      const { org, steps, key } = await orgWithKey(bench);
      const id = await guardKey(steps, key, {
        allowed_data_regions: ["europe"],
        content_filter_builtins: [{ slug: "email", action: "redact" }],
        limit_usd: 1,
        reset_interval: "daily",
      });
      const before = bench.received.length;
      const res = await clientFor(bench.server, org.key).post("/api/v1/guardrails/evaluate", {
        key_hash: key.hash,
        ingress_region: "europe",
        model: SONNET,
        messages: [{ role: "user", content: "mail me at me@example.com" }],
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const d = res.body.data;
      assert.equal(d.allowed, true);
      assert.deepEqual(d.violations, []);
      assert.deepEqual(d.messages, [{ role: "user", content: "mail me at [EMAIL]" }]);
      assert.deepEqual(
        d.endpoints.map((e: { provider: string; region: string }) => `${e.provider}/${e.region}`),
        ["google-vertex/europe"],
      );
      assert.deepEqual(d.detections, [
        { filter: { type: "builtin", slug: "email" }, action: "redact", label: "[EMAIL]", count: 1 },
      ]);
      assert.equal(d.budgets[0].guardrail_id, id);
      assert.ok(d.worst_case_cost_usd > 0);
      assert.equal(bench.received.length, before, "nothing was forwarded");
      const current = await clientFor(bench.server, key.secret).get("/api/v1/key");
      assert.equal(current.body.data.budgets[0].spent_usd, 0);
      assert.equal(current.body.data.budgets[0].reserved_usd, 0);

      const refused = await clientFor(bench.server, org.key).post("/api/v1/guardrails/evaluate", {
        key_hash: key.hash,
        model: SONNET,
        messages: [{ role: "user", content: "hi" }],
      });
      assert.equal(refused.body.data.allowed, false);
      assert.equal(refused.body.data.status, 403);
      assert.deepEqual(
        refused.body.data.violations.map((v: { rule: string }) => v.rule),
        ["region_not_allowed"],
      );
    });

    it("another organization's key is a 404, an inference key a 403, a bad body a 400", async () => {
      const mine = await orgWithKey(bench);
      const theirs = await orgWithKey(bench);
      const body = { key_hash: theirs.key.hash, model: SONNET, messages: [{ role: "user", content: "hi" }] };
      const api = clientFor(bench.server, mine.org.key);
      assert.equal((await api.post("/api/v1/guardrails/evaluate", body)).status, 404);
      const asInference = await clientFor(bench.server, mine.key.secret).post(
        "/api/v1/guardrails/evaluate",
        body,
      );
      assert.equal(asInference.status, 403);
      const bad = await api.post("/api/v1/guardrails/evaluate", {
        ...body,
        key_hash: mine.key.hash,
        ingress_region: "mars",
      });
      assert.equal(bad.status, 400);
    });
  });

  it("GET /metrics counts requests by outcome and refusal reason, with decision and upstream histograms", async () => {
    const { steps, key } = await orgWithKey(bench);
    assert.equal((await chat(bench.server, key.secret, ask("hi"))).status, 200);
    await guardKey(steps, key, { allowed_data_regions: ["us"] });
    assert.equal((await chat(bench.server, key.secret, ask("hi"))).status, 403);
    const res = await fetch(`${bench.server.origin}/metrics`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^text\/plain/);
    const text = await res.text();
    assert.match(text, /guardrails_gateway_requests_total\{outcome="forwarded",reason="",api="chat"\} [1-9]/);
    assert.match(
      text,
      /guardrails_gateway_requests_total\{outcome="refused",reason="region_not_allowed",api="chat"\} [1-9]/,
    );
    assert.match(text, /guardrails_gateway_decision_seconds_count [1-9]/);
    assert.match(text, /guardrails_gateway_upstream_seconds_count\{provider="anthropic"\} [1-9]/);
  });

  it("each request logs one line, with its request id, status and decision, never the message text or a key (docs/configuration.md#logs)", async () => {
    const { key } = await orgWithKey(bench);
    const marker = `marker-${Math.random().toString(36).slice(2)}`;
    const res = await chat(bench.server, key.secret, ask(`my private note ${marker}`));
    assert.equal(res.status, 200);
    const requestId = res.headers["x-request-id"];
    const all = logLines.join("");
    assert.equal(all.includes(marker), false, "no message text in the log");
    assert.equal(all.includes(key.secret), false, "no key in the log");
    const lines = logLines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.reqId === requestId);
    assert.deepEqual(
      lines.map((l) => l.msg),
      ["request completed"],
      "one line for the request",
    );
    const [line] = lines as [Record<string, unknown>];
    assert.equal(line.decision, "allow");
    assert.deepEqual(line.res, { statusCode: 200 });
    assert.equal((line.req as { url?: string }).url, "/api/v1/chat/completions");
  });
});
