import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import Type from "typebox";
import { type ReadAuditLogDeps, readAuditLog } from "../../services/read-audit-log.js";
import { principalOf } from "../auth.js";
import { errorResponses, Pagination, page } from "../schemas/common.js";
import { AuditLogResponse, asSent } from "../schemas/responses.js";

const AuditQuery = Type.Object(
  {
    ...Pagination.properties,
    resource_id: Type.Optional(Type.String({ maxLength: 200 })),
    resource_type: Type.Optional(Type.String({ maxLength: 50, description: "guardrail, key, member, ..." })),
    actor_key_hash: Type.Optional(
      Type.String({ maxLength: 128, description: "The acting key's hash, `cli` or `system`." }),
    ),
    since: Type.Optional(Type.String({ format: "date-time", description: "Entries at or after this time." })),
    until: Type.Optional(Type.String({ format: "date-time", description: "Entries before this time." })),
  },
  { additionalProperties: false },
);

/** Stored times are UTC ISO text: an offset or a shorter form is brought to that shape to compare. */
const utc = (time: string) => new Date(time).toISOString();

function parse(text: string | null): unknown {
  return text === null ? null : JSON.parse(text);
}

/** GET /api/v1/audit-log: every management change of the organization, newest first. */
export function auditLogRoutes(parent: FastifyInstance, deps: ReadAuditLogDeps): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    "/api/v1/audit-log",
    {
      config: { auth: "management" },
      ...asSent,
      schema: {
        tags: ["Audit log"],
        summary: "Management changes, newest first",
        description:
          "Each entry names the acting key's hash, the time, and the before and after values. Filter with resource_id, resource_type, actor_key_hash and a time range (since included, until excluded).",
        querystring: AuditQuery,
        response: { 200: AuditLogResponse, ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const query = request.query;
      const result = await readAuditLog(deps, principalOf(request).organizationId, {
        ...page(query),
        ...(query.resource_id !== undefined ? { resourceId: query.resource_id } : {}),
        ...(query.resource_type !== undefined ? { resourceType: query.resource_type } : {}),
        ...(query.actor_key_hash !== undefined ? { actor: query.actor_key_hash } : {}),
        ...(query.since !== undefined ? { since: utc(query.since) } : {}),
        ...(query.until !== undefined ? { until: utc(query.until) } : {}),
      });
      return {
        data: result.items.map((e) => ({
          id: e.id,
          action: e.action,
          resource_type: e.resource_type,
          resource_id: e.resource_id,
          actor_key_hash: e.actor_key_hash,
          before: parse(e.before),
          after: parse(e.after),
          created_at: e.created_at,
        })),
        total_count: result.total,
      };
    },
  );
}
