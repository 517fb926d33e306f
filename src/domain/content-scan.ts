import RE2 from "re2";
import type { ChatText } from "./chat-texts.js";
import {
  type BuiltinSlug,
  builtinLabel,
  compilePattern,
  DEFAULT_REDACT_LABEL,
  type FilterAction,
} from "./content-filters.js";
import { type Canonical, canonicalize, joinBrokenTokens, originalSpan } from "./normalize.js";
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
  /** The text's canonical form (normalize.ts), or null when the text is its own. */
  canon: Canonical | null;
  /** What the filters read: the canonical text (docs/behaviour.md#normalization). */
  scanned: string;
  /** The scanned text's UTF-8, converted on first use: a text only filters without RE2 read costs no conversion. */
  bytes: Buffer | undefined;
  /** Matches per filter, over the whole request. */
  counts: number[];
  /** What to redact, in the coordinates of the original text. */
  toRedact: RankedSpan[];
  /** Each filter's matches in this text alone, canonical coordinates (by filter index; unset when none). */
  found: (Span[] | undefined)[];
  /** Every match of every action, original coordinates: kept only by scanOneText (answer streams). */
  all?: FoundSpan[];
}

/** A match of one filter (its index among builtins then custom patterns) in the original text. */
export interface FoundSpan {
  start: number;
  end: number;
  filter: number;
}

/** Whether canonical units [start, end) of the text overlap a match the filter found in it alone. */
function overlapsOwn(scan: TextScan, index: number, start: number, end: number): boolean {
  const own = scan.found[index];
  if (own === undefined) return false;
  for (const s of own) if (s.start < end && s.end > start) return true;
  return false;
}

function bytesOf(scan: TextScan): Buffer {
  scan.bytes ??= utf8Of(scan.scanned);
  return scan.bytes;
}

/**
 * Runs one filter over the text (a function of the module rather than a closure per text: under
 * tsx, which the benches run, each closure created costs a call naming it).
 */
function runFilter(scan: TextScan, index: number, filter: ActiveFilter): void {
  const text = scan.text;
  if (filter.userOnly && text.role !== "user") return;
  const spans = filter.findInBytes
    ? filter.findInBytes(scan.scanned, bytesOf(scan))
    : filter.find(scan.scanned);
  if (spans.length === 0) return;
  scan.counts[index] = (scan.counts[index] ?? 0) + spans.length;
  scan.found[index] = spans;
  if (scan.all)
    for (const s of spans) {
      const o = originalSpan(scan.canon, s.start, s.end);
      scan.all.push({ start: o.start, end: o.end, filter: index });
    }
  if (filter.action === "redact")
    for (const s of spans) {
      // The canonical match maps back to the original characters it was read from.
      const o = originalSpan(scan.canon, s.start, s.end);
      scan.toRedact.push({ start: o.start, end: o.end, label: filter.label, rank: filter.rank });
    }
}

/**
 * The builtins whose values are one token (docs/behaviour.md#normalization): they also read the text
 * with a line break inside a token taken out, and they read the seams between texts. Person names
 * and addresses are words, which a line or a text boundary really separates.
 */
const VALUE_SHAPED: ReadonlySet<BuiltinSlug> = new Set<BuiltinSlug>([
  "email",
  "phone",
  "ssn",
  "credit-card",
  "ip-address",
]);
const SEAM_BUILTINS: ReadonlySet<BuiltinSlug> = new Set<BuiltinSlug>([
  ...VALUE_SHAPED,
  "secrets",
  "regex-prompt-injection",
]);

/**
 * A value cut by a line break (`jane.doe@exam\nple.com`): the value-shaped builtins and the custom
 * patterns read the text with such breaks taken out, and only the matches that contain one count,
 * as the plain text's matches were counted already (docs/behaviour.md#line-breaks-in-values). A
 * joined match that overlaps one of the plain text is not counted again, but a redaction covers
 * both: `jane.do\ne@example.com` holds the valid address `e@example.com`, and redacting only that
 * would send `jane.do`. The price is a neighbouring word joined across a break
 * (`jane@example.com\nThanks`) redacted with the value; a redaction errs toward sending less.
 */
