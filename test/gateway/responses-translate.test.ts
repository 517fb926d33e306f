import "../helpers/property-seed.js";
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { OpenResponsesResult$inboundSchema, StreamEvents$inboundSchema } from "@openrouter/sdk/models";
import fc from "fast-check";
import { AppError } from "../../src/domain/errors.js";
import {
  chatToResponses,
  type ResponsesBody,
  responsesToChat,
} from "../../src/gateway/surfaces/responses/translate.js";
import { ChatToResponsesStream } from "../../src/gateway/surfaces/responses/translate-stream.js";
import {
  byteSum,
  chatAnswerOf,
  chunkOfFrom,
  type Json,
  refusedAt as refusedBy,
  reportedUsage,
  streamed as streamedBy,
  wholeAnswer as wholeAnswerBy,
} from "./chat-translate-support.js";

/**
 * The Responses API on a chat-only provider (docs/gateway.md#responses-translation): the request in
 * chat completions, the answer and its stream back. The reference SDK's own schemas judge every
 * answer and event the translation writes.
 */

const defaults = { id: "gen-req1", created: 1_700_000_000, model: "openai/gpt-4o" };

/** The SDK's unions take what they cannot read as "unknown" instead of failing: that is a failure here. */
function assertKnown(value: unknown, where = ""): void {
  if (typeof value !== "object" || value === null) return;
  if ((value as Json).isUnknown === true)
    assert.fail(`the SDK could not read ${where}: ${JSON.stringify(value)}`);
  for (const [key, inner] of Object.entries(value)) assertKnown(inner, `${where}/${key}`);
}

function assertSdkResponse(response: unknown): void {
  assertKnown(OpenResponsesResult$inboundSchema.parse(response));
}

/** The 400 a translation throws, and the path its first issue names. */
const refusedAt = (body: Json): string => refusedBy(() => responsesToChat(body as ResponsesBody));

