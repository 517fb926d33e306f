import { type BudgetInterval, budgetWindow } from "../domain/budget-window.js";
import type { Guardrail, ResetInterval } from "../domain/guardrail.js";
import { workspaceDefaultGuardrailId } from "../domain/ids.js";
import { microsToUsd } from "../domain/money.js";
import { type BudgetLayerKind, type BudgetScope, counterIdOf } from "../domain/policy.js";
import { findMemberGuardrailId } from "../storage/assignment-repo.js";
import { findGuardrail } from "../storage/guardrail-repo.js";
import type { Executor } from "../storage/schema.js";
import { type SubjectSpendMicros, sumKeysSpend, sumSubjectSpend } from "../storage/usage-repo.js";
import type { ServiceDeps } from "./context.js";
import { type CounterKey, type CounterUsage, readBudgetCounters } from "./read-budget-counters.js";

/** Whose spend: one inference key, or a member (all the member's keys). */
export type SpendSubject = { kind: "key"; hash: string } | { kind: "member"; userId: string };

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

/** The fields of the reference service's key object, in USD: spend per window beside the limit. */
export interface SubjectSpend {
  usage: number;
  usage_daily: number;
  usage_weekly: number;
  usage_monthly: number;
  byok_usage: number;
  byok_usage_daily: number;
  byok_usage_weekly: number;
  byok_usage_monthly: number;
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
    usage: microsToUsd(spend.total),
    usage_daily: microsToUsd(spend.daily),
    usage_weekly: microsToUsd(spend.weekly),
    usage_monthly: microsToUsd(spend.monthly),
    byok_usage: microsToUsd(spend.byok_total),
    byok_usage_daily: microsToUsd(spend.byok_daily),
    byok_usage_weekly: microsToUsd(spend.byok_weekly),
    byok_usage_monthly: microsToUsd(spend.byok_monthly),
    limit: tightest?.limit_usd ?? null,
    limit_remaining: tightest?.remaining_usd ?? null,
    limit_reset: tightest && tightest.reset_interval !== "lifetime" ? tightest.reset_interval : null,
    budgets: states,
  };
}

/**
 * A subject's current spend per UTC window (daily, weekly from Monday, monthly from the 1st: the
 * budget windows) from the daily rollup, and the state of each budget in `budgets` from its counter.
 * Generic over keys and members so that each object that carries usage reads it the same way.
 */
export async function readSubjectSpend(
  deps: ServiceDeps,
  organizationId: string,
  subject: SpendSubject,
  budgets: readonly SubjectBudget[],
  now: Date,
  db: Executor = deps.db,
): Promise<SubjectSpend> {
  const spend = await sumSubjectSpend(
    db,
    organizationId,
    subject.kind === "key" ? { key_hash: subject.hash } : { member_user_id: subject.userId },
    windowDays(now),
  );
  const usage = await readBudgetCounters({ db, spend: deps.spend }, organizationId, countersOf(budgets, now));
  return subjectSpendOf(spend, budgets, usage, now);
}

/**
 * readSubjectSpend for many keys of one organization in two queries whatever their number (the
 * rollup sums grouped by key, and every budget's counter), in the order of `keys`.
 */
export async function readKeysSpend(
  deps: ServiceDeps,
  organizationId: string,
  keys: readonly { hash: string; budgets: readonly SubjectBudget[] }[],
  now: Date,
  db: Executor = deps.db,
): Promise<SubjectSpend[]> {
  const sums = await sumKeysSpend(
    db,
    organizationId,
    keys.map((k) => k.hash),
    windowDays(now),
  );
  const counters = keys.map((k) => countersOf(k.budgets, now));
  const usage = await readBudgetCounters({ db, spend: deps.spend }, organizationId, counters.flat());
  let at = 0;
  return keys.map((k, i) => {
    const mine = usage.slice(at, at + (counters[i]?.length ?? 0));
    at += mine.length;
    const spend = sums.get(k.hash);
    if (!spend) throw new Error("every key asked for has its sums");
    return subjectSpendOf(spend, k.budgets, mine, now);
  });
}

/**
 * A member's budgets (docs/behaviour.md#budget-scopes): in each of the member's workspaces, the member's guardrail there
 * and the workspace default guardrail, each counting all the member's keys in that workspace.
 */
export async function memberBudgets(
  deps: ServiceDeps,
  organizationId: string,
  userId: string,
  workspaceIds: readonly string[],
  db: Executor = deps.db,
): Promise<SubjectBudget[]> {
  const out: SubjectBudget[] = [];
  for (const workspaceId of workspaceIds) {
    const assigned = await findMemberGuardrailId(db, organizationId, userId, workspaceId);
    const ids = [workspaceDefaultGuardrailId(workspaceId), assigned];
    for (const id of ids) {
      if (id === undefined) continue;
      const g: Guardrail | undefined = await findGuardrail(db, organizationId, id);
      if (!g || g.limit_micros === null || g.reset_interval === null) continue;
      out.push({
        guardrail_id: g.id,
        layer: id === assigned ? "member" : "workspace_default",
        workspace_id: workspaceId,
        scope: "member",
        subject: `${workspaceId}:${userId}`,
        limit_micros: g.limit_micros,
        reset_interval: g.reset_interval,
      });
    }
  }
  return out;
}

/** A member's spend per window and budgets, for the member object (in `db`: a transaction, when inside one). */
export async function readMemberSpend(
  deps: ServiceDeps,
  member: { organization_id: string; user_id: string; workspace_ids: readonly string[] },
  db: Executor = deps.db,
): Promise<SubjectSpend> {
  const budgets = await memberBudgets(deps, member.organization_id, member.user_id, member.workspace_ids, db);
  return readSubjectSpend(
    deps,
    member.organization_id,
    { kind: "member", userId: member.user_id },
    budgets,
    deps.now(),
    db,
  );
}
