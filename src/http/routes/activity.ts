import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import Type from "typebox";
import { ACTIVITY_DAYS } from "../../domain/activity-window.js";
import { APIS } from "../../domain/catalog.js";
import type { ServiceDeps } from "../../services/context.js";
import { reportActivity } from "../../services/report-activity.js";
import { principalOf } from "../auth.js";
import { errorResponses } from "../schemas/common.js";
import { SessionId } from "./usage.js";

const ActivityQuery = Type.Object(
  {
    date: Type.Optional(
      Type.String({
        pattern: "^\\d{4}-\\d{2}-\\d{2}$",
        description: `One UTC day (YYYY-MM-DD) among the last ${ACTIVITY_DAYS} completed ones`,
      }),
    ),
    api_key_hash: Type.Optional(
      Type.String({ pattern: "^[0-9a-f]{64}$", description: "Only this key's requests (its hash)" }),
    ),
    user_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: "Only the requests of this member's keys" }),
    ),
    group_by: Type.Optional(
      Type.String({
        enum: ["workspace", "session"],
        description:
          "`workspace`: one row per workspace as well; `session`: one row per agent session as well (X-Claude-Code-Session-Id)",
      }),
    ),
    session_id: Type.Optional(SessionId),
    workspace_id: Type.Optional(
      Type.String({ format: "uuid", description: "Only requests of this workspace's keys" }),
    ),
    api: Type.Optional(
      Type.Enum([...APIS], {
        description: "Only requests made on this API: chat, messages, responses or embeddings",
      }),
    ),
  },
  { additionalProperties: false },
);

const ActivityItem = Type.Object({
  date: Type.String({ description: "The UTC day, YYYY-MM-DD" }),
  model: Type.String({ description: "The model's catalog slug" }),
  model_permaslug: Type.String({ description: "The model's canonical slug" }),
  endpoint_id: Type.String({ description: "Always empty: endpoints have no ids here" }),
  provider_name: Type.String(),
  usage: Type.Number({ description: "Spend in USD, bring-your-own-key requests not included" }),
  byok_usage_inference: Type.Number({ description: "Spend in USD of bring-your-own-key requests" }),
  requests: Type.Integer(),
  prompt_tokens: Type.Integer(),
  completion_tokens: Type.Integer(),
  reasoning_tokens: Type.Integer({ description: "Always 0: not recorded apart from completion tokens" }),
  api: Type.String({
    enum: [...APIS],
    description: "The API the requests were made on; rows recorded before the API was kept say chat",
  }),
  workspace_id: Type.Optional(Type.String({ description: "Only with group_by=workspace" })),
  session_id: Type.Optional(
    Type.Union([Type.String(), Type.Null()], {
      description: "Only with group_by=session; null for the requests that named no session",
    }),
  ),
});

/** GET /api/v1/activity: the reference SDK's `analytics.getUserActivity`, from the usage rollup. */
export function activityRoutes(parent: FastifyInstance, deps: ServiceDeps): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    "/api/v1/activity",
    {
      config: { auth: "management" },
      schema: {
        tags: ["Usage"],
        summary: `Spend by day, model and provider over the last ${ACTIVITY_DAYS} completed UTC days`,
        description: `Management key. The reference SDK's activity report, from the same data as GET /api/v1/usage: one row per UTC day, model, provider and API (and workspace with \`group_by=workspace\`) over the last ${ACTIVITY_DAYS} completed UTC days, or the one \`date\` given among them; filters by api_key_hash, user_id (a member), workspace_id, api and session_id (the agent session named in X-Claude-Code-Session-Id; \`group_by=session\` adds a row per session, with \`session_id\`, null for none). Ids of another organization match nothing. Today is not included until it is over.`,
        querystring: ActivityQuery,
        response: { 200: Type.Object({ data: Type.Array(ActivityItem) }), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const q = request.query;
      return reportActivity(deps, principalOf(request).organizationId, {
        ...(q.date !== undefined ? { date: q.date } : {}),
        ...(q.api_key_hash !== undefined ? { keyHash: q.api_key_hash } : {}),
        ...(q.user_id !== undefined ? { memberUserId: q.user_id } : {}),
        ...(q.workspace_id !== undefined ? { workspaceId: q.workspace_id } : {}),
        ...(q.api !== undefined ? { api: q.api } : {}),
        ...(q.session_id !== undefined ? { sessionId: q.session_id } : {}),
        byWorkspace: q.group_by === "workspace",
        bySession: q.group_by === "session",
      });
    },
  );
}
