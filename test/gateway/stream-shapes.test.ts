import "../helpers/property-seed.js";
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { ChunkShape } from "../../src/gateway/chunk-shape.js";
import { eventData } from "../../src/gateway/relay.js";
import { MessagesEventReader, plainTextDelta } from "../../src/gateway/surfaces/messages/answer.js";
import { ChatToMessagesStream } from "../../src/gateway/surfaces/messages/translate-stream.js";
import { ChatToResponsesStream } from "../../src/gateway/surfaces/responses/translate-stream.js";
import type { EventFacts } from "../../src/gateway/surfaces/surface.js";
import { countJsonParses } from "../helpers/json-parses.js";

/**
 * The stream readers of the Messages door read their most frequent events without parsing them
 * (docs/gateway.md#stream-fast-paths): an `event:` line and one `data:` line without splitting them, a text
 * delta written as Anthropic writes it by its text, and a chat chunk differing from an earlier one
 * only in its text by that text. These tests hold each reader to what parsing every event gives.
 */

const defaults = { id: "gen-request", created: 1_700_000_000, model: "anthropic/claude-sonnet-4.5" };

/** JSON.parse calls of the running test. */
const parses = countJsonParses();
/** JSON.parse itself, for a test that parses without counting. */
const realParse = JSON.parse;

const text = fc.oneof(
  fc.string(),
  fc.string({ unit: "grapheme" }),
  fc.constantFrom("", '"', "\\", "\\n", "\u0000", "\n", "é", "🎉", '"}}', '"content":"', "word "),
);

describe("an event's data (docs/gateway.md#stream-fast-paths)", () => {
  /** The SSE rule written out: the values of the `data:` lines, joined by newlines. */
  const reference = (event: string) =>
    event
      .split("\n")
      .filter((l) => l.startsWith("data:"))
      .map((l) => l.slice(5).trimStart())
      .join("\n");

  it("is the values of its data lines, however few or many lines it has (property)", () => {
    const line = fc.oneof(
      text.map((t) => `data: ${t.replaceAll("\n", " ")}`),
      text.map((t) => `data:${t.replaceAll("\n", " ")}`),
      text.map((t) => `event: ${t.replaceAll("\n", " ")}`),
      fc.constantFrom("event: content_block_delta", ": comment", "id: 7", "data", ""),
    );
    fc.assert(
      fc.property(fc.array(line, { minLength: 1, maxLength: 4 }), (lines) => {
        const event = lines.join("\n");
        assert.equal(eventData(event), reference(event));
      }),
      { numRuns: 1000 },
    );
  });

  it("an event line and one data line: the data", () => {
    assert.equal(eventData('event: ping\ndata: {"type":"ping"}'), '{"type":"ping"}');
    assert.equal(eventData("event: x\ndata: a\ndata: b"), "a\nb");
    assert.equal(eventData("event: x"), "");
  });
});

/** Anthropic's text delta, written as its API writes it. */
const textDelta = (t: string, index = 0) =>
  JSON.stringify({ type: "content_block_delta", index, delta: { type: "text_delta", text: t } });

