import type { BudgetReservationTable } from "../schema.js";
import type { CounterKey } from "../spend-repo.js";

/** A counter's name in memory: the columns of budget_usage's primary key. */
export function counterName(k: CounterKey): string {
  return `${k.guardrail_id}\u0000${k.scope}\u0000${k.subject}\u0000${k.reset_interval}\u0000${k.window_start}`;
}

interface Hold {
  row: BudgetReservationTable;
  counters: readonly string[];
  amount: number;
}

/**
 * The budget reservations of requests in flight in this process (docs/behaviour.md#budget-reservations),
 * kept in memory on SQLite, where one server process owns the file (sqlite/server-lock.ts): a
 * reservation is never written, so a process that dies takes its holds with it and leaves nothing
 * to release. Each hold is counted once per counter it names (twice if it names one twice, as the
 * database's counter rows would count it).
 */
export class Holds {
  private readonly byId = new Map<string, Hold>();
  private readonly byCounter = new Map<string, number>();

  /** What the holds take from a counter. */
  on(counter: string): number {
    return this.byCounter.get(counter) ?? 0;
  }

  add(row: BudgetReservationTable, counters: readonly string[], amount: number): void {
    this.byId.set(row.id, { row: { ...row, amount_micros: amount }, counters, amount });
    for (const c of counters) this.byCounter.set(c, this.on(c) + amount);
  }

  /** Moves a hold's expiry; false when there is no hold by that id. */
  renew(id: string, expiresAt: string): boolean {
    const hold = this.byId.get(id);
    if (!hold) return false;
    hold.row = { ...hold.row, expires_at: expiresAt };
    return true;
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  /** Gives a hold back; false when there was none by that id (settled, released, or swept already). */
  drop(id: string): boolean {
    const hold = this.byId.get(id);
    if (!hold) return false;
    this.byId.delete(id);
    for (const c of hold.counters) {
      const left = this.on(c) - hold.amount;
      if (left > 0) this.byCounter.set(c, left);
      else this.byCounter.delete(c);
    }
    return true;
  }

  /** Holds whose expiry is at or before `nowIso`, the earliest first, at most `limit`. */
  expired(nowIso: string, limit: number): BudgetReservationTable[] {
    const out: BudgetReservationTable[] = [];
    for (const hold of this.byId.values()) if (hold.row.expires_at <= nowIso) out.push(hold.row);
    out.sort((x, y) => (x.expires_at < y.expires_at ? -1 : x.expires_at > y.expires_at ? 1 : 0));
    return out.slice(0, limit);
  }
}
