import type { IncomingHttpHeaders } from "node:http";
import {
  type ChatBody,
  type ChatText,
  collectTexts,
  type PathNode,
  replaceTexts,
} from "../../../domain/chat-texts.js";
import { AppError } from "../../../domain/errors.js";
import type { AnswerDefaults, ChatTranslation, EventReader, Surface } from "../surface.js";
import { completeMessageText, MessagesEventReader, messagesErrorBody, messageUsage } from "./answer.js";
import { type MessagesBody, MessagesRequest } from "./schema.js";
import { chatToMessages, chatUsage, messagesToChat } from "./translate.js";
import { ChatToMessagesStream } from "./translate-stream.js";

export type { MessagesBody } from "./schema.js";

/**
 * The chat request's reader walks every member of any request object and gives the members of
 * `messages` their roles, which is Anthropic's shape too: a Messages body is read and rewritten by
 * it as it is, and the roles it cannot know are given afterwards (messageTexts).
 */
const asWalked = (body: MessagesBody) => body as unknown as ChatBody;

/**
 * Whether a place lies in a `tool_result` block of a message's content: a tool's output, which
 * Anthropic carries in a user-role message (docs/gateway.md#messages-roles).
 */
function inToolResult(node: PathNode): boolean {
  for (let n: PathNode | null = node; n?.parent; n = n.parent) {
    const content = n.parent;
    // n is a block of messages[i].content: content's parent is the message, whose parent is `messages`.
    if (
      content.key === "content" &&
      typeof n.key === "number" &&
      content.parent?.parent?.key === "messages" &&
      content.parent.parent.parent?.parent === null
    )
      return (n.value as { type?: unknown }).type === "tool_result";
  }
  return false;
}

/**
 * The texts of a Messages request: every string of the body, read as a chat request's are
 * (docs/gateway.md#what-is-scanned), each given its role (docs/gateway.md#messages-roles): `system`
 * the system's, each message's its own role with its index as the message, a `tool_result` block's
 * "tool"; tools and other request fields stay the application's (REQUEST_ROLE).
 */
function messageTexts(body: MessagesBody): ChatText[] {
  const texts = collectTexts(asWalked(body));
  for (const text of texts) {
    const { node, key, isKey } = text.place;
    if (text.message !== null) {
      if (text.role === "user" && inToolResult(node)) text.role = "tool";
      continue;
    }
    if (node.parent === null) {
      if (!isKey && key === "system") text.role = "system";
      continue;
    }
    let top: PathNode = node;
    while (top.parent?.parent) top = top.parent;
    if (top.key === "system") text.role = "system";
  }
  return texts;
}

/** The API version a provider is sent when the client names none (Anthropic requires one). */
export const ANTHROPIC_VERSION = "2023-06-01";
const VERSION = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/;
/** Comma-separated beta names, as Anthropic's clients send them; bounded. */
const BETAS = /^[A-Za-z0-9._-]{1,128}(\s*,\s*[A-Za-z0-9._-]{1,128}){0,31}$/;

function headerIssue(name: string, message: string): AppError {
  return new AppError("invalid_request", { issues: [{ path: `/${name}`, in: "header", message }] });
}

/**
 * The client's `anthropic-version` (or the default) and `anthropic-beta`, as a native provider is
 * sent them (docs/gateway.md#messages); a value not of their form is a 400.
 */
function upstreamHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const version = headers["anthropic-version"];
  const beta = headers["anthropic-beta"];
  if (version !== undefined && (typeof version !== "string" || !VERSION.test(version)))
    throw headerIssue("anthropic-version", "must be a date, as 2023-06-01");
  const out: Record<string, string> = { "anthropic-version": version ?? ANTHROPIC_VERSION };
  if (beta !== undefined) {
    if (typeof beta !== "string" || !BETAS.test(beta))
      throw headerIssue("anthropic-beta", "must be beta names separated by commas");
    out["anthropic-beta"] = beta;
  }
  return out;
}

/** The body with its output capped: `max_tokens` lowered (docs/gateway.md#budgets). */
export function withOutputCap(body: MessagesBody, cap: number | null): MessagesBody {
  return cap === null || cap >= body.max_tokens ? body : { ...body, max_tokens: cap };
}

/**
 * The Anthropic Messages API, forwarded natively to providers that speak it (docs/gateway.md#messages).
 * Its streams end with their `message_stop` event: there is no terminator to drop or send. Its
 * errors, on this route and in its streams, are in Anthropic's envelope (docs/gateway.md#messages-errors).
 */
/**
 * A Messages request carried over chat completions to a provider that speaks only chat, and its
 * answer and stream back (docs/gateway.md#messages-translation).
 */
const overChat: ChatTranslation<MessagesBody> = {
  upstreamPath: "/chat/completions",
  streamTerminator: "[DONE]",
  request: (body) => {
    const { chat, dropped } = messagesToChat(body);
    return { body: chat, dropped };
  },
  usageOf: chatUsage,
  answer: (_text, parsed, body, defaults) => JSON.stringify(chatToMessages(parsed, body, defaults)),
  events: (body, defaults) => {
    const stream = new ChatToMessagesStream(body, defaults);
    // The relay drops the chat stream's "[DONE]" before reading it: message_delta and message_stop
    // are sent once the stream has ended and its spend is settled.
    return { read: (data) => stream.read(data), end: () => stream.end() };
  },
};

export const messagesSurface: Surface<MessagesBody> = {
  id: "messages",
  api: "messages",
  modelApis: ["chat", "messages"],
  route: "/api/v1/messages",
  keyHeader: "x-api-key",
  requestSchema: MessagesRequest,
  upstreamPath: "/messages",
  streamTerminator: undefined,
  streamEnd: "",
  model: (body) => body.model,
  streams: (body) => body.stream === true,
  collectTexts: messageTexts,
  replaceTexts: (body, replacements, texts) =>
    replaceTexts(asWalked(body), replacements, texts) as unknown as MessagesBody,
  // The system prompt is a message of its own, beside the turns.
  messageCount: (body) => body.messages.length + (body.system === undefined ? 0 : 1),
  // Required by the API: the client always sets one.
  maxOutputTokens: (body) => body.max_tokens,
  withOutputCap,
  forwardBody: (body) => body,
  upstreamHeaders,
  usageOf: messageUsage,
  completeAnswer: completeMessageText,
  eventReader: (_body: MessagesBody, defaults: AnswerDefaults): EventReader =>
    new MessagesEventReader(defaults),
  errorEvent: "error",
  errorBody: messagesErrorBody,
  translation: overChat,
};
