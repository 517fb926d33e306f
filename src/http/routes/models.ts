import type { FastifyInstance } from "fastify";
import type { Model } from "../../domain/catalog.js";
import type { ServiceDeps } from "../../services/context.js";

/** USD per token as a decimal string, the form OpenAI-style model lists use. */
function perToken(usdPerMillion: number): string {
  return (usdPerMillion / 1_000_000).toFixed(12).replace(/\.?0+$/, "") || "0";
}

function presentModel(m: Model, familyOf: (m: Model) => string) {
  return {
    id: m.slug,
    canonical_slug: m.canonical_slug,
    name: m.name,
    author: m.author,
    zdr_family: familyOf(m),
    created: 0,
    context_length: m.context_length,
    architecture: { input_modalities: ["text"], output_modalities: ["text"], modality: "text->text" },
    pricing: {
      prompt: perToken(m.pricing.prompt_usd_per_million_tokens),
      completion: perToken(m.pricing.completion_usd_per_million_tokens),
    },
    top_provider: {
      is_moderated: false,
      context_length: m.context_length,
      max_completion_tokens: m.max_output_tokens,
    },
    per_request_limits: null,
    default_parameters: null,
    supported_parameters: ["max_tokens", "temperature", "top_p", "stop", "stream"],
    supported_voices: null,
    endpoints: m.endpoints,
    links: { details: `/api/v1/models/${m.slug}/endpoints` },
  };
}

/** The catalog (public, like the reference service's model list). */
export function modelRoutes(app: FastifyInstance, deps: ServiceDeps): void {
  const models = deps.catalog.models.map((m) => presentModel(m, (x) => deps.catalog.familyOf(x)));
  app.get(
    "/api/v1/models",
    { schema: { tags: ["Models"], summary: "List the model catalog, with each model's provider endpoints" } },
    async () => ({ data: models, links: { next: null }, total_count: models.length }),
  );
}
