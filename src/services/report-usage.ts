import { invalidRequest } from "../domain/errors.js";
import { microsToUsd } from "../domain/money.js";
import {
  readUsageReport,
  USAGE_DIMENSIONS,
  type UsageDimension,
  type UsageQuery,
} from "../storage/usage-repo.js";
import type { ServiceDeps } from "./context.js";

// The dimensions a report groups and filters by, for the route that validates them.
export { USAGE_DIMENSIONS, type UsageDimension };

/** The longest range one report covers: a year and a day (a leap year). */
export const MAX_USAGE_DAYS = 366;

const DAY_MS = 24 * 60 * 60 * 1000;

/** A UTC day as YYYY-MM-DD, or undefined when the text names no real day (2026-02-30). */
function dayOf(text: string): number | undefined {
  const time = Date.parse(`${text}T00:00:00.000Z`);
  if (Number.isNaN(time) || new Date(time).toISOString().slice(0, 10) !== text) return undefined;
  return time;
}

/** The field of a report row that carries each dimension's value. */
const FIELD = {
  day: "date",
  key: "key_hash",
  member: "member_user_id",
  workspace: "workspace_id",
  guardrail: "guardrail_id",
  model: "model",
  provider: "provider",
  api: "api",
  session: "session_id",
} as const satisfies Record<UsageDimension, string>;

/** One group of a usage report: the values it was grouped by, then what was spent in it. */
export type UsageRow = {
  [D in UsageDimension as (typeof FIELD)[D]]?: D extends "member" | "session" ? string | null : string;
} & {
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  spend_usd: number;
  byok_requests: number;
  byok_spend_usd: number;
};

/** The row's group values under their field names; a member left empty is a key no member owns. */
function groupFields(group: Partial<Record<UsageDimension, string>>): Partial<UsageRow> {
  const out: Partial<UsageRow> = {};
  for (const [d, v] of Object.entries(group) as [UsageDimension, string][]) {
    if (d === "member") out.member_user_id = v === "" ? null : v;
    // Requests that named no session are one group, without a session.
    else if (d === "session") out.session_id = v === "" ? null : v;
    else out[FIELD[d]] = v;
  }
  return out;
}

/**
 * Spend, requests and tokens of the caller's organization over a range of UTC days, grouped and
 * paged (docs/api.md#usage). Ids of other organizations match nothing: their rows are never read.
 */
export async function reportUsage(
  deps: ServiceDeps,
  organizationId: string,
  q: UsageQuery,
): Promise<{ data: UsageRow[]; total_count: number }> {
  const from = dayOf(q.from);
  const to = dayOf(q.to);
  const issues = [];
  if (from === undefined) issues.push({ path: "/from", message: "is not a day (YYYY-MM-DD)" });
  if (to === undefined) issues.push({ path: "/to", message: "is not a day (YYYY-MM-DD)" });
  if (from !== undefined && to !== undefined) {
    if (to < from) issues.push({ path: "/to", message: "is before from" });
    else if ((to - from) / DAY_MS + 1 > MAX_USAGE_DAYS)
      issues.push({ path: "/to", message: `makes a range of more than ${MAX_USAGE_DAYS} days` });
  }
  if (new Set(q.groupBy).size !== q.groupBy.length)
    issues.push({ path: "/group_by", message: "names a dimension twice" });
  if (issues.length > 0) throw invalidRequest(issues);
  const report = await readUsageReport(deps.db, organizationId, q);
  return {
    data: report.rows.map((r) => ({
      ...groupFields(r.group),
      requests: r.requests,
      prompt_tokens: r.prompt_tokens,
      completion_tokens: r.completion_tokens,
      spend_usd: microsToUsd(r.cost_micros),
      byok_requests: r.byok_requests,
      byok_spend_usd: microsToUsd(r.byok_cost_micros),
    })),
    total_count: report.total,
  };
}
