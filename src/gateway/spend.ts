import type { Admission } from "../domain/budget-admission.js";
import { budgetWindow } from "../domain/budget-window.js";
import type { Api } from "../domain/catalog.js";
import type { BudgetCheck } from "../domain/decision.js";
import { newId } from "../domain/ids.js";
import { type BudgetLayer, counterIdOf, counterSubject, type EffectivePolicy } from "../domain/policy.js";
import type { AdmissionAsk, ServiceDeps } from "../services/context.js";
import type { KeyRecord } from "../services/effective-policy.js";
import {
  type CounterKey,
  type ReadBudgetCountersDeps,
  readBudgetCounters,
} from "../services/read-budget-counters.js";

/**
 * Budgets under concurrency (docs/behaviour.md#budget-reservations): before forwarding, a request
 * reserves its worst-case cost on every budget layer that counts it, all or nothing (on PostgreSQL
 * in one transaction of conditional updates; on SQLite in the memory of the one server process that
 * owns the file); it is settled to the actual cost when usage arrives, or released if the upstream
 * fails. Spend can therefore pass a limit by at most the one request admitted while something
 * remained.
 */

/** What the spend writes of the request path need: the spend store and the clock. */
type SpendDeps = Pick<ServiceDeps, "spend" | "now">;

/**
 * The counter a layer charges in the window that contains `now` (keyed by counterIdOf). A member
 * budget counts all the member's keys in the workspace, a workspace budget all the workspace's keys
 * (docs/behaviour.md#budget-scopes).
 */
export function counterOf(key: KeyRecord, layer: BudgetLayer, now: Date): CounterKey {
  return {
    guardrail_id: counterIdOf(layer),
    scope: layer.scope,
    subject: counterSubject(key, layer.scope),
    reset_interval: layer.reset_interval,
    window_start: budgetWindow(layer.reset_interval, now).start.toISOString(),
  };
}

/** Spend plus open reservations in the current window of each budget layer, by index of policy.budgets. */
export async function readUsage(
  deps: ReadBudgetCountersDeps,
  key: KeyRecord,
  policy: EffectivePolicy,
  now: Date,
): Promise<{ spent: number[]; reserved: number[] }> {
  const usage = await readBudgetCounters(
    deps,
    key.organization_id,
    policy.budgets.map((b) => counterOf(key, b, now)),
  );
  return { spent: usage.map((u) => u.spent_micros), reserved: usage.map((u) => u.reserved_micros) };
}

export interface Reservation {
  id: string;
  organizationId: string;
  counters: CounterKey[];
  amount: number;
}

export type ReserveOutcome = { ok: true; reservation: Reservation | null } | { ok: false; index: number };

/**
 * Reserves `amount` on every counted layer, all or nothing. With no counted layer there is nothing
 * to hold (null reservation, no write).
 */
export async function reserve(
  deps: SpendDeps,
  key: KeyRecord,
  checks: BudgetCheck[],
  amount: number,
  holdMs: number,
): Promise<ReserveOutcome> {
  const now = deps.now();
  const counted = checks.map((c, index) => ({ c, index })).filter(({ c }) => c.counts);
  if (counted.length === 0) return { ok: true, reservation: null };
  const reservation: Reservation = {
    id: newId(),
    organizationId: key.organization_id,
    counters: counted.map(({ c }) => counterOf(key, c.layer, now)),
    amount,
  };
  const refused = await deps.spend.reserve(
    key.organization_id,
    counted.map(({ c }, i) => ({ key: reservation.counters[i] as CounterKey, limit: c.layer.limit_micros })),
    amount,
    {
      id: reservation.id,
      organization_id: key.organization_id,
      counters: JSON.stringify(reservation.counters),
      amount_micros: amount,
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + holdMs).toISOString(),
    },
  );
  if (refused >= 0) return { ok: false, index: counted[refused]?.index ?? 0 };
  return { ok: true, reservation };
}

export type AdmitOutcome =
  | { ok: true; reservation: Reservation | null; admission: (Admission & { admitted: true }) | null }
  | { ok: false; index: number; admission: Admission & { admitted: false } };

/**
 * Reserves what the request may cost on every counted layer, sized by the store on the counters as
 * they are (capped where the tightest layer cannot pay for the whole answer), all or nothing. With
 * no counted layer nothing is held and nothing capped. On refusal, `index` is into `checks`.
 */
export async function admitRequest(
  deps: SpendDeps,
  key: KeyRecord,
  checks: BudgetCheck[],
  ask: AdmissionAsk,
  holdMs: number,
): Promise<AdmitOutcome> {
  const now = deps.now();
  const counted = checks.map((c, index) => ({ c, index })).filter(({ c }) => c.counts);
  if (counted.length === 0) return { ok: true, reservation: null, admission: null };
  const counters = counted.map(({ c }) => counterOf(key, c.layer, now));
  const id = newId();
  const admission = await deps.spend.admit(
    key.organization_id,
    counted.map(({ c }, i) => ({ key: counters[i] as CounterKey, limit: c.layer.limit_micros })),
    ask,
    {
      id,
      organization_id: key.organization_id,
      counters: JSON.stringify(counters),
      // The store writes the amount it admits.
      amount_micros: 0,
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + holdMs).toISOString(),
    },
  );
  if (!admission.admitted) return { ok: false, index: counted[admission.index]?.index ?? 0, admission };
  return {
    ok: true,
    reservation: { id, organizationId: key.organization_id, counters, amount: admission.amount_micros },
    admission,
  };
}

export interface SpendRecord {
  requestId: string;
  key: KeyRecord;
  model: string;
  provider: string;
  byok: boolean;
  promptTokens: number;
  completionTokens: number;
  costMicros: number;
  /** The guardrails that governed the request, for usage by guardrail. */
  guardrailIds: readonly string[];
  /** The API the request was made on, for usage by API (docs/behaviour.md#usage-by-api). */
  api: Api;
  /** The agent session the client named, for usage by session (docs/behaviour.md#usage-by-session). */
  sessionId: string | null;
}

/**
 * Settles a reservation to the actual cost and writes the ledger entry, in one transaction. A
 * reservation the expiry sweep already released is not taken back twice: the cost then goes straight
 * onto the counters.
 */
export async function settle(
  deps: SpendDeps,
  reservation: Reservation | null,
  spend: SpendRecord,
): Promise<void> {
  const key = spend.key;
  await deps.spend.settle(
    reservation,
    spend.costMicros,
    {
      id: newId(),
      organization_id: key.organization_id,
      request_id: spend.requestId,
      key_hash: key.hash,
      workspace_id: key.workspace_id ?? "",
      member_user_id: key.member_user_id,
      model: spend.model,
      provider: spend.provider,
      byok: spend.byok ? 1 : 0,
      prompt_tokens: spend.promptTokens,
      completion_tokens: spend.completionTokens,
      cost_micros: spend.costMicros,
      created_at: deps.now().toISOString(),
      api: spend.api,
      session_id: spend.sessionId,
    },
    spend.guardrailIds,
  );
}

/** Gives a reservation back (the upstream failed or the request was refused after reserving). */
export async function release(deps: SpendDeps, reservation: Reservation | null): Promise<void> {
  if (reservation) await deps.spend.release(reservation);
}
