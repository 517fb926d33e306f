import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import Type from "typebox";
import { invalidRequest, notFound } from "../../domain/errors.js";
import type { ServiceDeps } from "../../services/context.js";
import { presentModel, presentModelEndpoints } from "../../services/present-model.js";
import { dataOf, errorResponses } from "../schemas/common.js";
import {
  AnthropicModel,
  AnthropicModelList,
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
  const anthropicModels = models.map(presentAnthropicModel);
  app.get(
    "/api/v1/models",
    {
      ...asSent,
      schema: {
        tags: ["Models"],
        security: [],
        summary: "List the model catalog, with each model's provider endpoints",
        description:
          "With an `anthropic-version` header, the list is in the Anthropic Models API's shape and pages with `limit` (1 to 1000, default 20), `after_id` and `before_id` (docs/gateway.md#anthropic-model-list).",
        response: { 200: Type.Union([ModelListResponse, AnthropicModelList]) },
      },
    },
    async (request) =>
      speaksAnthropic(request.headers)
        ? anthropicPage(anthropicModels, request.query as Record<string, unknown>)
        : { data: models, links: { next: null }, total_count: models.length },
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
  const find = (slug: string) => {
    const found = models.find((m) => m.id === slug || m.canonical_slug === slug);
    if (!found) throw notFound();
    return found;
  };
  const retrieve = async (slug: string) => find(slug);
  // An Anthropic client reads one model as the Models API's object (docs/gateway.md#anthropic-model-list).
  const retrieveFor = async (headers: Headers, slug: string) =>
    speaksAnthropic(headers) ? presentAnthropicModel(find(slug)) : find(slug);
  app.get(
    "/api/v1/models/:id",
    {
      ...asSent,
      schema: {
        tags: ["Models"],
        security: [],
        summary: "One model of the catalog (the OpenAI model object, with the catalog's fields)",
        description:
          "With an `anthropic-version` header, the Anthropic Models API's model object (docs/gateway.md#anthropic-model-list).",
        params: Type.Object({ id: Type.String() }),
        response: { 200: Type.Union([ModelResponse, AnthropicModel]) },
      },
    },
    async (request) => retrieveFor(request.headers, request.params.id),
  );
  app.get(
    "/api/v1/models/:author/:name",
    {
      ...asSent,
      schema: {
        hide: true,
        params: Type.Object({ author: Type.String(), name: Type.String() }),
        response: { 200: Type.Union([ModelResponse, AnthropicModel]) },
      },
    },
    async (request) => {
      const { author, name } = request.params;
      return retrieveFor(request.headers, `${author}/${name}`);
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

type Headers = Record<string, string | string[] | undefined>;

/**
 * Anthropic's clients (Claude Code's gateway model discovery among them) send `anthropic-version` on
 * every request, OpenAI's never do: the header alone picks the list's shape, so one path serves
 * both (docs/gateway.md#anthropic-model-list).
 */
function speaksAnthropic(headers: Headers): boolean {
  return headers["anthropic-version"] !== undefined;
}

/** Models carry no release date here (`created` is 0), so `created_at` is the epoch, in RFC 3339. */
const EPOCH = new Date(0).toISOString().replace(".000Z", "Z");

function presentAnthropicModel(m: { id: string; name: string }) {
  return { type: "model" as const, id: m.id, display_name: m.name, created_at: EPOCH };
}

const ANTHROPIC_DEFAULT_LIMIT = 20;
const ANTHROPIC_MAX_LIMIT = 1000;
const MAX_ID_LENGTH = 512;

/** One page of the Anthropic model list, in catalog order; bad paging input is a 400 naming the parameter. */
function anthropicPage(list: ReturnType<typeof presentAnthropicModel>[], query: Record<string, unknown>) {
  const bad = (name: string, message: string) => invalidRequest([{ path: `/${name}`, message }]);
  let limit = ANTHROPIC_DEFAULT_LIMIT;
  if (query.limit !== undefined) {
    const raw = String(query.limit);
    if (!/^[0-9]{1,4}$/.test(raw) || Number(raw) < 1 || Number(raw) > ANTHROPIC_MAX_LIMIT) {
      throw bad("limit", `must be an integer from 1 to ${ANTHROPIC_MAX_LIMIT}`);
    }
    limit = Number(raw);
  }
  const position = (name: "after_id" | "before_id"): number | undefined => {
    const raw = query[name];
    if (raw === undefined) return undefined;
    if (typeof raw !== "string" || raw.length === 0 || raw.length > MAX_ID_LENGTH) {
      throw bad(name, "must be one model id");
    }
    const at = list.findIndex((m) => m.id === raw);
    if (at < 0) throw bad(name, "must be the id of a model in the list");
    return at;
  };
  const after = position("after_id");
  const before = position("before_id");
  if (after !== undefined && before !== undefined) throw bad("before_id", "cannot be combined with after_id");
  let start: number;
  let end: number;
  let hasMore: boolean;
  if (before !== undefined) {
    end = before;
    start = Math.max(0, end - limit);
    hasMore = start > 0;
  } else {
    start = after === undefined ? 0 : after + 1;
    end = Math.min(list.length, start + limit);
    hasMore = end < list.length;
  }
  const data = list.slice(start, end);
  return {
    data,
    has_more: hasMore,
    first_id: data[0]?.id ?? null,
    last_id: data[data.length - 1]?.id ?? null,
  };
}
