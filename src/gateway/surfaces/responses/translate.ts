import type { ChatBody, ChatMessage } from "../../../domain/chat-texts.js";
import { invalidRequest } from "../../../domain/errors.js";
import type { AnswerDefaults } from "../surface.js";

/**
 * The OpenAI Responses API on a provider that speaks only chat completions: the request in chat
 * completions, and the chat answer back as a Responses answer (docs/gateway.md#responses-translation).
 * Pure: no clock, no I/O; the request is never mutated. The streamed answer is translated by
 * `ChatToResponsesStream` (translate-stream.ts), which builds its items with the functions here so
 * that both give the same response object.
 *
 * The shapes read are declared here, structurally, after the OpenAI Responses API (the `openai`
 * package's resources/responses types are the reference; src/ does not import it). Every field is
 * read as `unknown` and checked, since a translation must refuse what it cannot carry rather than
 * forward something else.
 */

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A Responses request as read here: `model` and anything else, checked field by field. */
export interface ResponsesBody {
  model: string;
  [field: string]: unknown;
}

/** A function tool of the Responses API (chat nests the same fields under `function`). */
export interface ResponsesFunctionTool {
  type: "function";
  name: string;
  description?: string | null;
  parameters?: Json | null;
  strict?: boolean | null;
}

/** What `responsesToChat` gives: the chat request, and the hosted tool types it left out. */
export interface ChatTranslation {
  chat: ChatBody;
  /** The `type` of each tool left out (hosted tools), once each, in request order. */
  dropped: string[];
}

/**
 * Fields the translation reads itself; any other field of the request passes through to the chat
 * request unchanged (provider routing extensions and the like), as on the chat surface.
 */
const HANDLED = new Set([
  "model",
  "input",
  "instructions",
  "tools",
  "tool_choice",
  "max_output_tokens",
  "text",
  "reasoning",
  "stream",
  "stream_options",
  "include",
  "store",
  "truncation",
  "background",
  "previous_response_id",
  "conversation",
  "prompt",
  "max_tool_calls",
  "top_logprobs",
  "messages",
  "n",
]);

/** Fields that need state or features chat completions does not have: set, the request is a 400. */
const REFUSED: Record<string, string> = {
  previous_response_id: "stored responses are not available on this model's provider",
  conversation: "conversations are not available on this model's provider",
  prompt: "stored prompts are not available on this model's provider",
  background: "background responses are not available on this model's provider",
  max_tool_calls: "max_tool_calls is not available on this model's provider",
  top_logprobs: "top_logprobs is not available on this model's provider",
  // Chat completions' own fields, which would otherwise pass through: the prompt is `input`, and a
  // response is one answer.
  messages: "messages is a chat completions field: send input",
  n: "a response is one answer: n is not available",
};

/** `include` values that are accepted and ignored: what they ask for cannot occur (see the docs). */
const INCLUDE_IGNORED = new Set(["reasoning.encrypted_content"]);

function refuse(path: string, message: string): never {
  throw invalidRequest([{ path, message }]);
}

/**
 * The Responses request as a chat completions request (docs/gateway.md#responses-translation).
 * Throws the service's 400 (`invalid_request`, `issues[0].path` naming the field) for what cannot
 * be translated without changing its meaning.
 */
