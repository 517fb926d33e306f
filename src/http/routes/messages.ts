import type { FastifyInstance } from "fastify";
import type { GatewayDeps } from "../../gateway/prepare.js";
import { messagesSurface } from "../../gateway/surfaces/index.js";
import { MessagesErrorBody, MessagesResponse } from "../schemas/messages.js";
import { governedRoute } from "./governed.js";

/**
 * POST /api/v1/messages: the governed Anthropic Messages path, forwarded natively (docs/gateway.md#messages)
 * or translated to chat completions (docs/gateway.md#messages-translation).
 */
export function messagesRoutes(app: FastifyInstance, gw: GatewayDeps): void {
  governedRoute(app, gw, messagesSurface, {
    summary: "Create a message (Anthropic Messages API) under the calling key's guardrails",
    description:
      'Anthropic Messages-compatible, forwarded as it is to providers that speak the Messages API, and translated to chat completions (the answer and its events back) for providers that speak only chat: server tools such a provider cannot run are left out and named in the response header `x-guardrails-dropped-tools`, thinking blocks and cache-control markers are dropped, and a block chat cannot carry is a 400 naming it. The inference key comes as `x-api-key` (Anthropic\'s SDKs) or `Authorization: Bearer`. The effective guardrails of the key decide as on chat completions: region address, model, provider endpoints, content filters (block, redact, flag) and budgets. Every string the provider reads is scanned: `system` as the system\'s, each message with its own role except `tool_result` blocks, read as the tool\'s, tools as the application\'s. Under a budget the forwarded `max_tokens` is lowered to what it pays for, shown in the response header `x-guardrails-max-tokens`. With `stream: true` the answer is the provider\'s server-sent events, ending with `message_stop`. Errors are in Anthropic\'s envelope (`{"type": "error", "error": {"type", "message", "metadata"}}`), in a stream as an `error` event.',
    answer: {
      description: "The message (JSON), or with `stream: true` its events as server-sent events.",
      schema: MessagesResponse,
      streams: true,
    },
    errors: MessagesErrorBody,
    security: [{ bearer: [] }, { "x-api-key": [] }],
  });
}
