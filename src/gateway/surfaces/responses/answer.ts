import type { AnswerDefaults, EventFacts, EventReader, Usage } from "../surface.js";

/**
 * The fields the OpenAI Responses API defines on every answer and stream event, filled in where a
 * provider leaves them out, so that strict clients (the reference SDK validates each answer and
 * event) read every provider alike (docs/gateway.md#responses-answers). What the provider sent is
 * never changed; a value filled in is the API's default, or null for "unknown".
 */

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Members a response object must have, with the value that says "not known" (or the API's default). */
const NULLABLE_MEMBERS = [
  "completed_at",
  "error",
  "incomplete_details",
  "instructions",
  "metadata",
  "frequency_penalty",
  "presence_penalty",
  "temperature",
  "top_p",
] as const;

/** The usage an answer's response object reports, when it reports both counts as numbers. */
export function responseUsage(response: unknown): Usage | undefined {
  if (!isObject(response)) return undefined;
  const u = response.usage;
  if (!isObject(u)) return undefined;
  const { input_tokens, output_tokens } = u;
  if (typeof input_tokens !== "number" || typeof output_tokens !== "number") return undefined;
  const usage: Usage = {
    prompt_tokens: Math.max(0, Math.ceil(input_tokens)),
    completion_tokens: Math.max(0, Math.ceil(output_tokens)),
  };
  // Tokens read from the provider's prompt cache, a part of input_tokens, priced apart where the
  // catalog says (docs/gateway.md#cache-prices).
  const details = u.input_tokens_details;
  const cached = isObject(details) ? details.cached_tokens : undefined;
  if (typeof cached === "number" && Number.isFinite(cached) && cached > 0)
    usage.cache_read_tokens = Math.ceil(cached);
  return usage;
}

/** A usage object with its required details filled in, or undefined when nothing is missing. */
function fillUsage(u: Json): Json | undefined {
  const input = typeof u.input_tokens === "number" ? u.input_tokens : 0;
  const output = typeof u.output_tokens === "number" ? u.output_tokens : 0;
  const missing =
    typeof u.input_tokens !== "number" ||
    typeof u.output_tokens !== "number" ||
    typeof u.total_tokens !== "number" ||
    !isObject(u.input_tokens_details) ||
    typeof u.input_tokens_details.cached_tokens !== "number" ||
    !isObject(u.output_tokens_details) ||
    typeof u.output_tokens_details.reasoning_tokens !== "number";
  if (!missing) return undefined;
  const out: Json = { ...u, input_tokens: input, output_tokens: output };
  if (typeof u.total_tokens !== "number") out.total_tokens = input + output;
  const inDetails = isObject(u.input_tokens_details) ? u.input_tokens_details : {};
  if (typeof inDetails.cached_tokens !== "number")
    out.input_tokens_details = { ...inDetails, cached_tokens: 0 };
  const outDetails = isObject(u.output_tokens_details) ? u.output_tokens_details : {};
  if (typeof outDetails.reasoning_tokens !== "number")
    out.output_tokens_details = { ...outDetails, reasoning_tokens: 0 };
  return out;
}

/** An output text part with `annotations` (OpenAI always sends the list), or undefined when it has it. */
function fillPart(part: unknown): Json | undefined {
  if (!isObject(part) || part.type !== "output_text" || Array.isArray(part.annotations)) return undefined;
  return { ...part, annotations: [] };
}

/** An output item with its id and status filled in, or undefined when nothing is missing. */
export function fillItem(item: unknown, fallbackId: string, status: string): Json | undefined {
  if (!isObject(item)) return undefined;
  const message = item.type === "message";
  const content = message && Array.isArray(item.content) ? (item.content as unknown[]) : undefined;
  const parts = content?.map(fillPart);
  const partsMissing = parts?.some((p) => p !== undefined) === true;
  const missing =
    typeof item.id !== "string" ||
    item.id === "" ||
    ((message || item.type === "function_call") && typeof item.status !== "string") ||
    (message && item.role !== "assistant") ||
    partsMissing;
  if (!missing) return undefined;
  const out: Json = { ...item };
  if (typeof out.id !== "string" || out.id === "") out.id = fallbackId;
  if ((message || item.type === "function_call") && typeof out.status !== "string") out.status = status;
  if (message && out.role !== "assistant") out.role = "assistant";
  if (content && parts && partsMissing) out.content = content.map((p, i) => parts[i] ?? p);
  return out;
}

/**
 * A copy of the response object with what is missing filled in, or undefined when nothing is:
 * every answer pays for this check, so it reads the fields rather than serializing to compare.
 * `status` is what a response without one is taken to be (the event that carries it says so).
 */
export function fillResponse(response: Json, defaults: AnswerDefaults, status: string): Json | undefined {
  const output = Array.isArray(response.output) ? (response.output as unknown[]) : undefined;
  const items = output?.map((item, i) => fillItem(item, `${defaults.id}-${i}`, "completed"));
  const itemsMissing = items?.some((i) => i !== undefined) === true;
  const usage = isObject(response.usage) ? fillUsage(response.usage) : undefined;
  let missing =
    typeof response.id !== "string" ||
    response.id === "" ||
    response.object !== "response" ||
    !Number.isInteger(response.created_at) ||
    typeof response.model !== "string" ||
    response.model === "" ||
    typeof response.status !== "string" ||
    output === undefined ||
    itemsMissing ||
    usage !== undefined ||
    typeof response.parallel_tool_calls !== "boolean" ||
    !("tool_choice" in response) ||
    !Array.isArray(response.tools);
  for (const member of NULLABLE_MEMBERS) missing ||= !(member in response);
  if (!missing) return undefined;
  const out: Json = { ...response };
  if (typeof out.id !== "string" || out.id === "") out.id = defaults.id;
  out.object = "response";
  if (!Number.isInteger(out.created_at)) out.created_at = defaults.created;
  if (typeof out.model !== "string" || out.model === "") out.model = defaults.model;
  if (typeof out.status !== "string") out.status = status;
  if (output === undefined) out.output = [];
  else if (items && itemsMissing) out.output = output.map((item, i) => items[i] ?? item);
  if (usage) out.usage = usage;
  // The API's own defaults for what the request leaves unset.
  if (typeof out.parallel_tool_calls !== "boolean") out.parallel_tool_calls = true;
  if (!("tool_choice" in out)) out.tool_choice = "auto";
  if (!Array.isArray(out.tools)) out.tools = [];
  for (const member of NULLABLE_MEMBERS) if (!(member in out)) out[member] = null;
  return out;
}

/**
 * The answer to send for the provider's `text` (parsed: `body`): its own bytes when nothing is
 * missing, else the filled answer serialized. An answer that is not a response object (not JSON, or
 * without `output`, `object` or `id`) is sent as it came.
 */
export function completeResponseText(text: string, body: unknown, defaults: AnswerDefaults): string {
  if (!isObject(body) || !("output" in body || "object" in body || "id" in body)) return text;
  const filled = fillResponse(body, defaults, "completed");
  return filled ? JSON.stringify(filled) : text;
}

/** The status a response carried by each lifecycle event has, when the provider leaves it out. */
const EVENT_STATUS: Record<string, string> = {
  "response.created": "in_progress",
  "response.in_progress": "in_progress",
  "response.queued": "queued",
  "response.completed": "completed",
  "response.incomplete": "incomplete",
  "response.failed": "failed",
};
/** The events whose response reports the answer's usage. */
const FINAL_EVENTS = new Set(["response.completed", "response.incomplete", "response.failed"]);
/** The events whose `delta` is output the model produced (counted when no usage is reported). */
const OUTPUT_DELTAS = new Set([
  "response.output_text.delta",
  "response.function_call_arguments.delta",
  "response.refusal.delta",
  "response.reasoning_text.delta",
  "response.reasoning_summary_text.delta",
]);
/** The events whose schema requires `logprobs` (OpenAI sends an empty list without them). */
const LOGPROB_EVENTS = new Set(["response.output_text.delta", "response.output_text.done"]);

/**
 * Reads the events of one streamed Responses answer (docs/gateway.md#responses-answers): the usage
 * of its final event (`response.completed`, `.incomplete` or `.failed`), the bytes of the output
 * deltas, and each event with what the API requires filled in (`sequence_number` numbered on from
 * the last one seen; the response object of lifecycle events; output items' ids and statuses;
 * `logprobs` of text events). An event needing nothing is sent as it came.
 */
export class ResponsesEventReader implements EventReader {
  private sequence = -1;

  constructor(private readonly defaults: AnswerDefaults) {}

  read(data: string): EventFacts {
    let event: unknown;
    try {
      event = JSON.parse(data);
    } catch {
      return { send: null, usage: undefined, contentBytes: 0 };
    }
    if (!isObject(event) || typeof event.type !== "string")
      return { send: null, usage: undefined, contentBytes: 0 };
    const type = event.type;
    let out: Json | undefined;
    if (Number.isInteger(event.sequence_number)) this.sequence = event.sequence_number as number;
    else {
      this.sequence++;
      out = { ...event, sequence_number: this.sequence };
    }
    let usage: Usage | undefined;
    let contentBytes = 0;
    const status = EVENT_STATUS[type];
    if (status !== undefined && isObject(event.response)) {
      if (FINAL_EVENTS.has(type)) usage = responseUsage(event.response);
      const filled = fillResponse(event.response, this.defaults, status);
      if (filled) out = { ...(out ?? event), response: filled };
    } else if (OUTPUT_DELTAS.has(type)) {
      if (typeof event.delta === "string") contentBytes = Buffer.byteLength(event.delta);
    }
    if (LOGPROB_EVENTS.has(type) && !Array.isArray(event.logprobs)) out = { ...(out ?? event), logprobs: [] };
    if (type === "response.output_item.added" || type === "response.output_item.done") {
      const index = Number.isInteger(event.output_index) ? (event.output_index as number) : 0;
      const item = fillItem(
        event.item,
        `${this.defaults.id}-${index}`,
        type === "response.output_item.done" ? "completed" : "in_progress",
      );
      if (item) out = { ...(out ?? event), item };
    }
    // The events about one item's parts name it: by the id its output_item event was given.
    if (
      "output_index" in event &&
      typeof event.item_id !== "string" &&
      type !== "response.output_item.added" &&
      type !== "response.output_item.done"
    ) {
      const index = Number.isInteger(event.output_index) ? (event.output_index as number) : 0;
      out = { ...(out ?? event), item_id: `${this.defaults.id}-${index}` };
    }
    const send = out ? `event: ${type}\ndata: ${JSON.stringify(out)}\n\n` : null;
    return { send, usage, contentBytes };
  }
}
