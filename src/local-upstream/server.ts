import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A small OpenAI-compatible model provider that runs on this machine: it answers every chat
 * completion by echoing the last user message, streaming or not, with token usage, every
 * Responses request the same way in the Responses shape (with a function call when the user names
 * an offered function), every Messages request in Anthropic's shape (with a tool_use block when the
 * user names an offered tool), and every embeddings request with small deterministic vectors (a hash of
 * each input). It lets a new
 * user send a governed request end to end with no outside account (`guardrails upstream`), and it
 * is the upstream the tests and benchmarks talk to, over real HTTP.
 */

export interface ReceivedRequest {
  path: string;
  headers: IncomingMessage["headers"];
  body: Record<string, unknown>;
}

/** A scripted answer, for tests that need an upstream that fails or stalls. */
export interface ScriptedAnswer {
  status?: number;
  body?: unknown;
  delayMs?: number;
  /** Close the connection without answering. */
  hangUp?: boolean;
  /** Stream this many chunks, then drop the connection. */
  breakStreamAfter?: number;
  /** Report this usage instead of the counted one. */
  usage?: { prompt_tokens: number; completion_tokens: number };
  /** Stream these server-sent events (each written as it is) instead of the echo's. */
  events?: string[];
}

export interface LocalUpstreamOptions {
  port?: number;
  host?: string;
  /** Require this key (as a Bearer key, or as `x-api-key`). */
  apiKey?: string;
  /** Answer every request after this long, like a model taking time to answer (default 0). */
  latencyMs?: number;
  onRequest?: (request: ReceivedRequest) => void;
  script?: (request: ReceivedRequest) => ScriptedAnswer | undefined;
}

export interface LocalUpstream {
  url: string;
  server: Server;
  close(): Promise<void>;
}

const MAX_BODY = 8 * 1024 * 1024;

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((p) => (typeof p === "object" && p !== null && typeof p.text === "string" ? p.text : ""))
      .join("");
  }
  return "";
}

function tokens(text: string): number {
  return Math.max(1, Math.ceil(Buffer.byteLength(text) / 4));
}

function answerOf(body: Record<string, unknown>): { reply: string; promptTokens: number } {
  const messages = Array.isArray(body.messages) ? (body.messages as Record<string, unknown>[]) : [];
  const lastUser = [...messages].reverse().find((m) => m?.role === "user");
  const all = messages.map((m) => textOf(m?.content)).join("\n");
  return {
    reply: `Echo: ${textOf(lastUser?.content).slice(0, 2000)}`,
    promptTokens: tokens(all) + 4 * messages.length,
  };
}

/** Dimensions of an echo embedding when the request names none; at most MAX_DIMENSIONS. */
const DEFAULT_DIMENSIONS = 8;
const MAX_DIMENSIONS = 4096;

/** A deterministic unit-length vector for `text`: FNV-1a of the text, then a xorshift stream. */
export function echoVector(text: string, dimensions: number): number[] {
  let h = 0x811c9dc5;
  for (const byte of Buffer.from(text, "utf8")) h = Math.imul(h ^ byte, 0x01000193) >>> 0;
  const out: number[] = [];
  let norm = 0;
  for (let i = 0; i < dimensions; i++) {
    h ^= h << 13;
    h ^= h >>> 17;
    h ^= h << 5;
    h >>>= 0;
    // Float32 values, so the float and base64 answers carry the same numbers.
    const v = Math.fround(h / 0xffffffff - 0.5);
    out.push(v);
    norm += v * v;
  }
  const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
  return out.map((v) => Math.fround(v * scale));
}

/** An embeddings answer as OpenAI sends it; `base64` is little-endian float32 bytes. */
function embeddingsAnswer(body: Record<string, unknown>, script: ScriptedAnswer | undefined): unknown {
  const input = body.input;
  const items: unknown[] = Array.isArray(input) ? input : [input];
  const asked = typeof body.dimensions === "number" ? Math.floor(body.dimensions) : DEFAULT_DIMENSIONS;
  const dimensions = Math.min(MAX_DIMENSIONS, Math.max(1, asked));
  const base64 = body.encoding_format === "base64";
  let promptTokens = 0;
  // Token ids (one token array, or several) are embedded by their text form.
  const texts =
    typeof items[0] === "number"
      ? [JSON.stringify(items)]
      : items.map((i) => (typeof i === "string" ? i : JSON.stringify(i)));
  const data = texts.map((text, index) => {
    promptTokens += tokens(text);
    const vector = echoVector(text, dimensions);
    let embedding: number[] | string = vector;
    if (base64) {
      const bytes = Buffer.alloc(4 * dimensions);
      for (let i = 0; i < dimensions; i++) bytes.writeFloatLE(vector[i] as number, 4 * i);
      embedding = bytes.toString("base64");
    }
    return { object: "embedding", index, embedding };
  });
  const prompt = script?.usage?.prompt_tokens ?? promptTokens;
  return {
    object: "list",
    data,
    model: typeof body.model === "string" ? body.model : "local",
    usage: { prompt_tokens: prompt, total_tokens: prompt },
  };
}

