import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import Type from "typebox";
import type { ServiceDeps } from "../../services/context.js";
import {
  listManagementKeys,
  presentManagementKey,
  revokeManagementKey,
} from "../../services/management-keys.js";
import { principalOf } from "../auth.js";
import { Deleted, errorResponses, listOf, Pagination, page } from "../schemas/common.js";

const ManagementKey = Type.Object({
  hash: Type.String({ description: "SHA-256 of the secret, in hex: the key's identifier." }),
  name: Type.String(),
  label: Type.String({ description: "The secret's prefix and last characters, to recognise it." }),
  created_at: Type.String({ format: "date-time" }),
  current: Type.Boolean({
    description: "Whether this is the key the request was made with (or its console session came from).",
  }),
});
const HashParams = Type.Object({ hash: Type.String() });

/**
 * The organization's management keys (docs/api.md#management-keys): listed without their secrets,
 * and revoked by any other management key of the organization, never the last one
 * (docs/behaviour.md#management-key-revocation).
 */
export function managementKeyRoutes(parent: FastifyInstance, deps: ServiceDeps): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ["Keys"];
  const config = { auth: "management" as const };

  app.get(
    "/api/v1/management-keys",
    {
      config,
      schema: {
        tags,
        summary: "List management keys",
        description: "The organization's management keys that still authenticate, oldest first.",
        querystring: Pagination,
        response: { 200: listOf(ManagementKey), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const result = await listManagementKeys(deps, principal, page(request.query));
      return {
        data: result.items.map((k) => presentManagementKey(k, principal.keyHash)),
        total_count: result.total,
      };
    },
  );

  app.delete(
    "/api/v1/management-keys/:hash",
    {
      config,
      schema: {
        tags,
        summary: "Revoke a management key",
        description:
          "The key's next request is 401 and its console sessions end at once. The organization's last active management key is refused (409, `metadata.reason: \"last_management_key\"`): make another first, or rotate it on the command line.",
        params: HashParams,
        response: { 200: Deleted, ...errorResponses(401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      await revokeManagementKey(deps, principalOf(request), request.params.hash);
      reply.header("cache-control", "no-store");
      return { deleted: true as const };
    },
  );
}
