import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { DEFAULT_CONFIG_FILE, loadCatalogFile } from "../../src/config.js";
import type { CatalogData } from "../../src/domain/catalog.js";
import { call } from "../helpers/server.js";
import {
  type GatewayBench,
  guardKey,
  orgWithKey,
  post,
  SONNET,
  startGatewayBench,
} from "./gateway-support.js";
import type { MadeKey } from "./org-support.js";

/**
 * Filters on whole (non-streamed) answers, door by door (docs/gateway.md#answer-filters): the
 * answer is read as the upstream sent it, in its API's shape (chat for a translated door), and what
 * the client receives is redacted, withheld or sent as it came.
 */

const EMAIL = "jane.roe@example.com";
const CARD = "4111 1111 1111 1111";
const SECRET = "ghp_7BT4h9aVJv8Xm7FXDswXUSuBLlpLe1DGeAqv";
const CUSTOM = "ACME-123456";
const VALUES = [EMAIL, CARD, SECRET, CUSTOM];
const LABELS = ["[EMAIL]", "[CREDIT_CARD]", "[SECRET]", "[ACME]"];
const TEXT = `Write to ${EMAIL}, pay with ${CARD}, use ${SECRET} for ref ${CUSTOM}.`;
const ARGS = { to: EMAIL, subject: "hello" };
const USAGE = { prompt_tokens: 1000, completion_tokens: 100 };

const GPT_41 = "openai/gpt-4.1";

/** A chat completion as a provider sends it, with every field the OpenAI API defines. */
const chatAnswer = (model: string) => ({
  id: "chatcmpl-1",
  object: "chat.completion",
  created: 1_700_000_000,
  model,
  system_fingerprint: "fp_1",
  choices: [
    {
      index: 0,
      finish_reason: "tool_calls",
      message: {
        role: "assistant",
        content: TEXT,
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "send", arguments: JSON.stringify(ARGS) } },
        ],
      },
    },
  ],
  usage: { ...USAGE, total_tokens: 1100 },
});

const responsesAnswer = () => ({
  id: "resp_1",
  object: "response",
  created_at: 1_700_000_000,
  status: "completed",
  model: GPT_41,
  output: [
    {
      type: "message",
      id: "msg_1",
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: TEXT, annotations: [] }],
    },
    {
      type: "function_call",
      id: "fc_1",
      call_id: "call_1",
      name: "send",
      arguments: JSON.stringify(ARGS),
      status: "completed",
    },
  ],
  usage: { input_tokens: USAGE.prompt_tokens, output_tokens: USAGE.completion_tokens, total_tokens: 1100 },
});

const messagesAnswer = () => ({
  id: "msg_1",
  type: "message",
  role: "assistant",
  model: SONNET,
  content: [
    { type: "text", text: TEXT },
    { type: "tool_use", id: "toolu_1", name: "send", input: ARGS },
  ],
  stop_reason: "tool_use",
  stop_sequence: null,
  usage: { input_tokens: USAGE.prompt_tokens, output_tokens: USAGE.completion_tokens },
});

// biome-ignore lint/suspicious/noExplicitAny: the doors read their own API's JSON answers.
type Answer = any;

interface Door {
  name: string;
  route: string;
  model: string;
  catalog?: CatalogData;
  body: Record<string, unknown>;
  /** What the upstream answers, in the API it was sent (chat for a translated door). */
  upstream(): unknown;
  /** The answer's text and its tool call's arguments, as the client reads them. */
  read(answer: Answer): { text: string; args: unknown };
  /** The refusal's metadata, read from the door's error envelope. */
  refusal(body: Answer): Record<string, unknown>;
}

/** The shipped catalog with these providers speaking chat only: the door is translated. */
function chatOnlyCatalog(providers: string[]): CatalogData {
  const shipped = loadCatalogFile(DEFAULT_CONFIG_FILE);
  return {
    ...shipped,
    providers: shipped.providers.map((p) =>
      providers.includes(p.id) ? { ...p, apis: ["chat" as const] } : p,
    ),
  };
}

const serviceRefusal = (body: Answer) => {
  assert.equal(body.error.code, 403);
  return body.error.metadata;
};
const anthropicRefusal = (body: Answer) => {
  assert.equal(body.type, "error");
  assert.equal(body.error.type, "permission_error");
  return body.error.metadata;
};

const readChat = (a: Answer) => ({
  text: a.choices[0].message.content,
  args: JSON.parse(a.choices[0].message.tool_calls[0].function.arguments),
});
const readResponses = (a: Answer) => ({
  text: a.output.find((i: Answer) => i.type === "message").content[0].text,
  args: JSON.parse(a.output.find((i: Answer) => i.type === "function_call").arguments),
});
const readMessages = (a: Answer) => ({
  text: a.content.find((b: Answer) => b.type === "text").text,
  args: a.content.find((b: Answer) => b.type === "tool_use").input,
});