type Item = Record<string, unknown>;

/** The text of a Responses input item: a message's content, or a call output's output. */
function itemText(item: Item): string {
  if (item.type === "function_call_output") return textOf(item.output);
  if (item.type === "function_call") return typeof item.arguments === "string" ? item.arguments : "";
  return textOf(item.content);
}

/**
 * The echo's Responses answer (OpenAI's shape): the last user message echoed as an output message;
 * after a function call's output, that output echoed; and when the request offers function tools and
 * the last user message names one of them, a call of that function with the message as its
 * argument `echo`, so a client's tool round trip can be run against it.
 */
function responsesOutput(body: Record<string, unknown>): {
  output: Item[];
  text: string;
  promptTokens: number;
} {
  const input = body.input;
  const items: Item[] =
    typeof input === "string"
      ? [{ type: "message", role: "user", content: input }]
      : Array.isArray(input)
        ? (input as Item[]).filter((i) => typeof i === "object" && i !== null)
        : [];
  const all = [typeof body.instructions === "string" ? body.instructions : "", ...items.map(itemText)].join(
    "\n",
  );
  const promptTokens = tokens(all) + 4 * items.length;
  const stamp = Date.now().toString(36);
  const last = items.at(-1);
  const lastUser = [...items].reverse().find((i) => i.role === "user");
  const userText = lastUser ? textOf(lastUser.content) : "";
  const tools = Array.isArray(body.tools) ? (body.tools as Item[]) : [];
  const called = tools.find(
    (t) => t?.type === "function" && typeof t.name === "string" && t.name !== "" && userText.includes(t.name),
  );
  if (called && last?.type !== "function_call_output") {
    const args = JSON.stringify({ echo: userText.slice(0, 2000) });
    return {
      output: [
        {
          type: "function_call",
          id: `fc_local_${stamp}`,
          call_id: `call_local_${stamp}`,
          name: called.name,
          arguments: args,
          status: "completed",
        },
      ],
      text: args,
      promptTokens,
    };
  }
  const text =
    last?.type === "function_call_output"
      ? `Echo: ${textOf(last.output).slice(0, 2000)}`
      : `Echo: ${userText.slice(0, 2000)}`;
  return {
    output: [
      {
        type: "message",
        id: `msg_local_${stamp}`,
        status: "completed",
        role: "assistant",
        content: [{ type: "output_text", text, annotations: [] }],
      },
    ],
    text,
    promptTokens,
  };
}

/** A Responses answer, whole or as its stream of events (the sequence OpenAI sends). */
function respondResponses(
  res: ServerResponse,
  body: Record<string, unknown>,
  script: ScriptedAnswer | undefined,
) {
  const { output, text, promptTokens } = responsesOutput(body);
  const input = script?.usage?.prompt_tokens ?? promptTokens;
  const outputTokens = script?.usage?.completion_tokens ?? tokens(text);
  const created = Math.floor(Date.now() / 1000);
  const response = (status: string, items: Item[], usage: boolean) => ({
    id: `resp_local_${Date.now().toString(36)}`,
    object: "response",
    created_at: created,
    status,
    completed_at: status === "completed" ? created : null,
    error: null,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: typeof body.model === "string" ? body.model : "local",
    output: items,
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: body.store === true,
    temperature: 1,
    text: { format: { type: "text" } },
    tool_choice: body.tool_choice ?? "auto",
    tools: Array.isArray(body.tools) ? body.tools : [],
    top_p: 1,
    truncation: "disabled",
    usage: usage
      ? {
          input_tokens: input,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: outputTokens,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: input + outputTokens,
        }
      : null,
    user: null,
    metadata: body.metadata ?? {},
  });
  if (body.stream !== true) {
    json(res, 200, response("completed", output, true));
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  let sequence = 0;
  const events: string[] = [];
  const event = (type: string, data: Record<string, unknown>) =>
    events.push(
      `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`,
    );
  event("response.created", { response: response("in_progress", [], false) });
  event("response.in_progress", { response: response("in_progress", [], false) });
  const item = output[0] as Item;
  const id = item.id as string;
  const pieces = text.split(/(?<= )/);
  if (item.type === "function_call") {
    event("response.output_item.added", {
      output_index: 0,
      item: { ...item, arguments: "", status: "in_progress" },
    });
    for (const p of pieces)
      event("response.function_call_arguments.delta", { item_id: id, output_index: 0, delta: p });
    event("response.function_call_arguments.done", { item_id: id, output_index: 0, arguments: text });
    event("response.output_item.done", { output_index: 0, item });
  } else {
    event("response.output_item.added", {
      output_index: 0,
      item: { ...item, status: "in_progress", content: [] },
    });
    const part = { type: "output_text", text: "", annotations: [] };
    event("response.content_part.added", { item_id: id, output_index: 0, content_index: 0, part });
    for (const p of pieces)
      event("response.output_text.delta", {
        item_id: id,
        output_index: 0,
        content_index: 0,
        delta: p,
        logprobs: [],
      });
    event("response.output_text.done", {
      item_id: id,
      output_index: 0,
      content_index: 0,
      text,
      logprobs: [],
    });
    event("response.content_part.done", {
      item_id: id,
      output_index: 0,
      content_index: 0,
      part: { ...part, text },
    });
    event("response.output_item.done", { output_index: 0, item });
  }
  event("response.completed", { response: response("completed", output, true) });
  const breakAfter = script?.breakStreamAfter;
  if (breakAfter !== undefined) {
    for (const e of events.slice(0, breakAfter)) res.write(e);
    setTimeout(() => res.socket?.destroy(), 20);
    return;
  }
  for (const e of events) res.write(e);
  res.end();
}

/** The text of a Messages content: a string, or its text blocks and tool results' texts joined. */
function blocksText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((b: Item) =>
      b?.type === "tool_result" ? blocksText(b.content) : typeof b?.text === "string" ? b.text : "",
    )
    .join("");
}

