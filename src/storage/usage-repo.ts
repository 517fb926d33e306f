import { sql } from "kysely";
import type { Executor } from "./schema.js";

/** What usage can be grouped by, and the rollup column of each. */
export const USAGE_DIMENSIONS = {
  day: "day",
  key: "key_hash",
  member: "member_user_id",
  workspace: "workspace_id",
  guardrail: "guardrail_id",
  model: "model",
  provider: "provider",
  /** The API the requests were made on (docs/behaviour.md#usage-by-api). */
  api: "api",
  /** The agent session the requests named, '' for none (docs/behaviour.md#usage-by-session). */
  session: "session_id",
} as const;

export type UsageDimension = keyof typeof USAGE_DIMENSIONS;

export interface UsageQuery {
  /** First and last UTC day, YYYY-MM-DD, both included. */
  from: string;
  to: string;
  groupBy: UsageDimension[];
  /** Only rows whose dimension has this value. */
  filters: Partial<Record<UsageDimension, string>>;
  offset: number;
  limit: number;
}

export interface UsageRow {
  /** The grouped dimensions' values, by dimension. */
  group: Partial<Record<UsageDimension, string>>;
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost_micros: number;
  byok_requests: number;
  byok_cost_micros: number;
}

/**
 * Spend, requests and tokens from the daily rollup of one organization, grouped and paged, bring-
 * your-own-key apart. Grouped or filtered by guardrail, a request counts under each guardrail that
 * governed it; otherwise once. Reads only the organization's rows of the range, by the primary key.
 */
export async function readUsageReport(
  db: Executor,
  organizationId: string,
  q: UsageQuery,
): Promise<{ rows: UsageRow[]; total: number }> {
  const byGuardrail = q.groupBy.includes("guardrail") || q.filters.guardrail !== undefined;
  const columns = q.groupBy.map((d) => sql.ref(USAGE_DIMENSIONS[d]));
  const conditions = [
    sql`organization_id = ${organizationId}`,
    sql`day >= ${q.from}`,
    sql`day <= ${q.to}`,
    byGuardrail ? sql`guardrail_id <> ''` : sql`guardrail_id = ''`,
    ...Object.entries(q.filters).map(
      ([d, value]) => sql`${sql.ref(USAGE_DIMENSIONS[d as UsageDimension])} = ${value}`,
    ),
  ];
  const where = sql.join(conditions, sql` and `);
  const groupBy = columns.length > 0 ? sql`group by ${sql.join(columns)}` : sql``;
  const orderBy = columns.length > 0 ? sql`order by ${sql.join(columns)}` : sql``;
  const selected = columns.length > 0 ? sql`${sql.join(columns)},` : sql``;
  const result = await sql<Record<string, string | number | bigint>>`
    select ${selected}
      sum(case when byok = 0 then requests else 0 end) as requests,
      sum(prompt_tokens) as prompt_tokens,
      sum(completion_tokens) as completion_tokens,
      sum(case when byok = 0 then cost_micros else 0 end) as cost_micros,
      sum(case when byok = 1 then requests else 0 end) as byok_requests,
      sum(case when byok = 1 then cost_micros else 0 end) as byok_cost_micros
    from spend_rollup where ${where} ${groupBy} ${orderBy}
    limit ${q.limit} offset ${q.offset}`.execute(db);
  const counted = await sql<{ n: number | string }>`
    select count(*) as n from (select 1 as one from spend_rollup where ${where} ${groupBy}) groups`.execute(
    db,
  );
  const rows = result.rows
    // With no grouping, an empty range still answers one row of sums (nulls): no rows then.
    .filter((r) => r.requests !== null || r.byok_requests !== null)
    .map((r) => ({
      group: Object.fromEntries(q.groupBy.map((d) => [d, String(r[USAGE_DIMENSIONS[d]])])),
      requests: Number(r.requests ?? 0),
      prompt_tokens: Number(r.prompt_tokens ?? 0),
      completion_tokens: Number(r.completion_tokens ?? 0),
      cost_micros: Number(r.cost_micros ?? 0),
      byok_requests: Number(r.byok_requests ?? 0),
      byok_cost_micros: Number(r.byok_cost_micros ?? 0),
    }));
  const total = columns.length > 0 ? Number(counted.rows[0]?.n ?? 0) : rows.length;
  return { rows, total };
}

/** Settled spend of one key or member from the rollup, in micro-dollars: all time and since each day given. */
export interface SubjectSpendMicros {
  total: number;
  daily: number;
  weekly: number;
  monthly: number;
  byok_total: number;
  byok_daily: number;
  byok_weekly: number;
  byok_monthly: number;
}

/**
 * Sums the rollup rows that count each request once (guardrail_id '') of each of several keys
 * (`key_hash`) or members (`member_user_id`: all of a member's keys), bring-your-own-key apart, over
 * all time and from each window's first day, in one query; by subject, zero for one with no spend.
 */
export async function sumSubjectsSpend(
  db: Executor,
  organizationId: string,
  column: "key_hash" | "member_user_id",
  subjects: readonly string[],
  since: { daily: string; weekly: string; monthly: string },
): Promise<Map<string, SubjectSpendMicros>> {
  const bySubject = new Map<string, SubjectSpendMicros>();
  if (subjects.length === 0) return bySubject;
  const result = await sql<SpendSums & { subject: string }>`
    select ${sql.ref(column)} as subject, ${spendSums(since)}
      from spend_rollup where organization_id = ${organizationId} and guardrail_id = ''
       and ${sql.ref(column)} in (${sql.join([...new Set(subjects)])})
     group by ${sql.ref(column)}`.execute(db);
  for (const row of result.rows) bySubject.set(row.subject, spendMicros(row));
  for (const subject of subjects) if (!bySubject.has(subject)) bySubject.set(subject, spendMicros(undefined));
  return bySubject;
}

type SpendSums = Record<string, string | number | bigint | null>;

/** The eight sums of SubjectSpendMicros, as select columns. */
function spendSums(since: { daily: string; weekly: string; monthly: string }) {
  const part = (byok: 0 | 1, from?: string) =>
    from === undefined
      ? sql`sum(case when byok = ${byok} then cost_micros else 0 end)`
      : sql`sum(case when byok = ${byok} and day >= ${from} then cost_micros else 0 end)`;
  return sql`${part(0)} as total, ${part(0, since.daily)} as daily, ${part(0, since.weekly)} as weekly,
           ${part(0, since.monthly)} as monthly, ${part(1)} as byok_total,
           ${part(1, since.daily)} as byok_daily, ${part(1, since.weekly)} as byok_weekly,
           ${part(1, since.monthly)} as byok_monthly`;
}

function spendMicros(row: SpendSums | undefined): SubjectSpendMicros {
  const n = (k: string) => Number(row?.[k] ?? 0);
  return {
    total: n("total"),
    daily: n("daily"),
    weekly: n("weekly"),
    monthly: n("monthly"),
    byok_total: n("byok_total"),
    byok_daily: n("byok_daily"),
    byok_weekly: n("byok_weekly"),
    byok_monthly: n("byok_monthly"),
  };
}