describe("a Messages stream's text deltas (docs/gateway.md#stream-fast-paths)", () => {
  it("written as Anthropic writes them, with a plain text, are read without parsing", () => {
    const reader = new MessagesEventReader(defaults);
    const facts = ["Hello ", "wörld ", "🎉", ""].map((t, i) => reader.read(textDelta(t, i)));
    assert.deepEqual(
      facts.map((f) => f.contentBytes),
      [6, 7, 4, 0],
    );
    assert.ok(facts.every((f) => f.send === null && f.usage === undefined));
    assert.equal(parses.count, 0);
  });

  it("any data read by its text alone parses to a text delta of that text (property)", () => {
    const data = fc.oneof(
      fc.tuple(text, fc.nat()).map(([t, i]) => textDelta(t, i)),
      text.map((t) => textDelta(t).replace('"index":0', '"index":00')),
      text.map((t) => textDelta(t).replace('"index":0', '"index":-1')),
      text.map((t) => textDelta(t).replace('"index":0', '"index":0.5')),
      text.map((t) => `${textDelta(t).slice(0, -2)},"x":1}}`),
      text.map((t) => `${textDelta(t)} `),
      text.map((t) => textDelta(t).replace("text_delta", "thinking_delta")),
      text.map((t) => textDelta(t).replace('"text":', '"text": ')),
      text.map((t) => `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"${t}"}}`),
      text,
    );
    fc.assert(
      fc.property(data, (d) => {
        const read = plainTextDelta(d);
        if (read === undefined) return;
        const parsed = realParse(d) as { type: string; delta: { type: string; text: unknown } };
        assert.equal(parsed.type, "content_block_delta");
        assert.equal(parsed.delta.type, "text_delta");
        assert.equal(parsed.delta.text, read);
        assert.equal(Object.keys(parsed).join(), "type,index,delta");
        assert.equal(Object.keys(parsed.delta).join(), "type,text");
      }),
      { numRuns: 1000 },
    );
  });

  it("a text with a quote, an escape or a control character is parsed, and counted alike", () => {
    const reader = new MessagesEventReader(defaults);
    for (const t of ['say "hi"', "back\\slash", "tab\there", "\u0001"])
      assert.equal(reader.read(textDelta(t)).contentBytes, Buffer.byteLength(t));
    assert.equal(parses.count, 4);
  });
});

/** A chat chunk as the local upstream and most providers write it. */
const chunk = (delta: Record<string, unknown>, over: Record<string, unknown> = {}, finish: unknown = null) =>
  JSON.stringify({
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    created: 1_690_000_000,
    model: "llama",
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...over,
  });

/** Chat chunks of every kind, most of them plain text chunks of one shape. */
const chatEvent = fc.oneof(
  { weight: 8, arbitrary: text.map((t) => chunk({ content: t })) },
  text.map((t) => chunk({ role: "assistant", content: t })),
  text.map((t) => chunk({ content: t }, { model: "other" })),
  text.map((t) => chunk({ content: t }, {}, "stop")),
  text.map((t) => chunk({ content: t }, {}, "length")),
  text.map((t) => chunk({ content: t }, {}, "error")),
  text.map((t) => chunk({ content: t, refusal: t })),
  text.map((t) => chunk({ refusal: t })),
  text.map((t) => chunk({ content: t }, { usage: { prompt_tokens: 1, completion_tokens: 2 } })),
  text.map((t) => chunk({ content: t }, { error: { message: t } })),
  text.map((t) =>
    chunk({
      content: t,
      tool_calls: [{ index: 0, id: "call_1", function: { name: "f", arguments: t } }],
    }),
  ),
  text.map((t) => chunk({ tool_calls: [{ index: 1, function: { arguments: t } }] })),
  // Chunks whose other members stay the same while their text varies: only their text is
  // varied, so each reads in the shape an earlier one gave, and must not be read by it.
  text.map((t) =>
    chunk({
      content: t,
      tool_calls: [{ index: 0, id: "call_1", function: { name: "f", arguments: "{}" } }],
    }),
  ),
  text.map((t) => chunk({ content: t, refusal: "No." })),
  text.map((t) => chunk({ content: t, reasoning: "Thinking." })),
  text.map((t) => chunk({ reasoning_content: t })),
  text.map((t) => chunk({ content: t }, { usage: { prompt_tokens: 5, completion_tokens: 6 } })),
  text.map((t) => chunk({ content: t }, { error: "upstream" })),
  text.map((t) =>
    JSON.stringify({
      id: "c",
      choices: [
        { index: 1, delta: { content: "x" } },
        { index: 0, delta: { content: t } },
      ],
    }),
  ),
  text.map((t) => JSON.stringify({ id: "c", choices: [{ index: 1, delta: { content: t } }] })),
  text.map((t) => `${chunk({ content: t }).slice(0, -1)},"extra":${JSON.stringify(t)}}`),
  fc.constant(chunk({}, { choices: [], usage: { prompt_tokens: 3, completion_tokens: 7 } })),
  fc.constantFrom("not json", "[DONE]", "{}", "null"),
);