const responsesBody = { model: GPT_41, input: "write the mail" };
const messagesBody = {
  model: SONNET,
  max_tokens: 256,
  messages: [{ role: "user", content: "write the mail" }],
};

const DOORS: Door[] = [
  {
    name: "chat completions",
    route: "/api/v1/chat/completions",
    model: SONNET,
    body: { model: SONNET, messages: [{ role: "user", content: "write the mail" }] },
    upstream: () => chatAnswer(SONNET),
    read: readChat,
    refusal: serviceRefusal,
  },
  {
    name: "responses (native)",
    route: "/api/v1/responses",
    model: GPT_41,
    body: responsesBody,
    upstream: responsesAnswer,
    read: readResponses,
    refusal: serviceRefusal,
  },
  {
    name: "responses (translated to chat)",
    route: "/api/v1/responses",
    model: GPT_41,
    catalog: chatOnlyCatalog(["openai", "azure"]),
    body: responsesBody,
    upstream: () => chatAnswer(GPT_41),
    read: readResponses,
    refusal: serviceRefusal,
  },
  {
    name: "messages (native)",
    route: "/api/v1/messages",
    model: SONNET,
    body: messagesBody,
    upstream: messagesAnswer,
    read: readMessages,
    refusal: anthropicRefusal,
  },
  {
    name: "messages (translated to chat)",
    route: "/api/v1/messages",
    model: SONNET,
    catalog: chatOnlyCatalog(["anthropic"]),
    body: messagesBody,
    upstream: () => chatAnswer(SONNET),
    read: readMessages,
    refusal: anthropicRefusal,
  },
];

const catalog = loadCatalogFile(DEFAULT_CONFIG_FILE);
/** What USAGE costs on the model, in micro-dollars (docs/gateway.md#budgets). */
function chargeOf(slug: string): number {
  const p = catalog.models.find((m) => m.slug === slug)?.pricing;
  if (!p) throw new Error(`${slug} is not in the catalog`);
  return Math.ceil(
    USAGE.prompt_tokens * p.prompt_usd_per_million_tokens +
      USAGE.completion_tokens * p.completion_usd_per_million_tokens,
  );
}

/** The answer's text with the request's own id taken out (a translated answer's ids are made from it). */
function withoutRequestId(res: { text: string; headers: Record<string, unknown> }): string {
  const id = res.headers["x-request-id"];
  return typeof id === "string" ? res.text.replaceAll(id, "<id>") : res.text;
}

const response = (filter: Record<string, unknown>) => ({ ...filter, apply_to: "response" });