describe("Responses request in chat completions (docs/gateway.md#responses-translation-requests)", () => {
  it("makes instructions a leading system message and a string input one user message", () => {
    const { chat, dropped } = responsesToChat({ model: "m", instructions: "Be brief.", input: "Hi" });
    assert.deepEqual(chat, {
      model: "m",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Hi" },
      ],
    });
    assert.deepEqual(dropped, []);
  });

  it("translates each content part of a message item", () => {
    const { chat } = responsesToChat({
      model: "m",
      input: [
        {
          type: "message",
          role: "user",
          content: [
            { type: "input_text", text: "Look" },
            { type: "input_image", image_url: "https://example.com/a.png", detail: "low" },
            { type: "input_file", filename: "a.pdf", file_data: "data:application/pdf;base64,AAAA" },
            { type: "input_audio", input_audio: { data: "AAAA", format: "wav" } },
          ],
        },
        { role: "developer", content: "Only facts." },
        {
          type: "message",
          role: "assistant",
          content: [
            { type: "output_text", text: "Seen ", annotations: [] },
            { type: "output_text", text: "it.", annotations: [] },
          ],
        },
        { type: "message", role: "assistant", content: [{ type: "refusal", refusal: "No." }] },
      ],
    });
    assert.deepEqual(chat.messages, [
      {
        role: "user",
        content: [
          { type: "text", text: "Look" },
          { type: "image_url", image_url: { url: "https://example.com/a.png", detail: "low" } },
          { type: "file", file: { file_data: "data:application/pdf;base64,AAAA", filename: "a.pdf" } },
          { type: "input_audio", input_audio: { data: "AAAA", format: "wav" } },
        ],
      },
      { role: "developer", content: "Only facts." },
      { role: "assistant", content: "Seen it." },
      { role: "assistant", content: "", refusal: "No." },
    ]);
  });

  it("merges consecutive function calls into one assistant turn, with the text before them", () => {
    const { chat } = responsesToChat({
      model: "m",
      input: [
        { role: "user", content: "Weather in Oslo and Rome?" },
        { type: "reasoning", id: "rs_1", summary: [] },
        { type: "message", role: "assistant", content: [{ type: "output_text", text: "Checking." }] },
        { type: "function_call", call_id: "c1", name: "weather", arguments: '{"city":"Oslo"}' },
        { type: "function_call", call_id: "c2", name: "weather", arguments: '{"city":"Rome"}' },
        { type: "function_call_output", call_id: "c1", output: "3C" },
        { type: "function_call_output", call_id: "c2", output: [{ type: "input_text", text: "18C" }] },
        { type: "function_call", call_id: "c3", name: "clock", arguments: "{}" },
      ],
    });
    assert.deepEqual(chat.messages, [
      { role: "user", content: "Weather in Oslo and Rome?" },
      {
        role: "assistant",
        content: "Checking.",
        tool_calls: [
          { id: "c1", type: "function", function: { name: "weather", arguments: '{"city":"Oslo"}' } },
          { id: "c2", type: "function", function: { name: "weather", arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: "tool", tool_call_id: "c1", content: "3C" },
      { role: "tool", tool_call_id: "c2", content: [{ type: "text", text: "18C" }] },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c3", type: "function", function: { name: "clock", arguments: "{}" } }],
      },
    ]);
  });

  it("nests function tools, leaves hosted tools out and names each type once", () => {
    const parameters = { type: "object", properties: { city: { type: "string" } } };
    const { chat, dropped } = responsesToChat({
      model: "m",
      input: "Hi",
      tools: [
        { type: "web_search_preview" },
        { type: "function", name: "weather", description: "Weather now", parameters, strict: true },
        { type: "file_search", vector_store_ids: ["vs_1"] },
        { type: "web_search_preview" },
        { type: "function", name: "clock", parameters: null },
        { type: "mcp", server_label: "x", server_url: "https://example.com" },
      ],
      tool_choice: { type: "function", name: "weather" },
    });
    assert.deepEqual(chat.tools, [
      {
        type: "function",
        function: { name: "weather", description: "Weather now", parameters, strict: true },
      },
      { type: "function", function: { name: "clock" } },
    ]);
    assert.deepEqual(dropped, ["web_search_preview", "file_search", "mcp"]);
    assert.deepEqual(chat.tool_choice, { type: "function", function: { name: "weather" } });
  });

  it("maps the tool choices chat has", () => {
    for (const choice of ["auto", "none", "required"])
      assert.equal(responsesToChat({ model: "m", input: "x", tool_choice: choice }).chat.tool_choice, choice);
    const allowed = responsesToChat({
      model: "m",
      input: "x",
      tool_choice: { type: "allowed_tools", mode: "required", tools: [{ type: "function", name: "a" }] },
    }).chat.tool_choice;
    assert.deepEqual(allowed, {
      type: "allowed_tools",
      allowed_tools: { mode: "required", tools: [{ type: "function", function: { name: "a" } }] },
    });
  });

  it("maps output, format, reasoning and stream settings, and passes the rest through", () => {
    const schema = { type: "object", properties: {} };
    const { chat } = responsesToChat({
      model: "m",
      input: "x",
      max_output_tokens: 64,
      temperature: 0.2,
      top_p: 0.9,
      parallel_tool_calls: false,
      user: "u1",
      metadata: { team: "a" },
      provider: { order: ["openai"] },
      store: true,
      truncation: "disabled",
      include: ["reasoning.encrypted_content"],
      text: { format: { type: "json_schema", name: "out", schema, strict: true }, verbosity: "low" },
      reasoning: { effort: "high", summary: "auto" },
      stream: true,
    });
    assert.deepEqual(chat, {
      model: "m",
      messages: [{ role: "user", content: "x" }],
      temperature: 0.2,
      top_p: 0.9,
      parallel_tool_calls: false,
      user: "u1",
      metadata: { team: "a" },
      provider: { order: ["openai"] },
      max_tokens: 64,
      verbosity: "low",
      response_format: { type: "json_schema", json_schema: { name: "out", schema, strict: true } },
      reasoning_effort: "high",
      stream: true,
      stream_options: { include_usage: true },
    });
    assert.deepEqual(
      responsesToChat({ model: "m", input: "x", text: { format: { type: "json_object" } } }).chat
        .response_format,
      { type: "json_object" },
    );
    assert.equal(
      "response_format" in
        responsesToChat({ model: "m", input: "x", text: { format: { type: "text" } } }).chat,
      false,
    );
  });

  it("passes a __proto__ member through as a member, not as the copy's prototype", () => {
    const body = JSON.parse('{"model":"m","input":"x","__proto__":{"polluted":true}}') as ResponsesBody;
    const { chat } = responsesToChat(body);
    assert.equal(Object.getPrototypeOf(chat), Object.prototype);
    assert.equal((chat as Json).polluted, undefined);
    assert.equal(
      JSON.stringify(chat),
      '{"model":"m","messages":[{"role":"user","content":"x"}],"__proto__":{"polluted":true}}',
    );
  });

  it("leaves the request it translated as it was", () => {
    const body = {
      model: "m",
      input: [{ type: "function_call", call_id: "c", name: "f", arguments: "{}" }],
      tools: [{ type: "function", name: "f" }],
    };
    const before = structuredClone(body);
    responsesToChat(body);
    assert.deepEqual(body, before);
  });
});

describe("Responses requests chat cannot carry are a 400 (docs/gateway.md#responses-translation-refused)", () => {
  const cases: [string, Json, string][] = [
    ["a stored response", { previous_response_id: "resp_1" }, "/previous_response_id"],
    ["a conversation", { conversation: "conv_1" }, "/conversation"],
    ["a stored prompt", { prompt: { id: "pmpt_1" } }, "/prompt"],
    ["a background response", { background: true }, "/background"],
    ["automatic truncation", { truncation: "auto" }, "/truncation"],
    ["a tool call limit", { max_tool_calls: 3 }, "/max_tool_calls"],
    ["log probabilities", { top_logprobs: 2 }, "/top_logprobs"],
    ["chat's messages", { messages: [{ role: "user", content: "smuggled" }] }, "/messages"],
    ["several answers", { n: 2 }, "/n"],
    [
      "an include chat cannot give",
      { include: ["reasoning.encrypted_content", "message.output_text.logprobs"] },
      "/include/1",
    ],
    ["a hosted tool choice", { tool_choice: { type: "web_search_preview" } }, "/tool_choice/type"],
    [
      "an image by file id",
      { input: [{ role: "user", content: [{ type: "input_image", file_id: "file_1" }] }] },
      "/input/0/content/0/file_id",
    ],
    [
      "a file by id",
      { input: [{ role: "user", content: [{ type: "input_file", file_id: "file_1" }] }] },
      "/input/0/content/0/file_id",
    ],
    [
      "a file by link",
      { input: [{ role: "user", content: [{ type: "input_file", file_url: "https://example.com/a.pdf" }] }] },
      "/input/0/content/0/file_url",
    ],
    ["an item reference", { input: [{ type: "item_reference", id: "msg_1" }] }, "/input/0/type"],
    [
      "a hosted tool call",
      {
        input: [
          { role: "user", content: "x" },
          { type: "web_search_call", id: "ws_1", status: "completed" },
        ],
      },
      "/input/1/type",
    ],
    [
      "an unknown part",
      { input: [{ role: "user", content: [{ type: "input_video" }] }] },
      "/input/0/content/0/type",
    ],
    ["an unknown role", { input: [{ role: "critic", content: "x" }] }, "/input/0/role"],
    [
      "a call without its id",
      { input: [{ type: "function_call", name: "f", arguments: "{}" }] },
      "/input/0/call_id",
    ],
    ["no message at all", { input: [] }, "/input"],
    ["an unknown format", { input: "x", text: { format: { type: "grammar" } } }, "/text/format/type"],
  ];
  for (const [name, fields, path] of cases) {
    it(`refuses ${name} at ${path}`, () => {
      assert.equal(refusedAt({ model: "m", input: "x", ...fields }), path);
    });
  }
});

describe("any Responses request is translated or refused with a 400 (docs/gateway.md#responses-translation-refused)", () => {
  it("never fails otherwise, and never changes the request (property)", () => {
    const part = fc.oneof(
      fc.record(
        { type: fc.constantFrom("input_text", "output_text", "refusal"), text: fc.anything() },
        { noNullPrototype: true },
      ),
      fc.record(
        {
          type: fc.constantFrom("input_image", "input_file", "input_audio"),
          image_url: fc.anything(),
          file_id: fc.anything(),
        },
        { requiredKeys: ["type"], noNullPrototype: true },
      ),
      fc.anything(),
    );
    const item = fc.oneof(
      fc.record(
        {
          type: fc.constantFrom(
            "message",
            "function_call",
            "function_call_output",
            "reasoning",
            "item_reference",
          ),
          role: fc.constantFrom("user", "assistant", "system", "developer", "tool"),
          content: fc.oneof(fc.string(), fc.array(part, { maxLength: 3 })),
          call_id: fc.oneof(fc.string(), fc.anything()),
          name: fc.string(),
          arguments: fc.string(),
          output: fc.oneof(fc.string(), fc.array(part, { maxLength: 2 }), fc.anything()),
        },
        { requiredKeys: [], noNullPrototype: true },
      ),
      fc.anything(),
    );
    const body = fc.record(
      {
        input: fc.oneof(fc.string(), fc.array(item, { maxLength: 5 }), fc.anything()),
        instructions: fc.oneof(fc.string(), fc.anything()),
        tools: fc.oneof(
          fc.array(
            fc.record(
              { type: fc.constantFrom("function", "web_search", "mcp"), name: fc.anything() },
              { noNullPrototype: true },
            ),
            {
              maxLength: 3,
            },
          ),
          fc.anything(),
        ),
        tool_choice: fc.oneof(fc.constantFrom("auto", "none", "required"), fc.anything()),
        text: fc.anything(),
        reasoning: fc.anything(),
        include: fc.oneof(fc.constant(["reasoning.encrypted_content"]), fc.anything()),
        truncation: fc.constantFrom("auto", "disabled", undefined),
      },
      { requiredKeys: [], noNullPrototype: true },
    );
    fc.assert(
      fc.property(body, (fields) => {
        const request = { model: "m", ...fields } as ResponsesBody;
        const before = structuredClone(request);
        try {
          const { chat } = responsesToChat(request);
          assert.ok(Array.isArray(chat.messages) && chat.messages.length > 0);
        } catch (error) {
          assert.ok(error instanceof AppError, String(error));
          assert.equal(error.status, 400);
          const issues = error.metadata?.issues as { path: string }[];
          assert.match(issues[0]?.path ?? "", /^(\/|$)/);
        }
        assert.deepEqual(request, before);
      }),
      { numRuns: 300 },
    );
  });
});

/** The provider behind the translation: its answers' id, time and model. */
const provider = { created: 1_690_000_000, model: "gpt-4o-2024" };
const chatAnswer = chatAnswerOf(provider);

describe("chat answers as Responses answers (docs/gateway.md#responses-translation-answers)", () => {
  const request = {
    model: "openai/gpt-4o",
    input: "Hi",
    instructions: "Be brief.",
    tools: [
      { type: "function", name: "weather", parameters: { type: "object" } },
      { type: "web_search_preview" },
    ],
    temperature: 0.5,
    max_output_tokens: 100,
  };

  it("gives a text answer as one message item, with the usage and the request's settings", () => {
    const usage = {
      prompt_tokens: 12,
      completion_tokens: 5,
      total_tokens: 17,
      prompt_tokens_details: { cached_tokens: 4 },
      completion_tokens_details: { reasoning_tokens: 2 },
    };
    const response = chatToResponses(chatAnswer({ content: "Hello." }, "stop", { usage }), request, {
      ...defaults,
      completedAt: 1_690_000_009,
    });
    assertSdkResponse(response);
    assert.equal(response.id, "resp_gen-req1");
    assert.equal(response.object, "response");
    assert.equal(response.status, "completed");
    assert.equal(response.created_at, 1_690_000_000);
    assert.equal(response.completed_at, 1_690_000_009);
    assert.equal(response.model, "gpt-4o-2024");
    assert.equal(response.incomplete_details, null);
    assert.equal(response.error, null);
    assert.deepEqual(response.output, [
      {
        type: "message",
        id: "msg_gen-req1",
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text: "Hello.", annotations: [] }],
      },
    ]);
    assert.deepEqual(response.usage, {
      input_tokens: 12,
      input_tokens_details: { cached_tokens: 4 },
      output_tokens: 5,
      output_tokens_details: { reasoning_tokens: 2 },
      total_tokens: 17,
    });
    assert.equal(response.instructions, "Be brief.");
    assert.deepEqual(response.tools, [
      { type: "function", name: "weather", description: null, parameters: { type: "object" }, strict: null },
    ]);
    assert.equal(response.tool_choice, "auto");
    assert.equal(response.temperature, 0.5);
    assert.equal(response.max_output_tokens, 100);
    assert.equal(response.store, false);
    assert.deepEqual(response.metadata, {});
  });

  it("gives reasoning, text and tool calls as items in that order", () => {
    const response = chatToResponses(
      chatAnswer(
        {
          content: "Checking.",
          reasoning: "The user wants weather.",
          tool_calls: [
            { id: "call_a", type: "function", function: { name: "weather", arguments: '{"city":"Oslo"}' } },
            { id: "call_b", type: "function", function: { name: "weather", arguments: '{"city":"Rome"}' } },
          ],
        },
        "tool_calls",
        { usage: { prompt_tokens: 1, completion_tokens: 2 } },
      ),
      request,
      defaults,
    );
    assertSdkResponse(response);
    assert.deepEqual(response.output, [
      {
        type: "reasoning",
        id: "rs_gen-req1",
        status: "completed",
        summary: [],
        content: [{ type: "reasoning_text", text: "The user wants weather." }],
      },
      {
        type: "message",
        id: "msg_gen-req1",
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text: "Checking.", annotations: [] }],
      },
      {
        type: "function_call",
        id: "fc_gen-req1_0",
        call_id: "call_a",
        name: "weather",
        arguments: '{"city":"Oslo"}',
        status: "completed",
      },
      {
        type: "function_call",
        id: "fc_gen-req1_1",
        call_id: "call_b",
        name: "weather",
        arguments: '{"city":"Rome"}',
        status: "completed",
      },
    ]);
    assert.deepEqual(response.usage, {
      input_tokens: 1,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 2,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 3,
    });
  });

  it("leaves the message out of a tool-calls-only answer and keeps a refusal as its own part", () => {
    const calls = chatToResponses(
      chatAnswer(
        {
          content: null,
          tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{}" } }],
        },
        "tool_calls",
      ),
      request,
      defaults,
    );
    assert.deepEqual(
      (calls.output as Json[]).map((item) => item.type),
      ["function_call"],
    );
    const refused = chatToResponses(
      chatAnswer({ content: null, refusal: "I can't." }, "stop"),
      request,
      defaults,
    );
    assertSdkResponse(refused);
    assert.deepEqual((refused.output as Json[])[0]?.content, [{ type: "refusal", refusal: "I can't." }]);
  });

  it("reports a length stop and a content filter as incomplete, and an upstream error as failed", () => {
    const length = chatToResponses(
      chatAnswer({ content: "Hel", reasoning: "Greet." }, "length"),
      request,
      defaults,
    );
    assertSdkResponse(length);
    assert.equal(length.status, "incomplete");
    assert.deepEqual(length.incomplete_details, { reason: "max_output_tokens" });
    assert.equal(length.completed_at, null);
    // The reasoning was followed by the text, so it is whole; the text is what was cut.
    assert.deepEqual(
      (length.output as Json[]).map((item) => [item.type, item.status]),
      [
        ["reasoning", "completed"],
        ["message", "incomplete"],
      ],
    );
    const filtered = chatToResponses(chatAnswer({ content: "" }, "content_filter"), request, defaults);
    assert.deepEqual(filtered.incomplete_details, { reason: "content_filter" });
    const failed = chatToResponses(chatAnswer({ content: "" }, "error"), request, defaults);
    assertSdkResponse(failed);
    assert.equal(failed.status, "failed");
    assert.deepEqual(failed.error, { code: "server_error", message: "Upstream provider error" });
    assert.deepEqual(failed.output, []);
  });
});

