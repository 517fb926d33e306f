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

export interface BuiltinFilter {
  slug: string;
  action: "block" | "redact" | "flag";
  label?: string;
}

export interface CustomFilter {
  pattern: string;
  action: "block" | "redact" | "flag";
  label?: string | null;
}

export interface Guardrail {
  id: string;
  name: string;
  description: string | null;
  workspace_id: string;
  allowed_models: string[] | null;
  allowed_providers: string[] | null;
  content_filter_builtins: BuiltinFilter[] | null;
  content_filters: CustomFilter[] | null;
  limit_usd: number | null;
  reset_interval: "daily" | "weekly" | "monthly" | null;
  created_at: string;
}

export interface Key {
  hash: string;
  name: string;
  label: string;
  workspace_id: string;
  disabled: boolean;
  created_at: string;
}

export interface Session {
  organization_id: string;
  key_name: string;
  key_label: string;
  expires_at: string | null;
}
