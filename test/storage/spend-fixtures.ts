import type { SpendLedgerTable } from "../../src/storage/schema.js";
import type { CounterKey } from "../../src/storage/spend-repo.js";

/** Rows the spend store tests write: a fresh counter each time, a reservation row and a ledger row. */

let sequence = 0;
export const counter = (): CounterKey => ({
  guardrail_id: `g-${++sequence}`,
  scope: "key",
  subject: "k",
  reset_interval: "daily",
  window_start: "2026-11-22T00:00:00.000Z",
});
export const row = (id: string, amount: number) => ({
  id,
  organization_id: "org",
  counters: "[]",
  amount_micros: amount,
  created_at: "2026-11-22T10:00:00.000Z",
  expires_at: "2026-11-22T11:00:00.000Z",
});
export const ledger = (id: string, cost: number, over: Partial<SpendLedgerTable> = {}): SpendLedgerTable => ({
  id,
  organization_id: "org",
  request_id: id,
  key_hash: "k",
  workspace_id: "w",
  member_user_id: null,
  model: "m",
  provider: "p",
  byok: 0,
  prompt_tokens: 1,
  completion_tokens: 1,
  cost_micros: cost,
  created_at: "2026-11-22T10:00:01.000Z",
  api: "chat",
  session_id: null,
  ...over,
});