for (const door of DOORS) {
  describe(`answer filters on a whole answer: ${door.name} (docs/gateway.md#answer-filters)`, () => {
    let bench: GatewayBench;
    const logLines: string[] = [];
    const keys: Record<"plain" | "redact" | "block" | "flag" | "requestOnly", MadeKey> = {} as never;
    let blockId = "";
    before(async () => {
      bench = await startGatewayBench({ logLines, ...(door.catalog ? { catalog: door.catalog } : {}) });
      bench.script.next = () => ({ body: door.upstream() });
      const { steps, key } = await orgWithKey(bench);
      keys.plain = key;
      const guarded = async (body: Record<string, unknown>) => {
        const k = await steps.key();
        return { k, id: await guardKey(steps, k, body) };
      };
      keys.redact = (
        await guarded({
          content_filter_builtins: [
            response({ slug: "email", action: "redact" }),
            response({ slug: "credit-card", action: "redact" }),
            response({ slug: "secrets", action: "redact" }),
          ],
          content_filters: [response({ pattern: "ACME-\\d{6}", action: "redact", label: "[ACME]" })],
        })
      ).k;
      const blocking = await guarded({
        content_filter_builtins: [response({ slug: "email", action: "block" })],
      });
      keys.block = blocking.k;
      blockId = blocking.id;
      keys.flag = (
        await guarded({ content_filter_builtins: [response({ slug: "email", action: "flag" })] })
      ).k;
      // A filter without apply_to reads requests only (docs/behaviour.md#apply-to).
      keys.requestOnly = (
        await guarded({ content_filter_builtins: [{ slug: "email", action: "redact" }] })
      ).k;
    });
    after(async () => {
      await bench.close();
    });

    const send = (key: MadeKey) => post(bench.server, door.route, key.secret, door.body);
    const usage = async (key: MadeKey) =>
      (await call(bench.server, "GET", "/api/v1/key", { key: key.secret })).body.data.usage as number;

    it("redact: the client reads each filter's label and none of the values; tool arguments stay valid JSON with the value redacted inside its string (docs/gateway.md#answer-filters)", async () => {
      const res = await send(keys.redact);
      assert.equal(res.status, 200, res.text);
      for (const v of VALUES)
        assert.equal(res.text.includes(v), false, `${v} reached the client: ${res.text}`);
      const { text, args } = door.read(res.body);
      for (const label of LABELS) assert.equal(text.includes(label), true, text);
      assert.equal(text, "Write to [EMAIL], pay with [CREDIT_CARD], use [SECRET] for ref [ACME].");
      assert.deepEqual(args, { to: "[EMAIL]", subject: "hello" });
    });

    it("block: a 403 in the door's error shape naming the filter and its guardrail, and the provider's tokens are charged (docs/gateway.md#answer-filters)", async () => {
      const start = await usage(keys.block);
      const res = await send(keys.block);
      assert.equal(res.status, 403, res.text);
      assert.equal(res.text.includes(EMAIL), false, res.text);
      const meta = door.refusal(res.body);
      assert.equal(meta.reason, "answer_content_filter");
      assert.deepEqual(meta.filter, { type: "builtin", slug: "email" });
      assert.deepEqual(meta.guardrail_ids, [blockId]);
      assert.equal(meta.charged, true);
      assert.equal(Math.round(((await usage(keys.block)) - start) * 1e6), chargeOf(door.model));
    });

    it("flag: the answer is sent as it came, and the detection is in the request's log line without the text (docs/gateway.md#answer-filters)", async () => {
      const plain = await send(keys.plain);
      const before = logLines.length;
      const res = await send(keys.flag);
      assert.equal(res.status, 200, res.text);
      assert.equal(withoutRequestId(res), withoutRequestId(plain));
      const line = logLines.slice(before).find((l) => l.includes('"answer_detections"'));
      assert.ok(line, "the request's line records the answer's detections");
      assert.deepEqual(JSON.parse(line).answer_detections, [
        { filter: { type: "builtin", slug: "email" }, action: "flag", count: 2 },
      ]);
      assert.equal(line.includes(EMAIL), false);
    });

    it("a filter without apply_to leaves answers untouched byte for byte, an e-mail in them too (docs/behaviour.md#apply-to)", async () => {
      const plain = await send(keys.plain);
      const res = await send(keys.requestOnly);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.text.includes(EMAIL), true);
      assert.equal(withoutRequestId(res), withoutRequestId(plain));
      if (door.name === "chat completions") assert.equal(res.text, JSON.stringify(door.upstream()));
    });
  });
}

describe("answer filters read by the official clients (docs/gateway.md#answer-filters)", () => {
  let bench: GatewayBench;
  let secret = "";
  before(async () => {
    bench = await startGatewayBench();
    const { steps, key } = await orgWithKey(bench);
    await guardKey(steps, key, {
      content_filter_builtins: [response({ slug: "email", action: "redact" })],
    });
    secret = key.secret;
  });
  after(async () => {
    await bench.close();
  });

  it("the openai SDK reads a redacted chat completion, its tool arguments parsed", async () => {
    bench.script.next = () => ({ body: chatAnswer(SONNET) });
    const client = new OpenAI({ apiKey: secret, baseURL: bench.server.baseUrl, maxRetries: 0 });
    const res = await client.chat.completions.create({
      model: SONNET,
      messages: [{ role: "user", content: "write the mail" }],
    });
    const message = res.choices[0]?.message;
    assert.equal(message?.content?.includes("[EMAIL]"), true);
    assert.equal(message?.content?.includes(EMAIL), false);
    const call = message?.tool_calls?.[0];
    assert.ok(call && call.type === "function");
    assert.deepEqual(JSON.parse(call.function.arguments), { to: "[EMAIL]", subject: "hello" });
  });

  it("the openai SDK reads a redacted Responses answer", async () => {
    bench.script.next = () => ({ body: responsesAnswer() });
    const client = new OpenAI({ apiKey: secret, baseURL: bench.server.baseUrl, maxRetries: 0 });
    const res = await client.responses.create({ model: GPT_41, input: "write the mail" });
    assert.equal(res.output_text.includes("[EMAIL]"), true);
    assert.equal(JSON.stringify(res).includes(EMAIL), false);
  });

  it("the anthropic SDK reads a redacted message, its tool input an object", async () => {
    bench.script.next = () => ({ body: messagesAnswer() });
    const client = new Anthropic({
      apiKey: secret,
      authToken: null,
      baseURL: `${bench.server.origin}/api`,
      maxRetries: 0,
    });
    const res = await client.messages.create({
      model: SONNET,
      max_tokens: 256,
      messages: [{ role: "user", content: "write the mail" }],
    });
    const text = res.content.find((b) => b.type === "text");
    assert.ok(text && text.type === "text");
    assert.equal(text.text.includes("[EMAIL]"), true);
    const tool = res.content.find((b) => b.type === "tool_use");
    assert.ok(tool && tool.type === "tool_use");
    assert.deepEqual(tool.input, { to: "[EMAIL]", subject: "hello" });
  });
});

