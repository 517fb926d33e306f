import "../helpers/property-seed.js";
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import fc from "fast-check";
import { AppError } from "../../src/domain/errors.js";
import {
  chatToMessages,
  type MessagesBody,
  messagesToChat,
} from "../../src/gateway/surfaces/messages/translate.js";
import { ChatToMessagesStream } from "../../src/gateway/surfaces/messages/translate-stream.js";
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
 * The Anthropic Messages API on a chat-only provider (docs/gateway.md#messages-translation): the
 * request in chat completions, the answer and its stream back. The reference SDK reads the streams
 * the translation writes, as a client would.
 */

const defaults = { id: "gen-req1", created: 1_700_000_000, model: "anthropic/claude-sonnet-4" };

/** The 400 a translation throws, and the path its first issue names. */
const refusedAt = (body: Json): string => refusedBy(() => messagesToChat(body as MessagesBody));

const user = (content: unknown) => ({ role: "user", content });

describe("Messages request in chat completions (docs/gateway.md#messages-translation-requests)", () => {
  it("a system turn among the messages (as Claude Code sends one) is a system message in its place", () => {
    const { chat } = messagesToChat({
      model: "m",
      max_tokens: 100,
      messages: [
        user("Hi"),
        {
          role: "system",
          content: [
            { type: "text", text: "Mind the" },
            { type: "text", text: "rules." },
          ],
        },
      ],
    });
    assert.deepEqual(chat.messages, [
      { role: "user", content: "Hi" },
      { role: "system", content: "Mind the\nrules." },
    ]);
  });

  it("makes system a leading system message and keeps string turns as they are", () => {
    const { chat, dropped } = messagesToChat({
      model: "m",
      max_tokens: 100,
      system: "Be brief.",
      messages: [user("Hi"), { role: "assistant", content: "Hello." }, user("Bye")],
    });
    assert.deepEqual(chat, {
      model: "m",
      max_tokens: 100,
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Hi" },
        { role: "assistant", content: "Hello." },
        { role: "user", content: "Bye" },
      ],
    });
    assert.deepEqual(dropped, []);
  });

  it("joins system text blocks into one string and drops their cache_control", () => {
    const { chat } = messagesToChat({
      model: "m",
      system: [
        { type: "text", text: "One.", cache_control: { type: "ephemeral" } },
        { type: "text", text: "Two." },
      ],
      messages: [user("Hi")],
    });
    assert.deepEqual(chat.messages[0], { role: "system", content: "One.\nTwo." });
  });

  it("translates each user block kind into a chat content part", () => {
    const { chat } = messagesToChat({
      model: "m",
      messages: [
        user([
          { type: "text", text: "Look", cache_control: { type: "ephemeral" } },
          { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBO" } },
          { type: "image", source: { type: "url", url: "https://example.com/a.png" } },
          { type: "document", source: { type: "text", media_type: "text/plain", data: "Notes" } },
          {
            type: "document",
            title: "a.pdf",
            source: { type: "base64", media_type: "application/pdf", data: "JVBE" },
          },
          { type: "thinking", thinking: "x", signature: "s" },
        ]),
      ],
    });
    assert.deepEqual(chat.messages, [
      {
        role: "user",
        content: [
          { type: "text", text: "Look" },
          { type: "image_url", image_url: { url: "data:image/png;base64,iVBO" } },
          { type: "image_url", image_url: { url: "https://example.com/a.png" } },
          { type: "text", text: "Notes" },
          { type: "file", file: { file_data: "data:application/pdf;base64,JVBE", filename: "a.pdf" } },
        ],
      },
    ]);
  });

  it("makes tool_use blocks tool calls and tool_result blocks tool messages before the user's text", () => {
    const { chat } = messagesToChat({
      model: "m",
      messages: [
        user("Weather in Oslo and Rome?"),
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "Two calls.", signature: "sig" },
            { type: "redacted_thinking", data: "xyz" },
            { type: "text", text: "Checking." },
            { type: "tool_use", id: "toolu_1", name: "weather", input: { city: "Oslo" } },
            { type: "tool_use", id: "toolu_2", name: "weather", input: { city: "Rome" } },
          ],
        },
        user([
          { type: "text", text: "Here:" },
          { type: "tool_result", tool_use_id: "toolu_1", content: "3C" },
          {
            type: "tool_result",
            tool_use_id: "toolu_2",
            is_error: true,
            content: [
              { type: "text", text: "timeout" },
              { type: "text", text: "retry later" },
            ],
          },
        ]),
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_3", name: "clock", input: {} }] },
        user([{ type: "tool_result", tool_use_id: "toolu_3" }]),
      ],
    });
    assert.deepEqual(chat.messages, [
      { role: "user", content: "Weather in Oslo and Rome?" },
      {
        role: "assistant",
        content: "Checking.",
        tool_calls: [
          { id: "toolu_1", type: "function", function: { name: "weather", arguments: '{"city":"Oslo"}' } },
          { id: "toolu_2", type: "function", function: { name: "weather", arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: "tool", tool_call_id: "toolu_1", content: "3C" },
      { role: "tool", tool_call_id: "toolu_2", content: "Error: timeout\nretry later" },
      { role: "user", content: [{ type: "text", text: "Here:" }] },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "toolu_3", type: "function", function: { name: "clock", arguments: "{}" } }],
      },
      { role: "tool", tool_call_id: "toolu_3", content: "" },
    ]);
  });

  it("nests custom tools as function tools, leaves server tools out and names each type once", () => {
    const schema = { type: "object", properties: { city: { type: "string" } } };
    const { chat, dropped } = messagesToChat({
      model: "m",
      messages: [user("Hi")],
      tools: [
        {
          name: "weather",
          description: "Weather now",
          input_schema: schema,
          cache_control: { type: "ephemeral" },
        },
        { type: "web_search_20250305", name: "web_search", max_uses: 3 },
        { type: "custom", name: "clock", input_schema: { type: "object" }, strict: true },
        { type: "bash_20250124", name: "bash" },
        { type: "text_editor_20250728", name: "str_replace_based_edit_tool" },
        { type: "web_search_20250305", name: "web_search" },
      ],
      tool_choice: { type: "auto", disable_parallel_tool_use: true },
    });
    assert.deepEqual(chat.tools, [
      { type: "function", function: { name: "weather", description: "Weather now", parameters: schema } },
      { type: "function", function: { name: "clock", parameters: { type: "object" }, strict: true } },
    ]);
    assert.equal(chat.tool_choice, "auto");
    assert.equal(chat.parallel_tool_calls, false);
    assert.deepEqual(dropped, ["web_search_20250305", "bash_20250124", "text_editor_20250728"]);
  });

  it("maps each tool_choice", () => {
    const tools = [{ name: "f", input_schema: { type: "object" } }];
    const choice = (tool_choice: Json) =>
      messagesToChat({ model: "m", messages: [user("Hi")], tools, tool_choice }).chat;
    assert.equal(choice({ type: "auto" }).tool_choice, "auto");
    assert.equal(choice({ type: "any" }).tool_choice, "required");
    assert.equal(choice({ type: "none" }).tool_choice, "none");
    assert.deepEqual(choice({ type: "tool", name: "f" }).tool_choice, {
      type: "function",
      function: { name: "f" },
    });
    assert.equal(choice({ type: "any" }).parallel_tool_calls, undefined);
    // Only server tools: "auto" means nothing to a chat provider, which refuses a choice without tools.
    const serverOnly = messagesToChat({
      model: "m",
      messages: [user("Hi")],
      tools: [{ type: "web_search_20250305", name: "web_search" }],
      tool_choice: { type: "auto" },
    }).chat;
    assert.equal(serverOnly.tool_choice, undefined);
    assert.equal(serverOnly.tools, undefined);
  });

  it("maps the sampling settings, the user, the stream, and passes unknown fields through", () => {
    const { chat } = messagesToChat({
      model: "m",
      messages: [user("Hi")],
      max_tokens: 512,
      stop_sequences: ["END"],
      temperature: 0.2,
      top_p: 0.9,
      top_k: 40,
      metadata: { user_id: "u-42" },
      stream: true,
      thinking: { type: "enabled", budget_tokens: 1024 },
      service_tier: "auto",
      output_config: { effort: "low", format: { type: "json_schema", schema: { type: "object" } } },
      provider: { order: ["a"] },
    });
    assert.deepEqual(chat, {
      model: "m",
      messages: [{ role: "user", content: "Hi" }],
      max_tokens: 512,
      stop: ["END"],
      temperature: 0.2,
      top_p: 0.9,
      top_k: 40,
      user: "u-42",
      stream: true,
      stream_options: { include_usage: true },
      reasoning_effort: "low",
      response_format: {
        type: "json_schema",
        json_schema: { name: "output", schema: { type: "object" }, strict: true },
      },
      provider: { order: ["a"] },
    });
  });

  it("does not change the request it reads", () => {
    const body = {
      model: "m",
      system: [{ type: "text", text: "S" }],
      messages: [user([{ type: "text", text: "Hi" }])],
      tools: [{ name: "f", input_schema: { type: "object" } }],
      stream: true,
    };
    const copy = structuredClone(body);
    messagesToChat(body);
    assert.deepEqual(body, copy);
  });
});

