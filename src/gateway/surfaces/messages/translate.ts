import type { ChatBody, ChatMessage } from "../../../domain/chat-texts.js";
import { invalidRequest } from "../../../domain/errors.js";
import type { AnswerDefaults } from "../surface.js";

/**
 * The Anthropic Messages API on a provider that speaks only chat completions: the request in chat
 * completions, and the chat answer back as an Anthropic message (docs/gateway.md#messages-translation).
 * Pure: no clock, no I/O; the request is never mutated. The streamed answer is translated by
 * `ChatToMessagesStream` (translate-stream.ts), which builds its blocks with the functions here so
 * that both give the same message.
 *
 * The shapes read are declared here, structurally, after the Anthropic Messages API (the
 * `@anthropic-ai/sdk` package's resources/messages types are the reference; src/ does not import
 * it). Every field is read as `unknown` and checked, since a translation must refuse what it cannot
 * carry rather than forward something else.
 */

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A Messages request as read here: `model` and anything else, checked field by field. */
export interface MessagesBody {
  model: string;
  [field: string]: unknown;
}

/** What `messagesToChat` gives: the chat request, and the server tool types it left out. */
export interface MessagesChatTranslation {
  chat: ChatBody;
  /** The `type` of each tool left out (server tools), once each, in request order. */
  dropped: string[];
}

/**
 * Fields the translation reads itself; any other field of the request passes through to the chat
 * request unchanged (provider routing extensions and the like), as on the chat surface.
 */
const HANDLED = new Set([
  "model",
  "messages",
  "system",
  "tools",
  "tool_choice",
  "max_tokens",
  "stop_sequences",
  "metadata",
  "stream",
  "output_config",
  // Anthropic-only settings a chat provider rejects, whose absence leaves the answer's meaning as
  // it was (docs/gateway.md#messages-translation-requests): left out.
  "thinking",
  "service_tier",
  "inference_geo",
  "cache_control",
  "context_management",
  // Chat completions' own fields, which would otherwise pass through: refused below.
  "n",
  "stream_options",
]);

/** Fields that need what chat completions does not have: set, the request is a 400. */
const REFUSED: Record<string, string> = {
  container: "containers are not available on this model's provider",
  mcp_servers: "MCP servers are not available on this model's provider",
  output_format: "output_format is not available on this model's provider: send output_config.format",
  n: "a message is one answer: n is not available",
  stream_options: "stream_options is a chat completions field",
};

/** What the error flag of a tool result becomes: chat's tool messages have no such flag. */
export const TOOL_ERROR_PREFIX = "Error: ";

function refuse(path: string, message: string): never {
  throw invalidRequest([{ path, message }]);
}

function present(value: unknown): boolean {
  return value !== undefined && value !== null;
}

/**
 * The Messages request as a chat completions request (docs/gateway.md#messages-translation).
 * Throws the service's 400 (`invalid_request`, `issues[0].path` naming the field or block) for what
 * cannot be translated without changing its meaning.
 */