/**
 * The echo's Messages answer (Anthropic's shape): the last user message's text echoed; after a tool
 * result, that result echoed; and when the request offers tools and the last user message names one
 * of them, a tool_use block calling it with the message as its input `echo`, so a client's tool
 * round trip can be run against it.
 */
function messagesOutput(body: Record<string, unknown>): {
  block: Item;
  text: string;
  promptTokens: number;
} {
  const messages = Array.isArray(body.messages) ? (body.messages as Item[]) : [];
  const system = body.system;
  const all = [
    typeof system === "string" ? system : blocksText(system),
    ...messages.map((m) => blocksText(m?.content)),
  ].join("\n");
  const promptTokens = tokens(all) + 4 * messages.length;
  // The last user turn: a client may put a system turn after it (Claude Code does).
  const last = [...messages].reverse().find((m) => m?.role === "user");
  const lastBlocks = Array.isArray(last?.content) ? (last.content as Item[]) : [];
  const result = lastBlocks.find((b) => b?.type === "tool_result");
  const userText = last?.role === "user" ? blocksText(last.content) : "";
  const tools = Array.isArray(body.tools) ? (body.tools as Item[]) : [];
  const called = tools.find((t) => typeof t?.name === "string" && t.name !== "" && userText.includes(t.name));
  const stamp = Date.now().toString(36);
  if (called && !result) {
    const input = { echo: userText.slice(0, 2000) };
    return {
      block: { type: "tool_use", id: `toolu_local_${stamp}`, name: called.name, input },
      text: JSON.stringify(input),
      promptTokens,
    };
  }
  const text = `Echo: ${(result ? blocksText(result.content) : userText).slice(0, 2000)}`;
  return { block: { type: "text", text }, text, promptTokens };
}

