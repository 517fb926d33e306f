/**
 * The row of the bare baselines (./baseline.ts on SQLite, ./baseline-pg.ts on PostgreSQL): a
 * guardrail-sized row with the same columns and the same JSON text the service stores, built from
 * the request body without validation.
 */
import { randomUUID } from "node:crypto";

export interface BaselineBody {
  name?: string;
  description?: string;
  allowed_models?: string[];
  content_filter_builtins?: unknown[];
  limit_usd?: number;
  reset_interval?: string;
}

const ORG = randomUUID();
const WORKSPACE = randomUUID();
const ENFORCE_ZDR = JSON.stringify({
  vendor_a: false,
  vendor_b: false,
  vendor_c: false,
  vendor_d: false,
});

/** The columns of a new row, by name. */
export function insertRow(body: BaselineBody) {
  return {
    id: randomUUID(),
    organization_id: ORG,
    workspace_id: WORKSPACE,
    name: body.name ?? "",
    description: body.description ?? null,
    allowed_models: JSON.stringify(body.allowed_models ?? null),
    content_filter_builtins: JSON.stringify(body.content_filter_builtins ?? null),
    enforce_zdr: ENFORCE_ZDR,
    limit_micros: Math.round((body.limit_usd ?? 0) * 1e6),
    reset_interval: body.reset_interval ?? null,
    created_at: new Date().toISOString(),
  };
}

/** The columns a PATCH sets, by name. */
export function updateRow(id: string, body: BaselineBody) {
  return {
    id,
    description: body.description ?? null,
    allowed_models: JSON.stringify(body.allowed_models ?? null),
    limit_micros: Math.round((body.limit_usd ?? 0) * 1e6),
    reset_interval: body.reset_interval ?? null,
    updated_at: new Date().toISOString(),
  };
}