export function messagesToChat(body: MessagesBody): MessagesChatTranslation {
  if (!isObject(body)) refuse("", "the body must be an object");
  if (typeof body.model !== "string") refuse("/model", "model must be a string");
  for (const field of Object.keys(REFUSED)) {
    if (present(body[field])) refuse(`/${field}`, REFUSED[field] as string);
  }

  const chat: ChatBody = { model: body.model, messages: [] };
  for (const [key, value] of Object.entries(body)) {
    if (HANDLED.has(key) || key in REFUSED) continue;
    // A "__proto__" member (JSON.parse makes it an own property) stays a member, as on the chat
    // surface, instead of setting the copy's prototype.
    if (key === "__proto__")
      Object.defineProperty(chat, key, { value, enumerable: true, writable: true, configurable: true });
    else chat[key] = value;
  }

  const messages = chat.messages;
  translateSystem(body.system, messages);
  translateMessages(body.messages, messages);

  const dropped: string[] = [];
  const tools = translateTools(body.tools, dropped);
  if (tools) chat.tools = tools;
  translateToolChoice(body.tool_choice, tools, chat);

  if (present(body.max_tokens)) chat.max_tokens = body.max_tokens;
  if (present(body.stop_sequences)) {
    if (!Array.isArray(body.stop_sequences)) refuse("/stop_sequences", "stop_sequences must be an array");
    chat.stop = body.stop_sequences;
  }
  if (present(body.metadata)) {
    if (!isObject(body.metadata)) refuse("/metadata", "metadata must be an object");
    const userId = body.metadata.user_id;
    if (present(userId)) {
      if (typeof userId !== "string") refuse("/metadata/user_id", "user_id must be a string");
      chat.user = userId;
    }
  }
  translateOutputConfig(body.output_config, chat);
  if (body.stream !== undefined) chat.stream = body.stream;
  // The usage chunk is what settles a stream's spend and fills the message's usage.
  if (body.stream === true) chat.stream_options = { include_usage: true };
  return { chat, dropped };
}

function stringField(item: Json, field: string, at: string): string {
  const value = item[field];
  if (typeof value !== "string") refuse(`${at}/${field}`, `${field} must be a string`);
  return value;
}

/** Text blocks' texts, for `system` and tool results; anything else is refused at its type. */
function textsOf(blocks: unknown[], at: string, what: string): string[] {
  return blocks.map((block, i) => {
    const blockAt = `${at}/${i}`;
    if (!isObject(block)) refuse(blockAt, "a content block must be an object");
    if (block.type !== "text")
      refuse(`${blockAt}/type`, `${what} holds only text blocks on this model's provider`);
    return stringField(block, "text", blockAt);
  });
}

function translateSystem(system: unknown, messages: ChatMessage[]): void {
  if (!present(system)) return;
  if (typeof system === "string") {
    messages.push({ role: "system", content: system });
    return;
  }
  if (!Array.isArray(system)) refuse("/system", "system must be a string or an array of text blocks");
  // One system message: some chat providers read only the first, and only as a string.
  messages.push({ role: "system", content: textsOf(system, "/system", "system").join("\n") });
}

function translateMessages(input: unknown, messages: ChatMessage[]): void {
  if (!Array.isArray(input)) refuse("/messages", "messages must be an array");
  if (input.length === 0) refuse("/messages", "messages must not be empty");
  input.forEach((message, i) => {
    const at = `/messages/${i}`;
    if (!isObject(message)) refuse(at, "a message must be an object");
    const role = message.role;
    if (role === "system") {
      // A system turn among the messages (Claude Code sends one): a system message in its place.
      const text = message.content;
      messages.push({
        role: "system",
        content:
          typeof text === "string"
            ? text
            : Array.isArray(text)
              ? textsOf(text, `${at}/content`, "system").join("\n")
              : refuse(`${at}/content`, "content must be a string or an array of blocks"),
      });
      return;
    }
    if (role !== "user" && role !== "assistant")
      refuse(`${at}/role`, "role must be user, assistant or system");
    const content = message.content;
    if (typeof content === "string") {
      messages.push({ role, content });
      return;
    }
    if (!Array.isArray(content)) refuse(`${at}/content`, "content must be a string or an array of blocks");
    if (role === "user") translateUser(content, `${at}/content`, messages);
    else messages.push(translateAssistant(content, `${at}/content`));
  });
}

/**
 * A user turn: its tool results first, each a `tool` message (chat wants them right after the
 * assistant turn that called), then the rest of its content as one user message.
 */
function translateUser(blocks: unknown[], at: string, messages: ChatMessage[]): void {
  const parts: Json[] = [];
  blocks.forEach((block, j) => {
    const blockAt = `${at}/${j}`;
    if (!isObject(block)) refuse(blockAt, "a content block must be an object");
    switch (block.type) {
      case "tool_result":
        messages.push(toolMessage(block, blockAt));
        return;
      case "thinking":
      case "redacted_thinking":
        return;
      default:
        parts.push(userPart(block, blockAt));
    }
  });
  if (parts.length > 0) messages.push({ role: "user", content: parts });
}

