import type { AnswerDefaults } from "../surface.js";

/**
 * The fields the OpenAI embeddings API defines on every answer, filled in where an upstream leaves
 * them out, so that strict clients (the reference SDK validates each answer) read every upstream
 * alike (docs/gateway.md#embeddings-answer-fields). What the upstream sent is never changed.
 */

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const itemLacks = (item: unknown) =>
  isObject(item) && (item.object !== "embedding" || !Number.isInteger(item.index));

/** A usage that counts the prompt but not the total: for an embedding the two are the same. */
const totalLacking = (usage: unknown) =>
  isObject(usage) && Number.isInteger(usage.prompt_tokens) && !Number.isInteger(usage.total_tokens);

/**
 * The answer to send for the upstream's `text` (parsed: `body`): its own bytes when nothing is
 * missing, the common case, which costs a look at each item's two fields and no serializing (an
 * answer of many vectors is long); otherwise the filled answer, serialized.
 */
export function completeEmbeddingsAnswer(text: string, body: unknown, defaults: AnswerDefaults): string {
  if (!isObject(body) || !Array.isArray(body.data)) return text;
  const data = body.data as unknown[];
  const missing =
    body.object !== "list" ||
    typeof body.model !== "string" ||
    body.model === "" ||
    totalLacking(body.usage) ||
    data.some(itemLacks);
  if (!missing) return text;
  const out: Json = { ...body, object: "list" };
  if (typeof out.model !== "string" || out.model === "") out.model = defaults.model;
  if (totalLacking(out.usage)) {
    const usage = out.usage as Json;
    // Embedding has no output tokens: the total is the prompt's (docs/gateway.md#embeddings).
    out.usage = { ...usage, total_tokens: usage.prompt_tokens };
  }
  out.data = data.map((item, i) => {
    if (!itemLacks(item)) return item;
    const filled: Json = { ...(item as Json), object: "embedding" };
    if (!Number.isInteger(filled.index)) filled.index = i;
    return filled;
  });
  return JSON.stringify(out);
}
