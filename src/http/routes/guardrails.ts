import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance, FastifyReply } from "fastify";
import Type from "typebox";
import { etagOf, type Guardrail, presentGuardrail } from "../../domain/guardrail.js";
import type { ServiceDeps } from "../../services/context.js";
import {
  createGuardrail,
  createGuardrailNow,
  getGuardrail,
  listWorkspaceGuardrails,
  removeGuardrail,
  updateGuardrail,
} from "../../services/guardrails.js";
import { runIdempotent } from "../../services/idempotency.js";
import { principalOf } from "../auth.js";
import { Deleted, dataOf, errorResponses, listOf, page } from "../schemas/common.js";
import { guardrailSchemas } from "../schemas/guardrail.js";
import { IdempotencyHeaders, idempotencyOf, sendStored } from "./idempotent.js";

const IdParams = Type.Object({ id: Type.String() });
const IfMatchHeaders = Type.Object({
  "if-match": Type.Optional(Type.String({ description: "Entity tag from ETag; a mismatch is 409." })),
});

export function guardrailRoutes(parent: FastifyInstance, deps: ServiceDeps): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const families = deps.catalog.familyIds();
  const s = guardrailSchemas(families);
  const present = (g: Guardrail) => presentGuardrail(g, families);
  const withTag = (reply: FastifyReply, g: Guardrail) => reply.header("etag", etagOf(g));
  const tags = ["Guardrails"];
  const config = { auth: "management" as const };

  app.post(
    "/api/v1/guardrails",
    {
      config,
      schema: {
        tags,
        summary: "Create a guardrail",
        description: "Only name is required. A new guardrail enforces nothing until it is assigned.",
        headers: IdempotencyHeaders,
        body: s.CreateGuardrailBody,
        response: { 201: dataOf(s.Guardrail), ...errorResponses(400, 401, 403, 413, 415, 500) },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const body = request.body;
      const created = (g: Guardrail) => ({
        status: 201,
        headers: { location: `/api/v1/guardrails/${g.id}`, etag: etagOf(g) },
        body: { data: present(g) },
      });
      const idempotency = idempotencyOf(request);
      if (idempotency === undefined) {
        return sendStored(reply, {
          ...created(await createGuardrailNow(deps, principal, body)),
          replayed: false,
        });
      }
      const stored = await runIdempotent(deps, principal, idempotency, async (tx) =>
        created(await createGuardrail(deps, tx, principal, body)),
      );
      return sendStored(reply, stored);
    },
  );

  app.patch(
    "/api/v1/guardrails/:id",
    {
      config,
      schema: {
        tags,
        summary: "Update a guardrail",
        description:
          "Only supplied properties change; null clears; lists replace whole. The first PATCH on a workspace's default_guardrail_id materializes it.",
        params: IdParams,
        headers: IfMatchHeaders,
        body: s.UpdateGuardrailBody,
        response: { 200: dataOf(s.Guardrail), ...errorResponses(400, 401, 403, 404, 409, 413, 415, 500) },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const ifMatch = request.headers["if-match"];
      const g = await updateGuardrail(deps, principalOf(request), id, request.body, {
        ...(ifMatch !== undefined ? { ifMatch } : {}),
      });
      withTag(reply, g);
      return { data: present(g) };
    },
  );

  app.get(
    "/api/v1/guardrails",
    {
      config,
      schema: {
        tags,
        summary: "List the guardrails of a workspace",
        description: "Without workspace_id, the default workspace's guardrails.",
        querystring: s.ListGuardrailsQuery,
        response: { 200: listOf(s.Guardrail), ...errorResponses(400, 401, 403, 500) },
      },
    },
    async (request) => {
      const query = request.query;
      const result = await listWorkspaceGuardrails(deps, principalOf(request), {
        ...page(query),
        ...(query.workspace_id !== undefined ? { workspace_id: query.workspace_id } : {}),
      });
      return { data: result.items.map(present), total_count: result.total };
    },
  );

  app.get(
    "/api/v1/guardrails/:id",
    {
      config,
      schema: {
        tags,
        summary: "Get a guardrail",
        params: IdParams,
        response: { 200: dataOf(s.Guardrail), ...errorResponses(401, 403, 404, 500) },
      },
    },
    async (request, reply) => {
      const g = await getGuardrail(deps, principalOf(request), request.params.id);
      withTag(reply, g);
      return { data: present(g) };
    },
  );

  app.delete(
    "/api/v1/guardrails/:id",
    {
      config,
      schema: {
        tags,
        summary: "Delete a guardrail",
        params: IdParams,
        response: { 200: Deleted, ...errorResponses(401, 403, 404, 500) },
      },
    },
    async (request) => {
      await removeGuardrail(deps, principalOf(request), request.params.id);
      return { deleted: true as const };
    },
  );
}
