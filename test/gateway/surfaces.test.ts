import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ChatBody } from "../../src/domain/chat-texts.js";
import { forwardedText } from "../../src/gateway/forward-body.js";
import { type EmbeddingsBody, tokenInput } from "../../src/gateway/surfaces/embeddings/index.js";
import {
  chatSurface,
  embeddingsSurface,
  FORWARDED_ROUTES,
  SURFACES,
} from "../../src/gateway/surfaces/index.js";

/**
 * The registry and the chat surface (CONTRIBUTING.md#adding-a-surface). The governed path's
 * behaviour through the chat surface is proven by the gateway tests (test/http/gateway*.test.ts);
 * these hold what the seam itself promises.
 */
describe("the surfaces registry (CONTRIBUTING.md#adding-a-surface)", () => {
  it("names each surface and each route once, and reads every surface's route as forwarded", () => {
    const ids = SURFACES.map((s) => s.id);
    const routes = SURFACES.map((s) => s.route);
    assert.equal(new Set(ids).size, ids.length);
    assert.equal(new Set(routes).size, routes.length);
    assert.deepEqual([...FORWARDED_ROUTES].sort(), [...routes].sort());
    for (const s of SURFACES) {
      assert.match(s.route, /^\/api\/v1\//);
      assert.match(s.upstreamPath, /^\/[^/]/);
    }
  });

  it("serves chat completions at the route and the upstream path the service always used", () => {
    assert.ok(SURFACES.includes(chatSurface));
    assert.equal(chatSurface.route, "/api/v1/chat/completions");
    assert.equal(chatSurface.upstreamPath, "/chat/completions");
    assert.equal(chatSurface.streamTerminator, "[DONE]");
    assert.equal(chatSurface.streamEnd, "data: [DONE]\n\n");
  });
});

describe("the chat surface changes a body only where it must (docs/gateway.md#what-happens-to-a-request)", () => {
  const body: ChatBody = {
    model: "a/b",
    messages: [{ role: "user", content: "hello" }],
    stream_options: { include_usage: false, other: 1 },
  };

  it("forwards the very body it was given when nothing is capped and nothing streams, so the client's text goes as sent", () => {
    const capped = chatSurface.withOutputCap(body, null);
    assert.equal(capped, body);
    const forwarded = chatSurface.forwardBody(capped, body, false);
    assert.equal(forwarded, body);
    const text = JSON.stringify(body, null, 1);
    assert.equal(forwardedText(text, body, forwarded, "x/y"), text.replace('"a/b"', '"x/y"'));
  });

  it("asks a stream for its usage, keeping the client's other stream options, and leaves the body it was given as it was", () => {
    const forwarded = chatSurface.forwardBody(body, body, true);
    assert.notEqual(forwarded, body);
    assert.deepEqual(forwarded.stream_options, { include_usage: true, other: 1 });
    assert.deepEqual(body.stream_options, { include_usage: false, other: 1 });
  });

  it("reads the model, the stream flag, the message count and the output limit from the chat fields", () => {
    const asked = { ...body, stream: true, max_tokens: 50, max_completion_tokens: 40 };
    assert.equal(chatSurface.model(asked), "a/b");
    assert.equal(chatSurface.streams(asked), true);
    assert.equal(chatSurface.streams(body), false);
    assert.equal(chatSurface.messageCount(asked), 1);
    assert.equal(chatSurface.maxOutputTokens(asked), 40);
    assert.equal(chatSurface.maxOutputTokens(body), null);
    const capped = chatSurface.withOutputCap(asked, 10);
    assert.equal(capped.max_tokens, 10);
    assert.equal(capped.max_completion_tokens, 10);
    assert.equal(chatSurface.withOutputCap(body, 10).max_tokens, 10);
  });
});

describe("the embeddings surface (docs/gateway.md#embeddings)", () => {
  const body: EmbeddingsBody = { model: "openai/text-embedding-3-small", input: ["one", "two"], user: "u" };

  it("is registered at its route and upstream path, and never streams", () => {
    assert.ok(SURFACES.includes(embeddingsSurface));
    assert.equal(embeddingsSurface.route, "/api/v1/embeddings");
    assert.equal(embeddingsSurface.upstreamPath, "/embeddings");
    assert.equal(embeddingsSurface.streams({ ...body, stream: true }), false);
  });

  it("reads every input string as the user's text, its index as its message; user as on chat", () => {
    const texts = embeddingsSurface.collectTexts(body);
    const inputs = texts.filter((t) => t.role === "user");
    assert.deepEqual(
      inputs.map((t) => [t.text, t.message]),
      [
        ["one", 0],
        ["two", 1],
      ],
    );
    assert.ok(texts.some((t) => t.text === "u" && t.role !== "user"));
    const single = embeddingsSurface.collectTexts({ model: "m", input: "solo" });
    assert.deepEqual(
      single.map((t) => [t.text, t.role, t.message]),
      [["solo", "user", 0]],
    );
  });

  it("writes a redaction back into the input it came from, leaving the body it was given as it was", () => {
    const texts = embeddingsSurface.collectTexts(body);
    const two = texts.find((t) => t.text === "two");
    assert.ok(two);
    const redacted = embeddingsSurface.replaceTexts(body, [{ text: two, value: "[X]" }], texts);
    assert.deepEqual(redacted.input, ["one", "[X]"]);
    assert.deepEqual(body.input, ["one", "two"]);
    assert.equal(embeddingsSurface.replaceTexts(body, [], texts), body);
  });

  it("reserves no output and changes nothing on the way out, so the client's text goes as sent", () => {
    assert.equal(embeddingsSurface.maxOutputTokens(body), 0);
    assert.equal(embeddingsSurface.withOutputCap(body, 5), body);
    assert.equal(embeddingsSurface.forwardBody(body, body, false), body);
    assert.equal(embeddingsSurface.messageCount(body), 2);
    assert.equal(embeddingsSurface.messageCount({ model: "m", input: [1, 2, 3] }), 1);
  });

  it("points at token arrays, which no filter can read, and at nothing for text", () => {
    assert.equal(tokenInput({ model: "m", input: [1, 2] }), "/input");
    assert.equal(tokenInput({ model: "m", input: [[1], [2]] }), "/input/0");
    assert.equal(tokenInput(body), undefined);
    assert.equal(tokenInput({ model: "m", input: "x" }), undefined);
  });

  it("reads usage from prompt_tokens, with no output tokens", () => {
    assert.deepEqual(embeddingsSurface.usageOf({ usage: { prompt_tokens: 7.2, total_tokens: 8 } }), {
      prompt_tokens: 8,
      completion_tokens: 0,
    });
    assert.equal(embeddingsSurface.usageOf({ usage: {} }), undefined);
    assert.equal(embeddingsSurface.usageOf(null), undefined);
  });
});