function scanJoined(scan: TextScan, filters: ContentFilters): void {
  const joined = joinBrokenTokens(scan.scanned);
  if (joined === null) return;
  const from = joined.from;
  const offset = filters.builtins.length;
  filters.builtins.forEach((filter, index) => {
    if (filter.ref.type !== "builtin" || !VALUE_SHAPED.has(filter.ref.slug)) return;
    readJoined(scan, joined.text, from, index, filter);
  });
  filters.custom.forEach((filter, index) => {
    readJoined(scan, joined.text, from, offset + index, filter);
  });
}

/** One filter over a text with its broken tokens joined (scanJoined). */
function readJoined(
  scan: TextScan,
  text: string,
  from: ArrayLike<number>,
  index: number,
  filter: ActiveFilter,
): void {
  if (filter.userOnly && scan.text.role !== "user") return;
  for (const s of filter.find(text)) {
    const cs = from[s.start] as number;
    const ce = (from[s.end - 1] as number) + 1;
    // A match on a barrier between windows is none (no detector reads across one).
    if (cs < 0 || ce <= 0) continue;
    if (ce - cs === s.end - s.start) continue;
    if (!overlapsOwn(scan, index, cs, ce)) scan.counts[index] = (scan.counts[index] ?? 0) + 1;
    if (scan.all) {
      const o = originalSpan(scan.canon, cs, ce);
      scan.all.push({ start: o.start, end: o.end, filter: index });
    }
    if (filter.action !== "redact") continue;
    const o = originalSpan(scan.canon, cs, ce);
    scan.toRedact.push({ start: o.start, end: o.end, label: filter.label, rank: filter.rank });
  }
}

/** Canonical characters read on each side of a seam between two texts (docs/behaviour.md#split-values). */
export const SEAM_WINDOW = 128;
/** The part of a value split across texts that lies after its first text: removed, with no label of its own. */
const CONTINUATION_RANK = 1_000;

/** A piece of a seam's text: canonical units [from, to) of one text, at `at` in the seam. */
interface SeamPiece {
  scan: TextScan;
  from: number;
  to: number;
  at: number;
}

/**
 * Texts of the messages, side by side in the request, are read across their boundary. Names and
 * property names are not: a function's name, a property name and its value are separate words, and
 * reading them as one would refuse requests for values nobody wrote.
 */
function adjacent(a: TextScan, b: TextScan): boolean {
  return (
    a.text.message !== null && b.text.message !== null && a.text.kind === "text" && b.text.kind === "text"
  );
}

/**
 * The seam between texts `k` and `k + 1`: up to SEAM_WINDOW canonical units before it and after it,
 * through as many adjacent texts as it takes (a value cut in three parts is found).
 */
function seamPieces(scans: TextScan[], k: number): { pieces: SeamPiece[]; center: number; startOfK: number } {
  const left: SeamPiece[] = [];
  let need = SEAM_WINDOW;
  for (let i = k; i >= 0 && need > 0; i--) {
    const scan = scans[i] as TextScan;
    if (i < k && !adjacent(scan, scans[i + 1] as TextScan)) break;
    const len = scan.scanned.length;
    const from = Math.max(0, len - need);
    left.unshift({ scan, from, to: len, at: 0 });
    need -= len - from;
  }
  const right: SeamPiece[] = [];
  need = SEAM_WINDOW;
  for (let i = k + 1; i < scans.length && need > 0; i++) {
    const scan = scans[i] as TextScan;
    if (i > k + 1 && !adjacent(scans[i - 1] as TextScan, scan)) break;
    const to = Math.min(scan.scanned.length, need);
    right.push({ scan, from: 0, to, at: 0 });
    need -= to;
  }
  const pieces = [...left, ...right];
  let at = 0;
  for (const p of pieces) {
    p.at = at;
    at += p.to - p.from;
  }
  return { pieces, center: (right[0] as SeamPiece).at, startOfK: (left[left.length - 1] as SeamPiece).at };
}

