import type { FastifyInstance } from "fastify";
import type { GatewayDeps } from "../../gateway/prepare.js";
import { embeddingsSurface } from "../../gateway/surfaces/index.js";
import { EmbeddingsResponse } from "../schemas/responses.js";
import { governedRoute } from "./governed.js";

/** POST /api/v1/embeddings: the governed, OpenAI-compatible embeddings path (docs/gateway.md#embeddings). */
export function embeddingsRoutes(app: FastifyInstance, gw: GatewayDeps): void {
  governedRoute(app, gw, embeddingsSurface, {
    summary: "Create embeddings under the calling key's guardrails",
    description:
      "OpenAI-compatible. The effective guardrails of the key decide as on chat completions: region address, model, provider endpoints, content filters (block, redact, flag) and budgets. Every input string is scanned as the end user's text; a redacted input is embedded with its label in place of what was found. Input given as token arrays is refused (400) while a content filter applies, since it cannot be read. The model must be an embedding model (400 naming `model` otherwise), and only endpoints whose provider speaks the embeddings API are candidates. Nothing is reserved for output: an embedding has none.",
    answer: {
      description: "The embeddings, as the provider sent them.",
      schema: EmbeddingsResponse,
      streams: false,
    },
  });
}
