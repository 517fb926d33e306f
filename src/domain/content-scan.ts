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
import { patternCost } from "./pattern-cost.js";
import type { EffectivePolicy } from "./policy.js";

type CustomSet = ReturnType<typeof RE2.Set>;

/** A match in a text: UTF-16 indices, end exclusive. */
export interface Span {
  start: number;
  end: number;
}

/**
 * Finds the spans of one kind of content in a text (sorted, non-overlapping). A detector that
 * searches with RE2 may be given the text's UTF-8 too (`utf8`, exactly `Buffer.from(text, "utf8")`):
 * RE2 converts a string on every call, a full pass over the text, so the scan converts each text
 * once for every pattern that reads it.
 */
export type Detector = (text: string, utf8?: Buffer) => Span[];

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
  /** Custom patterns and the builtins of UTF8_BUILTINS: the same search given the text's UTF-8 bytes, converted once per text. */
  findInBytes?: (text: string, bytes: Buffer) => Span[];
}

/** The builtins whose detector searches with RE2 and so is given the text's UTF-8 bytes (Detector). */
const UTF8_BUILTINS: ReadonlySet<BuiltinSlug> = new Set<BuiltinSlug>(["regex-prompt-injection"]);

/**
 * The most scan cost (pattern-cost.ts) tested together in one RE2 set. Measured over 1 MiB of
 * adversarial text (bench/scan-cost.ts): up to about 400 a set's DFA keeps up (tens of
 * milliseconds), beyond it the set thrashes and is slower than its patterns one by one. At this
 * bound every set compiles within RE2's memory budget, even of the heaviest Unicode classes, so a
 * set never fails for a policy whose guardrails were accepted.
 */
export const SET_MAX_COST = 256;

/**
 * Custom patterns tested together: one linear pass of the set tells which of them match a text at
 * all, so only those are run again for their positions. Without a set, each member runs alone.
 */
export interface PatternGroup {
  set: CustomSet | null;
  /** Indices into ContentFilters.custom. */
  members: number[];
}

/** A stored pattern that does not compile here: requests under it are refused, never scanned without it. */
export interface BrokenPattern {
  pattern: string;
  error: string;
}

