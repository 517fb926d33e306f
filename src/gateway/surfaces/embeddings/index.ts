import { type ChatBody, type ChatText, collectTexts, replaceTexts } from "../../../domain/chat-texts.js";
import type { EventReader, Surface, Usage } from "../surface.js";
import { completeEmbeddingsAnswer } from "./answer-fields.js";
import { EmbeddingsRequest } from "./schema.js";

export type EmbeddingsBody = EmbeddingsRequest & Record<string, unknown>;

/**
 * The chat request's reader walks every member of any request object (it only gives the members of
 * `messages` their roles), so an embeddings body is read and rewritten by it as it is.
 */
const asWalked = (body: EmbeddingsBody) => body as unknown as ChatBody;

/**
 * The texts of an embeddings request: every string of the body, read as a chat request's are
 * (docs/gateway.md#what-is-scanned), with each input string the end user's text: role "user", its
 * place in `input` as its message index (docs/gateway.md#embeddings).
 */
function embeddingTexts(body: EmbeddingsBody): ChatText[] {
  const texts = collectTexts(asWalked(body));
  for (const text of texts) {
    const { node, key } = text.place;
    if (node.parent === null && key === "input") {
      text.role = "user";
      text.message = 0;
    } else if (node.key === "input" && node.parent?.parent === null && typeof key === "number") {
      text.role = "user";
      text.message = key;
    }
  }
  return texts;
}

/** Where the input is given as token arrays, which no content filter can read; undefined for text. */
export function tokenInput(body: EmbeddingsBody): string | undefined {
  const input = body.input;
  if (!Array.isArray(input) || input.length === 0) return undefined;
  if (typeof input[0] === "number") return "/input";
  const at = input.findIndex((item) => Array.isArray(item));
  return at < 0 ? undefined : `/input/${at}`;
}

/** An embeddings answer's usage: its input tokens; it has no output. */
function usageOf(answer: unknown): Usage | undefined {
  const u = (answer as { usage?: unknown } | null)?.usage;
  if (typeof u !== "object" || u === null) return undefined;
  const prompt = (u as { prompt_tokens?: unknown }).prompt_tokens;
  if (typeof prompt !== "number") return undefined;
  return { prompt_tokens: Math.max(0, Math.ceil(prompt)), completion_tokens: 0 };
}

/** Embeddings are never streamed; a reader is there for the interface's sake and passes events on. */
const PASS_THROUGH: EventReader = { read: () => ({ send: null, usage: undefined, contentBytes: 0 }) };

/** OpenAI embeddings (docs/gateway.md#embeddings). */
export const embeddingsSurface: Surface<EmbeddingsBody> = {
  id: "embeddings",
  api: "embeddings",
  route: "/api/v1/embeddings",
  requestSchema: EmbeddingsRequest,
  upstreamPath: "/embeddings",
  streamTerminator: undefined,
  streamEnd: "",
  model: (body) => body.model,
  streams: () => false,
  collectTexts: embeddingTexts,
  replaceTexts: (body, replacements, texts) =>
    replaceTexts(asWalked(body), replacements, texts) as unknown as EmbeddingsBody,
  unscannable: tokenInput,
  messageCount: (body) =>
    Array.isArray(body.input) && typeof body.input[0] !== "number" ? body.input.length : 1,
  // An embedding has no output tokens: nothing is reserved for them (docs/gateway.md#embeddings).
  maxOutputTokens: () => 0,
  withOutputCap: (body) => body,
  forwardBody: (body) => body,
  usageOf,
  completeAnswer: completeEmbeddingsAnswer,
  eventReader: () => PASS_THROUGH,
};
