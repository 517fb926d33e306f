import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  ask,
  chat,
  type GatewayBench,
  GPT_41,
  LLAMA,
  orgWithKey,
  post,
  SONNET,
  startGatewayBench,
} from "./gateway-support.js";

/**
 * Prompt tokens a provider reports as written to or read from its cache are charged at the
 * catalog's cache prices where the model has them, else at the prompt price
 * (docs/gateway.md#cache-prices). Sonnet 4.5: prompt 3, cache write 3.75, cache read 0.30,
 * completion 15 micro-dollars a token.
 */

/** 100 uncached, 1000 written and 10,000 read prompt tokens, 10 output tokens. */
const CACHED = {
  input_tokens: 100,
  cache_creation_input_tokens: 1000,
  cache_read_input_tokens: 10_000,
  output_tokens: 10,
};
/** 100 × 3 + 1000 × 3.75 + 10,000 × 0.30 + 10 × 15. */
const SONNET_CACHED_MICROS = 300 + 3750 + 3000 + 150;
/** The same tokens all at the prompt price: 11,100 × 3 + 10 × 15. */
const SONNET_UNCACHED_MICROS = 11_100 * 3 + 150;

const messages = (model: string, extra: Record<string, unknown> = {}) => ({
  model,
  max_tokens: 64,
  messages: [{ role: "user", content: "cached?" }],
  ...extra,
});

