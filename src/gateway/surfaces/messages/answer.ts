import type { AppError, ErrorEnvelope } from "../../../domain/errors.js";
import { NOT_PLAIN } from "../../chunk-shape.js";
import type { AnswerDefaults, EventFacts, EventReader, Usage } from "../surface.js";

/**
 * Anthropic Messages answers and stream events: their usage read, the fields the API defines on
 * every message filled in where a provider leaves them out (docs/gateway.md#messages), and errors
 * in the API's own envelope (docs/gateway.md#messages-errors). What a provider sent is never
 * changed; a value filled in is null for "unknown", 0 for a count not reported.
 */

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? Math.max(0, Math.ceil(value)) : 0;
}

/**
 * The prompt tokens of a Messages usage object: the input tokens and both cache counts, which
 * Anthropic reports apart from `input_tokens` (docs/gateway.md#messages); undefined when it
 * reports no input count.
 */
function promptOf(u: Json): number | undefined {
  if (typeof u.input_tokens !== "number") return undefined;
  return count(u.input_tokens) + count(u.cache_creation_input_tokens) + count(u.cache_read_input_tokens);
}

/** The cache counts of a Messages usage object, as the spend prices them (docs/gateway.md#cache-prices). */
function cacheOf(u: Json): Pick<Usage, "cache_write_tokens" | "cache_read_tokens"> {
  const out: Pick<Usage, "cache_write_tokens" | "cache_read_tokens"> = {};
  const write = count(u.cache_creation_input_tokens);
  const read = count(u.cache_read_input_tokens);
  if (write > 0) out.cache_write_tokens = write;
  if (read > 0) out.cache_read_tokens = read;
  return out;
}

/** The usage a whole Messages answer reports, when it reports both counts as numbers. */
export function messageUsage(answer: unknown): Usage | undefined {
  if (!isObject(answer) || !isObject(answer.usage)) return undefined;
  const prompt = promptOf(answer.usage);
  if (prompt === undefined || typeof answer.usage.output_tokens !== "number") return undefined;
  return {
    prompt_tokens: prompt,
    completion_tokens: count(answer.usage.output_tokens),
    ...cacheOf(answer.usage),
  };
}

/** A copy of a message object with its required members filled in, or undefined when none is missing. */
function fillMessage(message: Json, defaults: AnswerDefaults): Json | undefined {
  const usage = message.usage;
  const usageMissing =
    !isObject(usage) || typeof usage.input_tokens !== "number" || typeof usage.output_tokens !== "number";
  const missing =
    typeof message.id !== "string" ||
    message.id === "" ||
    message.type !== "message" ||
    message.role !== "assistant" ||
    typeof message.model !== "string" ||
    message.model === "" ||
    !Array.isArray(message.content) ||
    !("stop_reason" in message) ||
    !("stop_sequence" in message) ||
    usageMissing;
  if (!missing) return undefined;
  const out: Json = { ...message };
  if (typeof out.id !== "string" || out.id === "") out.id = defaults.id;
  out.type = "message";
  out.role = "assistant";
  if (typeof out.model !== "string" || out.model === "") out.model = defaults.model;
  if (!Array.isArray(out.content)) out.content = [];
  if (!("stop_reason" in out)) out.stop_reason = null;
  if (!("stop_sequence" in out)) out.stop_sequence = null;
  if (usageMissing) {
    const u = isObject(usage) ? usage : {};
    out.usage = { ...u, input_tokens: count(u.input_tokens), output_tokens: count(u.output_tokens) };
  }
  return out;
}

/**
 * The answer to send for the provider's `text` (parsed: `body`): its own bytes when nothing is
 * missing, else the filled message serialized. An answer that is not a message (not JSON, or
 * without `content`, `type` or `id`) is sent as it came.
 */
export function completeMessageText(text: string, body: unknown, defaults: AnswerDefaults): string {
  if (!isObject(body) || !("content" in body || "type" in body || "id" in body)) return text;
  const filled = fillMessage(body, defaults);
  return filled ? JSON.stringify(filled) : text;
}

/** The delta types whose text is output the model produced (counted when no usage is reported). */
const OUTPUT_DELTAS: Record<string, string> = {
  text_delta: "text",
  input_json_delta: "partial_json",
  thinking_delta: "thinking",
};

const TEXT_DELTA_HEAD = '{"type":"content_block_delta","index":';
const TEXT_DELTA_MIDDLE = ',"delta":{"type":"text_delta","text":"';
const TEXT_DELTA_TAIL = '"}}';

/**
 * The text of a `content_block_delta` event written as Anthropic writes it, the most frequent event
 * of a stream: `{"type":"content_block_delta","index":N,"delta":{"type":"text_delta","text":"…"}}`
 * with a text holding no quote, escape or control character. Such data is that object and no
 * other, so its text is read without parsing it; undefined for any other data, which is parsed
 * (docs/gateway.md#stream-fast-paths).
 */
