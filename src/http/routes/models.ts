import type { FastifyInstance } from "fastify";
import Type from "typebox";
import type { Model } from "../../domain/catalog.js";
import { notFound } from "../../domain/errors.js";
import type { ServiceDeps } from "../../services/context.js";
import { dataOf, errorResponses } from "../schemas/common.js";
import {
  asSent,
  ModelCountResponse,
  ModelEndpointsResponse,
  ModelListResponse,
  ModelResponse,
} from "../schemas/responses.js";

/** USD per token as a decimal string, the form OpenAI-style model lists use. */
function perToken(usdPerMillion: number): string {
  return (usdPerMillion / 1_000_000).toFixed(12).replace(/\.?0+$/, "") || "0";
}

const SUPPORTED_PARAMETERS = ["max_tokens", "temperature", "top_p", "stop", "stream"];

function presentModel(m: Model, familyOf: (m: Model) => string) {
  return {
    id: m.slug,
    // The OpenAI model object's fields, for OpenAI clients' models.list and models.retrieve.
    object: "model",
    owned_by: m.author,
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
    supported_parameters: SUPPORTED_PARAMETERS,
    supported_voices: null,
    endpoints: m.endpoints,
    links: { details: `/api/v1/models/${m.slug}/endpoints` },
  };
}

/** The catalog (public, like the reference service's model list). */
export function modelRoutes(app: FastifyInstance, deps: ServiceDeps, unavailable: ReadonlySet<string>): void {
  const models = deps.catalog.models.map((m) => presentModel(m, (x) => deps.catalog.familyOf(x)));
  app.get(
    "/api/v1/models",
    {
      ...asSent,
      schema: {
        tags: ["Models"],
        security: [],
        summary: "List the model catalog, with each model's provider endpoints",
        response: { 200: ModelListResponse },
      },
    },
    async () => ({ data: models, links: { next: null }, total_count: models.length }),
  );
  const providerNames = new Map(deps.catalog.providers.map((p) => [p.id, p.name]));
  app.get(
    "/api/v1/models/count",
    {
      schema: {
        tags: ["Models"],
        security: [],
        summary: "How many models the catalog has",
        response: { 200: ModelCountResponse },
      },
    },
    async () => ({ data: { count: models.length } }),
  );
  // OpenAI clients ask for /models/{id} with the slug's "/" encoded, others with it as is.
  const retrieve = async (slug: string) => {
    const found = models.find((m) => m.id === slug || m.canonical_slug === slug);
    if (!found) throw notFound();
    return found;
  };
  app.get(
    "/api/v1/models/:id",
    {
      ...asSent,
      schema: {
        tags: ["Models"],
        security: [],
        summary: "One model of the catalog (the OpenAI model object, with the catalog's fields)",
        params: Type.Object({ id: Type.String() }),
        response: { 200: ModelResponse },
      },
    },
    async (request) => retrieve((request.params as { id: string }).id),
  );
  app.get(
    "/api/v1/models/:author/:name",
    { schema: { hide: true, params: Type.Object({ author: Type.String(), name: Type.String() }) } },
    async (request) => {
      const { author, name } = request.params as { author: string; name: string };
      return retrieve(`${author}/${name}`);
    },
  );
  // The reference SDK's models.get: the model wrapped in `data`, under /model/ (singular).
  app.get(
    "/api/v1/model/:author/:slug",
    {
      ...asSent,
      schema: {
        tags: ["Models"],
        security: [],
        summary: "One model of the catalog, as the reference SDK's models.get reads it",
        params: Type.Object({ author: Type.String(), slug: Type.String() }),
        response: { 200: dataOf(ModelResponse), ...errorResponses(404) },
      },
    },
    async (request) => {
      const { author, slug } = request.params as { author: string; slug: string };
      return { data: await retrieve(`${author}/${slug}`) };
    },
  );
  // Model slugs are author/name, so the path has two segments before /endpoints.
  app.get(
    "/api/v1/models/:author/:name/endpoints",
    {
      ...asSent,
      schema: {
        tags: ["Models"],
        security: [],
        summary: "One model's provider endpoints, and whether each provider is configured here",
        description:
          "In the reference SDK's shape; statistics this service does not keep (latency, throughput, uptime) are null.",
        params: Type.Object({ author: Type.String(), name: Type.String() }),
        response: { 200: ModelEndpointsResponse, ...errorResponses(404) },
      },
    },
    async (request) => {
      const { author, name } = request.params as { author: string; name: string };
      const model = deps.catalog.findModel(`${author}/${name}`);
      if (!model) throw notFound();
      const pricing = {
        prompt: perToken(model.pricing.prompt_usd_per_million_tokens),
        completion: perToken(model.pricing.completion_usd_per_million_tokens),
      };
      return {
        data: {
          id: model.slug,
          canonical_slug: model.canonical_slug,
          name: model.name,
          created: 0,
          description: "",
          architecture: {
            input_modalities: ["text"],
            output_modalities: ["text"],
            modality: "text->text",
            instruct_type: null,
            tokenizer: null,
          },
          endpoints: model.endpoints.map((e) => ({
            ...e,
            name: `${providerNames.get(e.provider) ?? e.provider} | ${model.slug}`,
            model_id: model.slug,
            model_name: model.name,
            provider_name: providerNames.get(e.provider) ?? e.provider,
            tag: e.provider,
            context_length: model.context_length,
            max_completion_tokens: model.max_output_tokens,
            max_prompt_tokens: null,
            pricing,
            quantization: null,
            supported_parameters: SUPPORTED_PARAMETERS,
            supports_implicit_caching: false,
            supports_tool_choice: { auto: true, function: true, none: true, required: true },
            latency_last_30m: null,
            throughput_last_30m: null,
            uptime_last_5m: null,
            uptime_last_30m: null,
            uptime_last_1d: null,
            // A provider without its API key configured is never routed to (docs/gateway.md).
            available: !unavailable.has(e.provider),
          })),
        },
      };
    },
  );
}
