import "../helpers/property-seed.js";
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { type ChunkFacts, ChunkReader, parseChunk } from "../../src/gateway/surfaces/chat/stream-chunks.js";
import { countJsonParses } from "../helpers/json-parses.js";

/**
 * The relay reads each event of a streamed answer for its usage, its text's bytes and what to send
 * (docs/gateway.md#streaming); a chunk that differs from an earlier one only in its text is not
 * parsed again. These tests hold the reader to what parsing every chunk gives.
 */

const defaults = { id: "gen-request", created: 1_700_000_000, model: "meta-llama/llama-3.1-8b-instruct" };

/** Every event parsed (the reader without its shapes): the facts the reader must give. */
const parsedFacts = (data: string, clientWantsUsage: boolean): ChunkFacts =>
  parseChunk(data, defaults, clientWantsUsage).facts;

const chunk = (content: unknown, over: Record<string, unknown> = {}) =>
  JSON.stringify({
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    created: 1_690_000_000,
    model: "llama",
    choices: [{ index: 0, delta: { content }, finish_reason: null }],
    ...over,
  });

/** JSON.parse calls of the running test. */
const parses = countJsonParses();

function readAll(datas: string[], clientWantsUsage = false): { got: ChunkFacts[]; want: ChunkFacts[] } {
  const reader = new ChunkReader(defaults, clientWantsUsage);
  const got = datas.map((d) => reader.read(d));
  const counted = parses.count;
  const want = datas.map((d) => parsedFacts(d, clientWantsUsage));
  parses.count = counted;
  return { got, want };
}

describe("streamed chunks read by their shape (docs/gateway.md#streaming)", () => {
  it("a chunk that differs from an earlier one only in a plain text is not parsed, and reads as parsed", () => {
    const datas = ["Hello", " wor", "ld", " — é 🎉", ""].map((t) => chunk(t));
    const { got, want } = readAll(datas);
    assert.deepEqual(got, want);
    // The first is parsed, and once more to check its shape; the rest are read by it.
    assert.equal(parses.count, 2);
  });

  it("a text with a quote, an escape or a control character is parsed", () => {
    const datas = [chunk("a"), chunk('say "hi"'), chunk("back\\slash"), chunk("tab\there"), chunk("\u0001")];
    const { got, want } = readAll(datas);
    assert.deepEqual(got, want);
    assert.equal(parses.count, 2 + 4);
  });

  it("a chunk whose other fields differ is parsed: its usage, its finish and what it lacks are read", () => {
    const datas = [
      chunk("a"),
      chunk("b", { created: 1_690_000_001 }),
      chunk("c", { id: "" }),
      chunk("d", { system_fingerprint: null }),
      JSON.stringify({ ...JSON.parse(chunk("")), choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }),
      JSON.stringify({
        ...JSON.parse(chunk("")),
        choices: [],
        usage: { prompt_tokens: 3, completion_tokens: 7 },
      }),
      chunk("e", { usage: { prompt_tokens: 1, completion_tokens: 2 } }),
    ];
    for (const wants of [false, true]) {
      const { got, want } = readAll(datas, wants);
      assert.deepEqual(got, want);
    }
  });

  it("a content key that is not the choice's text gives no shape", () => {
    // The last `"content":"` in the text is another member's: varying it would not vary the text.
    const decoy = (text: string, other: string) =>
      `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"${text}"},"finish_reason":null}],"x":{"content":"${other}"}}`;
    const datas = [decoy("a", "a"), decoy("a", "b"), decoy("c", "b"), decoy("longer text", "b")];
    const { got, want } = readAll(datas);
    assert.deepEqual(got, want);
    assert.equal(parses.count, 4 + 4, "each chunk parsed, and each shape refused by its check");
  });

  it("an upstream whose chunks differ in more than their text is parsed after a few shapes", () => {
    const datas = Array.from({ length: 20 }, (_, i) => chunk(`t${i}`, { created: i }));
    const { got, want } = readAll(datas);
    assert.deepEqual(got, want);
    assert.equal(parses.count, 20 + 4);
  });

  it("any stream of chunks reads as every chunk parsed", () => {
    const text = fc.oneof(
      fc.string(),
      fc.string({ unit: "grapheme" }),
      fc.constantFrom("", '"', "\\", "\\n", "\u0000", "\n", "é", "🎉", '"content":"'),
    );
    const event = fc.oneof(
      { weight: 6, arbitrary: text.map((t) => chunk(t)) },
      text.map((t) => chunk(t, { created: 5 })),
      text.map((t) => chunk(t, { model: "" })),
      text.map((t) => chunk(t, { usage: { prompt_tokens: 1, completion_tokens: 2 } })),
      text.map((t) => JSON.stringify({ ...JSON.parse(chunk(t)), choices: [] })),
      text.map((t) => `${chunk(t).slice(0, -1)},"extra":${JSON.stringify(t)}}`),
      text.map((t) => chunk(t).replace('"content":', '"content": ')),
      fc.constant("not json"),
    );
    fc.assert(
      fc.property(fc.array(event, { maxLength: 30 }), fc.boolean(), (datas, wants) => {
        const { got, want } = readAll(datas, wants);
        assert.deepEqual(got, want);
      }),
      { numRuns: 300 },
    );
  });
  it("a parsed chunk: its usage read, the usage-only chunk kept back unless asked for, its text's UTF-8 bytes counted, missing fields filled", () => {
    const usageOnly = JSON.stringify({
      ...JSON.parse(chunk("")),
      choices: [],
      usage: { prompt_tokens: 3, completion_tokens: 7.2 },
    });
    assert.deepEqual(parseChunk(usageOnly, defaults, false).facts, {
      send: "",
      usage: { prompt_tokens: 3, completion_tokens: 8 },
      contentBytes: 0,
    });
    assert.equal(parseChunk(usageOnly, defaults, true).facts.send, null);
    assert.deepEqual(parseChunk(chunk("é🎉"), defaults, false).facts, {
      send: null,
      usage: undefined,
      contentBytes: 6,
    });
    const lacking = parseChunk(chunk("a", { id: "", model: "" }), defaults, false).facts.send ?? "";
    assert.deepEqual(JSON.parse(lacking.slice("data: ".length)), {
      ...JSON.parse(chunk("a")),
      id: defaults.id,
      model: defaults.model,
    });
    assert.deepEqual(parseChunk("not json", defaults, false).facts, {
      send: null,
      usage: undefined,
      contentBytes: 0,
    });
  });
});