export function plainTextDelta(data: string): string | undefined {
  const head = TEXT_DELTA_HEAD.length;
  if (data.length < head + 1 + TEXT_DELTA_MIDDLE.length + TEXT_DELTA_TAIL.length) return undefined;
  if (data.slice(0, head) !== TEXT_DELTA_HEAD) return undefined;
  let at = head;
  // The index: digits, as JSON writes a non-negative integer (no leading zero but a lone 0).
  while (at < data.length && data.charCodeAt(at) >= 0x30 && data.charCodeAt(at) <= 0x39) at++;
  const digits = at - head;
  if (digits === 0 || digits > 15 || (digits > 1 && data.charCodeAt(head) === 0x30)) return undefined;
  const start = at + TEXT_DELTA_MIDDLE.length;
  const end = data.length - TEXT_DELTA_TAIL.length;
  if (end < start || data.slice(at, start) !== TEXT_DELTA_MIDDLE || data.slice(end) !== TEXT_DELTA_TAIL)
    return undefined;
  const text = data.slice(start, end);
  return NOT_PLAIN.test(text) ? undefined : text;
}

/**
 * Reads the events of one streamed Messages answer (docs/gateway.md#messages): the input usage of
 * `message_start` (its message filled in as a whole answer is), the output usage of each
 * `message_delta` (Anthropic reports the count so far, and may repeat the input counts there), and
 * the bytes of the content deltas. An event needing nothing is sent as it came; the stream ends
 * with the provider's `message_stop`, so there is nothing to add at its end.
 */
export class MessagesEventReader implements EventReader {
  private prompt: number | undefined;
  private cache: Pick<Usage, "cache_write_tokens" | "cache_read_tokens"> = {};

  constructor(private readonly defaults: AnswerDefaults) {}

  read(data: string): EventFacts {
    const text = plainTextDelta(data);
    if (text !== undefined) return { send: null, usage: undefined, contentBytes: Buffer.byteLength(text) };
    let event: unknown;
    try {
      event = JSON.parse(data);
    } catch {
      return { send: null, usage: undefined, contentBytes: 0 };
    }
    if (!isObject(event)) return { send: null, usage: undefined, contentBytes: 0 };
    switch (event.type) {
      case "message_start": {
        const message = isObject(event.message) ? event.message : {};
        if (isObject(message.usage)) {
          this.prompt = promptOf(message.usage);
          this.cache = cacheOf(message.usage);
        }
        const filled = fillMessage(message, this.defaults);
        const send = filled
          ? `event: message_start\ndata: ${JSON.stringify({ ...event, message: filled })}\n\n`
          : null;
        return { send, usage: undefined, contentBytes: 0 };
      }
      case "message_delta": {
        const u = isObject(event.usage) ? event.usage : undefined;
        if (!u || typeof u.output_tokens !== "number")
          return { send: null, usage: undefined, contentBytes: 0 };
        // A delta that repeats the input counts repeats the cache counts with them.
        const own = promptOf(u);
        const prompt = own ?? this.prompt;
        const usage =
          prompt === undefined
            ? undefined
            : {
                prompt_tokens: prompt,
                completion_tokens: count(u.output_tokens),
                ...(own === undefined ? this.cache : cacheOf(u)),
              };
        return { send: null, usage, contentBytes: 0 };
      }
      case "content_block_delta": {
        const delta = isObject(event.delta) ? event.delta : {};
        const field = typeof delta.type === "string" ? OUTPUT_DELTAS[delta.type] : undefined;
        const value = field === undefined ? undefined : delta[field];
        return {
          send: null,
          usage: undefined,
          contentBytes: typeof value === "string" ? Buffer.byteLength(value) : 0,
        };
      }
      default:
        return { send: null, usage: undefined, contentBytes: 0 };
    }
  }
}

/** Anthropic's error type for each status the service answers (docs/gateway.md#messages-errors). */
export function errorType(status: number): string {
  switch (status) {
    case 400:
      return "invalid_request_error";
    case 401:
      return "authentication_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 413:
      return "request_too_large";
    case 429:
      return "rate_limit_error";
    case 529:
      return "overloaded_error";
    default:
      return status >= 500 ? "api_error" : "invalid_request_error";
  }
}

/**
 * An error in Anthropic's envelope (docs/gateway.md#messages-errors): `type` "error" and the
 * error's `type` by status, with the service's own message and metadata beside, so a client of
 * either reads it.
 */
export const messagesErrorBody: ErrorEnvelope = Object.assign(
  (error: AppError): unknown => {
    const inner: Json = { type: errorType(statusOf(error)), message: error.message };
    if (error.metadata) inner.metadata = error.metadata;
    return { type: "error", error: inner };
  },
  { statusOf },
);

/**
 * The status the Messages door answers an error with: a provider's overload is Anthropic's own 529
 * `overloaded_error`, which its clients retry (docs/gateway.md#upstream-overloaded); every other
 * error keeps the service's status.
 */
function statusOf(error: AppError): number {
  return error.code === "upstream_overloaded" ? 529 : error.status;
}
