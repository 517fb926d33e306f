import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import {
  catalogSpeaking,
  chatStream,
  type GatewayBench,
  guardKey,
  orgWithKey,
  SONNET,
  startGatewayBench,
  toolCallChunks,
} from "./gateway-support.js";

/**
 * The Messages door on providers that speak only chat completions: the request is translated to
 * chat, the answer and its stream back (docs/gateway.md#messages-translation), with the Anthropic SDK
 * as the client.
 */

/** The shipped catalog with anthropic speaking chat only: every endpoint of SONNET is translated for. */
const chatOnly = () => catalogSpeaking(["anthropic"], ["chat"]);

describe("Messages on a chat-only provider, with the Anthropic SDK (docs/gateway.md#messages-translation)", () => {
  let bench: GatewayBench;
  before(async () => {
    bench = await startGatewayBench({ catalog: chatOnly() });
  });
  after(async () => {
    await bench.close();
  });
  const client = (secret: string) =>
    new Anthropic({ apiKey: secret, baseURL: `${bench.server.origin}/api`, maxRetries: 0 });

  it("messages.create: sent as a chat completion, answered as a message with its usage", async () => {
    const { key } = await orgWithKey(bench);
    const res = await client(key.secret).messages.create({
      model: SONNET,
      max_tokens: 64,
      system: "be brief",
      messages: [{ role: "user", content: "hello there" }],
    });
    const sent = bench.received.at(-1);
    assert.equal(sent?.path.endsWith("/chat/completions"), true);
    assert.deepEqual(sent?.body.messages, [
      { role: "system", content: "be brief" },
      { role: "user", content: "hello there" },
    ]);
    assert.equal(sent?.body.max_tokens, 64);
    assert.equal(res.type, "message");
    assert.equal(res.stop_reason, "end_turn");
    const text = res.content.map((b) => (b.type === "text" ? b.text : "")).join("");
    assert.match(text, /hello there/);
    assert.equal(res.usage.input_tokens > 0, true);
  });

  it("messages.stream: the final message gathered from the translated events, with usage", async () => {
    const { key } = await orgWithKey(bench);
    const stream = client(key.secret).messages.stream({
      model: SONNET,
      max_tokens: 64,
      messages: [{ role: "user", content: "stream me" }],
    });
    let deltas = "";
    stream.on("text", (t) => {
      deltas += t;
    });
    const message = await stream.finalMessage();
    assert.equal(bench.received.at(-1)?.body.stream_options?.include_usage, true);
    const text = message.content.map((b) => (b.type === "text" ? b.text : "")).join("");
    assert.match(text, /stream me/);
    assert.equal(deltas, text);
    assert.equal(message.usage.output_tokens > 0, true);
  });

  it("a streamed tool use: the provider's tool call arrives as input_json_delta and reassembles; its result goes back as a tool message", async () => {
    const { key } = await orgWithKey(bench);
    bench.script.next = () => ({
      events: chatStream(
        ...toolCallChunks(SONNET, { id: "call_5", name: "weather" }, ['{"city":', '"Oslo"}'], {
          prompt_tokens: 30,
          completion_tokens: 9,
        }),
      ),
    });
    const tools = [
      {
        name: "weather",
        description: "the weather",
        input_schema: { type: "object" as const, properties: {} },
      },
    ];
    try {
      const message = await client(key.secret)
        .messages.stream({
          model: SONNET,
          max_tokens: 64,
          tools,
          messages: [{ role: "user", content: "weather?" }],
        })
        .finalMessage();
      assert.equal(message.stop_reason, "tool_use");
      const use = message.content.find((b) => b.type === "tool_use");
      assert.equal(use?.type, "tool_use");
      if (use?.type !== "tool_use") return;
      assert.equal(use.name, "weather");
      assert.deepEqual(use.input, { city: "Oslo" });
      assert.equal(message.usage.output_tokens, 9);
      bench.script.next = undefined;
      await client(key.secret).messages.create({
        model: SONNET,
        max_tokens: 64,
        tools,
        messages: [
          { role: "user", content: "weather?" },
          { role: "assistant", content: [use] },
          { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: "sunny" }] },
        ],
      });
      const sent = bench.received.at(-1)?.body.messages;
      assert.equal(sent[1].tool_calls[0].id, use.id);
      assert.deepEqual(sent[2], { role: "tool", tool_call_id: use.id, content: "sunny" });
    } finally {
      bench.script.next = undefined;
    }
  });

  it("a blocked prompt is a 403 permission_error the SDK raises, and nothing is forwarded", async () => {
    const { steps, key } = await orgWithKey(bench);
    await guardKey(steps, key, { content_filter_builtins: [{ slug: "email", action: "block" }] });
    const before = bench.received.length;
    await assert.rejects(
      client(key.secret).messages.create({
        model: SONNET,
        max_tokens: 64,
        messages: [{ role: "user", content: "mail jane.roe@example.com" }],
      }),
      (err: unknown) => err instanceof Anthropic.PermissionDeniedError,
    );
    assert.equal(bench.received.length, before);
  });
});