describe("Messages requests chat cannot carry are a 400 (docs/gateway.md#messages-translation-refused)", () => {
  const cases: [string, Json, string][] = [
    ["no messages", { messages: [] }, "/messages"],
    ["an unknown role in messages", { messages: [{ role: "tool", content: "x" }] }, "/messages/0/role"],
    [
      "an image by file id",
      { messages: [user([{ type: "image", source: { type: "file", file_id: "f1" } }])] },
      "/messages/0/content/0/source/type",
    ],
    [
      "a PDF by URL",
      { messages: [user([{ type: "document", source: { type: "url", url: "https://x/a.pdf" } }])] },
      "/messages/0/content/0/source/type",
    ],
    [
      "a search result block",
      { messages: [user("a"), { role: "assistant", content: "b" }, user([{ type: "search_result" }])] },
      "/messages/2/content/0/type",
    ],
    [
      "an image in an assistant turn",
      { messages: [user("a"), { role: "assistant", content: [{ type: "image", source: {} }] }] },
      "/messages/1/content/0/type",
    ],
    [
      "an earlier server tool call",
      {
        messages: [
          user("a"),
          {
            role: "assistant",
            content: [{ type: "server_tool_use", id: "s", name: "web_search", input: {} }],
          },
        ],
      },
      "/messages/1/content/0/type",
    ],
    [
      "a tool_use block from the user",
      { messages: [user([{ type: "tool_use", id: "t", name: "f", input: {} }])] },
      "/messages/0/content/0/type",
    ],
    [
      "an image in a tool result",
      {
        messages: [
          user([
            {
              type: "tool_result",
              tool_use_id: "t",
              content: [{ type: "image", source: { type: "url", url: "https://x/a.png" } }],
            },
          ]),
        ],
      },
      "/messages/0/content/0/content/0/type",
    ],
    [
      "a tool_use input that is not an object",
      {
        messages: [
          user("a"),
          { role: "assistant", content: [{ type: "tool_use", id: "t", name: "f", input: "x" }] },
        ],
      },
      "/messages/1/content/0/input",
    ],
    ["a container", { messages: [user("a")], container: "c1" }, "/container"],
    [
      "MCP servers",
      { messages: [user("a")], mcp_servers: [{ type: "url", url: "https://x" }] },
      "/mcp_servers",
    ],
    ["chat's n", { messages: [user("a")], n: 2 }, "/n"],
    [
      "a tool_choice naming a server tool",
      {
        messages: [user("a")],
        tools: [
          { name: "f", input_schema: {} },
          { type: "web_search_20250305", name: "web_search" },
        ],
        tool_choice: { type: "tool", name: "web_search" },
      },
      "/tool_choice/name",
    ],
    [
      "tool_choice any with only server tools",
      {
        messages: [user("a")],
        tools: [{ type: "web_search_20250305", name: "web_search" }],
        tool_choice: { type: "any" },
      },
      "/tool_choice/type",
    ],
    [
      "a tool without input_schema",
      { messages: [user("a")], tools: [{ name: "f" }] },
      "/tools/0/input_schema",
    ],
    [
      "a system block that is not text",
      { messages: [user("a")], system: [{ type: "image", source: {} }] },
      "/system/0/type",
    ],
  ];
  for (const [name, fields, path] of cases) {
    it(`refuses ${name} at ${path}`, () => {
      assert.equal(refusedAt({ model: "m", ...fields }), path);
    });
  }
});

