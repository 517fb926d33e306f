/**
 * An audit entry's change as people read it: the fields that differ between `before` and `after`,
 * each with a plain label and its two values in words (docs/behaviour.md#console-audit-entries).
 * No DOM here: test/console/audit-change.test.ts imports this file as it is.
 */
import { readsText } from "./guardrail-filters.js";

export interface FieldChange {
  key: string;
  label: string;
  /** undefined: the field had no value on that side (a create's before, a delete's after). */
  before: string | undefined;
  after: string | undefined;
}

const LABELS: Record<string, string> = {
  name: "Name",
  description: "Description",
  workspace_id: "Workspace",
  allowed_data_regions: "Region addresses",
  allowed_models: "Allowed models",
  allowed_providers: "Allowed providers",
  ignored_models: "Ignored models",
  ignored_providers: "Ignored providers",
  content_filter_builtins: "Builtin filters",
  content_filters: "Custom patterns",
  enable_free_model_training: "Free models may train on prompts",
  enable_paid_model_training: "Paid models may train on prompts",
  enable_free_model_publication: "Free models may publish prompts",
  include_byok_in_budgets: "Bring-your-own-key spend counts",
  enforce_zdr: "Zero data retention (every family)",
  limit_usd: "Budget limit",
  reset_interval: "Budget resets",
  alert_thresholds: "Budget alerts at (%)",
  key_hashes: "Keys",
  user_ids: "Members",
  assigned_count: "Newly assigned",
  unassigned_count: "Unassigned",
  disabled: "Disabled",
  label: "Label",
  hash: "Key hash",
  member_user_id: "Member",
  email: "Email",
  slug: "Slug",
  is_default: "Default workspace",
  default_guardrail_id: "Default guardrail",
  workspace_ids: "Workspaces",
};

/** Fields every entry already shows elsewhere (the resource's id, the entry's time, the organization). */
const SHOWN_ELSEWHERE = new Set(["id", "created_at", "updated_at", "organization_id"]);

export function labelOf(key: string): string {
  const known = LABELS[key];
  if (known) return known;
  if (key.startsWith("enforce_zdr_"))
    return `Zero data retention for ${key.slice("enforce_zdr_".length)} models`;
  const words = key.replaceAll("_", " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** One value in words: filters by what they do, lists joined, yes and no for flags. */
export function valueText(key: string, value: unknown): string {
  if (value === null || value === undefined) return "none";
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (typeof value === "number")
    return key.endsWith("_usd")
      ? `$${value.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 6 })}`
      : String(value);
  if (typeof value === "string") return value;
  if (Array.isArray(value))
    return value.length === 0 ? "none" : value.map((v) => valueText(key, v)).join(", ");
  if (isRecord(value)) {
    // What a filter reads is said when the entry holds it (docs/behaviour.md#apply-to).
    const reads = readsText(value.apply_to) && ` on ${readsText(value.apply_to)}`;
    if (typeof value.slug === "string" && typeof value.action === "string")
      return `${value.slug}: ${value.action}${value.scan_scope ? ` (${String(value.scan_scope).replace("_", " ")})` : ""}${reads}`;
    if (typeof value.pattern === "string" && typeof value.action === "string")
      return `/${value.pattern}/: ${value.action}${value.label ? ` as ${value.label}` : ""}${reads}`;
    return Object.entries(value)
      .map(([k, v]) => `${labelOf(k).toLowerCase()} ${valueText(k, v)}`)
      .join("; ");
  }
  return String(value);
}

/** A value a create or delete sets to nothing in particular: not worth a line of its own. */
const unset = (v: unknown) =>
  v === null || v === undefined || v === false || (Array.isArray(v) && v.length === 0);

/**
 * The fields that differ, in the order `after` (then `before`) lists them. An update records only
 * the fields it changed; a create or delete records the whole resource, of which only the values
 * that say something are listed.
 */
export function changesOf(before: unknown, after: unknown, resourceId?: string): FieldChange[] {
  const b = isRecord(before) ? before : undefined;
  const a = isRecord(after) ? after : undefined;
  const whole = !b || !a;
  const keys = [...new Set([...Object.keys(a ?? {}), ...Object.keys(b ?? {})])];
  const changes: FieldChange[] = [];
  for (const key of keys) {
    if (SHOWN_ELSEWHERE.has(key)) continue;
    const was = b?.[key];
    const is = a?.[key];
    // A key's hash or a member's id that is the entry's resource, already shown at its head.
    if (whole && resourceId !== undefined && (was ?? is) === resourceId) continue;
    if (JSON.stringify(was) === JSON.stringify(is)) continue;
    if (whole && unset(was) && unset(is)) continue;
    changes.push({
      key,
      label: labelOf(key),
      before: b && key in b ? valueText(key, was) : undefined,
      after: a && key in a ? valueText(key, is) : undefined,
    });
  }
  return changes;
}

/** The columns an entry's change needs: a create has nothing before, a delete nothing after. */
export function columnsOf(changes: FieldChange[]): { before: string | null; after: string | null } {
  const nothingBefore = changes.every((c) => c.before === undefined);
  const nothingAfter = changes.every((c) => c.after === undefined);
  if (nothingBefore && !nothingAfter) return { before: null, after: "Set to" };
  if (nothingAfter && !nothingBefore) return { before: "Was", after: null };
  return { before: "Before", after: "After" };
}
