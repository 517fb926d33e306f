import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { OpenRouter } from "@openrouter/sdk";
import type { OpenResponsesResult, StreamEvents } from "@openrouter/sdk/models";
import OpenAI from "openai";
import type { Api } from "../../src/domain/catalog.js";
import { call } from "../helpers/server.js";
import {
  catalogSpeaking,
  chatStream,
  type GatewayBench,
  guardKey,
  orgWithKey,
  post,
  startGatewayBench,
  toolCallChunks,
} from "./gateway-support.js";

/**
 * The Responses door on providers that speak only chat completions: the request is translated to
 * chat, the answer and its stream back (docs/gateway.md#responses-translation).
 */

/** Served by openai and azure, both made to speak chat only here. */
const GPT = "openai/gpt-4.1";

const catalogWith = (apis: Api[]) => catalogSpeaking(["openai", "azure"], apis);

const respond = (bench: GatewayBench, key: string, body: Record<string, unknown>) =>
  post(bench.server, "/api/v1/responses", key, body);

const usageOf = async (bench: GatewayBench, secret: string) =>
  (await call(bench.server, "GET", "/api/v1/key", { key: secret })).body.data.usage as number;

describe("Responses on a chat-only provider, translated (docs/gateway.md#responses-translation)", () => {
  let bench: GatewayBench;
  before(async () => {
    bench = await startGatewayBench({ catalog: catalogWith(["chat"]) });
  });
  after(async () => {
    await bench.close();
  });
  const sdk = (secret: string) =>
    new OpenAI({ apiKey: secret, baseURL: bench.server.baseUrl, maxRetries: 0 });

  it("the openai SDK's responses.create: sent as a chat completion, answered as a response, its usage charged", async () => {
    const { key } = await orgWithKey(bench);
    const res = await sdk(key.secret).responses.create({
      model: GPT,
      instructions: "be brief",
      input: "hello there",
      max_output_tokens: 50,
    });
    const sent = bench.received.at(-1);
    assert.equal(sent?.path.endsWith("/chat/completions"), true);
    assert.deepEqual(sent?.body.messages, [
      { role: "system", content: "be brief" },
      { role: "user", content: "hello there" },
    ]);
    assert.equal(sent?.body.max_tokens, 50);
    assert.equal(sent?.body.input, undefined);
    assert.equal(res.object, "response");
    assert.equal(res.status, "completed");
    assert.match(res.output_text, /hello there/);
    assert.equal((res.usage?.input_tokens ?? 0) > 0, true);
    assert.equal((await usageOf(bench, key.secret)) > 0, true);
  });

  it("streamed through the SDK: Responses events whose deltas make the text, ending in response.completed with usage", async () => {
    const { key } = await orgWithKey(bench);
    const stream = await sdk(key.secret).responses.create({ model: GPT, input: "stream me", stream: true });
    const types: string[] = [];
    let text = "";
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "response.output_text.delta") text += event.delta;
      if (event.type === "response.completed") completed = event.response;
    }
    assert.equal(bench.received.at(-1)?.path.endsWith("/chat/completions"), true);
    assert.equal(bench.received.at(-1)?.body.stream_options?.include_usage, true);
    assert.equal(types[0], "response.created");
    assert.equal(types.at(-1), "response.completed");
    assert.match(text, /stream me/);
    assert.equal(completed?.output_text ?? textOf(completed), text);
    assert.equal((completed?.usage?.output_tokens ?? 0) > 0, true);
    assert.equal((await usageOf(bench, key.secret)) > 0, true);
  });

  it("a function call round trip: the provider's tool call comes back as a function_call item, its output goes as a tool message", async () => {
    const { key } = await orgWithKey(bench);
    const tool = {
      type: "function" as const,
      name: "weather",
      description: "the weather in a city",
      parameters: { type: "object", properties: { city: { type: "string" } } },
      strict: false,
    };
    bench.script.next = () => ({
      body: {
        id: "chatcmpl-1",
        object: "chat.completion",
        created: 1,
        model: GPT,
        choices: [
          {
            index: 0,
            finish_reason: "tool_calls",
            message: {
              role: "assistant",
              content: null,
              tool_calls: [
                {
                  id: "call_9",
                  type: "function",
                  function: { name: "weather", arguments: '{"city":"Oslo"}' },
                },
              ],
            },
          },
        ],
        usage: { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 },
      },
    });
    try {
      const first = await sdk(key.secret).responses.create({
        model: GPT,
        input: "weather in Oslo?",
        tools: [tool],
      });
      const call = first.output.find((o) => o.type === "function_call");
      assert.equal(call?.type, "function_call");
      if (call?.type !== "function_call") return;
      assert.equal(call.name, "weather");
      assert.equal(call.call_id, "call_9");
      assert.equal(call.arguments, '{"city":"Oslo"}');
      assert.deepEqual(bench.received.at(-1)?.body.tools, [
        {
          type: "function",
          function: {
            name: "weather",
            description: tool.description,
            parameters: tool.parameters,
            strict: false,
          },
        },
      ]);
      bench.script.next = undefined;
      await sdk(key.secret).responses.create({
        model: GPT,
        tools: [tool],
        input: [
          { role: "user", content: "weather in Oslo?" },
          { type: "function_call", call_id: "call_9", name: "weather", arguments: '{"city":"Oslo"}' },
          { type: "function_call_output", call_id: "call_9", output: "sunny" },
        ],
      });
      const messages = bench.received.at(-1)?.body.messages;
      assert.equal(messages[1].role, "assistant");
      assert.equal(messages[1].tool_calls[0].id, "call_9");
      assert.deepEqual(messages[2], { role: "tool", tool_call_id: "call_9", content: "sunny" });
    } finally {
      bench.script.next = undefined;
    }
  });

  it("a streamed tool call: its arguments arrive as function_call_arguments deltas and the item is done with them whole", async () => {
    const { key } = await orgWithKey(bench);
    bench.script.next = () => ({
      events: chatStream(
        ...toolCallChunks(GPT, { id: "call_7", name: "weather" }, ['{"ci', 'ty":"Rome"}'], {
          prompt_tokens: 12,
          completion_tokens: 7,
        }),
      ),
    });
    try {
      const stream = await sdk(key.secret).responses.create({
        model: GPT,
        input: "weather?",
        stream: true,
        tools: [{ type: "function", name: "weather", parameters: {}, strict: false }],
      });
      let args = "";
      let done: unknown;
      let usage: OpenAI.Responses.ResponseUsage | undefined;
      for await (const event of stream) {
        if (event.type === "response.function_call_arguments.delta") args += event.delta;
        if (event.type === "response.output_item.done") done = event.item;
        if (event.type === "response.completed") usage = event.response.usage ?? undefined;
      }
      assert.equal(args, '{"city":"Rome"}');
      assert.deepEqual(
        { ...(done as Record<string, unknown>), id: undefined },
        {
          id: undefined,
          type: "function_call",
          call_id: "call_7",
          name: "weather",
          arguments: '{"city":"Rome"}',
          status: "completed",
        },
      );
      assert.equal(usage?.input_tokens, 12);
      assert.equal(usage?.output_tokens, 7);
    } finally {
      bench.script.next = undefined;
    }
  });

  it("hosted tools are left out of the chat request and named in x-guardrails-dropped-tools", async () => {
    const { key } = await orgWithKey(bench);
    const res = await respond(bench, key.secret, {
      model: GPT,
      input: "look it up",
      tools: [
        { type: "web_search" },
        { type: "function", name: "f", parameters: { type: "object" } },
        { type: "file_search", vector_store_ids: ["vs_1"] },
      ],
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers["x-guardrails-dropped-tools"], "web_search, file_search");
    assert.deepEqual(
      bench.received.at(-1)?.body.tools.map((t: { function: { name: string } }) => t.function.name),
      ["f"],
    );
  });

  it("a field chat cannot carry is a 400 naming it: nothing forwarded, nothing charged", async () => {
    const { key } = await orgWithKey(bench);
    const before = bench.received.length;
    const res = await respond(bench, key.secret, { model: GPT, input: "hi", truncation: "auto" });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.error.metadata.issues[0].path, "/truncation");
    assert.equal(bench.received.length, before);
    assert.equal(await usageOf(bench, key.secret), 0);
  });

  it("filters read the Responses request, and the translated request carries the redaction (docs/gateway.md#responses-roles)", async () => {
    const { steps, key } = await orgWithKey(bench);
    await guardKey(steps, key, { content_filter_builtins: [{ slug: "email", action: "redact" }] });
    const res = await respond(bench, key.secret, {
      model: GPT,
      instructions: "cc a@example.com",
      input: [{ role: "user", content: [{ type: "input_text", text: "from b@example.org" }] }],
    });
    assert.equal(res.status, 200, res.text);
    const sent = JSON.stringify(bench.received.at(-1)?.body);
    assert.equal(sent.includes("@example"), false, sent);
    assert.deepEqual(bench.received.at(-1)?.body.messages, [
      { role: "system", content: "cc [EMAIL]" },
      { role: "user", content: [{ type: "text", text: "from [EMAIL]" }] },
    ]);
  });

  it("the reference SDK's responses.send reads the translated answer, whole and streamed, under its strict validation", async () => {
    delete process.env.OPENROUTER_API_KEY;
    delete process.env.OPENROUTER_BASE_URL;
    const { key } = await orgWithKey(bench);
    const client = new OpenRouter({
      apiKey: key.secret,
      serverURL: bench.server.baseUrl,
      retryConfig: { strategy: "none" },
    });
    const whole = (await client.responses.send({
      responsesRequest: { model: GPT, input: "hello sdk" },
    })) as OpenResponsesResult;
    assert.equal(whole.status, "completed");
    assert.equal(JSON.stringify(whole).includes("hello sdk"), true);
    const streamed = await client.responses.send({
      responsesRequest: { model: GPT, input: "hello sdk", stream: true },
    });
    const events: StreamEvents[] = [];
    for await (const event of streamed as AsyncIterable<StreamEvents>) events.push(event);
    assert.equal(events.at(-1)?.type, "response.completed");
    assert.equal(
      events
        .map((e) => (e.type === "response.output_text.delta" ? e.delta : ""))
        .join("")
        .includes("hello sdk"),
      true,
    );
  });
});

describe("Responses where no permitted provider speaks responses or chat (docs/gateway.md#provider-apis)", () => {
  let bench: GatewayBench;
  before(async () => {
    bench = await startGatewayBench({ catalog: catalogWith(["embeddings"]) });
  });
  after(async () => {
    await bench.close();
  });

  it("503 api_not_supported, nothing forwarded", async () => {
    const { key } = await orgWithKey(bench);
    const res = await respond(bench, key.secret, { model: GPT, input: "hi" });
    assert.equal(res.status, 503, res.text);
    assert.equal(res.body.error.metadata.reason, "api_not_supported");
    assert.equal(bench.received.length, 0);
  });
});

/** The text of a response's message items (for an SDK object without `output_text`). */
function textOf(response: OpenAI.Responses.Response | undefined): string {
  let text = "";
  for (const item of response?.output ?? [])
    if (item.type === "message")
      for (const part of item.content) if (part.type === "output_text") text += part.text;
  return text;
}
