import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import { completeGoverned } from "../../gateway/complete.js";
import type { GatewayDeps } from "../../gateway/prepare.js";
import { responsesSurface } from "../../gateway/surfaces/index.js";
import { ResponsesRequest } from "../../gateway/surfaces/responses/schema.js";
import { principalOf } from "../auth.js";
import { errorResponses } from "../schemas/common.js";
import { asSent, ResponsesResponse } from "../schemas/responses.js";

/** POST /api/v1/responses: the governed OpenAI Responses path, forwarded natively (docs/gateway.md#responses). */
export function responsesRoutes(parent: FastifyInstance, gw: GatewayDeps): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    responsesSurface.route,
    {
      config: { auth: "inference" },
      ...asSent,
      schema: {
        tags: ["Gateway"],
        summary: "Create a model response (OpenAI Responses API) under the calling key's guardrails",
        description:
          "OpenAI Responses-compatible, forwarded as it is to providers that speak the Responses API (only their endpoints are candidates). The effective guardrails of the key decide as on chat completions: region address, model, provider endpoints, content filters (block, redact, flag) and budgets. Every string the provider reads is scanned: `instructions` as the system's, an `input` string and user messages as the user's, each input item with its own role (function calls as the assistant's, their outputs as the tool's), tools and `text.format` as the application's. The service keeps no state: `store: true`, `previous_response_id`, `background: true`, `conversation`, `prompt` and `item_reference` items are a 400 naming the field, and `store: false` is forwarded so the provider keeps nothing either. Under a budget the forwarded `max_output_tokens` is lowered to what it pays for, shown in the response header `x-guardrails-max-tokens`. With `stream: true` the answer is the provider's server-sent events, ending with `response.completed`.",
        body: ResponsesRequest,
        response: {
          200: {
            description: "The response (JSON), or with `stream: true` its events as server-sent events.",
            content: {
              "application/json": { schema: ResponsesResponse },
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
        responsesSurface,
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
      // The status is the provider's success status; the declared responses type it as 200. The
      // payload is the provider's JSON text (filled in), which the declared answer describes but
      // cannot type.
      if (answer.kind === "json")
        return reply
          .code(answer.status as 200)
          .type(answer.contentType)
          .send(answer.payload as never);
      reply.header("cache-control", "no-cache");
      // A stream of server-sent events: the serializer does not touch a stream.
      return reply.type("text/event-stream").send(answer.stream as never);
    },
  );
}
