import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import { completeGoverned } from "../../gateway/complete.js";
import type { GatewayDeps } from "../../gateway/prepare.js";
import { ChatCompletionRequest } from "../../gateway/surfaces/chat/schema.js";
import { chatSurface } from "../../gateway/surfaces/index.js";
import { principalOf } from "../auth.js";
import { errorResponses } from "../schemas/common.js";
import { asSent, ChatCompletionResponse } from "../schemas/responses.js";

/** POST /api/v1/chat/completions: the governed, OpenAI-compatible request path (docs/gateway.md#what-happens-to-a-request). */
export function chatCompletionRoutes(parent: FastifyInstance, gw: GatewayDeps): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    chatSurface.route,
    {
      config: { auth: "inference" },
      ...asSent,
      schema: {
        tags: ["Gateway"],
        summary: "Create a chat completion under the calling key's guardrails",
        description:
          "OpenAI-compatible. The effective guardrails of the key decide: region address, model, provider endpoints, content filters (block, redact, flag) and budgets. Refusals are 403 with metadata naming the rule and the guardrails; a budget whose remainder is held by requests in flight is 429 `budget_reserved` with `Retry-After`; upstream failures are 502, 504 or 429. Under a budget a request without `max_tokens` is given the default output allowance, and where a budget cannot pay for the whole output the forwarded `max_tokens` is lowered to what it pays for, shown in the response header `x-guardrails-max-tokens`. With `stream: true` the answer is server-sent events.",
        body: ChatCompletionRequest,
        response: {
          200: {
            description: "The completion (JSON), or with `stream: true` its chunks as server-sent events.",
            content: {
              "application/json": { schema: ChatCompletionResponse },
              "text/event-stream": { schema: { type: "string" } },
            },
          },
          ...errorResponses(400, 401, 403, 404, 413, 429, 502, 503, 504),
        },
      },
    },
    async (request, reply) => {
      const answer = await completeGoverned(
        gw,
        chatSurface,
        principalOf(request).keyHash,
        { body: request.body, text: request.jsonText },
        request.ingressRegion,
        request.id,
        request.log,
        (details) => {
          request.logDetails = details;
        },
      );
      reply.headers(answer.headers);
      // The status is the provider's success status; the declared responses type it as 200.
      if (answer.kind === "json")
        return reply
          .code(answer.status as 200)
          .type(answer.contentType)
          .send(answer.payload);
      reply.header("cache-control", "no-cache");
      // A stream of server-sent events: the declared 200 describes the JSON answer, which a stream
      // cannot be typed as; the serializer does not touch a stream either way.
      return reply.type("text/event-stream").send(answer.stream as never);
    },
  );
}