describe("any Messages request is translated or refused with a 400 (docs/gateway.md#messages-translation-refused)", () => {
  it("never fails otherwise, and never changes the request (property)", () => {
    const block = fc.oneof(
      fc.record(
        {
          type: fc.constantFrom(
            "text",
            "image",
            "document",
            "tool_use",
            "tool_result",
            "thinking",
            "redacted_thinking",
            "server_tool_use",
          ),
          text: fc.oneof(fc.string(), fc.anything()),
          source: fc.oneof(
            fc.record(
              {
                type: fc.constantFrom("base64", "url", "text", "file"),
                media_type: fc.string(),
                data: fc.string(),
                url: fc.string(),
              },
              { requiredKeys: ["type"] },
            ),
            fc.anything(),
          ),
          id: fc.string(),
          name: fc.string(),
          input: fc.oneof(fc.object(), fc.anything()),
          tool_use_id: fc.oneof(fc.string(), fc.anything()),
          content: fc.oneof(
            fc.string(),
            fc.array(fc.record({ type: fc.constant("text"), text: fc.string() })),
            fc.anything(),
          ),
          is_error: fc.oneof(fc.boolean(), fc.anything()),
        },
        { requiredKeys: ["type"] },
      ),
      fc.anything(),
    );
    const message = fc.oneof(
      fc.record({
        role: fc.constantFrom("user", "assistant", "system"),
        content: fc.oneof(fc.string(), fc.array(block, { maxLength: 4 })),
      }),
      fc.anything(),
    );
    const body = fc.record(
      {
        messages: fc.oneof(fc.array(message, { maxLength: 5 }), fc.anything()),
        system: fc.oneof(
          fc.string(),
          fc.array(fc.record({ type: fc.constant("text"), text: fc.string() })),
          fc.anything(),
        ),
        tools: fc.oneof(
          fc.array(
            fc.record(
              {
                type: fc.constantFrom("custom", "web_search_20250305", "bash_20250124"),
                name: fc.oneof(fc.string(), fc.anything()),
                input_schema: fc.oneof(fc.object(), fc.anything()),
              },
              { requiredKeys: ["name"] },
            ),
            { maxLength: 3 },
          ),
          fc.anything(),
        ),
        tool_choice: fc.oneof(
          fc.record({ type: fc.constantFrom("auto", "any", "tool", "none"), name: fc.string() }),
          fc.anything(),
        ),
        metadata: fc.anything(),
        output_config: fc.anything(),
        stop_sequences: fc.anything(),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(body, (fields) => {
        const request = { model: "m", ...fields } as MessagesBody;
        const copy = structuredClone(request);
        try {
          const { chat } = messagesToChat(request);
          assert.ok(chat.messages.length > 0);
          for (const m of chat.messages) assert.ok(["system", "user", "assistant", "tool"].includes(m.role));
        } catch (error) {
          if (!(error instanceof AppError)) throw error;
          assert.equal(error.status, 400);
          const issues = error.metadata?.issues as { path: string }[];
          assert.equal(typeof issues[0]?.path, "string");
        }
        // Cloned as the copy was, so that only a change the translation made can differ.
        assert.deepEqual(structuredClone(request), copy);
      }),
      { numRuns: 300 },
    );
  });
});

/* The answer. */

/** The provider behind the translation: its answers' id, time and model. */
const provider = { created: 1_700_000_100, model: "claude-sonnet-4-20250514" };
const chatAnswer = chatAnswerOf(provider);

const request: MessagesBody = {
  model: "anthropic/claude-sonnet-4",
  max_tokens: 100,
  messages: [{ role: "user", content: "Hi" }],
};

describe("chat answers as Anthropic messages (docs/gateway.md#messages-translation-answers)", () => {
  it("makes text a text block, with the usage and the stop reason", () => {
    const message = chatToMessages(
      chatAnswer({ content: "Hello." }, "stop", {
        usage: {
          prompt_tokens: 120,
          completion_tokens: 5,
          total_tokens: 125,
          prompt_tokens_details: { cached_tokens: 100 },
        },
      }),
      request,
      defaults,
    );
    assert.deepEqual(message, {
      id: "msg_gen-req1",
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-20250514",
      content: [{ type: "text", text: "Hello." }],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: {
        input_tokens: 20,
        output_tokens: 5,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 100,
      },
    });
  });

  it("makes tool calls tool_use blocks with their parsed input, {} when it is not an object", () => {
    const message = chatToMessages(
      chatAnswer(
        {
          content: null,
          tool_calls: [
            { id: "call_1", type: "function", function: { name: "weather", arguments: '{"city":"Oslo"}' } },
            { id: "call_2", type: "function", function: { name: "clock", arguments: "" } },
            { id: "call_3", type: "function", function: { name: "cut", arguments: '{"a":' } },
            { type: "function", function: { name: "list", arguments: "[1]" } },
          ],
        },
        "tool_calls",
      ),
      request,
      defaults,
    );
    assert.deepEqual(message.content, [
      { type: "tool_use", id: "call_1", name: "weather", input: { city: "Oslo" } },
      { type: "tool_use", id: "call_2", name: "clock", input: {} },
      { type: "tool_use", id: "call_3", name: "cut", input: {} },
      { type: "tool_use", id: "toolu_gen-req1_3", name: "list", input: {} },
    ]);
    assert.equal(message.stop_reason, "tool_use");
    assert.deepEqual(message.usage, {
      input_tokens: 0,
      output_tokens: 0,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    });
  });

  it("maps each finish reason to its stop reason", () => {
    const stop = (finish: string | null, message: Json = { content: "x" }) =>
      chatToMessages(chatAnswer(message, finish), request, defaults).stop_reason;
    assert.equal(stop("stop"), "end_turn");
    assert.equal(stop(null), "end_turn");
    assert.equal(stop("length"), "max_tokens");
    assert.equal(stop("tool_calls"), "tool_use");
    assert.equal(stop("content_filter"), "refusal");
    // A provider that says "stop" after calling tools: the client must still run them.
    assert.equal(
      stop("stop", { content: null, tool_calls: [{ id: "c", function: { name: "f", arguments: "{}" } }] }),
      "tool_use",
    );
    // A refusal is the model's text, and the message's end says so.
    const refused = chatToMessages(
      chatAnswer({ content: null, refusal: "I can't." }, "stop"),
      request,
      defaults,
    );
    assert.deepEqual(refused.content, [{ type: "text", text: "I can't." }]);
    assert.equal(refused.stop_reason, "refusal");
  });

  it("leaves reasoning out and gives an empty content for an empty answer", () => {
    const message = chatToMessages(chatAnswer({ content: "", reasoning: "hmm" }, "stop"), request, defaults);
    assert.deepEqual(message.content, []);
  });
});

/* The stream. */

const chunkOf = chunkOfFrom(provider);

/** A random answer as chat gives it whole; tool arguments are JSON objects, as models give them. */
const answerArb = fc.record({
  content: fc.string({ unit: "grapheme" }),
  refusal: fc.option(fc.string({ minLength: 1 }), { nil: undefined, freq: 5 }),
  calls: fc.array(
    fc.record({
      id: fc.stringMatching(/^call_[a-z0-9]{1,8}$/),
      name: fc.string({ minLength: 1 }),
      arguments: fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 4 }).map((v) => JSON.stringify(v)),
    }),
    { maxLength: 3 },
  ),
  finish: fc.constantFrom("stop", "length", "tool_calls", "content_filter"),
  usage: fc.option(
    fc.record({ prompt_tokens: fc.nat(100_000), completion_tokens: fc.nat(100_000), cached: fc.nat(100) }),
    { nil: undefined },
  ),
});
type Answer = typeof answerArb extends fc.Arbitrary<infer T> ? T : never;

