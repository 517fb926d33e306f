import { type BudgetInterval, budgetWindow } from "../domain/budget-window.js";
import type { ResetInterval } from "../domain/guardrail.js";
import { workspaceDefaultGuardrailId } from "../domain/ids.js";
import { microsToUsd } from "../domain/money.js";
import { type BudgetLayerKind, type BudgetScope, counterIdOf } from "../domain/policy.js";
import { findMembersGuardrailIds, memberSlot } from "../storage/assignment-repo.js";
import { findGuardrails } from "../storage/guardrail-repo.js";
import type { Executor } from "../storage/schema.js";
import { type SubjectSpendMicros, sumSubjectsSpend } from "../storage/usage-repo.js";
import type { ServiceDeps } from "./context.js";
import { type CounterKey, type CounterUsage, readBudgetCounters } from "./read-budget-counters.js";

/** A budget that counts the subject, with its current window (as a counter the gateway writes). */
export interface SubjectBudget {
  /** Null for a key's own limit and a workspace budget. */
  guardrail_id: string | null;
  layer: BudgetLayerKind;
  /** The workspace the budget applies in (a member's budgets are per workspace). */
  workspace_id: string | null;
  scope: BudgetScope;
  subject: string;
  limit_micros: number;
  reset_interval: BudgetInterval;
}

/**
 * What a key or a member spent in USD, as the reference service reports it (docs/api.md#key-usage):
 * `usage` on the service's own provider accounts, `byok_usage` on bring-your-own-key endpoints, all
 * time and in the current UTC day, week and month (the budgets' calendar windows). Settled requests
 * only: a request in flight counts once it settles.
 */
export interface SubjectUsage {
  usage: number;
  usage_daily: number;
  usage_weekly: number;
  usage_monthly: number;
  byok_usage: number;
  byok_usage_daily: number;
  byok_usage_weekly: number;
  byok_usage_monthly: number;
}

/** The fields of the reference service's key object, in USD: spend per window beside the limit. */
export interface SubjectSpend extends SubjectUsage {
  /** The tightest budget's limit (least left), or null without a budget. */
  limit: number | null;
  limit_remaining: number | null;
  limit_reset: ResetInterval | null;
  /** Every budget that counts the subject, with its window's settled spend and what is held. */
  budgets: BudgetState[];
}

/** One budget's state in its current window; a lifetime one has no `resets_at`. */
export interface BudgetState {
  guardrail_id: string | null;
  layer: BudgetLayerKind;
  workspace_id: string | null;
  scope: BudgetScope;
  reset_interval: BudgetInterval;
  limit_usd: number;
  spent_usd: number;
  reserved_usd: number;
  remaining_usd: number;
  resets_at: string | null;
}

const day = (d: Date) => d.toISOString().slice(0, 10);

/** The first day of each spend window that contains `now`. */
function windowDays(now: Date) {
  return {
    daily: day(budgetWindow("daily", now).start),
    weekly: day(budgetWindow("weekly", now).start),
    monthly: day(budgetWindow("monthly", now).start),
  };
}

/** The counter each budget charges in the window that contains `now`. */
function countersOf(budgets: readonly SubjectBudget[], now: Date): CounterKey[] {
  return budgets.map((b) => ({
    guardrail_id: counterIdOf(b),
    scope: b.scope,
    subject: b.subject,
    reset_interval: b.reset_interval,
    window_start: budgetWindow(b.reset_interval, now).start.toISOString(),
  }));
}

/** Spend sums in USD. */
function usageOf(spend: SubjectSpendMicros): SubjectUsage {
  return {
    usage: microsToUsd(spend.total),
    usage_daily: microsToUsd(spend.daily),
    usage_weekly: microsToUsd(spend.weekly),
    usage_monthly: microsToUsd(spend.monthly),
    byok_usage: microsToUsd(spend.byok_total),
    byok_usage_daily: microsToUsd(spend.byok_daily),
    byok_usage_weekly: microsToUsd(spend.byok_weekly),
    byok_usage_monthly: microsToUsd(spend.byok_monthly),
  };
}

/** Usage of a subject that spent nothing (or is not read). */
export const NO_USAGE: SubjectUsage = {
  usage: 0,
  usage_daily: 0,
  usage_weekly: 0,
  usage_monthly: 0,
  byok_usage: 0,
  byok_usage_daily: 0,
  byok_usage_weekly: 0,
  byok_usage_monthly: 0,
};

/**
 * One key's usage alone, without its budgets (GET /api/v1/key reads those from its cached policy):
 * the same sums as readSubjectsSpend, from the daily rollup.
 */
export async function readKeyUsage(
  deps: ServiceDeps,
  organizationId: string,
  keyHash: string,
  now: Date,
): Promise<SubjectUsage> {
  const sums = await sumSubjectsSpend(deps.db, organizationId, "key_hash", [keyHash], windowDays(now));
  const spend = sums.get(keyHash);
  return spend ? usageOf(spend) : NO_USAGE;
}