/** The canonical units [start, end) of a piece's text that the seam's span [s.start, s.end) covers. */
function portion(p: SeamPiece, s: Span): { start: number; end: number } | null {
  const pEnd = p.at + (p.to - p.from);
  if (pEnd <= s.start || p.at >= s.end) return null;
  const start = p.from + Math.max(s.start, p.at) - p.at;
  const end = p.from + Math.min(s.end, pEnd) - p.at;
  return end > start ? { start, end } : null;
}

/**
 * Acts on one match of a seam that crosses it: the filter counts it once; a redaction labels the
 * original characters where the match starts and removes the rest of it from the texts after. A
 * match that overlaps one the filter found in a text alone is that value running on into the next
 * text's first word (`a@example.com` then `sent`): the text's own match stands.
 */
function actOnSeamMatch(pieces: SeamPiece[], s: Span, filter: ActiveFilter, index: number): void {
  for (const p of pieces) {
    const part = portion(p, s);
    if (part && overlapsOwn(p.scan, index, part.start, part.end)) return;
  }
  const first = pieces[0] as SeamPiece;
  first.scan.counts[index] = (first.scan.counts[index] ?? 0) + 1;
  if (filter.action !== "redact") return;
  let labelled = false;
  for (const p of pieces) {
    const part = portion(p, s);
    if (part === null) continue;
    const cs = part.start;
    const ce = part.end;
    const o = originalSpan(p.scan.canon, cs, ce);
    // A match that runs on past a text's end, or in from its start, takes what was removed there too.
    const start = cs === 0 ? 0 : o.start;
    const end = ce === p.scan.scanned.length ? p.scan.text.text.length : o.end;
    p.scan.toRedact.push(
      labelled
        ? { start, end, label: "", rank: CONTINUATION_RANK }
        : { start, end, label: filter.label, rank: filter.rank },
    );
    labelled = true;
  }
}

/**
 * A value split across adjacent texts of the messages (two messages, two content parts) is found
 * as one (docs/behaviour.md#split-values): each seam's window is read by the value-shaped builtins,
 * secrets, prompt injection and the custom patterns, and only matches that cross it count. A match
 * is acted on at the first seam it crosses, so one crossing several is counted once.
 */
function scanSeam(filters: ContentFilters, scans: TextScan[], k: number): void {
  const { pieces, center, startOfK } = seamPieces(scans, k);
  let seam = "";
  for (const p of pieces)
    seam +=
      p.from === 0 && p.to === p.scan.scanned.length ? p.scan.scanned : p.scan.scanned.slice(p.from, p.to);
  const allUser = pieces.every((p) => p.scan.text.role === "user");
  let bytes: Buffer | undefined;
  const seamBytes = (): Buffer => {
    bytes ??= Buffer.from(seam, "utf8");
    return bytes;
  };
  const run = (filter: ActiveFilter, index: number) => {
    if (filter.userOnly && !allUser) return;
    const spans = filter.findInBytes ? filter.findInBytes(seam, seamBytes()) : filter.find(seam);
    for (const s of spans) {
      // Crosses this seam, and starts in the text just before it (else an earlier seam took it).
      if (s.start >= center || s.end <= center || s.start < startOfK) continue;
      actOnSeamMatch(pieces, s, filter, index);
    }
  };
  filters.builtins.forEach((f, i) => {
    if (f.ref.type === "builtin" && SEAM_BUILTINS.has(f.ref.slug)) run(f, i);
  });
  const offset = filters.builtins.length;
  for (const group of filters.groups) {
    let members = group.members;
    if (group.set) {
      try {
        members = group.set.match(seamBytes()).map((i) => group.members[i] as number);
      } catch {
        // As in scanTexts: the set's patterns run one by one instead.
      }
    }
    for (const i of members) run(filters.custom[i] as ActiveFilter, offset + i);
  }
}

/**
 * Every filter over one text: the builtins, then the custom patterns (each group's set first says
 * which of its patterns can match), then the reading with line breaks inside values taken out.
 */
