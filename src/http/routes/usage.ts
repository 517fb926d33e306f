import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import Type from "typebox";
import { APIS } from "../../domain/catalog.js";
import type { ServiceDeps } from "../../services/context.js";
import { reportUsage, USAGE_DIMENSIONS, type UsageDimension } from "../../services/report-usage.js";
import { principalOf } from "../auth.js";
import { errorResponses, Pagination, page } from "../schemas/common.js";
import { asSent } from "../schemas/responses.js";

const DIMENSIONS = Object.keys(USAGE_DIMENSIONS).join("|");
const Day = Type.String({ pattern: "^\\d{4}-\\d{2}-\\d{2}$", description: "A UTC day, YYYY-MM-DD" });
const Id = Type.Optional(Type.String({ minLength: 1, maxLength: 200 }));
/** A session as recorded (docs/behaviour.md#usage-by-session): visible ASCII, at most 128. */
export const SessionId = Type.String({
  pattern: "^[\\x21-\\x7e]{1,128}$",
  description: "Only the requests that named this agent session (X-Claude-Code-Session-Id)",
});

const UsageQuery = Type.Object(
  {
    ...Pagination.properties,
    from: Day,
    to: Day,
    group_by: Type.Optional(
      Type.String({
        pattern: `^(${DIMENSIONS})(,(${DIMENSIONS}))*$`,
        default: "day",
        description: `Comma-separated: ${Object.keys(USAGE_DIMENSIONS).join(", ")}`,
      }),
    ),
    key_hash: Id,
    workspace_id: Id,
    member_user_id: Id,
    guardrail_id: Id,
    model: Id,
    provider: Id,
    api: Type.Optional(
      Type.String({ enum: [...APIS], description: "Only requests made on this API (docs/api.md#usage)" }),
    ),
    session_id: Type.Optional(SessionId),
  },
  { additionalProperties: false },
);

const Group = Type.Optional(Type.String());
/** One group of the report: the grouped values it was asked for, then the sums (docs/api.md#usage). */
const UsageRow = Type.Object({
  date: Group,
  key_hash: Group,
  member_user_id: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  workspace_id: Group,
  guardrail_id: Group,
  model: Group,
  provider: Group,
  api: Type.Optional(Type.String({ enum: [...APIS], description: "Only with group_by api" })),
  session_id: Type.Optional(
    Type.Union([Type.String(), Type.Null()], {
      description: "Only with group_by session; null for the requests that named no session",
    }),
  ),
  requests: Type.Integer(),
  prompt_tokens: Type.Integer(),
  completion_tokens: Type.Integer(),
  spend_usd: Type.Number(),
  byok_requests: Type.Integer(),
  byok_spend_usd: Type.Number(),
});
const UsageResponse = Type.Object({ data: Type.Array(UsageRow), total_count: Type.Integer() });

/** GET /api/v1/usage: the organization's spend from the ledger, by day and what it was spent on. */
export function usageRoutes(parent: FastifyInstance, deps: ServiceDeps): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    "/api/v1/usage",
    {
      ...asSent,
      config: { auth: "management" },
      schema: {
        tags: ["Usage"],
        summary: "Spend, requests and tokens, grouped, over a range of UTC days",
        description:
          "Management key. From the spend ledger of the caller's organization: `from` and `to` are UTC days (both included, at most 366), `group_by` any of day, key, member, workspace, guardrail, model, provider, api and session (default day); filters by key_hash, workspace_id, member_user_id, guardrail_id, model, provider, api (the API the requests were made on: chat, messages, responses or embeddings), session_id (the agent session the requests named in X-Claude-Code-Session-Id; by session, requests that named none are one row with session_id null). Bring-your-own-key requests and spend are reported apart (`byok_requests`, `byok_spend_usd`). By guardrail, a request counts under each guardrail that governed it. Paged with offset and limit; `total_count` is the number of groups.",
        querystring: UsageQuery,
        response: { 200: UsageResponse, ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const q = request.query;
      const filters: Partial<Record<UsageDimension, string>> = {};
      if (q.key_hash !== undefined) filters.key = q.key_hash;
      if (q.workspace_id !== undefined) filters.workspace = q.workspace_id;
      if (q.member_user_id !== undefined) filters.member = q.member_user_id;
      if (q.guardrail_id !== undefined) filters.guardrail = q.guardrail_id;
      if (q.model !== undefined) filters.model = q.model;
      if (q.provider !== undefined) filters.provider = q.provider;
      if (q.api !== undefined) filters.api = q.api;
      if (q.session_id !== undefined) filters.session = q.session_id;
      return reportUsage(deps, principalOf(request).organizationId, {
        from: q.from,
        to: q.to,
        groupBy: (q.group_by ?? "day").split(",") as UsageDimension[],
        filters,
        ...page(q),
      });
    },
  );
}
