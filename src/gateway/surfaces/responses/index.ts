import {
  type ChatBody,
  type ChatText,
  collectTexts,
  type PathNode,
  REQUEST_ROLE,
  replaceTexts,
} from "../../../domain/chat-texts.js";
import { type Issue, invalidRequest } from "../../../domain/errors.js";
import type { AnswerDefaults, ChatTranslation, EventReader, Surface } from "../surface.js";
import { completeResponseText, ResponsesEventReader, responseUsage } from "./answer.js";
import { type ResponsesBody, ResponsesRequest } from "./schema.js";
import { chatToResponses, chatUsage, responsesToChat } from "./translate.js";
import { ChatToResponsesStream } from "./translate-stream.js";

export type { ResponsesBody } from "./schema.js";

/**
 * The chat request's reader walks every member of any request object (it only gives the members of
 * `messages` their roles), so a Responses body is read and rewritten by it as it is; the roles are
 * given afterwards (responseTexts).
 */
const asWalked = (body: ResponsesBody) => body as unknown as ChatBody;

const KEEPS_NOTHING = "this service keeps no responses or conversations";

/**
 * The service keeps no state (docs/gateway.md#responses-stateless): what would need a stored
 * response, conversation, prompt or item is a 400 naming the field, before anything is scanned.
 */
export function statelessIssue(body: ResponsesBody): Issue | undefined {
  if (body.store === true)
    return {
      path: "/store",
      message: `must be false or absent: ${KEEPS_NOTHING}, and the provider is asked to keep none`,
    };
  if (body.previous_response_id !== undefined && body.previous_response_id !== null)
    return {
      path: "/previous_response_id",
      message: `is not supported: ${KEEPS_NOTHING}; send the earlier turns in input`,
    };
  if (body.background === true)
    return { path: "/background", message: `must be false or absent: ${KEEPS_NOTHING} to poll` };
  if (body.conversation !== undefined && body.conversation !== null)
    return {
      path: "/conversation",
      message: `is not supported: ${KEEPS_NOTHING}; send the earlier turns in input`,
    };
  if (body.prompt !== undefined && body.prompt !== null)
    return {
      path: "/prompt",
      message: `is not supported: stored prompts are not read through this service; send instructions and input`,
    };
  const input = body.input;
  if (Array.isArray(input)) {
    for (let i = 0; i < input.length; i++) {
      if ((input[i] as { type?: unknown }).type === "item_reference")
        return {
          path: `/input/${i}/type`,
          message: `item_reference is not supported: ${KEEPS_NOTHING}; send the item itself`,
        };
    }
  }
  return undefined;
}

const ITEM_ROLES = new Set(["user", "system", "developer", "assistant"]);

/**
 * The role an input item's texts are read with (docs/gateway.md#responses-roles): a message's own
 * role; a function call's (and any other call's) "assistant", since the model wrote it; a call's
 * output "tool"; anything else the model produced (reasoning) "assistant".
 */
function itemRole(item: unknown): string {
  const { role, type } = item as { role?: unknown; type?: unknown };
  if (typeof role === "string" && ITEM_ROLES.has(role)) return role;
  if (typeof type === "string" && type.endsWith("_output")) return "tool";
  return "assistant";
}

/** The input item a place lies in (the node whose parent is the top-level `input` array), if any. */
function itemOf(node: PathNode): PathNode | undefined {
  for (let n: PathNode | null = node; n?.parent; n = n.parent) {
    const parent: PathNode = n.parent;
    if (parent.parent?.parent === null && parent.key === "input" && typeof n.key === "number") return n;
  }
  return undefined;
}

/**
 * The texts of a Responses request: every string of the body, read as a chat request's are
 * (docs/gateway.md#what-is-scanned), each given its role (docs/gateway.md#responses-roles):
 * `instructions` the system's, an `input` string the user's (message 0), each input item's texts
 * its item's role with the item's index as the message; tools and `text.format` stay the
 * application's (REQUEST_ROLE).
 */
function responseTexts(body: ResponsesBody): ChatText[] {
  const issue = statelessIssue(body);
  if (issue) throw invalidRequest([issue]);
  const texts = collectTexts(asWalked(body));
  for (const text of texts) {
    const { node, key, isKey } = text.place;
    if (node.parent === null) {
      if (isKey) continue;
      if (key === "instructions") text.role = "system";
      else if (key === "input") {
        text.role = "user";
        text.message = 0;
      }
      continue;
    }
    if (text.role !== REQUEST_ROLE) continue;
    const item = itemOf(node);
    if (!item) continue;
    text.role = itemRole(item.value);
    text.message = item.key as number;
  }
  return texts;
}

export function maxOutputTokens(body: ResponsesBody): number | null {
  const value = body.max_output_tokens;
  return typeof value === "number" && Number.isInteger(value) && value > 0 ? value : null;
}

/** The body with its output capped: `max_output_tokens` set, or lowered (docs/gateway.md#budgets). */
export function withOutputCap(body: ResponsesBody, cap: number | null): ResponsesBody {
  return cap === null ? body : { ...body, max_output_tokens: cap };
}

/**
 * A Responses request carried over chat completions to a provider that speaks only chat, and its
 * answer and stream back (docs/gateway.md#responses-translation).
 */
const overChat: ChatTranslation<ResponsesBody> = {
  upstreamPath: "/chat/completions",
  streamTerminator: "[DONE]",
  request: (body) => {
    const { chat, dropped } = responsesToChat(body);
    return { body: chat, dropped };
  },
  usageOf: chatUsage,
  answer: (_text, parsed, body, defaults) => JSON.stringify(chatToResponses(parsed, body, defaults)),
  events: (body, defaults) => {
    const stream = new ChatToResponsesStream(body, defaults);
    // The relay drops the chat stream's "[DONE]" before reading it: the response's closing events
    // are sent once the stream has ended and its spend is settled.
    return { read: (data) => stream.read(data), end: () => stream.finish() };
  },
};

/**
 * The OpenAI Responses API, forwarded natively to providers that speak it (docs/gateway.md#responses),
 * and translated to chat completions for those that speak only chat.
 * Its streams end with their `response.completed` event: there is no terminator to drop or send.
 */
export const responsesSurface: Surface<ResponsesBody> = {
  id: "responses",
  api: "responses",
  modelApis: ["chat", "responses"],
  route: "/api/v1/responses",
  requestSchema: ResponsesRequest,
  upstreamPath: "/responses",
  streamTerminator: undefined,
  streamEnd: "",
  model: (body) => body.model,
  streams: (body) => body.stream === true,
  collectTexts: responseTexts,
  replaceTexts: (body, replacements, texts) =>
    replaceTexts(asWalked(body), replacements, texts) as unknown as ResponsesBody,
  // The instructions are the system's message, beside the input's items (or its one string).
  messageCount: (body) =>
    (Array.isArray(body.input) ? body.input.length : typeof body.input === "string" ? 1 : 0) +
    (typeof body.instructions === "string" ? 1 : 0),
  maxOutputTokens,
  withOutputCap,
  // The provider is asked to keep nothing, whatever its own default (docs/gateway.md#responses-stateless).
  forwardBody: (body) => (body.store === false ? body : { ...body, store: false }),
  usageOf: responseUsage,
  completeAnswer: completeResponseText,
  eventReader: (_body: ResponsesBody, defaults: AnswerDefaults): EventReader =>
    new ResponsesEventReader(defaults),
  translation: overChat,
};