/* Streams. */

interface SseEvent {
  type: string;
  data: Json;
}

function parseSse(text: string): SseEvent[] {
  const events: SseEvent[] = [];
  for (const block of text.split("\n\n")) {
    if (block === "") continue;
    const lines = block.split("\n");
    assert.equal(lines.length, 2, `one event line and one data line: ${block}`);
    const type = (lines[0] as string).replace(/^event: /, "");
    const data = JSON.parse((lines[1] as string).replace(/^data: /, "")) as Json;
    assert.equal(data.type, type);
    events.push({ type, data });
  }
  return events;
}

/** Feeds the datas to a fresh translator and returns every event it sent, with the facts it reported. */
function translateStream(datas: string[], request: ResponsesBody, finish = false) {
  const stream = new ChatToResponsesStream(request, defaults);
  let text = "";
  let bytes = 0;
  for (const data of datas) {
    const facts = stream.read(data);
    assert.equal(typeof facts.send, "string");
    text += facts.send;
    bytes += facts.contentBytes;
  }
  if (finish) text += stream.finish();
  return { events: parseSse(text), bytes, usage: stream.usage(), stream };
}

function assertSdkEvents(events: SseEvent[]): void {
  events.forEach((event, i) => {
    assert.equal(event.data.sequence_number, i);
    assertKnown(StreamEvents$inboundSchema.parse(event.data), `event ${i} ${event.type}`);
  });
}