export function responsesToChat(body: ResponsesBody): ChatTranslation {
  if (!isObject(body)) refuse("", "the body must be an object");
  if (typeof body.model !== "string") refuse("/model", "model must be a string");
  for (const field of Object.keys(REFUSED)) {
    const value = body[field];
    if (value === undefined || value === null || (field === "background" && value === false)) continue;
    refuse(`/${field}`, REFUSED[field] as string);
  }
  if (body.truncation !== undefined && body.truncation !== null && body.truncation !== "disabled")
    refuse("/truncation", 'only "disabled" is available on this model\'s provider');
  checkInclude(body.include);

  const chat: ChatBody = { model: body.model, messages: [] };
  for (const [key, value] of Object.entries(body)) {
    if (HANDLED.has(key)) continue;
    // A "__proto__" member (JSON.parse makes it an own property) stays a member, as on the chat
    // surface, instead of setting the copy's prototype.
    if (key === "__proto__")
      Object.defineProperty(chat, key, { value, enumerable: true, writable: true, configurable: true });
    else chat[key] = value;
  }

  const messages = chat.messages;
  if (body.instructions !== undefined && body.instructions !== null) {
    if (typeof body.instructions !== "string") refuse("/instructions", "instructions must be a string");
    messages.push({ role: "system", content: body.instructions });
  }
  translateInput(body.input, messages);
  if (messages.length === 0) refuse("/input", "input is required");

  const dropped: string[] = [];
  const tools = translateTools(body.tools, dropped);
  if (tools) chat.tools = tools;
  if (body.tool_choice !== undefined && body.tool_choice !== null)
    chat.tool_choice = translateToolChoice(body.tool_choice);

  if (body.max_output_tokens !== undefined && body.max_output_tokens !== null)
    chat.max_tokens = body.max_output_tokens;
  translateText(body.text, chat);
  if (body.reasoning !== undefined && body.reasoning !== null) {
    if (!isObject(body.reasoning)) refuse("/reasoning", "reasoning must be an object");
    const effort = body.reasoning.effort;
    if (effort !== undefined && effort !== null) chat.reasoning_effort = effort;
  }
  if (body.stream !== undefined) chat.stream = body.stream;
  // The usage chunk is what settles a stream's spend and fills the response's usage.
  if (body.stream === true) chat.stream_options = { include_usage: true };
  return { chat, dropped };
}

function checkInclude(include: unknown): void {
  if (include === undefined || include === null) return;
  if (!Array.isArray(include)) refuse("/include", "include must be an array");
  include.forEach((value, i) => {
    if (typeof value !== "string" || !INCLUDE_IGNORED.has(value))
      refuse(`/include/${i}`, "this include value is not available on this model's provider");
  });
}

/** Input items in chat messages, appended to `messages`. */
function translateInput(input: unknown, messages: ChatMessage[]): void {
  if (input === undefined || input === null) return;
  if (typeof input === "string") {
    messages.push({ role: "user", content: input });
    return;
  }
  if (!Array.isArray(input)) refuse("/input", "input must be a string or an array of items");
  // The tool calls of the assistant message the current run of function calls is gathered into.
  let calls: unknown[] | undefined;
  // The last message came from an assistant message item: calls right after it join it.
  let lastWasAssistantItem = false;
  input.forEach((item, i) => {
    const at = `/input/${i}`;
    if (!isObject(item)) refuse(at, "an input item must be an object");
    const type = item.type ?? "message";
    if (type === "function_call") {
      const call = {
        id: stringField(item, "call_id", at),
        type: "function",
        function: { name: stringField(item, "name", at), arguments: stringField(item, "arguments", at) },
      };
      if (calls) {
        calls.push(call);
        return;
      }
      // Calls that follow the model's text are one chat turn: its text and its tool calls.
      const last = messages[messages.length - 1];
      if (last && last.role === "assistant" && last.tool_calls === undefined && lastWasAssistantItem) {
        calls = [call];
        last.tool_calls = calls;
      } else {
        calls = [call];
        messages.push({ role: "assistant", content: null, tool_calls: calls });
      }
      lastWasAssistantItem = false;
      return;
    }
    calls = undefined;
    lastWasAssistantItem = false;
    if (type === "message") {
      const message = translateMessage(item, at);
      messages.push(message);
      lastWasAssistantItem = message.role === "assistant";
      return;
    }
    if (type === "function_call_output") {
      const callId = stringField(item, "call_id", at);
      const output = item.output;
      let content: unknown;
      if (typeof output === "string") content = output;
      else if (Array.isArray(output))
        content = output.map((part, j) => translatePart(part, `${at}/output/${j}`));
      else refuse(`${at}/output`, "output must be a string or an array of content parts");
      messages.push({ role: "tool", tool_call_id: callId, content });
      return;
    }
    // The model's own reasoning, which a chat provider cannot take back: left out.
    if (type === "reasoning") return;
    refuse(`${at}/type`, "this input item type is not available on this model's provider");
  });
}

