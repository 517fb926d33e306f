import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import Type from "typebox";
import { notFound } from "../../domain/errors.js";
import { isUuid } from "../../domain/ids.js";
import type { ServiceDeps } from "../../services/context.js";
import { runIdempotent } from "../../services/idempotency.js";
import {
  createWorkspace,
  getWorkspace,
  listOrganizationWorkspaces,
  presentWorkspace,
  removeWorkspace,
  updateWorkspace,
} from "../../services/workspaces.js";
import { principalOf } from "../auth.js";
import { Deleted, dataOf, errorResponses, listOf, Pagination, page, Uuid } from "../schemas/common.js";
import { IdempotencyHeaders, idempotencyOf, sendStored } from "./idempotent.js";

const Off = (description: string) => Type.Null({ description });
const Workspace = Type.Object({
  id: Uuid,
  name: Type.String(),
  slug: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  is_default: Type.Boolean(),
  default_guardrail_id: Uuid,
  created_at: Type.String({ format: "date-time" }),
  updated_at: Type.Union([Type.String({ format: "date-time" }), Type.Null()]),
  created_by: Off("Always null: the creator is in the audit log."),
  default_text_model: Off("Always null: no workspace default models here."),
  default_image_model: Off("Always null."),
  default_provider_sort: Off("Always null."),
  io_logging_api_key_ids: Off("Always null: no prompt logging here."),
  io_logging_sampling_rate: Type.Number({ description: "Always 1; prompt logging is off." }),
  is_data_discount_logging_enabled: Type.Boolean({ description: "Always false." }),
  is_observability_broadcast_enabled: Type.Boolean({ description: "Always false." }),
  is_observability_io_logging_enabled: Type.Boolean({ description: "Always false." }),
});
const Slug = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: "^[a-z0-9][a-z0-9_-]*$",
  description: "Unique in the organization: lower-case letters, digits, '-' and '_'. Defaults to the id.",
});
const CreateWorkspaceBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    slug: Type.Optional(Slug),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 1000 }), Type.Null()])),
  },
  { additionalProperties: false },
);
const IdParams = Type.Object({ id: Type.String() });
/** Settings this service does not have are accepted only with the value that means "off". */
const OffSetting = (schema: Parameters<typeof Type.Optional>[0]) => Type.Optional(schema);
const UpdateWorkspaceBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    slug: Type.Optional(Slug),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 1000 }), Type.Null()])),
    default_text_model: OffSetting(Type.Null()),
    default_image_model: OffSetting(Type.Null()),
    default_provider_sort: OffSetting(Type.Null()),
    disabled_server_tools: OffSetting(Type.Union([Type.Null(), Type.Array(Type.String(), { maxItems: 0 })])),
    io_logging_api_key_ids: OffSetting(Type.Null()),
    is_data_discount_logging_enabled: OffSetting(Type.Literal(false)),
    is_observability_broadcast_enabled: OffSetting(Type.Literal(false)),
    is_observability_io_logging_enabled: OffSetting(Type.Literal(false)),
  },
  { additionalProperties: false },
);

export function workspaceRoutes(parent: FastifyInstance, deps: ServiceDeps): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ["Workspaces"];
  const config = { auth: "management" as const };
  const idOf = ({ id }: { id: string }) => {
    if (!isUuid(id)) throw notFound();
    return id;
  };

  app.get(
    "/api/v1/workspaces",
    {
      config,
      schema: {
        tags,
        summary: "List workspaces",
        querystring: Pagination,
        response: { 200: listOf(Workspace), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const result = await listOrganizationWorkspaces(deps, principalOf(request), page(request.query));
      return { data: result.items.map(presentWorkspace), total_count: result.total };
    },
  );

  app.post(
    "/api/v1/workspaces",
    {
      config,
      schema: {
        tags,
        summary: "Create a workspace",
        headers: IdempotencyHeaders,
        body: CreateWorkspaceBody,
        response: { 201: dataOf(Workspace), ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const stored = await runIdempotent(deps, principal, idempotencyOf(request), async (tx) => {
        const ws = await createWorkspace(deps, tx, principal, request.body);
        return {
          status: 201,
          headers: { location: `/api/v1/workspaces/${ws.id}` },
          body: { data: presentWorkspace(ws) },
        };
      });
      return sendStored(reply, stored);
    },
  );

  app.get(
    "/api/v1/workspaces/:id",
    {
      config,
      schema: {
        tags,
        summary: "Get a workspace",
        params: IdParams,
        response: { 200: dataOf(Workspace), ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => ({
      data: presentWorkspace(await getWorkspace(deps, principalOf(request), request.params.id)),
    }),
  );

  app.patch(
    "/api/v1/workspaces/:id",
    {
      config,
      schema: {
        tags,
        summary: "Update a workspace",
        description:
          "Changes its name, slug or description (by id or slug, as the reference SDK's workspaces.update). Settings this service does not have (default models, logging, server tools) are accepted only with the value that leaves them off.",
        params: IdParams,
        body: UpdateWorkspaceBody,
        response: { 200: dataOf(Workspace), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const body = request.body as { name?: string; slug?: string; description?: string | null };
      const input = {
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.slug !== undefined ? { slug: body.slug } : {}),
        ...(body.description !== undefined ? { description: body.description } : {}),
      };
      const ws = await updateWorkspace(
        deps,
        principalOf(request),
        (request.params as { id: string }).id,
        input,
      );
      return { data: presentWorkspace(ws) };
    },
  );

  app.delete(
    "/api/v1/workspaces/:id",
    {
      config,
      schema: {
        tags,
        summary: "Delete a workspace",
        description:
          "Deletes the workspace with its guardrails and inference keys. After the default workspace is deleted, creates must name a workspace_id.",
        params: IdParams,
        response: { 200: Deleted, ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => {
      await removeWorkspace(deps, principalOf(request), idOf(request.params));
      return { deleted: true as const };
    },
  );
}