function runFilters(scan: TextScan, filters: ContentFilters): void {
  const offset = filters.builtins.length;
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
  // The bytes live in a scratch buffer that the next text reuses.
  scan.bytes = undefined;
  scanJoined(scan, filters);
}

/**
 * Runs every filter over every text the request carries (docs/behaviour.md#what-is-scanned), on
 * its canonical form (docs/behaviour.md#normalization), then over each seam between adjacent texts
 * (docs/behaviour.md#split-values). A detector that throws is not caught here: the caller must
 * refuse the request rather than forward unscanned text (docs/behaviour.md#detector-failure).
 */
export function scanTexts(filters: ContentFilters, texts: ChatText[]): ScanResult {
  // Scanning without a pattern of the policy would forward what it should have caught.
  const broken = filters.broken[0];
  if (broken) throw new Error(`content filter pattern does not compile: ${broken.error}`);
  const all = [...filters.builtins, ...filters.custom];
  const counts = new Array<number>(all.length).fill(0);
  const scans: TextScan[] = [];
  for (const text of texts) {
    if (text.text.length === 0) continue;
    const canon = canonicalize(text.text);
    const scan: TextScan = {
      text,
      canon,
      scanned: canon === null ? text.text : canon.text,
      bytes: undefined,
      counts,
      toRedact: [],
      found: [],
    };
    scans.push(scan);
    if (scan.scanned.length === 0) continue;
    runFilters(scan, filters);
  }
  if (all.length > 0)
    for (let k = 0; k + 1 < scans.length; k++) {
      const a = scans[k] as TextScan;
      const b = scans[k + 1] as TextScan;
      if (adjacent(a, b) && a.scanned.length > 0 && b.scanned.length > 0) scanSeam(filters, scans, k);
    }
  const replacements: ScanResult["replacements"] = [];
  for (const scan of scans)
    if (scan.toRedact.length > 0)
      replacements.push({ text: scan.text, value: redact(scan.text.text, scan.toRedact, scan.text.json) });
  const hits: FilterHit[] = [];
  all.forEach((f, i) => {
    const count = counts[i] ?? 0;
    if (count > 0) hits.push({ filter: f.ref, action: f.action, label: f.label, count });
  });
  return { hits, block: hits.find((h) => h.action === "block") ?? null, replacements };
}

/** Where an answer's text sits: nowhere a request's replacement is written back to. */
const ANSWER_PLACE: ChatText["place"] = { node: { value: [], parent: null, key: "" }, key: 0 };

/** What scanOneText found in one text. */
export interface OneTextScan {
  /** Every match of every filter (index among builtins then custom patterns), original coordinates. */
  spans: FoundSpan[];
  /** The text's canonical form, or null when the text is its own (normalize.ts). */
  canon: Canonical | null;
}

/**
 * Every filter over one text on its own, returning where each matched (original coordinates) rather
 * than a redacted text: the window of a streamed answer (answer-window.ts) decides from the spans
 * what it may release. The same detectors, patterns, canonical form and broken-line reading as a
 * request's text (docs/behaviour.md#normalization); a text read alone has no seams. `scan_scope`
 * only chooses among a request's messages (docs/behaviour.md#apply-to), so every filter reads it.
 */
export function scanOneText(filters: ContentFilters, text: string, json: boolean): OneTextScan {
  const broken = filters.broken[0];
  if (broken) throw new Error(`content filter pattern does not compile: ${broken.error}`);
  const canon = canonicalize(text);
  const all: FoundSpan[] = [];
  const scan: TextScan = {
    // Read as a user's text so that a user_only filter reads it too (see above).
    text: { text, role: "user", message: null, json, kind: "text", place: ANSWER_PLACE },
    canon,
    scanned: canon === null ? text : canon.text,
    bytes: undefined,
    counts: [],
    toRedact: [],
    found: [],
    all,
  };
  if (scan.scanned.length > 0) runFilters(scan, filters);
  return { spans: all, canon };
}

/** The text with each span replaced by its label, overlapping ones joined (overlaps.ts). */
export function redactSpans(text: string, spans: RankedSpan[], json: boolean): string {
  return redact(text, spans, json);
}