function stringField(item: Json, field: string, at: string): string {
  const value = item[field];
  if (typeof value !== "string") refuse(`${at}/${field}`, `${field} must be a string`);
  return value;
}

const ROLES = new Set(["user", "system", "developer", "assistant"]);

function translateMessage(item: Json, at: string): ChatMessage {
  const role = item.role;
  if (typeof role !== "string" || !ROLES.has(role))
    refuse(`${at}/role`, "role must be user, system, developer or assistant");
  const content = item.content;
  if (typeof content === "string") return { role, content };
  if (!Array.isArray(content))
    refuse(`${at}/content`, "content must be a string or an array of content parts");
  if (role !== "assistant")
    return { role, content: content.map((part, j) => translatePart(part, `${at}/content/${j}`)) };
  // An earlier answer of the model: its text joined, a refusal in chat's own field.
  let text = "";
  let refusal: string | undefined;
  content.forEach((part, j) => {
    const partAt = `${at}/content/${j}`;
    if (!isObject(part)) refuse(partAt, "a content part must be an object");
    if (part.type === "output_text" || part.type === "input_text") text += stringField(part, "text", partAt);
    else if (part.type === "refusal") refusal = (refusal ?? "") + stringField(part, "refusal", partAt);
    else refuse(`${partAt}/type`, "an assistant message holds output_text and refusal parts");
  });
  const message: ChatMessage = { role, content: text };
  if (refusal !== undefined) message.refusal = refusal;
  return message;
}

/** One content part of a user, system or developer message (or of a function call's output). */
function translatePart(part: unknown, at: string): Json {
  if (!isObject(part)) refuse(at, "a content part must be an object");
  switch (part.type) {
    case "input_text":
    case "output_text":
      return { type: "text", text: stringField(part, "text", at) };
    case "input_image": {
      if (part.file_id !== undefined && part.file_id !== null)
        refuse(`${at}/file_id`, "files cannot be referenced on this model's provider: send image_url");
      const imageUrl: Json = { url: stringField(part, "image_url", at) };
      if (part.detail !== undefined && part.detail !== null) imageUrl.detail = part.detail;
      return { type: "image_url", image_url: imageUrl };
    }
    case "input_file": {
      if (part.file_id !== undefined && part.file_id !== null)
        refuse(`${at}/file_id`, "files cannot be referenced on this model's provider: send file_data");
      if (part.file_url !== undefined && part.file_url !== null)
        refuse(`${at}/file_url`, "file links are not available on this model's provider: send file_data");
      const file: Json = { file_data: stringField(part, "file_data", at) };
      if (typeof part.filename === "string") file.filename = part.filename;
      return { type: "file", file };
    }
    case "input_audio":
      if (!isObject(part.input_audio)) refuse(`${at}/input_audio`, "input_audio must be an object");
      return { type: "input_audio", input_audio: part.input_audio };
    default:
      return refuse(`${at}/type`, "this content part type is not available on this model's provider");
  }
}

function translateTools(tools: unknown, dropped: string[]): Json[] | undefined {
  if (tools === undefined || tools === null) return undefined;
  if (!Array.isArray(tools)) refuse("/tools", "tools must be an array");
  const out: Json[] = [];
  tools.forEach((tool, i) => {
    const at = `/tools/${i}`;
    if (!isObject(tool) || typeof tool.type !== "string") refuse(`${at}/type`, "a tool must have a type");
    if (tool.type !== "function") {
      // A hosted tool runs at the Responses provider; a chat provider has none to run.
      if (!dropped.includes(tool.type)) dropped.push(tool.type);
      return;
    }
    const fn: Json = { name: stringField(tool, "name", at) };
    if (tool.description !== undefined && tool.description !== null) fn.description = tool.description;
    if (tool.parameters !== undefined && tool.parameters !== null) fn.parameters = tool.parameters;
    // Left out when unset: Responses then uses strict mode only where the schema allows it.
    if (tool.strict !== undefined && tool.strict !== null) fn.strict = tool.strict;
    out.push({ type: "function", function: fn });
  });
  return out.length > 0 ? out : undefined;
}