describe("answer filters: what is counted, what is not read, what is withheld (docs/gateway.md#answer-filters)", () => {
  let bench: GatewayBench;
  before(async () => {
    bench = await startGatewayBench();
  });
  after(async () => {
    await bench.close();
  });

  it("a blocked answer is counted as refused for answer_content_filter, its match as a detection of direction response; a request's series keeps its labels", async () => {
    const { steps, key } = await orgWithKey(bench);
    await guardKey(steps, key, {
      content_filter_builtins: [{ slug: "email", action: "block", apply_to: "response" }],
      content_filters: [{ pattern: "ACME-\\d{6}", action: "flag", apply_to: "both" }],
    });
    bench.script.next = () => ({ body: chatAnswer(SONNET) });
    const res = await post(bench.server, "/api/v1/chat/completions", key.secret, {
      model: SONNET,
      messages: [{ role: "user", content: `about ${CUSTOM}` }],
    });
    assert.equal(res.status, 403, res.text);
    const metrics = await (await fetch(`${bench.server.origin}/metrics`)).text();
    assert.match(
      metrics,
      /guardrails_gateway_requests_total\{outcome="refused",reason="answer_content_filter",api="chat"\} 1/,
    );
    assert.match(
      metrics,
      /guardrails_content_filter_detections_total\{filter="email",action="block",direction="response"\} 2/,
    );
    assert.match(
      metrics,
      /guardrails_content_filter_detections_total\{filter="custom",action="flag",direction="response"\} 1/,
    );
    assert.match(metrics, /guardrails_content_filter_detections_total\{filter="custom",action="flag"\} 1/);
    assert.equal(metrics.includes(EMAIL), false);
  });

  it("the app's route filters answers as the direct path does: the same redacted answer, the same refusal (CONTRIBUTING.md#why-the-direct-path-stays)", async () => {
    const { steps, key } = await orgWithKey(bench);
    await guardKey(steps, key, { content_filter_builtins: [response({ slug: "email", action: "redact" })] });
    const blocking = await orgWithKey(bench);
    await guardKey(blocking.steps, blocking.key, {
      content_filter_builtins: [response({ slug: "email", action: "block" })],
    });
    bench.script.next = () => ({ body: chatAnswer(SONNET) });
    const body = { model: SONNET, messages: [{ role: "user", content: "write the mail" }] };
    // Only the app reads a vendor JSON type; application/json is taken by the direct path.
    const viaApp = (k: MadeKey) =>
      post(
        bench.server,
        "/api/v1/chat/completions",
        k.secret,
        body,
        undefined,
        "application/vnd.example+json",
      );
    const direct = (k: MadeKey) => post(bench.server, "/api/v1/chat/completions", k.secret, body);
    const [app, own] = [await viaApp(key), await direct(key)];
    assert.equal(app.status, 200, app.text);
    assert.equal(app.text.includes(EMAIL), false);
    assert.equal(app.text, own.text);
    const [appRefused, ownRefused] = [await viaApp(blocking.key), await direct(blocking.key)];
    assert.equal(appRefused.status, 403, appRefused.text);
    assert.deepEqual(appRefused.body, ownRefused.body);
  });

  it("a successful answer that is not a JSON object is withheld under answer filters, and still charged (docs/gateway.md#answer-filters)", async () => {
    const { steps, key } = await orgWithKey(bench);
    await guardKey(steps, key, { content_filter_builtins: [response({ slug: "email", action: "redact" })] });
    bench.script.next = () => ({ body: `not json ${EMAIL}` });
    const res = await post(bench.server, "/api/v1/chat/completions", key.secret, {
      model: SONNET,
      messages: [{ role: "user", content: "hello" }],
    });
    assert.equal(res.status, 403, res.text);
    assert.equal(res.body.error.metadata.reason, "answer_scan_failed");
    assert.equal(res.body.error.metadata.charged, true);
    assert.equal(res.text.includes(EMAIL), false);
  });

  it("embeddings answer with vectors, not text: an answer filter reads nothing there and the answer is unchanged (docs/gateway.md#answer-filters)", async () => {
    bench.script.next = undefined;
    const { steps, key } = await orgWithKey(bench);
    const plain = await post(bench.server, "/api/v1/embeddings", key.secret, {
      model: "openai/text-embedding-3-small",
      input: "hello world",
    });
    await guardKey(steps, key, { content_filter_builtins: [response({ slug: "email", action: "block" })] });
    const res = await post(bench.server, "/api/v1/embeddings", key.secret, {
      model: "openai/text-embedding-3-small",
      input: "hello world",
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.data, plain.body.data);
  });
});

/** Random `a`/`b` text: what makes a counted class's DFA states explode, so RE2 scans it slowly. */
function adversarial(length: number): string {
  let seed = 7;
  let out = "";
  for (let i = 0; i < length; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    out += seed & 0x100 ? "a" : "b";
  }
  return out;
}

describe("large answers are scanned in the scan workers, and withheld when the scan cannot finish (docs/gateway.md#answer-filters)", () => {
  let bench: GatewayBench;
  before(async () => {
    // Every scan goes to a worker, under a budget far below what the costly 768 KiB scan needs and
    // far above a short answer's (docs/gateway.md#large-scans).
    bench = await startGatewayBench({ scan: { timeoutMs: 500, workerChars: 0, workers: 2, orgWorkers: 1 } });
  });
  after(async () => {
    await bench.close();
  });

  /** Sends until the answer is not a busy or timed-out worker's (a fresh worker starts slowly on a loaded machine). */
  async function settled(key: MadeKey) {
    let res = await post(bench.server, "/api/v1/chat/completions", key.secret, {
      model: SONNET,
      messages: [{ role: "user", content: "hello" }],
    });
    for (
      let tries = 1;
      tries < 4 && (res.status === 503 || res.body?.error?.metadata?.reason === "answer_scan_failed");
      tries++
    )
      res = await post(bench.server, "/api/v1/chat/completions", key.secret, {
        model: SONNET,
        messages: [{ role: "user", content: "hello" }],
      });
    return res;
  }

  it("a worker's scan redacts an answer as the event loop does, arguments' tokens included", async () => {
    const { steps, key } = await orgWithKey(bench);
    await guardKey(steps, key, {
      content_filter_builtins: [response({ slug: "email", action: "redact" })],
      content_filters: [response({ pattern: "ACME-\\d{6}", action: "redact", label: "[ACME]" })],
    });
    bench.script.next = () => ({ body: chatAnswer(SONNET) });
    const res = await settled(key);
    assert.equal(res.status, 200, res.text);
    const { text, args } = readChat(res.body);
    assert.equal(text, `Write to [EMAIL], pay with ${CARD}, use ${SECRET} for ref [ACME].`);
    assert.deepEqual(args, { to: "[EMAIL]", subject: "hello" });
  });

  it("an answer whose scan outlasts its time budget is withheld (403 answer_scan_failed), and its tokens are charged", async () => {
    const { steps, key } = await orgWithKey(bench);
    await guardKey(steps, key, {
      content_filters: [response({ pattern: "a\\S{298}c", action: "block" })],
      content_filter_builtins: [
        response({ slug: "email", action: "redact" }),
        response({ slug: "credit-card", action: "block" }),
        response({ slug: "secrets", action: "block" }),
        response({ slug: "person-name", action: "flag" }),
        response({ slug: "address", action: "flag" }),
      ],
    });
    bench.script.next = () => ({ body: { ...chatAnswer(SONNET), choices: [] } });
    const warm = await settled(key);
    assert.equal(warm.status, 200, warm.text);
    const before = (await call(bench.server, "GET", "/api/v1/key", { key: key.secret })).body.data
      .usage as number;
    const long = adversarial(768 * 1024);
    bench.script.next = () => {
      const answer = chatAnswer(SONNET);
      (answer.choices[0] as { message: { content: string } }).message.content = `${long} ${EMAIL}`;
      return { body: answer };
    };
    const res = await post(bench.server, "/api/v1/chat/completions", key.secret, {
      model: SONNET,
      messages: [{ role: "user", content: "hello" }],
    });
    assert.equal(res.status, 403, res.text.slice(0, 500));
    assert.deepEqual(res.body.error.metadata, { reason: "answer_scan_failed", charged: true });
    assert.equal(res.text.includes(EMAIL), false);
    const afterUsage = (await call(bench.server, "GET", "/api/v1/key", { key: key.secret })).body.data
      .usage as number;
    assert.equal(Math.round((afterUsage - before) * 1e6), chargeOf(SONNET));
  });
});
