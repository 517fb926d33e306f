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

/** The table of both baselines: the service's guardrail columns, in SQL both databases read alike. */
export const BASELINE_TABLE = `
  CREATE TABLE guardrails (
    id text PRIMARY KEY, organization_id text NOT NULL, workspace_id text NOT NULL, name text NOT NULL,
    description text, allowed_data_regions text, allowed_models text, allowed_providers text,
    ignored_models text, ignored_providers text, content_filter_builtins text, content_filters text,
    enable_free_model_publication integer NOT NULL, enable_free_model_training integer NOT NULL,
    enable_paid_model_training integer NOT NULL, enforce_zdr text NOT NULL,
    include_byok_in_budgets integer NOT NULL, limit_micros bigint, reset_interval text,
    is_workspace_default integer NOT NULL, version integer NOT NULL, created_at text NOT NULL,
    updated_at text
  );
  CREATE INDEX guardrails_org_ws ON guardrails (organization_id, workspace_id, created_at);
`;

const ORG = randomUUID();
const WORKSPACE = randomUUID();
const ENFORCE_ZDR = JSON.stringify({
  anthropic: false,
  openai: false,
  google: false,
  xai: false,
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