function translateToolChoice(choice: unknown): unknown {
  if (choice === "auto" || choice === "none" || choice === "required") return choice;
  if (!isObject(choice))
    refuse("/tool_choice", 'tool_choice must be "auto", "none", "required" or an object');
  if (choice.type === "function")
    return { type: "function", function: { name: stringField(choice, "name", "/tool_choice") } };
  if (choice.type === "allowed_tools") {
    const tools = choice.tools;
    if (!Array.isArray(tools)) refuse("/tool_choice/tools", "tools must be an array");
    const named = tools.map((tool, i) => {
      const at = `/tool_choice/tools/${i}`;
      if (!isObject(tool) || tool.type !== "function")
        refuse(at, "only function tools can be chosen on this model's provider");
      return { type: "function", function: { name: stringField(tool, "name", at) } };
    });
    return { type: "allowed_tools", allowed_tools: { mode: choice.mode ?? "auto", tools: named } };
  }
  return refuse("/tool_choice/type", "only function tools can be chosen on this model's provider");
}

function translateText(text: unknown, chat: ChatBody): void {
  if (text === undefined || text === null) return;
  if (!isObject(text)) refuse("/text", "text must be an object");
  if (text.verbosity !== undefined && text.verbosity !== null) chat.verbosity = text.verbosity;
  const format = text.format;
  if (format === undefined || format === null) return;
  if (!isObject(format)) refuse("/text/format", "format must be an object");
  if (format.type === "text") return;
  if (format.type === "json_object") {
    chat.response_format = { type: "json_object" };
    return;
  }
  if (format.type === "json_schema") {
    const schema: Json = { name: stringField(format, "name", "/text/format") };
    if (format.description !== undefined && format.description !== null)
      schema.description = format.description;
    if (!isObject(format.schema)) refuse("/text/format/schema", "schema must be an object");
    schema.schema = format.schema;
    if (format.strict !== undefined && format.strict !== null) schema.strict = format.strict;
    chat.response_format = { type: "json_schema", json_schema: schema };
    return;
  }
  refuse("/text/format/type", "format type must be text, json_object or json_schema");
}

/* The answer. */

/** What the answer's ids and times are made from: the gateway's defaults, plus when it completed. */
export interface ResponsesDefaults extends AnswerDefaults {
  /** Unix seconds the response completed; absent, the answer's creation time. */
  completedAt?: number;
}

/**
 * One output item as the translation holds it, before it is written in the Responses shape.
 * `finished`: another item followed it, so it is complete whatever the answer's end; the items the
 * answer ended in take the response's status (incomplete when it was cut short).
 */
export type OutputItem = { finished?: boolean } & (
  | { kind: "reasoning"; id: string; text: string }
  | { kind: "message"; id: string; text: string; refusal: string }
  | { kind: "call"; id: string; callId: string; name: string; arguments: string }
);

/** The parts of a chat answer that make a response, whether whole or gathered from a stream. */
export interface AnswerFacts {
  created: number;
  model: string;
  finishReason: string | null;
  items: OutputItem[];
  usage: Json | undefined;
  /** The upstream failed (an error in place of an answer, or finish_reason "error"). */
  failed: boolean;
}

/** The base the response's and its items' ids are made of: the gateway's id without a prefix. */
export function idBase(defaults: AnswerDefaults): string {
  return defaults.id.startsWith("resp_") ? defaults.id.slice(5) : defaults.id;
}

export const itemIds = {
  reasoning: (base: string) => `rs_${base}`,
  message: (base: string, n: number) => (n === 0 ? `msg_${base}` : `msg_${base}_${n}`),
  call: (base: string, n: number) => `fc_${base}_${n}`,
};

