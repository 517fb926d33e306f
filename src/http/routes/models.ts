import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import Type from "typebox";
import { notFound } from "../../domain/errors.js";
import type { ServiceDeps } from "../../services/context.js";
import { presentModel, presentModelEndpoints } from "../../services/present-model.js";
import { dataOf, errorResponses } from "../schemas/common.js";
import {
  asSent,
  ModelCountResponse,
  ModelEndpointsResponse,
  ModelListResponse,
  ModelResponse,
} from "../schemas/responses.js";

/** The catalog (public, like the reference service's model list). */
export function modelRoutes(
  parent: FastifyInstance,
  deps: ServiceDeps,
  unavailable: ReadonlySet<string>,
): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const models = deps.catalog.models.map((m) =>
    presentModel(m, (x) => deps.catalog.familyOf(x), unavailable),
  );
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
    async (request) => retrieve(request.params.id),
  );
  app.get(
    "/api/v1/models/:author/:name",
    {
      ...asSent,
      schema: {
        hide: true,
        params: Type.Object({ author: Type.String(), name: Type.String() }),
        response: { 200: ModelResponse },
      },
    },
    async (request) => {
      const { author, name } = request.params;
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
      const { author, name } = request.params;
      const model = deps.catalog.findModel(`${author}/${name}`);
      if (!model) throw notFound();
      return { data: presentModelEndpoints(model, providerNames, unavailable) };
    },
  );
}