const chunkOf = chunkOfFrom(provider);

/** A random answer as chat gives it whole. */
const answerArb = fc.record({
  reasoning: fc.option(fc.string({ minLength: 1, unit: "grapheme" }), { nil: undefined }),
  content: fc.string({ unit: "grapheme" }),
  refusal: fc.option(fc.string({ minLength: 1 }), { nil: undefined, freq: 5 }),
  calls: fc.array(
    fc.record({ id: fc.stringMatching(/^call_[a-z0-9]{1,8}$/), name: fc.string(), arguments: fc.json() }),
    { maxLength: 3 },
  ),
  finish: fc.constantFrom("stop", "length", "tool_calls", "content_filter"),
  usage: fc.option(
    fc.record({
      prompt_tokens: fc.nat(100_000),
      completion_tokens: fc.nat(100_000),
      cached: fc.nat(100),
      reasoning: fc.nat(100),
    }),
    { nil: undefined },
  ),
});
type Answer = typeof answerArb extends fc.Arbitrary<infer T> ? T : never;

const wholeAnswer = (a: Answer): Json => wholeAnswerBy(chatAnswer, a);

/** The answer as a chat stream, each text cut into pieces, ending with its usage chunk and [DONE]. */
const streamed = (a: Answer, cuts: number[]): string[] => streamedBy(chunkOf, a, cuts);

