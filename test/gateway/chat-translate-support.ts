import assert from "node:assert/strict";
import { AppError } from "../../src/domain/errors.js";

/**
 * What the two translations from chat completions share in their tests
 * (docs/gateway.md#messages-translation, docs/gateway.md#responses-translation): the provider's
 * chat answer, whole or as a stream cut into pieces, and the 400 a refused request throws.
 */

export type Json = Record<string, unknown>;

/** The provider a test's answers come from: their id, time and model. */
export interface ChatProvider {
  created: number;
  model: string;
}

/** A chat completion from `provider`, its assistant message and finish reason given. */
export const chatAnswerOf =
  (provider: ChatProvider) =>
  (message: Json, finish_reason: string | null, extra: Json = {}): Json => ({
    id: "chatcmpl-1",
    object: "chat.completion",
    created: provider.created,
    model: provider.model,
    choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason }],
    ...extra,
  });

/** One chat stream chunk's data from `provider`. */
export const chunkOfFrom =
  (provider: ChatProvider) =>
  (delta: Json, finish_reason: string | null = null, extra: Json = {}): string =>
    JSON.stringify({
      id: "chatcmpl-1",
      object: "chat.completion.chunk",
      created: provider.created,
      model: provider.model,
      choices: [{ index: 0, delta, finish_reason }],
      ...extra,
    });

/** A random chat answer as a property test draws it; `reasoning` only where the surface carries it. */
export interface DrawnAnswer {
  reasoning?: string | undefined;
  content: string;
  refusal?: string | undefined;
  calls: { id: string; name: string; arguments: string }[];
  finish: string;
  usage?:
    | { prompt_tokens: number; completion_tokens: number; cached: number; reasoning?: number }
    | undefined;
}

/** The chat usage a drawn answer's counts make. */
export function chatUsage(u: NonNullable<DrawnAnswer["usage"]>): Json {
  return {
    prompt_tokens: u.prompt_tokens,
    completion_tokens: u.completion_tokens,
    total_tokens: u.prompt_tokens + u.completion_tokens,
    prompt_tokens_details: { cached_tokens: u.cached },
    ...(u.reasoning === undefined ? {} : { completion_tokens_details: { reasoning_tokens: u.reasoning } }),
  };
}

/** The usage the stream reports for a drawn answer: cached prompt tokens are read for their price (docs/gateway.md#cache-prices). */
export function reportedUsage(u: DrawnAnswer["usage"]): Json | undefined {
  if (!u) return undefined;
  return {
    prompt_tokens: u.prompt_tokens,
    completion_tokens: u.completion_tokens,
    ...(u.cached > 0 ? { cache_read_tokens: u.cached } : {}),
  };
}

/** The drawn answer as chat gives it whole. */
export function wholeAnswer(chatAnswer: ReturnType<typeof chatAnswerOf>, a: DrawnAnswer): Json {
  const message: Json = { content: a.content === "" && a.calls.length > 0 ? null : a.content };
  if (a.reasoning !== undefined) message.reasoning = a.reasoning;
  if (a.refusal !== undefined) message.refusal = a.refusal;
  if (a.calls.length > 0)
    message.tool_calls = a.calls.map((c) => ({
      id: c.id,
      type: "function",
      function: { name: c.name, arguments: c.arguments },
    }));
  const extra: Json = {};
  if (a.usage) extra.usage = chatUsage(a.usage);
  return chatAnswer(message, a.finish, extra);
}

/** `text` cut at the given points (by code point, as a provider's tokens never split one). */
export function pieces(text: string, cuts: number[]): string[] {
  const points = Array.from(text);
  const at = [...new Set(cuts.map((c) => c % (points.length + 1)))].sort((a, b) => a - b);
  const out: string[] = [];
  let from = 0;
  for (const cut of [...at, points.length]) {
    if (cut > from) out.push(points.slice(from, cut).join(""));
    from = cut;
  }
  return out;
}

/** The drawn answer as a chat stream, each text cut into pieces, ending with its usage chunk and [DONE]. */
export function streamed(chunkOf: ReturnType<typeof chunkOfFrom>, a: DrawnAnswer, cuts: number[]): string[] {
  const datas = [chunkOf({ role: "assistant", content: "" })];
  for (const p of pieces(a.reasoning ?? "", cuts)) datas.push(chunkOf({ reasoning: p }));
  for (const p of pieces(a.content, cuts)) datas.push(chunkOf({ content: p }));
  for (const p of pieces(a.refusal ?? "", cuts)) datas.push(chunkOf({ refusal: p }));
  a.calls.forEach((c, index) => {
    datas.push(
      chunkOf({
        tool_calls: [{ index, id: c.id, type: "function", function: { name: c.name, arguments: "" } }],
      }),
    );
    for (const p of pieces(c.arguments, cuts))
      datas.push(chunkOf({ tool_calls: [{ index, function: { arguments: p } }] }));
  });
  datas.push(chunkOf({}, a.finish));
  if (a.usage) datas.push(chunkOf({}, null, { choices: [], usage: chatUsage(a.usage) }));
  datas.push("[DONE]");
  return datas;
}

/** The UTF-8 bytes of the texts a stream carries, as its facts count them. */
export const byteSum = (texts: string[]): number => texts.reduce((sum, t) => sum + Buffer.byteLength(t), 0);

/** The 400 `translate` throws, and the path its first issue names. */
export function refusedAt(translate: () => unknown): string {
  try {
    translate();
  } catch (error) {
    assert.ok(error instanceof AppError);
    assert.equal(error.status, 400);
    assert.equal(error.code, "invalid_request");
    const issues = error.metadata?.issues as { path: string }[];
    return issues[0]?.path as string;
  }
  assert.fail("the request was translated");
}