function toolMessage(block: Json, at: string): ChatMessage {
  const id = stringField(block, "tool_use_id", at);
  const content = block.content;
  let text: string;
  if (!present(content)) text = "";
  else if (typeof content === "string") text = content;
  else if (Array.isArray(content)) text = textsOf(content, `${at}/content`, "a tool result").join("\n");
  else refuse(`${at}/content`, "content must be a string or an array of text blocks");
  if (present(block.is_error) && typeof block.is_error !== "boolean")
    refuse(`${at}/is_error`, "is_error must be a boolean");
  // The model must still learn that the call failed: said in the text, the one place chat has.
  if (block.is_error === true) text = TOOL_ERROR_PREFIX + text;
  return { role: "tool", tool_call_id: id, content: text };
}

/** One block of a user message as a chat content part. */
function userPart(block: Json, at: string): Json {
  switch (block.type) {
    case "text":
      return { type: "text", text: stringField(block, "text", at) };
    case "image": {
      const source = sourceOf(block, at);
      if (source.type === "base64") {
        const media = stringField(source, "media_type", `${at}/source`);
        const data = stringField(source, "data", `${at}/source`);
        return { type: "image_url", image_url: { url: `data:${media};base64,${data}` } };
      }
      if (source.type === "url")
        return { type: "image_url", image_url: { url: stringField(source, "url", `${at}/source`) } };
      return refuse(`${at}/source/type`, "only base64 and url images are available on this model's provider");
    }
    case "document": {
      const source = sourceOf(block, at);
      if (source.type === "text") return { type: "text", text: stringField(source, "data", `${at}/source`) };
      if (source.type === "base64") {
        const media = stringField(source, "media_type", `${at}/source`);
        const file: Json = {
          file_data: `data:${media};base64,${stringField(source, "data", `${at}/source`)}`,
        };
        if (typeof block.title === "string") file.filename = block.title;
        return { type: "file", file };
      }
      return refuse(
        `${at}/source/type`,
        "only text and base64 documents are available on this model's provider",
      );
    }
    default:
      return refuse(`${at}/type`, "this content block type is not available on this model's provider");
  }
}

function sourceOf(block: Json, at: string): Json {
  if (!isObject(block.source)) refuse(`${at}/source`, "source must be an object");
  return block.source;
}

/** An assistant turn: its text joined, its tool_use blocks as tool calls; thinking left out. */
function translateAssistant(blocks: unknown[], at: string): ChatMessage {
  let text = "";
  let hasText = false;
  const calls: Json[] = [];
  blocks.forEach((block, j) => {
    const blockAt = `${at}/${j}`;
    if (!isObject(block)) refuse(blockAt, "a content block must be an object");
    switch (block.type) {
      case "text":
        text += stringField(block, "text", blockAt);
        hasText = true;
        return;
      case "tool_use": {
        const input = block.input;
        if (!isObject(input)) refuse(`${blockAt}/input`, "input must be an object");
        calls.push({
          id: stringField(block, "id", blockAt),
          type: "function",
          function: { name: stringField(block, "name", blockAt), arguments: JSON.stringify(input) },
        });
        return;
      }
      case "thinking":
      case "redacted_thinking":
        return;
      default:
        refuse(`${blockAt}/type`, "an assistant message holds text, tool_use and thinking blocks here");
    }
  });
  const message: ChatMessage = { role: "assistant", content: hasText || calls.length === 0 ? text : null };
  if (calls.length > 0) message.tool_calls = calls;
  return message;
}