/** An output item in the Responses shape. */
export function renderItem(item: OutputItem, status: "completed" | "in_progress" | "incomplete"): Json {
  switch (item.kind) {
    case "reasoning":
      return {
        type: "reasoning",
        id: item.id,
        status,
        summary: [],
        content: [{ type: "reasoning_text", text: item.text }],
      };
    case "message":
      return { type: "message", id: item.id, role: "assistant", status, content: messageParts(item) };
    case "call":
      return {
        type: "function_call",
        id: item.id,
        call_id: item.callId,
        name: item.name,
        arguments: item.arguments,
        status,
      };
  }
}

/** A message's parts: its text (also when empty and nothing else is there), then its refusal. */
export function messageParts(item: { text: string; refusal: string }): Json[] {
  const parts: Json[] = [];
  if (item.text !== "" || item.refusal === "") parts.push(outputText(item.text));
  if (item.refusal !== "") parts.push({ type: "refusal", refusal: item.refusal });
  return parts;
}

export function outputText(text: string): Json {
  return { type: "output_text", text, annotations: [] };
}

function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? Math.max(0, Math.ceil(value)) : 0;
}

export { chatUsage } from "../../chat-usage.js";

/** A chat usage object in the Responses shape, or undefined when the answer reported none. */
export function responsesUsage(usage: unknown): Json | undefined {
  if (!isObject(usage)) return undefined;
  const input = count(usage.prompt_tokens);
  const output = count(usage.completion_tokens);
  const total = typeof usage.total_tokens === "number" ? count(usage.total_tokens) : input + output;
  const promptDetails = isObject(usage.prompt_tokens_details) ? usage.prompt_tokens_details : {};
  const completionDetails = isObject(usage.completion_tokens_details) ? usage.completion_tokens_details : {};
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: count(promptDetails.cached_tokens) },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: count(completionDetails.reasoning_tokens) },
    total_tokens: total,
  };
}

/** The fixed error a failed upstream answer is reported with: the upstream's own text is not relayed. */
export const UPSTREAM_FAILURE = { code: "server_error", message: "Upstream provider error" };

/**
 * The response object (docs/gateway.md#responses-translation): the answer's facts, and the
 * request's settings echoed as a Responses answer carries them. `status` "in_progress" is the
 * object of the stream's first events.
 */
export function responseObject(
  facts: AnswerFacts,
  request: ResponsesBody,
  defaults: ResponsesDefaults,
  inProgress = false,
): Json {
  let status = "completed";
  let incomplete: Json | null = null;
  if (inProgress) status = "in_progress";
  else if (facts.failed) status = "failed";
  else if (facts.finishReason === "length") incomplete = { reason: "max_output_tokens" };
  else if (facts.finishReason === "content_filter") incomplete = { reason: "content_filter" };
  if (incomplete) status = "incomplete";
  const itemStatus =
    status === "completed" ? "completed" : status === "in_progress" ? "in_progress" : "incomplete";
  const response: Json = {
    id: `resp_${idBase(defaults)}`,
    object: "response",
    created_at: facts.created,
    completed_at: status === "completed" ? (defaults.completedAt ?? facts.created) : null,
    status,
    error: status === "failed" ? UPSTREAM_FAILURE : null,
    incomplete_details: incomplete,
    model: facts.model,
    output: facts.items.map((item) => renderItem(item, item.finished ? "completed" : itemStatus)),
    instructions: typeof request.instructions === "string" ? request.instructions : null,
    tools: echoTools(request.tools),
    tool_choice: request.tool_choice ?? "auto",
    parallel_tool_calls:
      typeof request.parallel_tool_calls === "boolean" ? request.parallel_tool_calls : true,
    temperature: typeof request.temperature === "number" ? request.temperature : null,
    top_p: typeof request.top_p === "number" ? request.top_p : null,
    presence_penalty: typeof request.presence_penalty === "number" ? request.presence_penalty : null,
    frequency_penalty: typeof request.frequency_penalty === "number" ? request.frequency_penalty : null,
    max_output_tokens: typeof request.max_output_tokens === "number" ? request.max_output_tokens : null,
    previous_response_id: null,
    reasoning: isObject(request.reasoning) ? request.reasoning : null,
    text: isObject(request.text) ? request.text : { format: { type: "text" } },
    truncation: "disabled",
    store: false,
    background: false,
    metadata: isObject(request.metadata) ? request.metadata : {},
    user: typeof request.user === "string" ? request.user : null,
  };
  if (facts.usage && !inProgress) response.usage = facts.usage;
  return response;
}

