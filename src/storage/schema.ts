import type { Generated, Kysely, Transaction } from "kysely";

/** Table shapes. Booleans are 0/1 integers and JSON is text, so one schema serves SQLite and PostgreSQL. */
export interface OrganizationTable {
  id: string;
  name: string;
  default_workspace_id: string | null;
  created_at: string;
}

export interface WorkspaceTable {
  id: string;
  organization_id: string;
  name: string;
  is_default: number;
  default_guardrail_id: string;
  created_at: string;
  /** Unique in the organization; the reference SDK requires one. */
  slug: string;
  description: string | null;
  updated_at: string | null;
}

export interface KeyTable {
  hash: string;
  organization_id: string;
  workspace_id: string | null;
  kind: "management" | "inference";
  name: string;
  label: string;
  disabled: number;
  created_at: string;
  /** The member who owns an inference key, if any. */
  member_user_id: string | null;
  updated_at: string | null;
  /** The key's own spending limit in micro-dollars; null: none. */
  limit_micros: number | null;
  /** daily, weekly or monthly; null: the limit is for the key's lifetime. */
  limit_reset: string | null;
  include_byok_in_limit: number;
}

export interface GuardrailTable {
  id: string;
  organization_id: string;
  workspace_id: string;
  name: string;
  description: string | null;
  allowed_data_regions: string | null;
  allowed_models: string | null;
  allowed_providers: string | null;
  ignored_models: string | null;
  ignored_providers: string | null;
  content_filter_builtins: string | null;
  content_filters: string | null;
  enable_free_model_publication: number;
  enable_free_model_training: number;
  enable_paid_model_training: number;
  enforce_zdr: string;
  include_byok_in_budgets: number;
  limit_micros: number | null;
  reset_interval: string | null;
  /** JSON list of percents, or null. */
  alert_thresholds: string | null;
  is_workspace_default: number;
  version: number;
  created_at: string;
  updated_at: string | null;
}

export interface IdempotencyTable {
  organization_id: string;
  /** SHA-256 of the Idempotency-Key header; the raw value is never stored. */
  key_hash: string;
  request_hash: string;
  /** The response, AES-GCM encrypted with a key derived from the raw Idempotency-Key. */
  response: string;
  created_at: string;
}

export interface MemberTable {
  organization_id: string;
  user_id: string;
  name: string | null;
  email: string | null;
  created_at: string;
  updated_at: string | null;
}

export interface MemberWorkspaceTable {
  organization_id: string;
  user_id: string;
  workspace_id: string;
}

export interface KeyAssignmentTable {
  id: string;
  organization_id: string;
  key_hash: string;
  guardrail_id: string;
  assigned_by: string | null;
  created_at: string;
}

export interface MemberAssignmentTable {
  id: string;
  organization_id: string;
  user_id: string;
  workspace_id: string;
  guardrail_id: string;
  assigned_by: string | null;
  created_at: string;
}

export interface AuditTable {
  id: string;
  organization_id: string;
  actor_key_hash: string;
  action: string;
  resource_type: string;
  resource_id: string;
  before: string | null;
  after: string | null;
  created_at: string;
  /** Order of entries (timestamps can tie). */
  seq: Generated<number>;
}

export interface BudgetUsageTable {
  organization_id: string;
  guardrail_id: string;
  scope: "key" | "member" | "workspace";
  /** The key's hash, `<workspace_id>:<member_user_id>` for a member budget, the workspace's id for a workspace budget. */
  subject: string;
  reset_interval: string;
  window_start: string;
  spent_micros: number;
  reserved_micros: number;
}

export interface BudgetReservationTable {
  id: string;
  organization_id: string;
  /** JSON list of the counters held, each with its primary key. */
  counters: string;
  amount_micros: number;
  created_at: string;
  expires_at: string;
}

export interface SpendLedgerTable {
  id: string;
  organization_id: string;
  request_id: string;
  key_hash: string;
  workspace_id: string;
  member_user_id: string | null;
  model: string;
  provider: string;
  byok: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost_micros: number;
  created_at: string;
  /** The API the request was made on (src/domain/catalog.ts `Api`); 'chat' for rows older than the column. */
  api: string;
  /** The agent session the client named (docs/behaviour.md#usage-by-session); null for none. */
  session_id: string | null;
}

export interface SpendRollupTable {
  organization_id: string;
  /** UTC day, YYYY-MM-DD. */
  day: string;
  /** '' for the row that counts each request once; else a guardrail that governed the requests. */
  guardrail_id: string;
  key_hash: string;
  workspace_id: string;
  /** '' for a key without a member. */
  member_user_id: string;
  model: string;
  provider: string;
  byok: number;
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost_micros: number;
  /** The API of the requests (docs/behaviour.md#usage-by-api). */
  api: string;
  /** The agent session of the requests, '' for none (docs/behaviour.md#usage-by-session). */
  session_id: string;
}

/** A budget alert raised once: one row per counter, window and threshold (the unique key is the dedupe). */
export interface BudgetAlertTable {
  organization_id: string;
  guardrail_id: string;
  scope: "key" | "member" | "workspace";
  subject: string;
  reset_interval: string;
  window_start: string;
  threshold_percent: number;
  limit_micros: number;
  spent_micros: number;
  key_hash: string;
  created_at: string;
}

export interface ConsoleSessionTable {
  /** SHA-256 of the session token; the token itself is only ever in the browser's cookie. */
  token_hash: string;
  organization_id: string;
  /** The management key the session was exchanged for. */
  key_hash: string;
  created_at: string;
  expires_at: string;
}

/** A workspace's budget for one interval (daily, weekly, monthly or lifetime), over all its keys. */
export interface WorkspaceBudgetTable {
  id: string;
  organization_id: string;
  workspace_id: string;
  reset_interval: string;
  limit_micros: number;
  /** Workspace-wide: every budget row of a workspace carries the same value. */
  include_byok_in_budgets: number;
  created_at: string;
  updated_at: string;
}

export interface Database {
  organizations: OrganizationTable;
  workspaces: WorkspaceTable;
  keys: KeyTable;
  guardrails: GuardrailTable;
  idempotency_keys: IdempotencyTable;
  members: MemberTable;
  member_workspaces: MemberWorkspaceTable;
  key_assignments: KeyAssignmentTable;
  member_assignments: MemberAssignmentTable;
  audit_log: AuditTable;
  budget_usage: BudgetUsageTable;
  budget_reservations: BudgetReservationTable;
  spend_ledger: SpendLedgerTable;
  spend_rollup: SpendRollupTable;
  budget_alerts: BudgetAlertTable;
  console_sessions: ConsoleSessionTable;
  workspace_budgets: WorkspaceBudgetTable;
}

export type Db = Kysely<Database>;
/** Either the database or an open transaction: repository functions run on both. */
export type Executor = Kysely<Database> | Transaction<Database>;
