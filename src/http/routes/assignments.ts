import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import Type from "typebox";
import {
  assignKeys,
  assignMembers,
  keyAssignments,
  memberAssignments,
  unassignKeys,
  unassignMembers,
} from "../../services/assignments.js";
import type { ServiceDeps } from "../../services/context.js";
import { principalOf } from "../auth.js";
import { errorResponses, listOf, Pagination, page, Uuid } from "../schemas/common.js";

const MAX_BATCH = 1000;
const KeyHashes = Type.Object(
  {
    key_hashes: Type.Array(Type.String({ minLength: 1, maxLength: 128 }), {
      minItems: 1,
      maxItems: MAX_BATCH,
    }),
  },
  { additionalProperties: false },
);
const MemberUserIds = Type.Object(
  {
    member_user_ids: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
      minItems: 1,
      maxItems: MAX_BATCH,
    }),
  },
  { additionalProperties: false },
);
const KeyAssignment = Type.Object({
  id: Uuid,
  key_hash: Type.String(),
  guardrail_id: Uuid,
  key_name: Type.String(),
  key_label: Type.String(),
  assigned_by: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String({ format: "date-time" }),
});
const MemberAssignment = Type.Object({
  id: Uuid,
  user_id: Type.String(),
  organization_id: Uuid,
  workspace_id: Uuid,
  guardrail_id: Uuid,
  assigned_by: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String({ format: "date-time" }),
});
const IdParams = Type.Object({ id: Type.String() });
const Assigned = Type.Object({ assigned_count: Type.Integer() });
const Unassigned = Type.Object({ unassigned_count: Type.Integer() });

/** Key and member assignments (docs/behaviour.md#assignments), in the shapes the reference SDK expects. */
export function assignmentRoutes(parent: FastifyInstance, deps: ServiceDeps): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ["Assignments"];
  const config = { auth: "management" as const };

  app.post(
    "/api/v1/guardrails/:id/assignments/keys",
    {
      config,
      schema: {
        tags,
        summary: "Assign a guardrail to keys",
        description:
          "A key holds one guardrail: assigning moves it. Unknown hashes are skipped and not counted.",
        params: IdParams,
        body: KeyHashes,
        response: { 200: Assigned, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => ({
      assigned_count: await assignKeys(
        deps,
        principalOf(request),
        request.params.id,
        request.body.key_hashes,
      ),
    }),
  );

  app.post(
    "/api/v1/guardrails/:id/assignments/keys/remove",
    {
      config,
      schema: {
        tags,
        summary: "Unassign a guardrail from keys",
        params: IdParams,
        body: KeyHashes,
        response: { 200: Unassigned, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => ({
      unassigned_count: await unassignKeys(
        deps,
        principalOf(request),
        request.params.id,
        request.body.key_hashes,
      ),
    }),
  );

  app.post(
    "/api/v1/guardrails/:id/assignments/members",
    {
      config,
      schema: {
        tags,
        summary: "Assign a guardrail to members",
        description:
          "One guardrail per member per workspace: assigning replaces it. Unknown ids are skipped and not counted.",
        params: IdParams,
        body: MemberUserIds,
        response: { 200: Assigned, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => ({
      assigned_count: await assignMembers(
        deps,
        principalOf(request),
        request.params.id,
        request.body.member_user_ids,
      ),
    }),
  );

  app.post(
    "/api/v1/guardrails/:id/assignments/members/remove",
    {
      config,
      schema: {
        tags,
        summary: "Unassign a guardrail from members",
        params: IdParams,
        body: MemberUserIds,
        response: { 200: Unassigned, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => ({
      unassigned_count: await unassignMembers(
        deps,
        principalOf(request),
        request.params.id,
        request.body.member_user_ids,
      ),
    }),
  );

  // The four list routes: per guardrail and across the organization, for keys and for members.
  const lists = [
    { kind: "keys", item: KeyAssignment, list: keyAssignments },
    { kind: "members", item: MemberAssignment, list: memberAssignments },
  ] as const;
  for (const { kind, item, list } of lists) {
    const summary = kind.slice(0, -1);
    app.get(
      `/api/v1/guardrails/:id/assignments/${kind}`,
      {
        config,
        schema: {
          tags,
          summary: `List a guardrail's ${summary} assignments`,
          params: IdParams,
          querystring: Pagination,
          response: { 200: listOf(item), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (request) => {
        const result = await list(deps, principalOf(request), page(request.query), request.params.id);
        return { data: result.items, total_count: result.total };
      },
    );
    app.get(
      `/api/v1/guardrails/assignments/${kind}`,
      {
        config,
        schema: {
          tags,
          summary: `List all ${summary} assignments`,
          querystring: Pagination,
          response: { 200: listOf(item), ...errorResponses(400, 401, 403) },
        },
      },
      async (request) => {
        const result = await list(deps, principalOf(request), page(request.query), undefined);
        return { data: result.items, total_count: result.total };
      },
    );
  }
}
