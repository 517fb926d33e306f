import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { ask, chat, events, type GatewayBench, orgWithKey, startGatewayBench } from "./gateway-support.js";
import { orgSteps } from "./org-support.js";

/** Upstream time-outs and failures (docs/gateway.md#upstream-failures): 502/504 with the error body, nothing held. */
describe("upstream failures on the request path (docs/gateway.md#upstream-failures)", () => {
  let bench: GatewayBench;
  const logLines: string[] = [];
  before(async () => {
    bench = await startGatewayBench({ timeoutMs: 300, logLines });
  });
  after(async () => {
    bench.script.next = undefined;
    await bench.close();
  });

  it("an upstream slower than the provider's time-out is a 504 with the error body", async () => {
    const { key } = await orgWithKey(bench);
    bench.script.next = () => ({ delayMs: 1500 });
    const res = await chat(bench.server, key.secret, ask("hi"));
    bench.script.next = undefined;
    assert.equal(res.status, 504);
    assert.deepEqual(res.body.error.code, 504);
    assert.equal(res.body.error.message, "Upstream provider timed out");
    assert.equal(res.body.error.metadata.reason, "upstream_timeout");
  });

  it("a failing endpoint is followed by the next one of the model; when all fail, a 502", async () => {
    const { key } = await orgWithKey(bench);
    let calls = 0;
    bench.script.next = () => {
      calls++;
      return calls === 1 ? { status: 503 } : undefined;
    };
    const ok = await chat(bench.server, key.secret, ask("hi"), "us.test");
    assert.equal(ok.status, 200, ok.text);
    assert.equal(calls, 2, "the second US endpoint answered");
    bench.script.next = () => ({ status: 500 });
    const failed = await chat(bench.server, key.secret, ask("hi"));
    bench.script.next = undefined;
    assert.equal(failed.status, 502);
    assert.equal(failed.body.error.metadata.upstream_status, 500);
  });

  it("an upstream that hangs up is a 502; a provider's 400 comes back as 400 with its message", async () => {
    const { key } = await orgWithKey(bench);
    bench.script.next = () => ({ hangUp: true });
    const hung = await chat(bench.server, key.secret, ask("hi"));
    assert.equal(hung.status, 502);
    bench.script.next = () => ({
      status: 400,
      body: { error: { message: "temperature must be at most 2" } },
    });
    const rejected = await chat(bench.server, key.secret, { ...ask("hi"), temperature: 9 });
    bench.script.next = undefined;
    assert.equal(rejected.status, 400);
    assert.equal(rejected.body.error.metadata.reason, "upstream_rejected");
    assert.equal(rejected.body.error.metadata.upstream_message, "temperature must be at most 2");
  });

  it("a stream the upstream breaks ends with an error event saying so (upstream_stream_broken) and [DONE], and is still charged (docs/gateway.md#upstream-stream-broken)", async () => {
    const { steps, key } = await orgWithKey(bench);
    const g = await steps.guardrail({ limit_usd: 1, reset_interval: "daily" });
    await steps.assignKeys(g.id, [key.hash]);
    bench.script.next = () => ({ breakStreamAfter: 2 });
    const res = await chat(bench.server, key.secret, { ...ask("a b c d e f"), stream: true });
    bench.script.next = undefined;
    assert.equal(res.status, 200);
    const { data, done } = events(res.text);
    assert.equal(done, true);
    const last = data.at(-1) as {
      error?: { code: number; message: string; metadata: Record<string, unknown> };
    };
    assert.equal(last.error?.code, 502);
    assert.equal(last.error?.message, "Upstream provider error");
    assert.equal(last.error?.metadata.reason, "upstream_stream_broken");
    assert.match(String(last.error?.metadata.detail), /cut off part-way/);
    // Chunks came before the break: the client saw an answer begin, then end in the error.
    assert.ok(data.length > 1, "the chunks before the break were relayed");
    const requestId = String(res.headers["x-request-id"]);
    const warned = logLines
      .map((l) => JSON.parse(l))
      .find((l) => l.reqId === requestId && l.msg === "upstream answer broken off");
    assert.equal(warned?.provider, "anthropic", logLines.join("\n").slice(-2000));
    const metrics = await (await fetch(`${bench.server.origin}/metrics`)).text();
    assert.match(
      metrics,
      /guardrails_gateway_upstream_errors_total\{provider="anthropic",kind="stream_broken"\} 1/,
    );
    const current = await steps.api.get("/api/v1/key", { key: key.secret });
    assert.ok(current.body.data.budgets[0].spent_usd > 0, "what was streamed is charged");
    assert.equal(current.body.data.budgets[0].reserved_usd, 0);
  });
});

describe("providers without an API key (docs/gateway.md#providers)", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });

  it("a model whose permitted providers all lack a key is a 503 that says so", async () => {
    const org = await server.newOrg();
    const key = await orgSteps(server, org).key();
    const res = await chat(server, key.secret, ask("hi"));
    assert.equal(res.status, 503);
    assert.equal(res.body.error.metadata.reason, "provider_unavailable");
  });
});