const streamRequest = {
  model: "openai/gpt-4o",
  input: "Hi",
  stream: true,
  tools: [{ type: "function", name: "weather", parameters: { type: "object" } }],
};

describe("chat streams as Responses streams (docs/gateway.md#responses-translation-stream)", () => {
  it("ends with the response the whole answer gives, whatever the pieces (property)", () => {
    fc.assert(
      fc.property(answerArb, fc.array(fc.nat(), { maxLength: 6 }), (a, cuts) => {
        const { events, bytes, usage } = translateStream(streamed(a, cuts), streamRequest);
        assertSdkEvents(events);
        assert.deepEqual(
          events.slice(0, 2).map((e) => e.type),
          ["response.created", "response.in_progress"],
        );
        const last = events[events.length - 1] as SseEvent;
        const whole = chatToResponses(wholeAnswer(a), streamRequest, defaults);
        const final = whole.status === "completed" ? "response.completed" : "response.incomplete";
        assert.equal(last.type, final);
        assert.deepEqual(last.data.response, whole);
        assert.equal(events.filter((e) => e.type.startsWith("response.") && e.data.response).length, 3);

        const joined = (type: string, itemId: string) =>
          events
            .filter((e) => e.type === type && e.data.item_id === itemId)
            .map((e) => e.data.delta)
            .join("");
        const output = whole.output as Json[];
        for (const item of output) {
          const id = item.id as string;
          if (item.type === "message") assert.equal(joined("response.output_text.delta", id), a.content);
          if (item.type === "reasoning")
            assert.equal(joined("response.reasoning_text.delta", id), a.reasoning);
          if (item.type === "function_call")
            assert.equal(joined("response.function_call_arguments.delta", id), item.arguments);
        }
        // Every item is announced and closed at its place, with what the final response holds.
        const done = events.filter((e) => e.type === "response.output_item.done");
        assert.deepEqual(
          done.map((e) => [e.data.output_index, e.data.item]).sort((x, y) => Number(x[0]) - Number(y[0])),
          output.map((item, i) => [i, item]),
        );
        assert.equal(events.filter((e) => e.type === "response.output_item.added").length, output.length);

        // Cached prompt tokens are read for their price (docs/gateway.md#cache-prices).
        assert.deepEqual(usage, reportedUsage(a.usage));
        const texts = [a.content, a.reasoning ?? "", a.refusal ?? "", ...a.calls.map((c) => c.arguments)];
        assert.equal(bytes, byteSum(texts));
      }),
      {
        numRuns: 150,
        // Found by a random seed: reasoning closed by the (empty) message of a cut-short answer.
        examples: [
          [
            {
              reasoning: " ",
              content: "",
              refusal: undefined,
              calls: [],
              finish: "length",
              usage: undefined,
            },
            [],
          ],
        ],
      },
    );
  });

  it("streams text then two tool calls in the events a Responses client expects", () => {
    const datas = [
      chunkOf({ role: "assistant", content: "" }),
      chunkOf({ content: "Let me " }),
      chunkOf({ content: "check." }),
      chunkOf({
        tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "f", arguments: "" } }],
      }),
      chunkOf({
        tool_calls: [{ index: 1, id: "call_b", type: "function", function: { name: "g", arguments: "{" } }],
      }),
      chunkOf({ tool_calls: [{ index: 0, function: { arguments: "{}" } }] }),
      chunkOf({ tool_calls: [{ index: 1, function: { arguments: "}" } }] }),
      chunkOf({}, "tool_calls"),
      chunkOf({}, null, { choices: [], usage: { prompt_tokens: 9, completion_tokens: 4 } }),
      "[DONE]",
    ];
    const { events } = translateStream(datas, streamRequest);
    assertSdkEvents(events);
    assert.deepEqual(
      events.map((e) => `${e.type}${e.data.output_index === undefined ? "" : `@${e.data.output_index}`}`),
      [
        "response.created",
        "response.in_progress",
        "response.output_item.added@0",
        "response.content_part.added@0",
        "response.output_text.delta@0",
        "response.output_text.delta@0",
        "response.output_text.done@0",
        "response.content_part.done@0",
        "response.output_item.done@0",
        "response.output_item.added@1",
        "response.output_item.added@2",
        "response.function_call_arguments.delta@2",
        "response.function_call_arguments.delta@1",
        "response.function_call_arguments.delta@2",
        "response.function_call_arguments.done@1",
        "response.output_item.done@1",
        "response.function_call_arguments.done@2",
        "response.output_item.done@2",
        "response.completed",
      ],
    );
    const final = (events[events.length - 1] as SseEvent).data.response as Json;
    assert.deepEqual(
      (final.output as Json[]).map((item) => [item.type, item.arguments ?? null]),
      [
        ["message", null],
        ["function_call", "{}"],
        ["function_call", "{}"],
      ],
    );
    assert.deepEqual((final.usage as Json).input_tokens, 9);
  });

  it("ends with response.failed at an upstream error chunk and sends nothing after it", () => {
    const datas = [
      chunkOf({ content: "Hal" }),
      JSON.stringify({ error: { code: 502, message: "secret upstream detail" } }),
      chunkOf({ content: "f" }),
      "[DONE]",
    ];
    const { events, stream } = translateStream(datas, streamRequest);
    assertSdkEvents(events);
    const last = events[events.length - 1] as SseEvent;
    assert.equal(last.type, "response.failed");
    const response = last.data.response as Json;
    assert.equal(response.status, "failed");
    assert.deepEqual(response.error, { code: "server_error", message: "Upstream provider error" });
    assert.equal(JSON.stringify(events).includes("secret upstream detail"), false);
    assert.equal(events.filter((e) => e.type === "response.output_text.delta").length, 1);
    assert.equal(stream.finish(), "");
    const empty = translateStream([JSON.stringify({ error: { message: "x" } })], streamRequest);
    assert.deepEqual(
      empty.events[empty.events.length - 1]?.data.response,
      chatToResponses({ error: { message: "x" } }, streamRequest, defaults),
    );
  });

  it("ends with response.failed at a finish reason of error", () => {
    const { events } = translateStream(
      [chunkOf({ content: "Hal" }), chunkOf({}, "error"), "[DONE]"],
      streamRequest,
    );
    assertSdkEvents(events);
    const last = events[events.length - 1] as SseEvent;
    assert.equal(last.type, "response.failed");
    assert.deepEqual(
      last.data.response,
      chatToResponses(chatAnswer({ content: "Hal" }, "error"), streamRequest, defaults),
    );
  });

  it("ends at finish() for an upstream that closes without [DONE]", () => {
    const finished = translateStream([chunkOf({ content: "Hi" }), chunkOf({}, "stop")], streamRequest, true);
    assertSdkEvents(finished.events);
    assert.equal(finished.events[finished.events.length - 1]?.type, "response.completed");
    assert.equal(finished.stream.finish(), "");

    const cut = translateStream([chunkOf({ content: "Hi" })], streamRequest, true);
    assertSdkEvents(cut.events);
    assert.equal(cut.events[cut.events.length - 1]?.type, "response.failed");
  });

  it("reports a length stop as response.incomplete", () => {
    const { events } = translateStream(
      [chunkOf({ content: "Hel" }), chunkOf({}, "length"), "[DONE]"],
      streamRequest,
    );
    assertSdkEvents(events);
    const last = events[events.length - 1] as SseEvent;
    assert.equal(last.type, "response.incomplete");
    assert.deepEqual((last.data.response as Json).incomplete_details, { reason: "max_output_tokens" });
  });
});