/** The function tools the chat provider was given, in the Responses shape (hosted ones were not). */
function echoTools(tools: unknown): Json[] {
  if (!Array.isArray(tools)) return [];
  const out: Json[] = [];
  for (const tool of tools) {
    if (!isObject(tool) || tool.type !== "function") continue;
    out.push({
      type: "function",
      name: tool.name,
      description: tool.description ?? null,
      parameters: tool.parameters ?? null,
      strict: tool.strict ?? null,
    });
  }
  return out;
}

/** The first choice's message of a chat answer (Responses has one answer, chat's `n` is not set). */
function firstChoice(answer: Json): { message: Json; finishReason: string | null } {
  const choice = Array.isArray(answer.choices) && isObject(answer.choices[0]) ? answer.choices[0] : {};
  const message = isObject(choice.message) ? choice.message : {};
  const finish = choice.finish_reason;
  return { message, finishReason: typeof finish === "string" ? finish : null };
}

/** The reasoning text a chat message carries, under either name providers use. */
export function reasoningText(source: Json): string {
  const value = source.reasoning ?? source.reasoning_content;
  return typeof value === "string" ? value : "";
}

/**
 * A whole chat completion answer as a Responses answer (docs/gateway.md#responses-translation):
 * its reasoning (an item whose content is the reasoning text, with no summary), its text and
 * refusal (one message item) and its tool calls (one function_call item each), in that order.
 */
export function chatToResponses(
  chatAnswer: unknown,
  request: ResponsesBody,
  defaults: ResponsesDefaults,
): Json {
  const answer = isObject(chatAnswer) ? chatAnswer : {};
  const { message, finishReason } = firstChoice(answer);
  const base = idBase(defaults);
  const items: OutputItem[] = [];
  const reasoning = reasoningText(message);
  if (reasoning !== "") items.push({ kind: "reasoning", id: itemIds.reasoning(base), text: reasoning });
  const text = typeof message.content === "string" ? message.content : "";
  const refusal = typeof message.refusal === "string" ? message.refusal : "";
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
  const failed = isObject(answer.error) || finishReason === "error";
  // A failed answer with nothing in it has no empty message, as its stream would have none.
  if (text !== "" || refusal !== "" || (calls.length === 0 && !failed))
    items.push({ kind: "message", id: itemIds.message(base, 0), text, refusal });
  calls.forEach((call, n) => {
    const c = isObject(call) ? call : {};
    const fn = isObject(c.function) ? c.function : {};
    items.push({
      kind: "call",
      id: itemIds.call(base, n),
      callId: typeof c.id === "string" ? c.id : `call_${base}_${n}`,
      name: typeof fn.name === "string" ? fn.name : "",
      arguments: typeof fn.arguments === "string" ? fn.arguments : "",
    });
  });
  // As a stream closes them: each reasoning or message item when the next item starts; the answer
  // ends in its last item, or in its calls, which stay open to the end.
  const last = items[items.length - 1];
  for (const item of items) if (item.kind !== "call" && item !== last) item.finished = true;
  const facts: AnswerFacts = {
    created: Number.isInteger(answer.created) ? (answer.created as number) : defaults.created,
    model: typeof answer.model === "string" && answer.model !== "" ? answer.model : defaults.model,
    finishReason,
    items,
    usage: responsesUsage(answer.usage),
    failed,
  };
  return responseObject(facts, request, defaults);
}
