import { activityRange } from "../domain/activity-window.js";
import type { Api } from "../domain/catalog.js";
import { invalidRequest } from "../domain/errors.js";
import { microsToUsd } from "../domain/money.js";
import { readUsageReport, type UsageDimension } from "../storage/usage-repo.js";
import type { ServiceDeps } from "./context.js";

export interface ActivityQuery {
  /** One UTC day, YYYY-MM-DD; all of the report's days when absent. */
  date?: string;
  keyHash?: string;
  memberUserId?: string;
  workspaceId?: string;
  /** Only requests made on this API. */
  api?: Api;
  /** Only requests that named this agent session (docs/behaviour.md#usage-by-session). */
  sessionId?: string;
  /** One row per workspace as well, each carrying its `workspace_id`. */
  byWorkspace: boolean;
  /** One row per agent session as well, each carrying its `session_id`. */
  bySession?: boolean;
}

/** An activity row in the reference SDK's shape (its `ActivityItem`). */
export interface ActivityItem {
  date: string;
  model: string;
  model_permaslug: string;
  endpoint_id: string;
  provider_name: string;
  usage: number;
  byok_usage_inference: number;
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  reasoning_tokens: number;
  /** The API the requests were made on (docs/behaviour.md#usage-by-api). */
  api: string;
  workspace_id?: string;
  /** With bySession: the session, null for requests that named none. */
  session_id?: string | null;
}

/**
 * Far more rows than 30 days of any organization's models, providers and workspaces make: the
 * reference answer is one unpaged list, and the report query needs some limit.
 */
const ROW_LIMIT = 1_000_000;

/**
 * Spend of the caller's organization by day, model and provider (and workspace when asked) over the
 * last completed UTC days, from the same rollup as the usage report (docs/api.md#activity). Ids of
 * other organizations match nothing: their rows are never read.
 */
export async function reportActivity(
  deps: ServiceDeps,
  organizationId: string,
  q: ActivityQuery,
): Promise<{ data: ActivityItem[] }> {
  const range = activityRange(deps.now(), q.date);
  if ("refused" in range) throw invalidRequest([{ path: "/date", message: range.refused }]);
  const filters: Partial<Record<UsageDimension, string>> = {};
  if (q.keyHash !== undefined) filters.key = q.keyHash;
  if (q.memberUserId !== undefined) filters.member = q.memberUserId;
  if (q.workspaceId !== undefined) filters.workspace = q.workspaceId;
  if (q.api !== undefined) filters.api = q.api;
  if (q.sessionId !== undefined) filters.session = q.sessionId;
  // By API too, so a row says which API it counts: a model served on two APIs has a row for each.
  const groupBy: UsageDimension[] = ["day", "model", "provider", "api"];
  if (q.byWorkspace) groupBy.push("workspace");
  if (q.bySession) groupBy.push("session");
  const report = await readUsageReport(deps.db, organizationId, {
    ...range,
    groupBy,
    filters,
    offset: 0,
    limit: ROW_LIMIT,
  });
  const providerNames = new Map(deps.catalog.providers.map((p) => [p.id, p.name]));
  return {
    data: report.rows.map((r) => {
      const canonical = r.group.model ?? "";
      const provider = r.group.provider ?? "";
      const item: ActivityItem = {
        date: r.group.day ?? "",
        // The ledger records the canonical slug; a model since removed from the catalog keeps it.
        model: deps.catalog.findModel(canonical)?.slug ?? canonical,
        model_permaslug: canonical,
        // Endpoints have no ids here; the reference types it as a required string, so it is empty.
        endpoint_id: "",
        provider_name: providerNames.get(provider) ?? provider,
        usage: microsToUsd(r.cost_micros),
        byok_usage_inference: microsToUsd(r.byok_cost_micros),
        requests: r.requests + r.byok_requests,
        prompt_tokens: r.prompt_tokens,
        completion_tokens: r.completion_tokens,
        // The ledger does not record reasoning tokens apart; providers count them in completion tokens.
        reasoning_tokens: 0,
        api: r.group.api ?? "chat",
      };
      if (q.byWorkspace) item.workspace_id = r.group.workspace ?? "";
      if (q.bySession) item.session_id = r.group.session ? r.group.session : null;
      return item;
    }),
  };
}
