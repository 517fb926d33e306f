import { type ChatBody, collectTexts, replaceTexts } from "../../../domain/chat-texts.js";
import type { AnswerDefaults, EventReader, Surface } from "../surface.js";
import { completeAnswerText } from "./response-fields.js";
import { ChatCompletionRequest } from "./schema.js";
import { ChunkReader, usageOf } from "./stream-chunks.js";

/**
 * The body with its output capped: the limit fields it set are lowered, and `max_tokens` is set
 * when it set neither (the field every OpenAI-compatible provider reads).
 */
export function withOutputCap(body: ChatBody, cap: number | null): ChatBody {
  if (cap === null) return body;
  const capped: ChatBody = { ...body };
  const hasCompletion = typeof body.max_completion_tokens === "number";
  const hasTokens = typeof body.max_tokens === "number";
  if (hasCompletion) capped.max_completion_tokens = cap;
  if (hasTokens || !hasCompletion) capped.max_tokens = cap;
  return capped;
}

export function maxOutputTokens(body: ChatBody): number | null {
  const value = body.max_completion_tokens ?? body.max_tokens;
  return typeof value === "number" && Number.isInteger(value) && value > 0 ? value : null;
}

/** OpenAI chat completions (docs/gateway.md#what-happens-to-a-request). */
export const chatSurface: Surface<ChatBody> = {
  id: "chat",
  api: "chat",
  route: "/api/v1/chat/completions",
  requestSchema: ChatCompletionRequest,
  upstreamPath: "/chat/completions",
  streamTerminator: "[DONE]",
  streamEnd: "data: [DONE]\n\n",
  model: (body) => body.model,
  streams: (body) => body.stream === true,
  collectTexts,
  replaceTexts,
  messageCount: (body) => body.messages.length,
  maxOutputTokens,
  withOutputCap,
  // A stream is asked to report its usage, which the spend is settled on (docs/gateway.md#streaming).
  forwardBody: (body, client, stream) =>
    stream
      ? { ...body, stream_options: { ...(client.stream_options as object | undefined), include_usage: true } }
      : body,
  usageOf,
  completeAnswer: completeAnswerText,
  eventReader: (body: ChatBody, defaults: AnswerDefaults): EventReader =>
    // The usage chunk goes on to the client only when the client asked for it too.
    new ChunkReader(
      defaults,
      (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true,
    ),
};
