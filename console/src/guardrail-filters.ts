/**
 * The guardrail form's filters, between the API's lists and the form's controls: each builtin with
 * an action on requests and one on answers, each custom pattern with what it reads
 * (docs/behaviour.md#apply-to, docs/behaviour.md#console-apply-to).
 *
 * No DOM here: test/console/guardrail-filters.test.ts imports this file as it is.
 */
import type { Action, ApplyTo, BuiltinFilter, CustomFilter } from "./api.js";

export type ScanScope = "user_only" | "all_messages";

/** One builtin's action on requests and on answers, "" for off. */
export interface BuiltinDraft {
  request: Action | "";
  response: Action | "";
}

export interface CustomDraft {
  pattern: string;
  action: Action;
  label: string;
  apply_to: ApplyTo;
}

export interface FiltersDraft {
  builtins: Record<string, BuiltinDraft>;
  injection_scope: ScanScope;
  custom: CustomDraft[];
}

/** Only this builtin has a choice of the messages it scans (docs/behaviour.md#scan-scope). */
const SCOPED = "regex-prompt-injection";

/** What a filter reads, in words; "" without `apply_to`, so a filter that never set it reads as before. */
export function readsText(applyTo: unknown): string {
  if (applyTo === undefined) return "";
  return applyTo === "response" ? "answers" : applyTo === "both" ? "requests and answers" : "requests";
}

/** A filter's action, with what it reads when its `apply_to` says (`block on answers`). */
export function doesText(f: { action: string; apply_to?: unknown }): string {
  const reads = readsText(f.apply_to);
  return reads ? `${f.action} on ${reads}` : f.action;
}

/**
 * The form's filters of a stored guardrail. Every form the API returns is read: no `apply_to` (the
 * request), `request`, `response`, `both`, and one slug listed once per direction.
 */
export function filtersDraftOf(
  builtins: readonly BuiltinFilter[] | null | undefined,
  custom: readonly CustomFilter[] | null | undefined,
): FiltersDraft {
  const out: Record<string, BuiltinDraft> = {};
  let scope: ScanScope = "all_messages";
  for (const f of builtins ?? []) {
    const b = out[f.slug] ?? { request: "", response: "" };
    if (f.apply_to !== "response") b.request = f.action;
    if (f.apply_to === "response" || f.apply_to === "both") b.response = f.action;
    out[f.slug] = b;
    if (f.scan_scope) scope = f.scan_scope;
  }
  return {
    builtins: out,
    injection_scope: scope,
    custom: (custom ?? []).map((f) => ({
      pattern: f.pattern,
      action: f.action,
      label: f.label ?? "",
      apply_to: f.apply_to ?? "request",
    })),
  };
}

/**
 * A filter reading only requests is sent without `apply_to`, as the console always sent it, so a
 * guardrail that reads no answers is sent exactly as before.
 */
const applyToField = (applyTo: ApplyTo): { apply_to?: ApplyTo } =>
  applyTo === "request" ? {} : { apply_to: applyTo };

/**
 * One builtin's items: one reading both directions when they take the same action, otherwise one
 * per direction that is on. The scan scope chooses among a request's messages, so only an item that
 * reads requests carries it.
 */
export function builtinItems(slug: string, b: BuiltinDraft, scope: ScanScope): BuiltinFilter[] {
  const item = (action: Action, applyTo: ApplyTo): BuiltinFilter => {
    const filter: BuiltinFilter = { slug, action, ...applyToField(applyTo) };
    if (slug === SCOPED && applyTo !== "response") filter.scan_scope = scope;
    return filter;
  };
  if (b.request !== "" && b.request === b.response) return [item(b.request, "both")];
  return [
    ...(b.request === "" ? [] : [item(b.request, "request")]),
    ...(b.response === "" ? [] : [item(b.response, "response")]),
  ];
}

/** The two lists as the API takes them, in the order the form shows the builtins. */
export function filterItems(d: FiltersDraft): { builtins: BuiltinFilter[]; custom: CustomFilter[] } {
  return {
    builtins: Object.entries(d.builtins).flatMap(([slug, b]) => builtinItems(slug, b, d.injection_scope)),
    custom: d.custom.map((c) => ({
      pattern: c.pattern,
      action: c.action,
      label: c.label.trim() || null,
      ...applyToField(c.apply_to),
    })),
  };
}
