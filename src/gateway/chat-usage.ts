import type { Usage } from "./surfaces/surface.js";

function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? Math.max(0, Math.ceil(value)) : 0;
}

/**
 * The usage a chat completion answer or stream chunk reports (its `usage` member), as the spend is
 * settled on it: both counts, as whole non-negative numbers; undefined when it reports none. Read
 * here once for the chat surface and for every surface carried over chat completions
 * (docs/gateway.md#provider-apis).
 */
export function chatUsage(value: unknown): Usage | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const u = (value as { usage?: unknown }).usage;
  if (typeof u !== "object" || u === null) return undefined;
  const { prompt_tokens, completion_tokens, prompt_tokens_details } = u as Record<string, unknown>;
  if (typeof prompt_tokens !== "number" || typeof completion_tokens !== "number") return undefined;
  const usage: Usage = {
    prompt_tokens: Math.max(0, Math.ceil(prompt_tokens)),
    completion_tokens: Math.max(0, Math.ceil(completion_tokens)),
  };
  // Cached prompt tokens, as OpenAI (cached_tokens) and OpenRouter (cache_write_tokens) report them
  // inside prompt_tokens, priced apart where the catalog says (docs/gateway.md#cache-prices).
  if (typeof prompt_tokens_details === "object" && prompt_tokens_details !== null) {
    const { cached_tokens, cache_write_tokens } = prompt_tokens_details as Record<string, unknown>;
    const read = count(cached_tokens);
    const write = count(cache_write_tokens);
    if (read > 0) usage.cache_read_tokens = read;
    if (write > 0) usage.cache_write_tokens = write;
  }
  return usage;
}
