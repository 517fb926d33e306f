import { budgetWindow } from "../domain/budget-window.js";
import type { BudgetCheck } from "../domain/decision.js";
import { newId } from "../domain/ids.js";
import type { BudgetLayer, EffectivePolicy } from "../domain/policy.js";
import type { ServiceDeps } from "../services/context.js";
import type { KeyRecord } from "../storage/key-repo.js";
import {
  type CounterKey,
  deleteReservation,
  findExpiredReservations,
  insertReservation,
  insertSpend,
  readCounters,
  reserveCounter,
  settleCounter,
} from "../storage/spend-repo.js";

/**
 * Budgets under concurrency (issue 4, pitfalls): before forwarding, a request reserves its worst-case
 * cost on every budget layer that counts it, in one transaction whose each step is a conditional
 * UPDATE; it is settled to the actual cost when usage arrives, or released if the upstream fails.
 * Spend can therefore pass a limit by at most the one request admitted while something remained.
 */

function counterOf(key: KeyRecord, layer: BudgetLayer, now: Date): CounterKey {
  return {
    guardrail_id: layer.guardrail_id,
    scope: layer.scope,
    // A member budget counts all the member's keys in the workspace (decisions §9).
    subject: layer.scope === "key" ? key.hash : `${key.workspace_id}:${key.member_user_id}`,
    reset_interval: layer.reset_interval,
    window_start: budgetWindow(layer.reset_interval, now).start.toISOString(),
  };
}

/** Spend plus open reservations in the current window of each budget layer, by index of policy.budgets. */
export async function readUsage(
  deps: ServiceDeps,
  key: KeyRecord,
  policy: EffectivePolicy,
  now: Date,
): Promise<{ spent: number[]; reserved: number[] }> {
  const usage = await readCounters(
    deps.db,
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

/** Raised inside the reservation transaction to roll it back: a layer ran out meanwhile. */
class BudgetTaken extends Error {
  constructor(readonly index: number) {
    super("budget used up");
  }
}

export type ReserveOutcome = { ok: true; reservation: Reservation | null } | { ok: false; index: number };

/**
 * Reserves `amount` on every counted layer, all or nothing. With no counted layer there is nothing
 * to hold (null reservation, no write).
 */
export async function reserve(
  deps: ServiceDeps,
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
  try {
    await deps.transact(async (tx) => {
      for (const [i, { c, index }] of counted.entries()) {
        const counter = reservation.counters[i] as CounterKey;
        const admitted = await reserveCounter(tx, key.organization_id, counter, c.layer.limit_micros, amount);
        if (!admitted) throw new BudgetTaken(index);
      }
      await insertReservation(tx, {
        id: reservation.id,
        organization_id: key.organization_id,
        counters: JSON.stringify(reservation.counters),
        amount_micros: amount,
        created_at: now.toISOString(),
        expires_at: new Date(now.getTime() + holdMs).toISOString(),
      });
    });
  } catch (err) {
    if (err instanceof BudgetTaken) return { ok: false, index: err.index };
    throw err;
  }
  return { ok: true, reservation };
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
}

/**
 * Settles a reservation to the actual cost and writes the ledger entry, in one transaction. A
 * reservation the expiry sweep already released is not settled twice: the cost then goes straight
 * onto the counters.
 */
export async function settle(
  deps: ServiceDeps,
  reservation: Reservation | null,
  spend: SpendRecord,
): Promise<void> {
  const key = spend.key;
  await deps.transact(async (tx) => {
    if (reservation) {
      const held = await deleteReservation(tx, reservation.id);
      for (const counter of reservation.counters) {
        await settleCounter(tx, counter, held ? reservation.amount : 0, spend.costMicros);
      }
    }
    await insertSpend(tx, {
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
    });
  });
}

/** Gives a reservation back (the upstream failed or the request was refused after reserving). */
export async function release(deps: ServiceDeps, reservation: Reservation | null): Promise<void> {
  if (!reservation) return;
  await deps.transact(async (tx) => {
    if (!(await deleteReservation(tx, reservation.id))) return;
    for (const counter of reservation.counters) await settleCounter(tx, counter, reservation.amount, 0);
  });
}

/**
 * Releases reservations whose request can no longer be running (a crashed process left them):
 * their hold outlasts the provider's time-out. Returns how many were released.
 */
export async function releaseExpired(deps: ServiceDeps, batch = 100): Promise<number> {
  const expired = await findExpiredReservations(deps.db, deps.now().toISOString(), batch);
  for (const row of expired) {
    await release(deps, {
      id: row.id,
      organizationId: row.organization_id,
      counters: JSON.parse(row.counters) as CounterKey[],
      amount: Number(row.amount_micros),
    });
  }
  return expired.length;
}
