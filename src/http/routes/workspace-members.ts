import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import Type from "typebox";
import type { ServiceDeps } from "../../services/context.js";
import { listOrganizationMembers } from "../../services/members.js";
import {
  addWorkspaceMembers,
  listMembersOfWorkspace,
  removeWorkspaceMembers,
} from "../../services/workspace-members.js";
import { principalOf } from "../auth.js";
import { errorResponses, listOf, Pagination, page } from "../schemas/common.js";

const Membership = Type.Object({
  id: Type.String({ description: "`<workspace_id>:<user_id>`." }),
  workspace_id: Type.String(),
  user_id: Type.String(),
  role: Type.Literal("member"),
  created_at: Type.String({ format: "date-time" }),
});
const UserIds = Type.Object(
  { user_ids: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { minItems: 1, maxItems: 1000 }) },
  { additionalProperties: false },
);
const IdParams = Type.Object({ id: Type.String({ description: "The workspace's id or slug." }) });
const OrganizationMember = Type.Object({
  id: Type.String({ description: "The member's user_id." }),
  email: Type.String({ description: "The member's email, or an empty string when none is stored." }),
  first_name: Type.Union([Type.String(), Type.Null()], { description: "The member's name." }),
  last_name: Type.Null({ description: "Always null: a member has one name field." }),
  role: Type.Literal("org:member"),
});

/**
 * A workspace's members and the organization's members in the reference SDK's shapes
 * (docs/api.md#workspace-members); the members themselves are managed under /api/v1/members.
 */
export function workspaceMemberRoutes(parent: FastifyInstance, deps: ServiceDeps): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ["Members"];
  const config = { auth: "management" as const };

  app.get(
    "/api/v1/workspaces/:id/members",
    {
      config,
      schema: {
        tags,
        summary: "List a workspace's members",
        params: IdParams,
        querystring: Pagination,
        response: { 200: listOf(Membership), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const result = await listMembersOfWorkspace(
        deps,
        principalOf(request),
        request.params.id,
        page(request.query),
      );
      return { data: result.items, total_count: result.total };
    },
  );

  app.post(
    "/api/v1/workspaces/:id/members/add",
    {
      config,
      schema: {
        tags,
        summary: "Add existing members to a workspace",
        description: "Unknown user ids are skipped; members already there are not counted.",
        params: IdParams,
        body: UserIds,
        response: {
          200: Type.Object({ added_count: Type.Integer(), data: Type.Array(Membership) }),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request) => {
      const { user_ids } = request.body;
      const added = await addWorkspaceMembers(deps, principalOf(request), request.params.id, user_ids);
      return { added_count: added.length, data: added };
    },
  );

  app.post(
    "/api/v1/workspaces/:id/members/remove",
    {
      config,
      schema: {
        tags,
        summary: "Remove members from a workspace",
        description:
          "Drops their guardrail assignment there. Not from the default workspace, nor a member who owns keys there (400, nobody removed).",
        params: IdParams,
        body: UserIds,
        response: {
          200: Type.Object({ removed_count: Type.Integer() }),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request) => {
      const { user_ids } = request.body;
      const removed = await removeWorkspaceMembers(deps, principalOf(request), request.params.id, user_ids);
      return { removed_count: removed };
    },
  );

  app.get(
    "/api/v1/organization/members",
    {
      config,
      schema: {
        tags,
        summary: "List the organization's members (the reference SDK's shape of /api/v1/members)",
        querystring: Pagination,
        response: { 200: listOf(OrganizationMember), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const result = await listOrganizationMembers(deps, principalOf(request), page(request.query));
      return {
        data: result.items.map((m) => ({
          id: m.user_id,
          email: m.email ?? "",
          first_name: m.name,
          last_name: null,
          role: "org:member" as const,
        })),
        total_count: result.total,
      };
    },
  );
}