/** The subject's spend and budgets, from its sums and its budgets' counters (in the budgets' order). */
function subjectSpendOf(
  spend: SubjectSpendMicros,
  budgets: readonly SubjectBudget[],
  usage: readonly CounterUsage[],
  now: Date,
): SubjectSpend {
  const states = budgets.map((b, i) => {
    const spent = usage[i]?.spent_micros ?? 0;
    const reserved = usage[i]?.reserved_micros ?? 0;
    return {
      guardrail_id: b.guardrail_id,
      layer: b.layer,
      workspace_id: b.workspace_id,
      scope: b.scope,
      reset_interval: b.reset_interval,
      limit_usd: microsToUsd(b.limit_micros),
      spent_usd: microsToUsd(spent),
      reserved_usd: microsToUsd(reserved),
      remaining_usd: microsToUsd(Math.max(0, b.limit_micros - spent)),
      resets_at: budgetWindow(b.reset_interval, now).resetsAt?.toISOString() ?? null,
    };
  });
  const tightest = states.reduce<(typeof states)[number] | undefined>(
    (best, s) => (best === undefined || s.remaining_usd < best.remaining_usd ? s : best),
    undefined,
  );
  return {
    ...usageOf(spend),
    limit: tightest?.limit_usd ?? null,
    limit_remaining: tightest?.remaining_usd ?? null,
    limit_reset: tightest && tightest.reset_interval !== "lifetime" ? tightest.reset_interval : null,
    budgets: states,
  };
}

/**
 * Subjects' current spend per UTC window (daily, weekly from Monday, monthly from the 1st: the
 * budget windows) from the daily rollup, and the state of each of their budgets from its counter, in
 * the order of `subjects`. Generic over keys (`key_hash`) and members (`member_user_id`), so that
 * each object that carries usage reads it the same way; two queries whatever the number of subjects
 * (the rollup sums grouped by subject, and every budget's counter).
 */
export async function readSubjectsSpend(
  deps: ServiceDeps,
  organizationId: string,
  column: "key_hash" | "member_user_id",
  subjects: readonly { id: string; budgets: readonly SubjectBudget[] }[],
  now: Date,
  db: Executor = deps.db,
): Promise<SubjectSpend[]> {
  const sums = await sumSubjectsSpend(
    db,
    organizationId,
    column,
    subjects.map((s) => s.id),
    windowDays(now),
  );
  const counters = subjects.map((s) => countersOf(s.budgets, now));
  const usage = await readBudgetCounters({ db, spend: deps.spend }, organizationId, counters.flat());
  let at = 0;
  return subjects.map((s, i) => {
    const mine = usage.slice(at, at + (counters[i]?.length ?? 0));
    at += mine.length;
    const spend = sums.get(s.id);
    if (!spend) throw new Error("every subject asked for has its sums");
    return subjectSpendOf(spend, s.budgets, mine, now);
  });
}

/** What readMembersSpend needs of a member. */
export interface SpendingMember {
  organization_id: string;
  user_id: string;
  workspace_ids: readonly string[];
}

/**
 * Members' budgets (docs/behaviour.md#budget-scopes): in each of a member's workspaces, the member's
 * guardrail there and the workspace default guardrail, each counting all the member's keys in that
 * workspace. Two queries whatever the number of members.
 */
async function membersBudgets(
  db: Executor,
  organizationId: string,
  members: readonly SpendingMember[],
): Promise<SubjectBudget[][]> {
  const assigned = await findMembersGuardrailIds(
    db,
    organizationId,
    members.map((m) => m.user_id),
  );
  const wanted = members.map((m) =>
    m.workspace_ids.map((workspaceId) => ({
      workspaceId,
      ids: [workspaceDefaultGuardrailId(workspaceId), assigned.get(memberSlot(workspaceId, m.user_id))],
    })),
  );
  const guardrails = await findGuardrails(
    db,
    organizationId,
    wanted.flat().flatMap(({ ids }) => ids.filter((id) => id !== undefined)),
  );
  return members.map((m, i) =>
    (wanted[i] ?? []).flatMap(({ workspaceId, ids: [defaultId, assignedId] }) =>
      [defaultId, assignedId].flatMap((id): SubjectBudget[] => {
        const g = id === undefined ? undefined : guardrails.get(id);
        if (!g || g.limit_micros === null || g.reset_interval === null) return [];
        return [
          {
            guardrail_id: g.id,
            layer: id === assignedId ? "member" : "workspace_default",
            workspace_id: workspaceId,
            scope: "member",
            subject: `${workspaceId}:${m.user_id}`,
            limit_micros: g.limit_micros,
            reset_interval: g.reset_interval,
          },
        ];
      }),
    ),
  );
}

/**
 * Members' spend per window and budgets, for the member object, in the order of `members` (in `db`:
 * a transaction, when inside one). Members of one organization; four queries whatever their number.
 */
export async function readMembersSpend(
  deps: ServiceDeps,
  members: readonly SpendingMember[],
  db: Executor = deps.db,
): Promise<SubjectSpend[]> {
  const organizationId = members[0]?.organization_id;
  if (organizationId === undefined) return [];
  if (members.some((m) => m.organization_id !== organizationId))
    throw new Error("members of one organization are read together");
  const budgets = await membersBudgets(db, organizationId, members);
  return readSubjectsSpend(
    deps,
    organizationId,
    "member_user_id",
    members.map((m, i) => ({ id: m.user_id, budgets: budgets[i] ?? [] })),
    deps.now(),
    db,
  );
}

/** One member's spend and budgets: readMembersSpend for one member. */
export async function readMemberSpend(
  deps: ServiceDeps,
  member: SpendingMember,
  db: Executor = deps.db,
): Promise<SubjectSpend> {
  const [spend] = await readMembersSpend(deps, [member], db);
  if (!spend) throw new Error("a member read is a member with spend");
  return spend;
}