/** The translation as it reads when every chunk is parsed: its shape never matches. */
function everyChunkParsed(): ChatToMessagesStream {
  const stream = new ChatToMessagesStream({ model: "m" }, defaults);
  const never = new (class extends ChunkShape {
    override match(): string | undefined {
      return undefined;
    }
  })();
  (stream as unknown as { shape: ChunkShape }).shape = never;
  return stream;
}

function translate(stream: ChatToMessagesStream, datas: string[]): { facts: EventFacts[]; end: string } {
  const facts = datas.map((d) => stream.read(d));
  return { facts, end: stream.end() };
}

describe("a chat stream translated to Messages, read by its chunks' shape (docs/gateway.md#stream-fast-paths)", () => {
  it("text chunks that differ only in a plain text are not parsed, and translate as parsed", () => {
    const datas = ["Hello", " wor", "ld", " — é 🎉"].map((t) => chunk({ content: t }));
    datas.push(
      chunk({}, {}, "stop"),
      chunk({}, { choices: [], usage: { prompt_tokens: 3, completion_tokens: 4 } }),
    );
    const got = translate(new ChatToMessagesStream({ model: "m" }, defaults), datas);
    // The first text chunk, once more for its shape's check, the finish and the usage.
    assert.equal(parses.count, 4);
    assert.deepEqual(got, translate(everyChunkParsed(), datas));
  });

  it("any chat stream translates as every chunk parsed (property)", () => {
    fc.assert(
      fc.property(fc.array(chatEvent, { maxLength: 30 }), (datas) => {
        const got = translate(new ChatToMessagesStream({ model: "m" }, defaults), datas);
        assert.deepEqual(got, translate(everyChunkParsed(), datas));
      }),
      { numRuns: 400 },
    );
  });
});

describe("a chat stream translated to Messages, event by event (docs/gateway.md#messages-translation-stream)", () => {
  /** Each event sent: one `event:` line and one `data:` line of JSON of that type. */
  function events(sent: string): { type: string; data: Record<string, unknown> }[] {
    assert.ok(sent.endsWith("\n\n"));
    return sent
      .slice(0, -2)
      .split("\n\n")
      .map((event) => {
        const [name = "", data = "", ...rest] = event.split("\n");
        assert.deepEqual(rest, []);
        assert.ok(name.startsWith("event: ") && data.startsWith("data: "), event);
        const parsed = realParse(data.slice(6)) as Record<string, unknown>;
        assert.equal(parsed.type, name.slice(7));
        return { type: name.slice(7), data: parsed };
      });
  }

  it("its text deltas, plain or escaped, around a tool call, gather to the text as sent (property)", () => {
    fc.assert(
      fc.property(fc.array(text, { maxLength: 20 }), fc.nat(20), (texts, at) => {
        const call = chunk({
          tool_calls: [{ index: 0, id: "call_1", function: { name: "f", arguments: '{"a":' } }],
        });
        const datas = texts.map((t) => chunk({ content: t }));
        datas.splice(Math.min(at, datas.length), 0, call);
        datas.push(chunk({}, {}, "stop"));
        const stream = new ChatToMessagesStream({ model: "m" }, defaults);
        const sent = datas.map((d) => stream.read(d).send ?? "").join("") + stream.end();
        const got = events(sent);
        // Gathered by index, as a client gathers a message's blocks.
        const blocks = new Map<number, string>();
        for (const { type, data } of got) {
          if (type !== "content_block_delta") continue;
          const delta = data.delta as { type: string; text?: string; partial_json?: string };
          const piece = delta.type === "text_delta" ? delta.text : delta.partial_json;
          blocks.set(data.index as number, (blocks.get(data.index as number) ?? "") + piece);
        }
        const starts = got.filter((e) => e.type === "content_block_start");
        const textOf = starts
          .filter((e) => (e.data.content_block as { type: string }).type === "text")
          .map((e) => blocks.get(e.data.index as number) ?? "")
          .join("");
        assert.equal(textOf, texts.join(""));
        assert.equal(got.filter((e) => e.type === "content_block_stop").length, starts.length);
        assert.deepEqual(
          got.slice(-2).map((e) => e.type),
          ["message_delta", "message_stop"],
        );
      }),
      { numRuns: 300 },
    );
  });
});

