import RE2 from "re2";
import type { ChatText } from "./chat-texts.js";
import {
  type BuiltinSlug,
  builtinLabel,
  compilePattern,
  DEFAULT_REDACT_LABEL,
  type FilterAction,
} from "./content-filters.js";
import { BUILTIN_RANK, CUSTOM_RANK, type RankedSpan, resolveOverlaps } from "./overlaps.js";
import type { EffectivePolicy } from "./policy.js";

type CustomSet = ReturnType<typeof RE2.Set>;

/** A match in a text: UTF-16 indices, end exclusive. */
export interface Span {
  start: number;
  end: number;
}

/** Finds the spans of one kind of content in a text (sorted, non-overlapping). */
export type Detector = (text: string) => Span[];

export type FilterRef = { type: "builtin"; slug: BuiltinSlug } | { type: "custom"; pattern: string };

export interface ActiveFilter {
  ref: FilterRef;
  action: FilterAction;
  label: string;
  /** Scan only the user's messages (the prompt-injection builtin's `user_only` scope). */
  userOnly: boolean;
  /** Where matches overlap, the most specific filter labels them (overlaps.ts). */
  rank: number;
  find: Detector;
  /** Custom patterns: the same search on the text's UTF-8 bytes, converted once per text. */
  findInBytes?: (text: string, bytes: Buffer) => Span[];
}

/** The filters of an effective policy, compiled once and reused for every request under it. */
export interface ContentFilters {
  builtins: ActiveFilter[];
  custom: ActiveFilter[];
  /**
   * All custom patterns as one RE2 set: a single linear pass tells which patterns match a text at
   * all, so only those are run again for their positions.
   */
  customSet: CustomSet | null;
}

/**
 * All matches of an RE2 pattern. RE2 works on UTF-8: given a string it converts the whole text on
 * every exec, so the text is converted once (for all patterns) and searched as a buffer, and byte
 * offsets are mapped back to UTF-16 indices (the same numbers when the text is ASCII).
 */
function findAllInBytes(re: RE2): (text: string, bytes: Buffer) => Span[] {
  return (text, bytes) => {
    const spans: Span[] = [];
    const ascii = bytes.length === text.length;
    const index = (byte: number) => (ascii ? byte : bytes.subarray(0, byte).toString("utf8").length);
    re.lastIndex = 0;
    for (let m = re.exec(bytes); m !== null; m = re.exec(bytes)) {
      const length = (m[0] as unknown as Buffer).length;
      // An empty match marks nothing to redact; step past it so the loop always advances.
      if (length === 0) {
        re.lastIndex = m.index + 1;
        continue;
      }
      spans.push({ start: index(m.index), end: index(m.index + length) });
    }
    return spans;
  };
}

export function compileFilters(
  policy: Pick<EffectivePolicy, "content_filter_builtins" | "content_filters">,
  detectors: Record<BuiltinSlug, Detector>,
): ContentFilters {
  const builtins = policy.content_filter_builtins.map((f) => ({
    ref: { type: "builtin", slug: f.slug } as FilterRef,
    action: f.action,
    label: builtinLabel(f.slug),
    userOnly: f.scan_scope === "user_only",
    rank: BUILTIN_RANK[f.slug],
    find: detectors[f.slug],
  }));
  const custom = policy.content_filters.map((f) => {
    const findInBytes = findAllInBytes(compilePattern(f.pattern));
    return {
      ref: { type: "custom", pattern: f.pattern } as FilterRef,
      action: f.action,
      label: f.label ?? DEFAULT_REDACT_LABEL,
      userOnly: false,
      rank: CUSTOM_RANK,
      find: (text: string) => findInBytes(text, Buffer.from(text, "utf8")),
      findInBytes,
    };
  });
  const customSet =
    custom.length > 1
      ? new RE2.Set(
          policy.content_filters.map((f) => f.pattern),
          "u",
        )
      : null;
  return { builtins, custom, customSet };
}

/** What one filter found over the whole request: how often, never what (no matched text is kept). */
export interface FilterHit {
  filter: FilterRef;
  action: FilterAction;
  label: string;
  count: number;
}

export interface ScanResult {
  hits: FilterHit[];
  /** The first blocking filter that matched, in policy order (builtins by slug, then patterns). */
  block: FilterHit | null;
  /** Texts changed by redaction, each with its new value. */
  replacements: { text: ChatText; value: string }[];
}

/** Replaces each span with its label; overlapping matches become one span (overlaps.ts). */
function redact(text: string, spans: RankedSpan[], json: boolean): string {
  let out = "";
  let at = 0;
  for (const s of resolveOverlaps(spans)) {
    // Inside tool-call arguments the label lands in a JSON string: escape it so the JSON stays valid.
    out += text.slice(at, s.start) + (json ? JSON.stringify(s.label).slice(1, -1) : s.label);
    at = s.end;
  }
  return out + text.slice(at);
}

/**
 * Runs every filter over every text the request carries (decisions §6). A detector that throws is
 * not caught here: the caller must refuse the request rather than forward unscanned text
 * (pitfalls: detectors that fail open).
 */
export function scanTexts(filters: ContentFilters, texts: ChatText[]): ScanResult {
  const all = [...filters.builtins, ...filters.custom];
  const counts = new Array<number>(all.length).fill(0);
  const replacements: ScanResult["replacements"] = [];
  const offset = filters.builtins.length;
  for (const text of texts) {
    if (text.text.length === 0) continue;
    const toRedact: RankedSpan[] = [];
    const bytes = filters.custom.length > 0 ? Buffer.from(text.text, "utf8") : undefined;
    const run = (index: number, filter: ActiveFilter) => {
      if (filter.userOnly && text.role !== "user") return;
      const spans =
        filter.findInBytes && bytes ? filter.findInBytes(text.text, bytes) : filter.find(text.text);
      if (spans.length === 0) return;
      counts[index] = (counts[index] ?? 0) + spans.length;
      if (filter.action === "redact")
        for (const s of spans) toRedact.push({ ...s, label: filter.label, rank: filter.rank });
    };
    for (const [i, f] of filters.builtins.entries()) run(i, f);
    if (filters.customSet) {
      for (const i of filters.customSet.match(bytes as Buffer))
        run(offset + i, filters.custom[i] as ActiveFilter);
    } else {
      for (const [i, f] of filters.custom.entries()) run(offset + i, f);
    }
    if (toRedact.length > 0) replacements.push({ text, value: redact(text.text, toRedact, text.json) });
  }
  const hits: FilterHit[] = [];
  all.forEach((f, i) => {
    const count = counts[i] ?? 0;
    if (count > 0) hits.push({ filter: f.ref, action: f.action, label: f.label, count });
  });
  return { hits, block: hits.find((h) => h.action === "block") ?? null, replacements };
}