const wholeAnswer = (a: Answer): Json => wholeAnswerBy(chatAnswer, a);

/** The answer as a chat stream, each text cut into pieces, ending with its usage chunk and [DONE]. */
const streamed = (a: Answer, cuts: number[]): string[] => streamedBy(chunkOf, a, cuts);

interface SseEvent {
  event: string;
  data: Json;
}

/**
 * The chat stream through the translation as the relay feeds it: each event's data read, the
 * "[DONE]" dropped, then `end()`; the SSE text sent, parsed back into events.
 */
function translateStream(datas: string[]): {
  text: string;
  events: SseEvent[];
  usage: unknown;
  bytes: number;
} {
  const reader = new ChatToMessagesStream(request, defaults);
  let text = "";
  let usage: unknown;
  let bytes = 0;
  for (const data of datas) {
    if (data === "[DONE]") continue;
    const facts = reader.read(data);
    assert.notEqual(facts.send, null);
    text += facts.send;
    if (facts.usage) usage = facts.usage;
    bytes += facts.contentBytes;
  }
  text += reader.end();
  assert.equal(reader.end(), "", "the end is sent once");
  const events = text
    .split("\n\n")
    .filter((block) => block !== "")
    .map((block) => {
      const [eventLine = "", dataLine = "", ...rest] = block.split("\n");
      assert.deepEqual(rest, []);
      assert.ok(eventLine.startsWith("event: "));
      assert.ok(dataLine.startsWith("data: "));
      const event = eventLine.slice(7);
      const data = JSON.parse(dataLine.slice(6)) as Json;
      assert.equal(data.type, event, "each event's data names its type");
      return { event, data };
    });
  return { text, events, usage, bytes };
}

