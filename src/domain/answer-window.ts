import type { BuiltinSlug } from "./content-filters.js";
import {
  type ActiveFilter,
  type ContentFilters,
  type FilterHit,
  type FoundSpan,
  redactSpans,
  scanOneText,
} from "./content-scan.js";
import { JOIN_WINDOW } from "./normalize.js";
import type { RankedSpan } from "./overlaps.js";
import { patternCost } from "./pattern-cost.js";

/**
 * The windowed scanner of a streamed answer (docs/gateway.md#answer-streams). A stream arrives in
 * small deltas; a value may be cut anywhere between them. Each text channel (one choice's content,
 * one content block, ...) keeps the tail of its text that is not decided yet: text is released once
 * no match can still start in it, that is once it lies more than the window W before the end of
 * what has arrived (a match is never longer than W). A match that straddles the release point is
 * held entirely. Released text is final: it is never sent again, nor changed.
 */

/**
 * The longest span each builtin matches, in canonical UTF-16 units, with the context it reads to
 * the right of a match (a word boundary, a digit that must not follow). Pure functions of the
 * detectors' patterns (src/domain/detectors): an e-mail address is at most 254 characters (RFC 5321)
 * and the detector accepts up to 64 + 255; a phone number, an SSN, a card number and an IP address
 * a few dozen; a private key block is the longest a detector matches, and is held up to 1 KB (a
 * longer block is labelled in pieces, see MAX_HELD); names, addresses and injection phrases are a
 * few words with their cue.
 */
export const BUILTIN_WINDOW: Record<BuiltinSlug, number> = {
  email: 320,
  phone: 64,
  ssn: 64,
  "credit-card": 64,
  "ip-address": 64,
  secrets: 1024,
  "person-name": 256,
  address: 512,
  "regex-prompt-injection": 512,
};

/** A custom pattern that can repeat without bound (`.*`, `\d+`, `{2,}`) is held up to this much. */
export const UNBOUNDED_WINDOW = 1024;

/**
 * Already released text read again before the tail, for the detectors that look before a match
 * (cue words of a name, the start of a word): never sent again.
 */
export const LEFT_CONTEXT = 128;

/**
 * A quantifier without an upper bound, outside a class and not escaped: `*`, `+` or `{n,}`.
 * Conservative: an escaped backslash before one is read as escaping it, which only widens nothing.
 */
function unbounded(pattern: string): boolean {
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === "\\") {
      i++;
      continue;
    }
    if (inClass) {
      if (ch === "]") inClass = false;
      continue;
    }
    if (ch === "[") {
      inClass = true;
      // A `]` first in a class is a literal.
      if (pattern[i + 1] === "^") i++;
      if (pattern[i + 1] === "]") i++;
      continue;
    }
    if (ch === "*" || ch === "+") return true;
    if (ch === "{" && /^\{\d+,\}/.test(pattern.slice(i, i + 12))) return true;
  }
  return false;
}

/**
 * The longest match of a custom pattern: its scan cost (pattern-cost.ts) counts every position of
 * the pattern with its counted repetitions written out, and a position matches one character (two
 * UTF-16 units at most), so twice the cost bounds a match of a pattern without an unbounded
 * quantifier; one with one gets UNBOUNDED_WINDOW.
 */
export function patternWindow(pattern: string): number {
  if (unbounded(pattern)) return UNBOUNDED_WINDOW;
  return Math.min(UNBOUNDED_WINDOW, 2 * patternCost(pattern));
}

/**
 * The window W of a compiled set of answer filters: the longest match any of them makes, plus the
 * right-hand context a match reads and the line breaks the value-shaped readers take out of a value
 * (docs/behaviour.md#line-breaks-in-values).
 */
export function answerWindow(filters: ContentFilters): number {
  // A policy's filters are compiled once and reused by every answer under it: so is their window.
  const known = windows.get(filters);
  if (known !== undefined) return known;
  const w = windowOf(filters);
  windows.set(filters, w);
  return w;
}

const windows = new WeakMap<ContentFilters, number>();

function windowOf(filters: ContentFilters): number {
  let w = 0;
  for (const f of filters.builtins) if (f.ref.type === "builtin") w = Math.max(w, BUILTIN_WINDOW[f.ref.slug]);
  for (const f of filters.custom) if (f.ref.type === "custom") w = Math.max(w, patternWindow(f.ref.pattern));
  return w + JOIN_WINDOW;
}

/** What a push or the finish decided. */
export interface WindowStep {
  /** Text to send now (redacted), possibly "". */
  release: string;
  /** A `block` filter matched: send nothing more of the channel. */
  block: FilterHit | null;
}

/**
 * The most undecided text a channel holds, in windows: a match that straddles the release point is
 * held until then, after which the part of it that lies before the window is decided as it stands
 * (labelled, or refused), so memory and rescans stay bounded whatever a pattern matches.
 */