/** The filters of an effective policy, compiled once and reused for every request under it. */
export interface ContentFilters {
  builtins: ActiveFilter[];
  custom: ActiveFilter[];
  groups: PatternGroup[];
  /** The custom patterns' summed scan cost (pattern-cost.ts), which decides where a scan runs. */
  customCost: number;
  broken: BrokenPattern[];
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

/** Marks each match's ends in the text; neither can come from the text, which is checked first. */
const OPEN = "\u0000";
const CLOSE = "\u0001";
const MARKED = `${OPEN}$&${CLOSE}`;

/**
 * All matches of a pattern from one native call: the text with every match bracketed by two
 * control characters, whose places, less the marks before them, are the matches' UTF-16 indices.
 * One exec per match costs a result array and a buffer copy each, several times the search itself.
 * RE2's replace finds the same matches as the exec loop until an empty match, after which the two
 * step on differently; an empty match leaves its two marks side by side, and then, or when the text
 * holds a mark itself, this returns null and the caller searches match by match.
 */
function findAllByMarks(re: RE2): (text: string) => Span[] | null {
  return (text) => {
    if (text.includes(OPEN) || text.includes(CLOSE)) return null;
    const marked = re.replace(text, MARKED);
    const spans: Span[] = [];
    let marks = 0;
    for (let open = marked.indexOf(OPEN); open !== -1; open = marked.indexOf(OPEN, open)) {
      const close = marked.indexOf(CLOSE, open);
      if (close === open + 1) return null;
      spans.push({ start: open - marks, end: close - marks - 1 });
      marks += 2;
      open = close;
    }
    return spans;
  };
}

/**
 * Splits the patterns, in order, into groups of at most SET_MAX_COST: a pattern costlier than that
 * runs alone. A set that does not compile anyway (a guardrail stored before its patterns' cost was
 * bounded) leaves its group without one: the set only saves time, so its members then run alone.
 */
function groupPatterns(patterns: string[], costs: number[]): PatternGroup[] {
  const groups: PatternGroup[] = [];
  let members: number[] = [];
  let cost = 0;
  const close = () => {
    if (members.length === 0) return;
    let set: CustomSet | null = null;
    if (members.length > 1) {
      try {
        set = new RE2.Set(
          members.map((i) => patterns[i] as string),
          "u",
        );
      } catch {
        set = null;
      }
    }
    groups.push({ set, members });
    members = [];
    cost = 0;
  };
  costs.forEach((c, i) => {
    if (c > SET_MAX_COST) {
      groups.push({ set: null, members: [i] });
      return;
    }
    if (cost + c > SET_MAX_COST) close();
    members.push(i);
    cost += c;
  });
  close();
  return groups;
}

export function compileFilters(
  policy: Pick<EffectivePolicy, "content_filter_builtins" | "content_filters">,
  detectors: Record<BuiltinSlug, Detector>,
): ContentFilters {
  const builtins = policy.content_filter_builtins.map((f): ActiveFilter => {
    const find = detectors[f.slug];
    return {
      ref: { type: "builtin", slug: f.slug },
      action: f.action,
      label: builtinLabel(f.slug),
      userOnly: f.scan_scope === "user_only",
      rank: BUILTIN_RANK[f.slug],
      find,
      // A detector takes the UTF-8 as its optional second argument: it is its own byte search.
      ...(UTF8_BUILTINS.has(f.slug) ? { findInBytes: find } : {}),
    };
  });
  const custom: ActiveFilter[] = [];
  const broken: BrokenPattern[] = [];
  for (const f of policy.content_filters) {
    let re: RE2;
    try {
      re = compilePattern(f.pattern);
    } catch (err) {
      broken.push({ pattern: f.pattern, error: err instanceof Error ? err.message : "does not compile" });
      continue;
    }
    const byExec = findAllInBytes(re);
    const byMarks = findAllByMarks(re);
    const findInBytes = (text: string, bytes: Buffer) => byMarks(text) ?? byExec(text, bytes);
    custom.push({
      ref: { type: "custom", pattern: f.pattern },
      action: f.action,
      label: f.label ?? DEFAULT_REDACT_LABEL,
      userOnly: false,
      rank: CUSTOM_RANK,
      find: (text: string) => findInBytes(text, Buffer.from(text, "utf8")),
      findInBytes,
    });
  }
  const patterns = custom.map((f) => (f.ref as { pattern: string }).pattern);
  const costs = patterns.map(patternCost);
  return {
    builtins,
    custom,
    groups: groupPatterns(patterns, costs),
    customCost: costs.reduce((a, b) => a + b, 0),
    broken,
  };
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

/** Texts up to this many UTF-16 units are converted into one reused buffer (three bytes a unit at most). */
const SCRATCH_UNITS = 64 * 1024;
let scratch: Buffer | undefined;

/**
 * The UTF-8 bytes of a text, as `Buffer.from(text, "utf8")` gives them. A text of a few KB needs a
 * buffer of its own outside Node's pool, allocated and collected for every request; one buffer,
 * valid until the next call, serves every text of ordinary size. The scan is synchronous and keeps
 * no bytes past a text, so the reuse is safe.
 */
function utf8Of(text: string): Buffer {
  if (text.length > SCRATCH_UNITS) return Buffer.from(text, "utf8");
  scratch ??= Buffer.allocUnsafe(SCRATCH_UNITS * 3);
  return scratch.subarray(0, scratch.write(text, 0, "utf8"));
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

/** One text being scanned: what its filters found so far. */
interface TextScan {
  text: ChatText;
  /** The text's UTF-8, converted on first use: a text only filters without RE2 read costs no conversion. */
  bytes: Buffer | undefined;
  /** Matches per filter, over the whole request. */
  counts: number[];
  toRedact: RankedSpan[];
}

function bytesOf(scan: TextScan): Buffer {
  scan.bytes ??= utf8Of(scan.text.text);
  return scan.bytes;
}

/**
 * Runs one filter over the text (a function of the module rather than a closure per text: under
 * tsx, which the benches run, each closure created costs a call naming it).
 */
function runFilter(scan: TextScan, index: number, filter: ActiveFilter): void {
  const text = scan.text;
  if (filter.userOnly && text.role !== "user") return;
  const spans = filter.findInBytes ? filter.findInBytes(text.text, bytesOf(scan)) : filter.find(text.text);
  if (spans.length === 0) return;
  scan.counts[index] = (scan.counts[index] ?? 0) + spans.length;
  if (filter.action === "redact")
    for (const s of spans)
      scan.toRedact.push({ start: s.start, end: s.end, label: filter.label, rank: filter.rank });
}

/**
 * Runs every filter over every text the request carries (docs/behaviour.md#what-is-scanned). A detector that throws is
 * not caught here: the caller must refuse the request rather than forward unscanned text
 * (docs/behaviour.md#detector-failure).
 */
export function scanTexts(filters: ContentFilters, texts: ChatText[]): ScanResult {
  // Scanning without a pattern of the policy would forward what it should have caught.
  const broken = filters.broken[0];
  if (broken) throw new Error(`content filter pattern does not compile: ${broken.error}`);
  const all = [...filters.builtins, ...filters.custom];
  const counts = new Array<number>(all.length).fill(0);
  const replacements: ScanResult["replacements"] = [];
  const offset = filters.builtins.length;
  for (const text of texts) {
    if (text.text.length === 0) continue;
    const scan: TextScan = { text, bytes: undefined, counts, toRedact: [] };
    for (let i = 0; i < offset; i++) runFilter(scan, i, filters.builtins[i] as ActiveFilter);
    for (const group of filters.groups) {
      let members = group.members;
      if (group.set) {
        try {
          members = group.set.match(bytesOf(scan)).map((i) => group.members[i] as number);
        } catch {
          // The set's DFA ran out of memory on this text: its patterns run one by one instead.
        }
      }
      for (const i of members) runFilter(scan, offset + i, filters.custom[i] as ActiveFilter);
    }
    if (scan.toRedact.length > 0)
      replacements.push({ text, value: redact(text.text, scan.toRedact, text.json) });
  }
  const hits: FilterHit[] = [];
  all.forEach((f, i) => {
    const count = counts[i] ?? 0;
    if (count > 0) hits.push({ filter: f.ref, action: f.action, label: f.label, count });
  });
  return { hits, block: hits.find((h) => h.action === "block") ?? null, replacements };
}
