import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { describe, it } from "node:test";
import { OpenRouter } from "@openrouter/sdk";
import type { ChatResult, ChatStreamChunk } from "@openrouter/sdk/models";
import OpenAI from "openai";
import { TEST_DATABASE_KIND } from "../helpers/server.js";
import { behindUpstream, LLAMA, SONNET } from "./gateway-support.js";

/**
 * An upstream (a real HTTP server on a loopback port) that answers with as little as a chat answer
 * can carry: no id, object, created, model, system_fingerprint, index or finish_reason.
 */
function bareUpstream(): Promise<Server> {
  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (c) => {
      raw += c;
    });
    req.on("end", () => {
      const body = JSON.parse(raw) as { stream?: boolean };
      const usage = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 };
      if (body.stream !== true) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ choices: [{ message: { role: "assistant", content: "bare hi" } }], usage }));
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(
        `data: ${JSON.stringify({ choices: [{ delta: { role: "assistant", content: "bare " } }] })}\n\n`,
      );
      res.write(
        `data: ${JSON.stringify({ choices: [{ delta: { content: "hi" }, finish_reason: "stop" }] })}\n\n`,
      );
      res.write(`data: ${JSON.stringify({ choices: [], usage, system_fingerprint: null })}\n\n`);
      res.end("data: [DONE]\n\n");
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

describe(`OpenAI clients against the governed request path, on ${TEST_DATABASE_KIND} (docs/gateway.md#answer-fields)`, () => {
  const bare = behindUpstream(bareUpstream);

  const openai = () => new OpenAI({ apiKey: bare.secret, baseURL: bare.server.baseUrl, maxRetries: 0 });

  it("a completion carries id, object, created, model and system_fingerprint even when the upstream sends none of them", async () => {
    const res = await openai().chat.completions.create({
      model: LLAMA,
      messages: [{ role: "user", content: "hi" }],
    });
    assert.equal(res.object, "chat.completion");
    assert.match(res.id, /^gen-/);
    assert.ok(Number.isInteger(res.created) && res.created > 1_600_000_000, String(res.created));
    assert.equal(res.model, LLAMA);
    assert.equal(res.system_fingerprint, null);
    assert.ok("system_fingerprint" in res);
    assert.equal(res.choices[0]?.index, 0);
    assert.equal(res.choices[0]?.finish_reason, null);
    assert.equal(res.choices[0]?.message.content, "bare hi");
    assert.equal(res.usage?.total_tokens, 5);
  });

  it("a stream's chunks each carry one id, object chat.completion.chunk, created and model, with the upstream's text unchanged", async () => {
    const stream = await openai().chat.completions.create({
      model: LLAMA,
      messages: [{ role: "user", content: "hi" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    assert.equal(chunks.length, 3);
    assert.equal(new Set(chunks.map((c) => c.id)).size, 1);
    for (const c of chunks) {
      assert.equal(c.object, "chat.completion.chunk");
      assert.ok(Number.isInteger(c.created));
      assert.equal(c.model, LLAMA);
    }
    assert.equal(chunks.map((c) => c.choices[0]?.delta.content ?? "").join(""), "bare hi");
    assert.equal(chunks[1]?.choices[0]?.finish_reason, "stop");
    assert.equal(chunks[2]?.usage?.total_tokens, 5);
  });

  it("the reference SDK validates the same bare answers, both ways (docs/api.md#the-reference-sdk)", async () => {
    const client = new OpenRouter({
      apiKey: bare.secret,
      serverURL: bare.server.baseUrl,
      retryConfig: { strategy: "none" },
    });
    const whole = (await client.chat.send({
      chatRequest: { model: LLAMA, messages: [{ role: "user", content: "hi" }] },
    })) as ChatResult;
    assert.equal(whole.systemFingerprint, null);
    assert.equal(whole.choices[0]?.message.content, "bare hi");
    const stream = await client.chat.send({
      chatRequest: {
        model: LLAMA,
        messages: [{ role: "user", content: "hi" }],
        stream: true,
        streamOptions: { includeUsage: true },
      },
    });
    const chunks: ChatStreamChunk[] = [];
    for await (const c of stream as AsyncIterable<ChatStreamChunk>) chunks.push(c);
    assert.equal(chunks.length, 3);
    assert.equal(chunks[2]?.systemFingerprint, undefined);
  });

  it("models.list lists the catalog as OpenAI model objects and models.retrieve returns one by slug", async () => {
    const client = openai();
    const ids: string[] = [];
    for await (const m of client.models.list()) {
      assert.equal(m.object, "model");
      ids.push(m.id);
    }
    assert.ok(ids.includes(SONNET));
    const one = await client.models.retrieve(SONNET);
    assert.equal(one.id, SONNET);
    assert.equal(one.object, "model");
    assert.equal(one.owned_by, "anthropic");
    assert.equal(typeof one.created, "number");
    await assert.rejects(client.models.retrieve("nobody/nothing"), (err: unknown) => {
      assert.ok(err instanceof OpenAI.NotFoundError, String(err));
      assert.deepEqual(err.error, { code: 404, message: "Resource not found" });
      return true;
    });
  });
});
