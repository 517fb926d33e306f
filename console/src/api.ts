/**
 * The console's one way to the service: the public API on the same origin. The session cookie is
 * HttpOnly, so this script never sees it; the browser attaches it and the Origin header itself.
 */

export interface Issue {
  path: string;
  message: string;
}

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly metadata: Record<string, unknown>,
  ) {
    super(message);
  }
  /** The 400's list of offending properties, each with its JSON pointer. */
  get issues(): Issue[] {
    const issues = this.metadata.issues;
    return Array.isArray(issues) ? (issues as Issue[]) : [];
  }
}

/** Called when the session has ended, so the page can send the administrator back to sign-in. */
let onSignedOut: () => void = () => {};
export function whenSignedOut(handler: () => void): void {
  onSignedOut = handler;
}
/** The session ended by the administrator's own act (the key it came from was revoked). */
export function signedOut(): void {
  onSignedOut();
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const init: RequestInit = { method, credentials: "same-origin", headers: { accept: "application/json" } };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers = { ...init.headers, "content-type": "application/json" };
  }
  let res: Response;
  try {
    res = await fetch(`/api/v1${path}`, init);
  } catch {
    throw new ApiFailure(0, "The service could not be reached. Check your connection and try again.", {});
  }
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  const parsed = text
    ? (JSON.parse(text) as { error?: { message: string; metadata?: Record<string, unknown> } })
    : {};
  if (!res.ok) {
    const error = parsed.error ?? { message: `The service answered ${res.status}.` };
    if (res.status === 401 && path !== "/session") onSignedOut();
    throw new ApiFailure(res.status, error.message, error.metadata ?? {});
  }
  return parsed as T;
}

/** Plain words for a failure that is not about one field. */
export function describe(error: unknown): string {
  if (error instanceof ApiFailure) {
    const reason = typeof error.metadata.reason === "string" ? `: ${error.metadata.reason}` : "";
    return `${error.message}${reason}`;
  }
  return error instanceof Error ? error.message : String(error);
}

/** A 400's issues by top-level field ("/content_filters/0/pattern" is the content_filters field's). */
export function issuesByField(error: unknown): { fields: Record<string, string[]>; other: string[] } {
  const fields: Record<string, string[]> = {};
  const other: string[] = [];
  if (!(error instanceof ApiFailure)) return { fields, other };
  for (const issue of error.issues) {
    const [, field, ...rest] = issue.path.split("/");
    const where = rest.length > 0 ? `${rest.join("/")}: ` : "";
    if (!field) {
      other.push(issue.message);
      continue;
    }
    const list = fields[field] ?? [];
    list.push(`${where}${issue.message}`);
    fields[field] = list;
  }
  return { fields, other };
}

export interface Page<T> {
  data: T[];
  total_count: number;
}

export type Action = "block" | "redact" | "flag";

/** What a filter reads (docs/behaviour.md#apply-to); absent means the request. */
export type ApplyTo = "request" | "response" | "both";

export interface BuiltinFilter {
  slug: string;
  action: Action;
  label?: string;
  scan_scope?: "user_only" | "all_messages";
  apply_to?: ApplyTo;
}

export interface CustomFilter {
  pattern: string;
  action: Action;
  label?: string | null;
  apply_to?: ApplyTo;
}

export type Region = "global" | "europe" | "us";
export const REGIONS: Region[] = ["global", "europe", "us"];

/** A guardrail as the API sends it; `enforce_zdr_<family>` flags come in as extra properties. */
export interface Guardrail {
  id: string;
  name: string;
  description: string | null;
  workspace_id: string;
  allowed_data_regions: Region[] | null;
  allowed_models: string[] | null;
  allowed_providers: string[] | null;
  ignored_models: string[] | null;
  ignored_providers: string[] | null;
  content_filter_builtins: BuiltinFilter[] | null;
  content_filters: CustomFilter[] | null;
  enable_free_model_publication: boolean;
  enable_free_model_training: boolean;
  enable_paid_model_training: boolean;
  include_byok_in_budgets: boolean;
  limit_usd: number | null;
  reset_interval: "daily" | "weekly" | "monthly" | null;
  alert_thresholds: number[] | null;
  created_at: string;
  [zdr: `enforce_zdr_${string}`]: boolean | null;
}

/** One budget window with what is left of it (members' and keys' objects carry these). */
export interface Budget {
  guardrail_id: string;
  workspace_id?: string;
  scope: string;
  reset_interval: string;
  limit_usd: number;
  spent_usd: number;
  remaining_usd: number;
  resets_at: string;
}

export interface Spend {
  usage: number;
  usage_daily: number;
  usage_weekly: number;
  usage_monthly: number;
  budgets?: Budget[];
}

export interface Key extends Spend {
  hash: string;
  name: string;
  label: string;
  workspace_id: string;
  member_user_id?: string | null;
  disabled: boolean;
  created_at: string;
}

/** A management key as listed: never its secret. `current`: the key this session came from. */
export interface ManagementKey {
  hash: string;
  name: string;
  label: string;
  created_at: string;
  current: boolean;
}

export interface Member extends Spend {
  user_id: string;
  name: string | null;
  email: string | null;
  workspace_ids: string[];
  created_at: string;
}

export interface Workspace {
  id: string;
  name: string;
  slug: string;
  description: string | null;
  is_default: boolean;
  default_guardrail_id: string;
  created_at: string;
}

export interface CatalogEndpoint {
  provider: string;
  region: Region;
  /** Whether its provider is configured on this installation (docs/gateway.md#servable-models). */
  available: boolean;
}

/** A model this installation can serve: one of its providers is configured here. */
export function servable(m: Model): boolean {
  return m.endpoints.some((e) => e.available);
}

export interface Model {
  id: string;
  canonical_slug: string;
  name: string;
  zdr_family: string;
  /** The API it is served on: chat, or embeddings (docs/gateway.md#provider-apis). */
  api: string;
  endpoints: CatalogEndpoint[];
}

export interface Session {
  organization_id: string;
  key_name: string;
  key_label: string;
  expires_at: string | null;
}

/** Every page of a list, for the small lists a picker needs; `cap` pages at most, so it ends. */
export async function listAll<T>(path: string, cap = 20): Promise<T[]> {
  const items: T[] = [];
  const joiner = path.includes("?") ? "&" : "?";
  for (let i = 0; i < cap; i++) {
    const page = await api<Page<T>>("GET", `${path}${joiner}offset=${items.length}&limit=100`);
    items.push(...page.data);
    if (page.data.length === 0 || items.length >= page.total_count) break;
  }
  return items;
}

let catalog: Promise<Model[]> | undefined;
/** The model catalog changes only with the service's configuration: read once per page load. */
export function models(): Promise<Model[]> {
  catalog ??= api<{ data: Model[] }>("GET", "/models").then((r) => r.data);
  return catalog;
}

export function usd(amount: number | null | undefined): string {
  if (amount === null || amount === undefined) return "—";
  return `$${amount.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 6 })}`;
}

export function when(iso: string | null | undefined): string {
  return iso ? new Date(iso).toLocaleString() : "—";
}