const MAX_HELD = 4;

/** Counts per filter, shared by every channel of one answer, for its hits. */
export class AnswerHits {
  readonly counts: number[];
  constructor(private readonly filters: ContentFilters) {
    this.counts = new Array<number>(filters.builtins.length + filters.custom.length).fill(0);
  }
  filter(index: number): ActiveFilter {
    const b = this.filters.builtins.length;
    return (index < b ? this.filters.builtins[index] : this.filters.custom[index - b]) as ActiveFilter;
  }
  hit(index: number, count: number): FilterHit {
    const f = this.filter(index);
    return { filter: f.ref, action: f.action, label: f.label, count };
  }
  /** What the filters found over the whole answer so far (no matched text). */
  hits(): FilterHit[] {
    const out: FilterHit[] = [];
    this.counts.forEach((c, i) => {
      if (c > 0) out.push(this.hit(i, c));
    });
    return out;
  }
}

/** One text channel of a streamed answer. */
export class AnswerWindow {
  /** The undecided text, starting right after what was released. */
  private tail = "";
  /** The end of the released text, up to LEFT_CONTEXT units, as it came (not redacted). */
  private left = "";
  /** The tail's length at which the next scan runs. */
  private nextScan: number;
  private blocked = false;

  constructor(
    private readonly filters: ContentFilters,
    private readonly window: number,
    private readonly counts: AnswerHits,
    /** The text is JSON (tool call arguments): a label is written JSON-escaped. */
    private readonly json = false,
  ) {
    // The first scan comes early, so the first token waits little more than one window; later ones
    // wait for half a window of new text each.
    this.nextScan = window + window / 8;
  }

  /**
   * Takes the next piece of the channel's text. Scans only once the tail has grown by half a window
   * since the last scan, so each character is read a bounded number of times (the cost stays
   * amortized however small the deltas are).
   */
  push(delta: string): WindowStep {
    if (this.blocked) return { release: "", block: null };
    this.tail += delta;
    if (this.tail.length < this.nextScan) return { release: "", block: null };
    return this.decide(false);
  }

  /** The channel's text is complete: everything held is decided and released. */
  finish(): WindowStep {
    if (this.blocked || this.tail === "") return { release: "", block: null };
    return this.decide(true);
  }

  /** Whether text is held (a delta is owed before the channel closes). */
  get holding(): boolean {
    return this.tail !== "";
  }

  private decide(final: boolean): WindowStep {
    const text = this.left + this.tail;
    const offset = this.left.length;
    const { spans, canon } = scanOneText(this.filters, text, this.json);
    // The release point, in the tail: W canonical units before the end (invisible characters a
    // match may hold do not count toward its length).
    let r = this.tail.length;
    if (!final) {
      const canonLen = canon === null ? text.length : canon.text.length;
      const c = canonLen - this.window;
      const at = c <= 0 ? 0 : canon === null ? c : (canon.start[c] as number);
      r = Math.max(0, at - offset);
      // A straddling match is held, unless the tail has grown past MAX_HELD windows.
      const limit = this.tail.length - MAX_HELD * this.window;
      for (let moved = true; moved; ) {
        moved = false;
        for (const s of spans) {
          const start = s.start - offset;
          const end = s.end - offset;
          if (start < r && end > r && start >= limit) {
            // A match that began in the released text is decided in its tail part (never re-sent).
            r = Math.max(0, start);
            moved = r > 0;
          }
        }
      }
    }
    const decided: FoundSpan[] = [];
    for (const s of spans) {
      const start = s.start - offset;
      const end = s.end - offset;
      // Wholly in the released text: decided before. Starting at or past r: decided later.
      if (end <= 0 || start >= r) continue;
      decided.push(s);
    }
    const toRedact: RankedSpan[] = [];
    let block: FilterHit | null = null;
    for (const s of decided) {
      this.counts.counts[s.filter] = (this.counts.counts[s.filter] ?? 0) + 1;
      const f = this.counts.filter(s.filter);
      if (f.action === "block") block ??= this.counts.hit(s.filter, 1);
      else if (f.action === "redact")
        toRedact.push({
          start: Math.max(0, s.start - offset),
          end: Math.min(r, s.end - offset),
          label: f.label,
          rank: f.rank,
        });
    }
    if (block) {
      this.blocked = true;
      this.tail = "";
      return { release: "", block };
    }
    const out = this.tail.slice(0, r);
    const released = toRedact.length === 0 ? out : redactSpans(out, toRedact, this.json);
    const kept = this.left + out;
    this.left = kept.length > LEFT_CONTEXT ? kept.slice(kept.length - LEFT_CONTEXT) : kept;
    this.tail = this.tail.slice(r);
    this.nextScan = this.tail.length + this.window / 2;
    return { release: released, block: null };
  }
}