function translateTools(tools: unknown, dropped: string[]): Json[] | undefined {
  if (!present(tools)) return undefined;
  if (!Array.isArray(tools)) refuse("/tools", "tools must be an array");
  const out: Json[] = [];
  tools.forEach((tool, i) => {
    const at = `/tools/${i}`;
    if (!isObject(tool)) refuse(at, "a tool must be an object");
    const type = tool.type;
    if (present(type) && type !== "custom") {
      if (typeof type !== "string") refuse(`${at}/type`, "type must be a string");
      // A server tool runs at Anthropic (web search, code execution) or is defined by it (bash,
      // text editor, computer): a chat provider has none to run or define.
      if (!dropped.includes(type)) dropped.push(type);
      return;
    }
    const fn: Json = { name: stringField(tool, "name", at) };
    if (present(tool.description)) fn.description = tool.description;
    if (!isObject(tool.input_schema)) refuse(`${at}/input_schema`, "input_schema must be an object");
    fn.parameters = tool.input_schema;
    if (present(tool.strict)) fn.strict = tool.strict;
    out.push({ type: "function", function: fn });
  });
  return out.length > 0 ? out : undefined;
}

function translateToolChoice(choice: unknown, tools: Json[] | undefined, chat: ChatBody): void {
  if (!present(choice)) return;
  if (!isObject(choice)) refuse("/tool_choice", "tool_choice must be an object");
  const type = choice.type;
  if (type !== "auto" && type !== "any" && type !== "tool" && type !== "none")
    refuse("/tool_choice/type", "tool_choice type must be auto, any, tool or none");
  if (present(choice.disable_parallel_tool_use) && typeof choice.disable_parallel_tool_use !== "boolean")
    refuse("/tool_choice/disable_parallel_tool_use", "disable_parallel_tool_use must be a boolean");
  if (!tools) {
    // Chat providers refuse a tool_choice without tools; "auto" and "none" then mean nothing.
    if (type === "auto" || type === "none") return;
    refuse("/tool_choice/type", "no tool this model's provider can call was given to choose");
  }
  if (type === "tool") {
    const name = stringField(choice, "name", "/tool_choice");
    if (!tools.some((tool) => (tool.function as Json).name === name))
      refuse("/tool_choice/name", "the chosen tool is not one this model's provider can call");
    chat.tool_choice = { type: "function", function: { name } };
  } else chat.tool_choice = type === "any" ? "required" : type;
  if (choice.disable_parallel_tool_use === true) chat.parallel_tool_calls = false;
}

/** Structured output and effort, where chat has them. */
function translateOutputConfig(config: unknown, chat: ChatBody): void {
  if (!present(config)) return;
  if (!isObject(config)) refuse("/output_config", "output_config must be an object");
  if (present(config.effort)) chat.reasoning_effort = config.effort;
  const format = config.format;
  if (!present(format)) return;
  if (!isObject(format) || format.type !== "json_schema")
    refuse("/output_config/format/type", "format type must be json_schema");
  if (!isObject(format.schema)) refuse("/output_config/format/schema", "schema must be an object");
  chat.response_format = {
    type: "json_schema",
    json_schema: { name: "output", schema: format.schema, strict: true },
  };
}

/* The answer. */

/** A content block of the answer as the translation holds it. */
export type AnswerBlock =
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; arguments: string };

/** The base the message's id is made of: the gateway's id without a prefix. */
export function messageId(defaults: AnswerDefaults): string {
  return defaults.id.startsWith("msg_") ? defaults.id : `msg_${defaults.id}`;
}

/** A tool call's id, or one made from the gateway's id when the provider sent none. */
export function toolUseId(id: unknown, defaults: AnswerDefaults, n: number): string {
  return typeof id === "string" && id !== "" ? id : `toolu_${defaults.id}_${n}`;
}

/**
 * A tool call's arguments as a tool_use block's input: the JSON object they are, or `{}` when they
 * are not one (empty, cut short, or another JSON value), since `input` must be an object.
 */
export function toolInput(args: string): Json {
  try {
    const parsed: unknown = JSON.parse(args);
    if (isObject(parsed)) return parsed;
  } catch {
    // Not JSON: the empty input below.
  }
  return {};
}

