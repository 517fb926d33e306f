import type { FastifyInstance } from "fastify";
import type { GatewayDeps } from "../../gateway/prepare.js";
import { responsesSurface } from "../../gateway/surfaces/index.js";
import { ResponsesResponse } from "../schemas/responses.js";
import { governedRoute } from "./governed.js";

/**
 * POST /api/v1/responses: the governed OpenAI Responses path, forwarded natively (docs/gateway.md#responses)
 * or translated to chat completions (docs/gateway.md#responses-translation).
 */
export function responsesRoutes(app: FastifyInstance, gw: GatewayDeps): void {
  governedRoute(app, gw, responsesSurface, {
    summary: "Create a model response (OpenAI Responses API) under the calling key's guardrails",
    description:
      "OpenAI Responses-compatible, forwarded as it is to providers that speak the Responses API, and translated to chat completions (the answer and its events translated back) for providers that speak only chat: hosted tools such a provider cannot run (web search, file search, ...) are left out and named in the response header `x-guardrails-dropped-tools`, and a field chat completions cannot carry without changing the request (`truncation: \"auto\"`, `max_tool_calls`, a file by id, ...) is a 400 naming it. The effective guardrails of the key decide as on chat completions: region address, model, provider endpoints, content filters (block, redact, flag) and budgets. Every string the provider reads is scanned: `instructions` as the system's, an `input` string and user messages as the user's, each input item with its own role (function calls as the assistant's, their outputs as the tool's), tools and `text.format` as the application's. The service keeps no state: `store: true`, `previous_response_id`, `background: true`, `conversation`, `prompt` and `item_reference` items are a 400 naming the field, and `store: false` is forwarded so the provider keeps nothing either. Under a budget the forwarded `max_output_tokens` is lowered to what it pays for, shown in the response header `x-guardrails-max-tokens`. With `stream: true` the answer is the provider's server-sent events, ending with `response.completed`.",
    answer: {
      description: "The response (JSON), or with `stream: true` its events as server-sent events.",
      schema: ResponsesResponse,
      streams: true,
    },
  });
}
