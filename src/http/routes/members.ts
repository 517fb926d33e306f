import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import Type from "typebox";
import type { ServiceDeps } from "../../services/context.js";
import { runIdempotent } from "../../services/idempotency.js";
import {
  createMember,
  getMember,
  listOrganizationMembers,
  type Member as MemberRecord,
  presentMember,
  removeMember,
  updateMember,
} from "../../services/members.js";
import { readMemberSpend, readMembersSpend } from "../../services/read-subject-spend.js";
import { principalOf } from "../auth.js";
import { Deleted, dataOf, errorResponses, listOf, Pagination, page, Uuid } from "../schemas/common.js";
import { BudgetState } from "../schemas/responses.js";
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

const Usd = (description: string) => Type.Number({ description });
const NullableUsd = (description: string) => Type.Union([Type.Number(), Type.Null()], { description });
/** The member's spend per UTC window beside its budgets (docs/api.md#members). */
const MemberSpend = Type.Object({
  usage: Usd("USD settled by the member's keys, all time (bring-your-own-key apart)."),
  usage_daily: Usd("USD settled today (UTC)."),
  usage_weekly: Usd("USD settled since Monday 00:00 UTC."),
  usage_monthly: Usd("USD settled since the 1st 00:00 UTC."),
  byok_usage: Usd("Bring-your-own-key USD, all time."),
  byok_usage_daily: Usd("Bring-your-own-key USD today."),
  byok_usage_weekly: Usd("Bring-your-own-key USD this week."),
  byok_usage_monthly: Usd("Bring-your-own-key USD this month."),
  limit: NullableUsd("The limit of the member budget with the least left; null without one."),
  limit_remaining: NullableUsd("What that budget has left in its window (settled spend only)."),
  limit_reset: Type.Union([Type.Enum(["daily", "weekly", "monthly"]), Type.Null()]),
  budgets: Type.Array(BudgetState),
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
/** The member object: its fields, then its spend per window and its budgets. */
const MemberWithSpend = Type.Object({ ...Member.properties, ...MemberSpend.properties });
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

/** The member object with its current spend per window and its budgets. */
async function withSpend(deps: ServiceDeps, m: MemberRecord) {
  return { ...presentMember(m), ...(await readMemberSpend(deps, m)) };
}

export function memberRoutes(parent: FastifyInstance, deps: ServiceDeps): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ["Members"];
  const config = { auth: "management" as const };

  app.post(
    "/api/v1/members",
    {
      config,
      schema: {
        tags,
        summary: "Add a member",
        headers: IdempotencyHeaders,
        body: CreateMemberBody,
        response: { 201: dataOf(MemberWithSpend), ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const stored = await runIdempotent(deps, principal, idempotencyOf(request), async (tx) => {
        const m = await createMember(deps, tx, principal, request.body);
        return {
          status: 201,
          headers: { location: `/api/v1/members/${encodeURIComponent(m.user_id)}` },
          body: { data: { ...presentMember(m), ...(await readMemberSpend(deps, m, tx)) } },
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
        response: { 200: listOf(MemberWithSpend), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const result = await listOrganizationMembers(deps, principalOf(request), page(request.query));
      // The page's spend in a fixed number of queries, not a few per member (docs/api.md#member-lists).
      const spends = await readMembersSpend(deps, result.items);
      const data = result.items.map((m, i) => {
        const spend = spends[i];
        if (!spend) throw new Error("every member listed has its spend");
        return { ...presentMember(m), ...spend };
      });
      return { data, total_count: result.total };
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
        response: { 200: dataOf(MemberWithSpend), ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => ({
      data: await withSpend(deps, await getMember(deps, principalOf(request), request.params.user_id)),
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
        response: { 200: dataOf(MemberWithSpend), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => ({
      data: await withSpend(
        deps,
        await updateMember(deps, principalOf(request), request.params.user_id, request.body),
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
      await removeMember(deps, principalOf(request), request.params.user_id);
      return { deleted: true as const };
    },
  );
}