/** The Responses translation as it reads when every chunk is parsed: its shape never matches. */
function everyChunkParsedResponses(): ChatToResponsesStream {
  const stream = new ChatToResponsesStream({ model: "m" }, defaults, () => 1_700_000_001);
  const never = new (class extends ChunkShape {
    override match(): string | undefined {
      return undefined;
    }
  })();
  (stream as unknown as { shape: ChunkShape }).shape = never;
  return stream;
}

describe("a chat stream translated to Responses, read by its chunks' shape (docs/gateway.md#stream-fast-paths)", () => {
  const run = (stream: ChatToResponsesStream, datas: string[]) => ({
    facts: datas.map((d) => stream.read(d)),
    end: stream.finish(),
  });

  it("text chunks that differ only in a plain text are not parsed, and translate as parsed", () => {
    const datas = ["Hello", " wor", "ld", " — é 🎉"].map((t) => chunk({ content: t }));
    datas.push(chunk({}, {}, "stop"));
    const got = run(new ChatToResponsesStream({ model: "m" }, defaults, () => 1_700_000_001), datas);
    // The first text chunk, once more for its shape's check, and the finish.
    assert.equal(parses.count, 3);
    assert.deepEqual(got, run(everyChunkParsedResponses(), datas));
  });

  it("any chat stream translates as every chunk parsed (property)", () => {
    fc.assert(
      fc.property(fc.array(chatEvent, { maxLength: 30 }), (datas) => {
        const got = run(new ChatToResponsesStream({ model: "m" }, defaults, () => 1_700_000_001), datas);
        assert.deepEqual(got, run(everyChunkParsedResponses(), datas));
      }),
      { numRuns: 400 },
    );
  });
});

describe("a chunk that does more than carry its text is never read by its shape (docs/gateway.md#stream-fast-paths)", () => {
  // Each kind repeated with only its text varied, so every chunk after the first is in its shape.
  const kinds: [string, (t: string) => string][] = [
    ["reasoning", (t) => chunk({ content: t, reasoning: "Thinking." })],
    ["refusal", (t) => chunk({ content: t, refusal: "No." })],
    [
      "tool call",
      (t) => chunk({ content: t, tool_calls: [{ index: 0, id: "c", function: { arguments: "{}" } }] }),
    ],
    ["usage", (t) => chunk({ content: t }, { usage: { prompt_tokens: 1, completion_tokens: 2 } })],
    ["finish", (t) => chunk({ content: t }, {}, "length")],
    ["second choice", (t) => JSON.stringify({ id: "c", choices: [{ index: 1, delta: { content: t } }] })],
  ];
  for (const [name, make] of kinds) {
    it(`${name}: translated to Messages and to Responses as every chunk parsed`, () => {
      const datas = ["one ", "two ", "three"].map(make);
      assert.deepEqual(
        translate(new ChatToMessagesStream({ model: "m" }, defaults), datas),
        translate(everyChunkParsed(), datas),
      );
      const responses = (stream: ChatToResponsesStream) => ({
        facts: datas.map((d) => stream.read(d)),
        end: stream.finish(),
      });
      assert.deepEqual(
        responses(new ChatToResponsesStream({ model: "m" }, defaults, () => 1_700_000_001)),
        responses(everyChunkParsedResponses()),
      );
    });
  }
});
