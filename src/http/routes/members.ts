import type { FastifyInstance } from "fastify";
import Type from "typebox";
import type { ServiceDeps } from "../../services/context.js";
import { runIdempotent } from "../../services/idempotency.js";
import {
  createMember,
  getMember,
  listOrganizationMembers,
  type MemberInput,
  type MemberPatch,
  presentMember,
  removeMember,
  updateMember,
} from "../../services/members.js";
import { principalOf } from "../auth.js";
import { Deleted, dataOf, errorResponses, listOf, Pagination, page, Uuid } from "../schemas/common.js";
import { IdempotencyHeaders, idempotencyOf, sendStored } from "./idempotent.js";

const UserId = Type.String({
  minLength: 1,
  maxLength: 200,
  // "." and ".." are refused: URL parsers drop them as path segments, so /members/.. is unreachable.
  pattern: "^(?!\\.{1,2}$)[^\\s/]+$",
  description: "Your identifier of the person.",
});
const NullableText = (maxLength: number) =>
  Type.Optional(Type.Union([Type.String({ maxLength }), Type.Null()]));
const WorkspaceIds = Type.Array(Uuid, {
  maxItems: 100,
  description: "The default workspace is always included while it exists.",
});

const Member = Type.Object({
  user_id: Type.String(),
  organization_id: Uuid,
  name: Type.Union([Type.String(), Type.Null()]),
  email: Type.Union([Type.String(), Type.Null()]),
  workspace_ids: Type.Array(Uuid),
  created_at: Type.String({ format: "date-time" }),
  updated_at: Type.Union([Type.String({ format: "date-time" }), Type.Null()]),
});
const CreateMemberBody = Type.Object(
  {
    user_id: UserId,
    name: NullableText(200),
    email: NullableText(320),
    workspace_ids: Type.Optional(WorkspaceIds),
  },
  { additionalProperties: false },
);
const UpdateMemberBody = Type.Object(
  { name: NullableText(200), email: NullableText(320), workspace_ids: Type.Optional(WorkspaceIds) },
  { additionalProperties: false },
);
const UserParams = Type.Object({ user_id: Type.String() });

export function memberRoutes(app: FastifyInstance, deps: ServiceDeps): void {
  const tags = ["Members"];
  const config = { auth: "management" as const };
  const userOf = (params: unknown) => (params as { user_id: string }).user_id;

  app.post(
    "/api/v1/members",
    {
      config,
      schema: {
        tags,
        summary: "Add a member",
        headers: IdempotencyHeaders,
        body: CreateMemberBody,
        response: { 201: dataOf(Member), ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const stored = await runIdempotent(deps, principal, idempotencyOf(request), async (tx) => {
        const m = await createMember(deps, tx, principal, request.body as MemberInput);
        return {
          status: 201,
          headers: { location: `/api/v1/members/${encodeURIComponent(m.user_id)}` },
          body: { data: presentMember(m) },
        };
      });
      return sendStored(reply, stored);
    },
  );

  app.get(
    "/api/v1/members",
    {
      config,
      schema: {
        tags,
        summary: "List members",
        querystring: Pagination,
        response: { 200: listOf(Member), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const result = await listOrganizationMembers(deps, principalOf(request), page(request.query as object));
      return { data: result.items.map(presentMember), total_count: result.total };
    },
  );

  app.get(
    "/api/v1/members/:user_id",
    {
      config,
      schema: {
        tags,
        summary: "Get a member",
        params: UserParams,
        response: { 200: dataOf(Member), ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => ({
      data: presentMember(await getMember(deps, principalOf(request), userOf(request.params))),
    }),
  );

  app.patch(
    "/api/v1/members/:user_id",
    {
      config,
      schema: {
        tags,
        summary: "Update a member",
        description:
          "workspace_ids replaces the member's workspaces. A member who owns keys in a workspace cannot leave it.",
        params: UserParams,
        body: UpdateMemberBody,
        response: { 200: dataOf(Member), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => ({
      data: presentMember(
        await updateMember(deps, principalOf(request), userOf(request.params), request.body as MemberPatch),
      ),
    }),
  );

  app.delete(
    "/api/v1/members/:user_id",
    {
      config,
      schema: {
        tags,
        summary: "Remove a member",
        description:
          "Also deletes the keys the member owns and every assignment hanging on the member or those keys.",
        params: UserParams,
        response: { 200: Deleted, ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => {
      await removeMember(deps, principalOf(request), userOf(request.params));
      return { deleted: true as const };
    },
  );
}
