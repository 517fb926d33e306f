import type { FastifyInstance } from "fastify";
import type { GatewayDeps } from "../../gateway/prepare.js";
import { chatSurface } from "../../gateway/surfaces/index.js";
import { ChatCompletionResponse } from "../schemas/responses.js";
import { governedRoute } from "./governed.js";

/** POST /api/v1/chat/completions: the governed, OpenAI-compatible request path (docs/gateway.md#what-happens-to-a-request). */
export function chatCompletionRoutes(app: FastifyInstance, gw: GatewayDeps): void {
  governedRoute(app, gw, chatSurface, {
    summary: "Create a chat completion under the calling key's guardrails",
    description:
      "OpenAI-compatible. The effective guardrails of the key decide: region address, model, provider endpoints, content filters (block, redact, flag) and budgets. Refusals are 403 with metadata naming the rule and the guardrails; a budget whose remainder is held by requests in flight is 429 `budget_reserved` with `Retry-After`; upstream failures are 502, 504 or 429. Under a budget a request without `max_tokens` is given the default output allowance, and where a budget cannot pay for the whole output the forwarded `max_tokens` is lowered to what it pays for, shown in the response header `x-guardrails-max-tokens`. With `stream: true` the answer is server-sent events.",
    answer: {
      description: "The completion (JSON), or with `stream: true` its chunks as server-sent events.",
      schema: ChatCompletionResponse,
      streams: true,
    },
  });
}