/** The message a client gathers from the events: Anthropic's rules, written out. */
function assemble(events: SseEvent[]): Json {
  assert.equal(events[0]?.event, "message_start");
  const message = structuredClone(events[0]?.data.message) as Json;
  const content = message.content as Json[];
  const json = new Map<number, string>();
  let open = -1;
  let stopped = false;
  for (const { event, data } of events.slice(1)) {
    assert.ok(!stopped, "nothing follows message_stop");
    const index = data.index as number;
    switch (event) {
      case "content_block_start":
        assert.equal(open, -1, "one block is open at a time");
        assert.equal(index, content.length, "blocks start in order");
        content.push(structuredClone(data.content_block) as Json);
        open = index;
        break;
      case "content_block_delta": {
        assert.equal(index, open, "deltas go to the open block");
        const delta = data.delta as Json;
        const block = content[index] as Json;
        if (delta.type === "text_delta") block.text = (block.text as string) + (delta.text as string);
        else if (delta.type === "input_json_delta")
          json.set(index, (json.get(index) ?? "") + (delta.partial_json as string));
        else assert.fail(`unexpected delta ${String(delta.type)}`);
        break;
      }
      case "content_block_stop":
        assert.equal(index, open);
        if (json.has(index)) (content[index] as Json).input = JSON.parse(json.get(index) as string);
        open = -1;
        break;
      case "message_delta": {
        assert.equal(open, -1, "blocks close before the message's end");
        const delta = data.delta as Json;
        message.stop_reason = delta.stop_reason;
        message.stop_sequence = delta.stop_sequence;
        message.usage = { ...(message.usage as Json), ...(data.usage as Json) };
        break;
      }
      case "message_stop":
        stopped = true;
        break;
      default:
        assert.fail(`unexpected event ${event}`);
    }
  }
  assert.ok(stopped, "the stream ends with message_stop");
  return message;
}