function sse(type: string, data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

describe("cache token prices (docs/gateway.md#cache-prices)", () => {
  let bench: GatewayBench;
  before(async () => {
    bench = await startGatewayBench();
  });
  after(async () => {
    await bench.close();
  });

  async function charged(keyHash: string): Promise<number[]> {
    const rows = await bench.server.deps.db
      .selectFrom("spend_ledger")
      .select(["cost_micros", "prompt_tokens"])
      .where("key_hash", "=", keyHash)
      .execute();
    return rows.map((r) => Number(r.cost_micros));
  }

  async function scripted<T>(answer: Record<string, unknown>, run: () => Promise<T>): Promise<T> {
    bench.script.next = () => answer;
    try {
      return await run();
    } finally {
      bench.script.next = undefined;
    }
  }

  it("a Messages answer with cache counts is charged the cache write and read prices, not the prompt price", async () => {
    const { key } = await orgWithKey(bench);
    const res = await scripted(
      {
        body: { type: "message", role: "assistant", content: [{ type: "text", text: "hit" }], usage: CACHED },
      },
      () => post(bench.server, "/api/v1/messages", key.secret, messages(SONNET)),
    );
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(await charged(key.hash), [SONNET_CACHED_MICROS]);
    assert.notEqual(SONNET_CACHED_MICROS, SONNET_UNCACHED_MICROS);
  });

  it("a streamed Messages answer: the cache counts of message_start are charged with the last message_delta's output", async () => {
    const { key } = await orgWithKey(bench);
    const message = {
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-5-20250929",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...CACHED, output_tokens: 1 },
    };
    const events = [
      sse("message_start", { message }),
      sse("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
      sse("content_block_delta", { index: 0, delta: { type: "text_delta", text: "hit" } }),
      sse("content_block_stop", { index: 0 }),
      sse("message_delta", {
        delta: { stop_reason: "end_turn", stop_sequence: null },
        usage: { output_tokens: 10 },
      }),
      sse("message_stop", {}),
    ];
    const res = await scripted({ events }, () =>
      post(bench.server, "/api/v1/messages", key.secret, messages(SONNET, { stream: true })),
    );
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(await charged(key.hash), [SONNET_CACHED_MICROS]);
  });

  it("chat completions: prompt_tokens_details' cached and written tokens are priced alike", async () => {
    const { key } = await orgWithKey(bench);
    const body = {
      id: "c1",
      object: "chat.completion",
      created: 1,
      model: SONNET,
      choices: [{ index: 0, message: { role: "assistant", content: "hit" }, finish_reason: "stop" }],
      usage: {
        prompt_tokens: 11_100,
        completion_tokens: 10,
        prompt_tokens_details: { cached_tokens: 10_000, cache_write_tokens: 1000 },
      },
    };
    const res = await scripted({ body }, () => chat(bench.server, key.secret, ask("cached?")));
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(await charged(key.hash), [SONNET_CACHED_MICROS]);
  });

  /** GPT-4.1: prompt 2, cached input 0.5, completion 8 micro-dollars a token. */
  const GPT_CACHED_MICROS = 1100 * 2 + 10_000 * 0.5 + 10 * 8;
  const responsesUsage = {
    input_tokens: 11_100,
    input_tokens_details: { cached_tokens: 10_000 },
    output_tokens: 10,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 11_110,
  };
  const response = (status: string) => ({
    id: "resp_1",
    object: "response",
    created_at: 1,
    status,
    model: "gpt-4.1",
    output: [
      {
        id: "msg_1",
        type: "message",
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text: "hit", annotations: [] }],
      },
    ],
    usage: responsesUsage,
  });

  it("the Responses door: input_tokens_details' cached tokens are charged at the cache read price, answered whole", async () => {
    const { key } = await orgWithKey(bench);
    const res = await scripted({ body: response("completed") }, () =>
      post(bench.server, "/api/v1/responses", key.secret, { model: GPT_41, input: "cached?" }),
    );
    assert.equal(res.status, 200, res.text);
    assert.equal(bench.received.at(-1)?.path.endsWith("/responses"), true, "forwarded natively");
    assert.deepEqual(await charged(key.hash), [GPT_CACHED_MICROS]);
    assert.notEqual(GPT_CACHED_MICROS, 11_100 * 2 + 10 * 8);
  });

  it("the Responses door, streamed: the final response's cached tokens are charged at the cache read price", async () => {
    const { key } = await orgWithKey(bench);
    const events = [
      sse("response.created", {
        sequence_number: 0,
        response: { ...response("in_progress"), output: [], usage: null },
      }),
      sse("response.output_text.delta", {
        sequence_number: 1,
        item_id: "msg_1",
        output_index: 0,
        content_index: 0,
        delta: "hit",
      }),
      sse("response.completed", { sequence_number: 2, response: response("completed") }),
    ];
    const res = await scripted({ events }, () =>
      post(bench.server, "/api/v1/responses", key.secret, { model: GPT_41, input: "cached?", stream: true }),
    );
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(await charged(key.hash), [GPT_CACHED_MICROS]);
  });

  /** A chat usage of GPT-4.1's answer: 11,100 prompt tokens of which 10,000 read from the cache. */
  const chatCachedUsage = {
    prompt_tokens: 11_100,
    completion_tokens: 10,
    prompt_tokens_details: { cached_tokens: 10_000 },
  };
  const chatChunk = (extra: Record<string, unknown>) =>
    `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "gpt-4.1", ...extra })}\n\n`;
  const chatEvents = [
    chatChunk({ choices: [{ index: 0, delta: { role: "assistant", content: "hit" }, finish_reason: null }] }),
    chatChunk({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }),
    chatChunk({ choices: [], usage: chatCachedUsage }),
    "data: [DONE]\n\n",
  ];

  it("chat completions, streamed: the usage chunk's cached tokens are charged at the cache read price", async () => {
    const { key } = await orgWithKey(bench);
    const res = await scripted({ events: chatEvents }, () =>
      chat(bench.server, key.secret, { ...ask("cached?"), model: GPT_41, stream: true }),
    );
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(await charged(key.hash), [GPT_CACHED_MICROS]);
  });

  it("the Messages door translated to chat: the chat answer's cached tokens are charged at the cache read price and shown as cache_read_input_tokens", async () => {
    const { key } = await orgWithKey(bench);
    const body = {
      id: "c1",
      object: "chat.completion",
      created: 1,
      model: "gpt-4.1",
      choices: [{ index: 0, message: { role: "assistant", content: "hit" }, finish_reason: "stop" }],
      usage: chatCachedUsage,
    };
    const res = await scripted({ body }, () =>
      post(bench.server, "/api/v1/messages", key.secret, messages(GPT_41)),
    );
    assert.equal(res.status, 200, res.text);
    assert.equal(bench.received.at(-1)?.path.endsWith("/chat/completions"), true, "translated to chat");
    const usage = (res.body as { usage: Record<string, number> }).usage;
    assert.equal(usage.cache_read_input_tokens, 10_000);
    assert.equal(usage.input_tokens, 1100);
    assert.deepEqual(await charged(key.hash), [GPT_CACHED_MICROS]);
  });

  it("the Messages door translated to chat, streamed: the usage chunk's cached tokens are charged at the cache read price", async () => {
    const { key } = await orgWithKey(bench);
    const res = await scripted({ events: chatEvents }, () =>
      post(bench.server, "/api/v1/messages", key.secret, messages(GPT_41, { stream: true })),
    );
    assert.equal(res.status, 200, res.text);
    assert.equal(bench.received.at(-1)?.path.endsWith("/chat/completions"), true, "translated to chat");
    const delta =
      res.text
        .split("\n")
        .filter((l) => l.includes('"message_delta"'))
        .at(-1) ?? "";
    assert.equal(
      (JSON.parse(delta.slice(6)) as { usage: Record<string, number> }).usage.cache_read_input_tokens,
      10_000,
    );
    assert.deepEqual(await charged(key.hash), [GPT_CACHED_MICROS]);
  });

  it("a model without cache prices charges its cached tokens at the prompt price, as before", async () => {
    const { key } = await orgWithKey(bench);
    const model = bench.server.deps.catalog.findModel(LLAMA);
    assert.ok(model);
    assert.equal(model.pricing.cache_read_usd_per_million_tokens, undefined);
    const res = await scripted(
      {
        body: { type: "message", role: "assistant", content: [{ type: "text", text: "hit" }], usage: CACHED },
      },
      () => post(bench.server, "/api/v1/messages", key.secret, messages(LLAMA)),
    );
    assert.equal(res.status, 200, res.text);
    const p = model.pricing;
    assert.deepEqual(await charged(key.hash), [
      Math.ceil(11_100 * p.prompt_usd_per_million_tokens + 10 * p.completion_usd_per_million_tokens),
    ]);
  });
});
