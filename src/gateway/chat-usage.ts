import type { Usage } from "./surfaces/surface.js";

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
  const { prompt_tokens, completion_tokens } = u as Record<string, unknown>;
  if (typeof prompt_tokens !== "number" || typeof completion_tokens !== "number") return undefined;
  return {
    prompt_tokens: Math.max(0, Math.ceil(prompt_tokens)),
    completion_tokens: Math.max(0, Math.ceil(completion_tokens)),
  };
}