/** A Messages answer, whole or as its stream of events (the sequence Anthropic sends). */
function respondMessages(
  res: ServerResponse,
  body: Record<string, unknown>,
  script: ScriptedAnswer | undefined,
) {
  const { block, text, promptTokens } = messagesOutput(body);
  const input = script?.usage?.prompt_tokens ?? promptTokens;
  const output = script?.usage?.completion_tokens ?? tokens(text);
  const stopReason = block.type === "tool_use" ? "tool_use" : "end_turn";
  const message = (content: Item[], stop: string | null, outputTokens: number) => ({
    id: `msg_local_${Date.now().toString(36)}`,
    type: "message",
    role: "assistant",
    model: typeof body.model === "string" ? body.model : "local",
    content,
    stop_reason: stop,
    stop_sequence: null,
    usage: {
      input_tokens: input,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: outputTokens,
    },
  });
  if (body.stream !== true) {
    json(res, 200, message([block], stopReason, output));
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const events: string[] = [];
  const event = (type: string, data: Record<string, unknown>) =>
    events.push(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  event("message_start", { message: message([], null, 1) });
  const pieces = text.split(/(?<= )/);
  if (block.type === "tool_use") {
    event("content_block_start", { index: 0, content_block: { ...block, input: {} } });
    event("ping", {});
    for (const p of pieces)
      event("content_block_delta", { index: 0, delta: { type: "input_json_delta", partial_json: p } });
  } else {
    event("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
    event("ping", {});
    for (const p of pieces)
      event("content_block_delta", { index: 0, delta: { type: "text_delta", text: p } });
  }
  event("content_block_stop", { index: 0 });
  event("message_delta", {
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: { output_tokens: output },
  });
  event("message_stop", {});
  const breakAfter = script?.breakStreamAfter;
  if (breakAfter !== undefined) {
    for (const e of events.slice(0, breakAfter)) res.write(e);
    setTimeout(() => res.socket?.destroy(), 20);
    return;
  }
  for (const e of events) res.write(e);
  res.end();
}

function json(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

function respond(
  res: ServerResponse,
  path: string,
  body: Record<string, unknown>,
  script: ScriptedAnswer | undefined,
): void {
  if (script?.hangUp) {
    res.socket?.destroy();
    return;
  }
  if (script?.status !== undefined && script.status >= 400) {
    json(res, script.status, script.body ?? { error: { message: "scripted failure", type: "server_error" } });
    return;
  }
  if (script?.events) {
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    for (const event of script.events) res.write(event);
    res.end();
    return;
  }
  if (script?.body !== undefined) {
    json(res, script.status ?? 200, script.body);
    return;
  }
  if (path.endsWith("/responses")) {
    respondResponses(res, body, script);
    return;
  }
  if (path.endsWith("/messages")) {
    respondMessages(res, body, script);
    return;
  }
  if (path.endsWith("/embeddings")) {
    json(res, 200, embeddingsAnswer(body, script));
    return;
  }
  const { reply, promptTokens } = answerOf(body);
  const model = typeof body.model === "string" ? body.model : "local";
  const counted = script?.usage ?? { prompt_tokens: promptTokens, completion_tokens: tokens(reply) };
  const usage = { ...counted, total_tokens: counted.prompt_tokens + counted.completion_tokens };
  const id = `chatcmpl-local-${Date.now().toString(36)}`;
  const created = Math.floor(Date.now() / 1000);
  if (body.stream !== true) {
    json(res, 200, {
      id,
      object: "chat.completion",
      created,
      model,
      choices: [{ index: 0, message: { role: "assistant", content: reply }, finish_reason: "stop" }],
      usage,
    });
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const chunk = (delta: Record<string, unknown>, finish: string | null) =>
    `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const words = reply.split(/(?<= )/);
  const events = [
    chunk({ role: "assistant", content: "" }, null),
    ...words.map((w) => chunk({ content: w }, null)),
    chunk({}, "stop"),
  ];
  const breakAfter = script?.breakStreamAfter;
  if (breakAfter !== undefined) {
    for (const event of events.slice(0, breakAfter)) res.write(event);
    // Let the first chunks reach the client, then drop the connection mid-stream.
    setTimeout(() => res.socket?.destroy(), 20);
    return;
  }
  for (const event of events) res.write(event);
  const options = body.stream_options as { include_usage?: unknown } | undefined;
  if (options?.include_usage === true) {
    res.write(
      `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [], usage })}\n\n`,
    );
  }
  res.end("data: [DONE]\n\n");
}

export async function startLocalUpstream(options: LocalUpstreamOptions = {}): Promise<LocalUpstream> {
  const server = createServer((req, res) => {
    if (
      req.method !== "POST" ||
      !(
        req.url?.endsWith("/chat/completions") ||
        req.url?.endsWith("/embeddings") ||
        req.url?.endsWith("/responses") ||
        req.url?.endsWith("/messages")
      )
    ) {
      json(res, 404, {
        error: {
          message:
            "only POST .../chat/completions, .../embeddings, .../responses and .../messages are served here",
        },
      });
      return;
    }
    // The key as a Bearer key, or as Anthropic's `x-api-key` (a provider of `"auth": "x-api-key"`).
    if (
      options.apiKey !== undefined &&
      req.headers.authorization !== `Bearer ${options.apiKey}` &&
      req.headers["x-api-key"] !== options.apiKey
    ) {
      json(res, 401, { error: { message: "invalid API key" } });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY) chunks.push(c);
    });
    req.on("end", () => {
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        json(res, 400, { error: { message: "the body is not JSON" } });
        return;
      }
      const received = { path: req.url ?? "", headers: req.headers, body };
      options.onRequest?.(received);
      const script = options.script?.(received);
      const delay = script?.delayMs ?? options.latencyMs ?? 0;
      if (delay > 0) setTimeout(() => respond(res, received.path, body, script), delay);
      else respond(res, received.path, body, script);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) =>
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", resolve),
  );
  const address = server.address() as AddressInfo;
  return {
    url: `http://${options.host ?? "127.0.0.1"}:${address.port}/v1`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
