import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import { completeGoverned } from "../../gateway/complete.js";
import type { GatewayDeps } from "../../gateway/prepare.js";
import { EmbeddingsRequest } from "../../gateway/surfaces/embeddings/schema.js";
import { embeddingsSurface } from "../../gateway/surfaces/index.js";
import { principalOf } from "../auth.js";
import { errorResponses } from "../schemas/common.js";
import { asSent, EmbeddingsResponse } from "../schemas/responses.js";

/** POST /api/v1/embeddings: the governed, OpenAI-compatible embeddings path (docs/gateway.md#embeddings). */
export function embeddingsRoutes(parent: FastifyInstance, gw: GatewayDeps): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    embeddingsSurface.route,
    {
      config: { auth: "inference" },
      ...asSent,
      schema: {
        tags: ["Gateway"],
        summary: "Create embeddings under the calling key's guardrails",
        description:
          "OpenAI-compatible. The effective guardrails of the key decide as on chat completions: region address, model, provider endpoints, content filters (block, redact, flag) and budgets. Every input string is scanned as the end user's text; a redacted input is embedded with its label in place of what was found. Input given as token arrays is refused (400) while a content filter applies, since it cannot be read. The model must be an embedding model (400 naming `model` otherwise), and only endpoints whose provider speaks the embeddings API are candidates. Nothing is reserved for output: an embedding has none.",
        body: EmbeddingsRequest,
        response: {
          200: {
            description: "The embeddings, as the provider sent them.",
            content: { "application/json": { schema: EmbeddingsResponse } },
          },
          ...errorResponses(400, 401, 403, 404, 413, 429, 502, 503, 504),
        },
      },
    },
    async (request, reply) => {
      const answer = await completeGoverned(
        gw,
        embeddingsSurface,
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
      if (answer.kind === "stream") throw new Error("an embeddings answer is never streamed");
      // The status is the provider's success status; the declared responses type it as 200. The
      // payload is the provider's JSON text as it came (a string is not serialized again), which
      // the declared answer describes but cannot type.
      return reply
        .code(answer.status as 200)
        .type(answer.contentType)
        .send(answer.payload as never);
    },
  );
}
