import type { FastifyInstance } from "fastify";
import Type from "typebox";
import type { ServiceDeps } from "../../services/context.js";
import { runIdempotent } from "../../services/idempotency.js";
import {
  type CreateKeyInput,
  createInferenceKey,
  getKey,
  listKeys,
  presentKey,
  removeKey,
} from "../../services/keys.js";
import { principalOf } from "../auth.js";
import { Deleted, dataOf, errorResponses, listOf, Pagination, page, Uuid } from "../schemas/common.js";
import { IdempotencyHeaders, idempotencyOf, sendStored } from "./idempotent.js";

const Key = Type.Object({
  hash: Type.String({ description: "SHA-256 of the secret: the key's public identifier." }),
  name: Type.String(),
  label: Type.String({ description: "The secret's prefix and last characters, to recognise it." }),
  workspace_id: Uuid,
  member_user_id: Type.Union([Type.String(), Type.Null()]),
  disabled: Type.Boolean(),
  created_at: Type.String({ format: "date-time" }),
});
const CreateKeyBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    workspace_id: Type.Optional(Uuid),
    member_user_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: "The member who owns the key; must belong to the key's workspace.",
      }),
    ),
  },
  { additionalProperties: false },
);
const CreatedKey = Type.Object({
  data: Key,
  key: Type.String({ description: "The secret. Shown once, never again." }),
});
const HashParams = Type.Object({ hash: Type.String() });
const ListKeysQuery = Type.Object(
  { ...Pagination.properties, workspace_id: Type.Optional(Uuid) },
  { additionalProperties: false },
);

export function keyRoutes(app: FastifyInstance, deps: ServiceDeps): void {
  const tags = ["Keys"];
  const config = { auth: "management" as const };

  app.post(
    "/api/v1/keys",
    {
      config,
      schema: {
        tags,
        summary: "Create an inference key",
        description: "In the named workspace, or the default one. The secret is in `key`, shown once.",
        headers: IdempotencyHeaders,
        body: CreateKeyBody,
        response: { 201: CreatedKey, ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const stored = await runIdempotent(deps, principal, idempotencyOf(request), async (tx) => {
        const created = await createInferenceKey(deps, tx, principal, request.body as CreateKeyInput);
        return {
          status: 201,
          headers: { location: `/api/v1/keys/${created.record.hash}` },
          body: { data: presentKey(created.record), key: created.secret },
        };
      });
      reply.header("cache-control", "no-store");
      return sendStored(reply, stored);
    },
  );

  app.get(
    "/api/v1/keys",
    {
      config,
      schema: {
        tags,
        summary: "List inference keys",
        querystring: ListKeysQuery,
        response: { 200: listOf(Key), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const query = request.query as { offset?: number; limit?: number; workspace_id?: string };
      const result = await listKeys(deps, principalOf(request), {
        ...page(query),
        ...(query.workspace_id !== undefined ? { workspaceId: query.workspace_id } : {}),
      });
      return { data: result.items.map(presentKey), total_count: result.total };
    },
  );

  app.get(
    "/api/v1/keys/:hash",
    {
      config,
      schema: {
        tags,
        summary: "Get an inference key",
        params: HashParams,
        response: { 200: dataOf(Key), ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => ({
      data: presentKey(await getKey(deps, principalOf(request), (request.params as { hash: string }).hash)),
    }),
  );

  app.delete(
    "/api/v1/keys/:hash",
    {
      config,
      schema: {
        tags,
        summary: "Delete an inference key",
        params: HashParams,
        response: { 200: Deleted, ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => {
      await removeKey(deps, principalOf(request), (request.params as { hash: string }).hash);
      return { deleted: true as const };
    },
  );
}