/** An Anthropic client whose HTTP answers with `sse`: how the reference SDK reads our events. */
function clientAnswering(sse: string): Anthropic {
  return new Anthropic({
    apiKey: "test",
    baseURL: "http://127.0.0.1:9",
    maxRetries: 0,
    fetch: async () => new Response(sse, { status: 200, headers: { "content-type": "text/event-stream" } }),
  });
}

describe("chat streams as Anthropic streams (docs/gateway.md#messages-translation-stream)", () => {
  it("assembles into the message the whole answer gives, whatever the pieces (property)", () => {
    fc.assert(
      fc.property(answerArb, fc.array(fc.nat(), { maxLength: 6 }), (a, cuts) => {
        const { events, usage, bytes } = translateStream(streamed(a, cuts));
        const whole = chatToMessages(wholeAnswer(a), request, defaults);
        assert.deepEqual(assemble(events), whole);

        // Each call's input arrives as the provider's arguments, exactly, in its own block.
        const calls = (whole.content as Json[]).filter((b) => b.type === "tool_use");
        calls.forEach((call, n) => {
          const index = (whole.content as Json[]).indexOf(call);
          const joined = events
            .filter((e) => e.event === "content_block_delta" && e.data.index === index)
            .map((e) => (e.data.delta as Json).partial_json)
            .join("");
          assert.equal(joined, a.calls[n]?.arguments);
        });

        // Cached prompt tokens are read for their price (docs/gateway.md#cache-prices).
        assert.deepEqual(usage, reportedUsage(a.usage));
        const texts = [a.content, a.refusal ?? "", ...a.calls.map((c) => c.arguments)];
        assert.equal(bytes, byteSum(texts));
      }),
      { numRuns: 200 },
    );
  });

  it("is read by the Anthropic SDK into the message the whole answer gives (property)", async () => {
    await fc.assert(
      fc.asyncProperty(answerArb, fc.array(fc.nat(), { maxLength: 4 }), async (a, cuts) => {
        const { text } = translateStream(streamed(a, cuts));
        const stream = clientAnswering(text).messages.stream({
          model: "anthropic/claude-sonnet-4",
          max_tokens: 100,
          messages: [{ role: "user", content: "Hi" }],
        });
        const final = await stream.finalMessage();
        const whole = chatToMessages(wholeAnswer(a), request, defaults);
        // JSON, as a client would send it on: the SDK's own members left undefined drop out, and
        // `parsed_output` is the SDK's, not the API's (it parses structured output itself).
        const { parsed_output, ...read } = JSON.parse(JSON.stringify(final)) as Json;
        assert.equal(parsed_output, null);
        assert.deepEqual(read, whole);
      }),
      { numRuns: 40 },
    );
  });

  it("streams text then two tool calls in the events an Anthropic client expects", () => {
    const datas = [
      chunkOf({ role: "assistant", content: "" }),
      chunkOf({ content: "Let me " }),
      chunkOf({ content: "check." }),
      chunkOf({
        tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "f", arguments: "" } }],
      }),
      chunkOf({ tool_calls: [{ index: 0, function: { arguments: '{"x":' } }] }),
      chunkOf({ tool_calls: [{ index: 0, function: { arguments: "1}" } }] }),
      chunkOf({
        tool_calls: [{ index: 1, id: "call_b", type: "function", function: { name: "g", arguments: "{}" } }],
      }),
      chunkOf({}, "tool_calls"),
      chunkOf({}, null, { choices: [], usage: { prompt_tokens: 9, completion_tokens: 4 } }),
      "[DONE]",
    ];
    const { events } = translateStream(datas);
    assert.deepEqual(
      events.map((e) => e.data),
      [
        {
          type: "message_start",
          message: {
            id: "msg_gen-req1",
            type: "message",
            role: "assistant",
            model: "claude-sonnet-4-20250514",
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage: {
              input_tokens: 0,
              output_tokens: 0,
              cache_creation_input_tokens: 0,
              cache_read_input_tokens: 0,
            },
          },
        },
        { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
        { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Let me " } },
        { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "check." } },
        { type: "content_block_stop", index: 0 },
        {
          type: "content_block_start",
          index: 1,
          content_block: { type: "tool_use", id: "call_a", name: "f", input: {} },
        },
        { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '{"x":' } },
        { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: "1}" } },
        { type: "content_block_stop", index: 1 },
        {
          type: "content_block_start",
          index: 2,
          content_block: { type: "tool_use", id: "call_b", name: "g", input: {} },
        },
        { type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: "{}" } },
        { type: "content_block_stop", index: 2 },
        {
          type: "message_delta",
          delta: { stop_reason: "tool_use", stop_sequence: null },
          usage: {
            input_tokens: 9,
            output_tokens: 4,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
          },
        },
        { type: "message_stop" },
      ],
    );
  });

  it("sends a late piece of an interleaved call at its own block, which the SDK gathers", async () => {
    const call = (index: number, fields: Json) => chunkOf({ tool_calls: [{ index, ...fields }] });
    const datas = [
      call(0, { id: "call_a", function: { name: "f", arguments: '{"x"' } }),
      call(1, { id: "call_b", function: { name: "g", arguments: '{"y"' } }),
      call(0, { function: { arguments: ":1}" } }),
      call(1, { function: { arguments: ":2}" } }),
      chunkOf({}, "tool_calls"),
    ];
    const { text, events } = translateStream(datas);
    const late = events.find(
      (e) => e.event === "content_block_delta" && (e.data.delta as Json).partial_json === ":1}",
    );
    assert.equal(late?.data.index, 0);
    const final = await clientAnswering(text)
      .messages.stream({ model: "m", max_tokens: 1, messages: [{ role: "user", content: "Hi" }] })
      .finalMessage();
    assert.deepEqual(JSON.parse(JSON.stringify(final.content)), [
      { type: "tool_use", id: "call_a", name: "f", input: { x: 1 } },
      { type: "tool_use", id: "call_b", name: "g", input: { y: 2 } },
    ]);
    assert.equal(final.stop_reason, "tool_use");
  });

  it("closes at [DONE] when the relay passes it on, and sends nothing after", () => {
    const reader = new ChatToMessagesStream(request, defaults);
    reader.read(chunkOf({ content: "Hi" }));
    reader.read(chunkOf({}, "stop"));
    const closing = reader.read("[DONE]").send as string;
    assert.match(
      closing,
      /event: content_block_stop\n[\s\S]*event: message_delta\n[\s\S]*event: message_stop\n/,
    );
    assert.equal(reader.end(), "");
    const late = reader.read(
      chunkOf({}, null, { choices: [], usage: { prompt_tokens: 1, completion_tokens: 2 } }),
    );
    assert.equal(late.send, "");
    assert.deepEqual(late.usage, { prompt_tokens: 1, completion_tokens: 2 });
  });

  const failure =
    'event: error\ndata: {"type":"error","error":{"type":"api_error","message":"Upstream provider error"}}\n\n';

  it("ends with the fixed error event on an error chunk, without relaying the upstream's text", async () => {
    const reader = new ChatToMessagesStream(request, defaults);
    let text = reader.read(chunkOf({ content: "Par" })).send as string;
    const failed = reader.read(JSON.stringify({ error: { message: "secret upstream detail", code: 500 } }));
    assert.equal(failed.send, failure);
    text += failed.send;
    assert.equal(reader.read(chunkOf({ content: "more" })).send, "");
    assert.equal(reader.end(), "");
    assert.doesNotMatch(text, /secret/);
    await assert.rejects(
      clientAnswering(text)
        .messages.stream({ model: "m", max_tokens: 1, messages: [{ role: "user", content: "Hi" }] })
        .finalMessage(),
      (error: unknown) =>
        error instanceof Anthropic.APIError && /Upstream provider error/.test(String(error)),
    );
  });

  it("ends with the error event when the upstream closes without a finish reason, or finishes with error", () => {
    const cut = new ChatToMessagesStream(request, defaults);
    cut.read(chunkOf({ content: "Par" }));
    assert.equal(cut.end(), failure);

    const errored = new ChatToMessagesStream(request, defaults);
    errored.read(chunkOf({ content: "Par" }));
    assert.equal(errored.read(chunkOf({}, "error")).send, failure);
    assert.equal(errored.end(), "");

    // Nothing came at all: the start, then the error.
    const empty = new ChatToMessagesStream(request, defaults);
    const text = empty.end();
    assert.match(text, /^event: message_start\n/);
    assert.ok(text.endsWith(failure));
  });
});
