import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import { call } from "../helpers/server.js";
import {
  type GatewayBench,
  guardKey,
  orgWithKey,
  post,
  SONNET,
  startGatewayBench,
} from "./gateway-support.js";

describe("POST /api/v1/messages/count_tokens (docs/gateway.md#messages-count-tokens)", () => {
  let bench: GatewayBench;
  before(async () => {
    bench = await startGatewayBench();
  });
  after(async () => {
    await bench.close();
  });
  const client = (secret: string) =>
    new Anthropic({ apiKey: secret, baseURL: `${bench.server.origin}/api`, maxRetries: 0 });

  it("the Anthropic SDK's countTokens gets an estimate that grows with the prompt; nothing is forwarded or charged", async () => {
    const { key } = await orgWithKey(bench);
    const before = bench.received.length;
    const short = await client(key.secret).messages.countTokens({
      model: SONNET,
      messages: [{ role: "user", content: "hello" }],
    });
    const long = await client(key.secret).messages.countTokens({
      model: SONNET,
      system: "be brief",
      messages: [{ role: "user", content: "hello ".repeat(400) }],
    });
    assert.equal(short.input_tokens > 0, true);
    // 2,400 bytes more of prompt: about 600 tokens more.
    assert.equal(long.input_tokens - short.input_tokens >= 590, true, JSON.stringify([short, long]));
    assert.equal(long.input_tokens - short.input_tokens <= 620, true, JSON.stringify([short, long]));
    assert.equal(bench.received.length, before);
    const usage = await call(bench.server, "GET", "/api/v1/key", { key: key.secret });
    assert.equal(usage.body.data.usage, 0);
  });

  it("is governed as the door is: a blocked prompt is a 403 permission_error, an unknown model a 404, no key a 401", async () => {
    const { steps, key } = await orgWithKey(bench);
    await guardKey(steps, key, { content_filter_builtins: [{ slug: "email", action: "block" }] });
    const body = { model: SONNET, messages: [{ role: "user", content: "mail jane.roe@example.com" }] };
    const blocked = await post(bench.server, "/api/v1/messages/count_tokens", key.secret, body);
    assert.equal(blocked.status, 403, blocked.text);
    assert.equal(blocked.body.type, "error");
    assert.equal(blocked.body.error.type, "permission_error");
    const unknown = await post(bench.server, "/api/v1/messages/count_tokens", key.secret, {
      ...body,
      model: "nobody/none",
    });
    assert.equal(unknown.status, 404, unknown.text);
    assert.equal(unknown.body.error.type, "not_found_error");
    const res = await fetch(`${bench.server.origin}/api/v1/messages/count_tokens`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    assert.equal(res.status, 401);
    assert.equal(((await res.json()) as { error: { type: string } }).error.type, "authentication_error");
  });
});