export function renderBlock(block: AnswerBlock): Json {
  if (block.type === "text") return { type: "text", text: block.text };
  return { type: "tool_use", id: block.id, name: block.name, input: toolInput(block.arguments) };
}

/**
 * The chat finish reason as a stop reason. `stop_sequence` is never given: chat does not say
 * whether a stop sequence or the model ended the answer.
 */
export function stopReason(finish: string | null, hasCalls: boolean, refused: boolean): string {
  if (refused || finish === "content_filter") return "refusal";
  if (finish === "length") return "max_tokens";
  if (finish === "tool_calls" || finish === "function_call" || hasCalls) return "tool_use";
  return "end_turn";
}

function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? Math.max(0, Math.ceil(value)) : 0;
}

export { chatUsage } from "../../chat-usage.js";

/**
 * A chat usage object in the Messages shape. Anthropic's `input_tokens` leaves out the tokens read
 * from and written to the cache, which chat's `prompt_tokens` includes: they are taken out of it.
 * All zero when the answer reported none.
 */
export function messagesUsage(usage: unknown): {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
} {
  const u = isObject(usage) ? usage : {};
  const details = isObject(u.prompt_tokens_details) ? u.prompt_tokens_details : {};
  const read = count(details.cached_tokens);
  const written = count(details.cache_write_tokens);
  return {
    input_tokens: Math.max(0, count(u.prompt_tokens) - read - written),
    output_tokens: count(u.completion_tokens),
    cache_creation_input_tokens: written,
    cache_read_input_tokens: read,
  };
}

/** The fixed error event a failed upstream stream ends with: the upstream's own text is not relayed. */
export const UPSTREAM_FAILURE = { type: "api_error", message: "Upstream provider error" };

/**
 * The message's blocks from a chat message: its text (and refusal, which is the model's text
 * too), then one tool_use block per tool call.
 */
function blocksOf(message: Json, defaults: AnswerDefaults): AnswerBlock[] {
  const blocks: AnswerBlock[] = [];
  const text =
    (typeof message.content === "string" ? message.content : "") +
    (typeof message.refusal === "string" ? message.refusal : "");
  if (text !== "") blocks.push({ type: "text", text });
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
  calls.forEach((call, n) => {
    const c = isObject(call) ? call : {};
    const fn = isObject(c.function) ? c.function : {};
    blocks.push({
      type: "tool_use",
      id: toolUseId(c.id, defaults, n),
      name: typeof fn.name === "string" ? fn.name : "",
      arguments: typeof fn.arguments === "string" ? fn.arguments : "",
    });
  });
  return blocks;
}

/**
 * A whole chat completion answer as an Anthropic message (docs/gateway.md#messages-translation-answers).
 * The request is not read yet (an answer echoes none of it); it is taken so that the stream and the
 * whole answer keep one signature.
 */
export function chatToMessages(chatAnswer: unknown, _request: MessagesBody, defaults: AnswerDefaults): Json {
  const answer = isObject(chatAnswer) ? chatAnswer : {};
  const choice = Array.isArray(answer.choices) && isObject(answer.choices[0]) ? answer.choices[0] : {};
  const message = isObject(choice.message) ? choice.message : {};
  const finish = typeof choice.finish_reason === "string" ? choice.finish_reason : null;
  const blocks = blocksOf(message, defaults);
  const refused = typeof message.refusal === "string" && message.refusal !== "";
  return {
    id: messageId(defaults),
    type: "message",
    role: "assistant",
    model: typeof answer.model === "string" && answer.model !== "" ? answer.model : defaults.model,
    content: blocks.map(renderBlock),
    stop_reason: stopReason(
      finish,
      blocks.some((b) => b.type === "tool_use"),
      refused,
    ),
    stop_sequence: null,
    usage: messagesUsage(answer.usage),
  };
}
