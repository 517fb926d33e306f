/**
 * The canonical form the content filters match on (docs/behaviour.md#normalization), and the map
 * from it back to the text as the client sent it. A client can hide a value from a pattern with
 * characters a reader (or a model) does not see or reads as the same: a zero-width space inside an
 * address, fullwidth or Arabic-Indic digits, a combining accent on one letter, `&#64;` for `@`, an
 * en dash between the groups of a card number. The filters run on the canonical text; every match
 * is mapped back to the exact span of the original it came from (the characters removed inside it
 * included), so a redaction replaces the original characters and everything else is forwarded as
 * it was sent. Pure, and per character, so the map stays exact.
 */

/** A text's canonical form: `start[i]`..`end[i]` is the original span canonical unit `i` came from. */
export interface Canonical {
  text: string;
  start: Int32Array;
  end: Int32Array;
}

/**
 * Text that canonicalizes to itself: ASCII without `&`. Nothing in it is a format character, a
 * compatibility form, a non-ASCII digit or dash, or an entity, so it needs no map (the fast path of
 * every ordinary English prompt). A text is ASCII exactly when its UTF-8 has one byte per UTF-16
 * unit (any unit from 0x80 up, a lone surrogate included, takes two bytes or more): Node counts the
 * bytes several times faster than a character class is searched through the text.
 */
function isPlainAscii(text: string): boolean {
  // Text in another script mostly shows it in its first characters, and counting its bytes (a pass
  // over all of it, slower for such text) is then not needed.
  const head = Math.min(text.length, 32);
  for (let i = 0; i < head; i++) {
    const c = text.charCodeAt(i);
    if (c >= 128 || c === 38) return false;
  }
  return Buffer.byteLength(text, "utf8") === text.length && !text.includes("&");
}
/**
 * The next unit that may change (any but plain ASCII): the regex engine finds it several times
 * faster than a loop over the ASCII between, most of a text in a language written in Latin letters.
 */
const NEXT_WORK = /[&\u0080-\uffff]/g;
/** Plain ASCII units in a row after which the rest of the run is skipped with NEXT_WORK. */
const ASCII_RUN = 8;

/** Removed wherever they are: invisible format characters, variation selectors, fillers. */
const FORMAT = /^\p{Cf}$/u;
function isInvisible(cp: number, ch: string): boolean {
  return (
    FORMAT.test(ch) ||
    cp === 0x034f ||
    cp === 0x115f ||
    cp === 0x1160 ||
    cp === 0x17b4 ||
    cp === 0x17b5 ||
    cp === 0x3164 ||
    cp === 0xffa0 ||
    (cp >= 0xfe00 && cp <= 0xfe0f) ||
    (cp >= 0xe0100 && cp <= 0xe01ef)
  );
}
const MARK = /^\p{M}$/u;
const DIGIT = /^\p{Nd}$/u;
const DASH = /^[\p{Pd}\u2212\u2043\u02d7]$/u;
const SPACE = /^\p{Zs}$/u;

/** The named HTML entities people use to write an address, a number or a separator. */
const NAMED_ENTITIES: Record<string, string> = {
  commat: "@",
  period: ".",
  dot: ".",
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: " ",
  ensp: " ",
  emsp: " ",
  thinsp: " ",
  hyphen: "-",
  dash: "-",
  ndash: "-",
  mdash: "-",
  minus: "-",
  hyphenminus: "-",
  lowbar: "_",
  plus: "+",
  num: "#",
  colon: ":",
  sol: "/",
  bsol: "\\",
  comma: ",",
  lpar: "(",
  rpar: ")",
  percnt: "%",
  shy: "\u00ad",
  zwsp: "\u200b",
  zwnj: "\u200c",
  zwj: "\u200d",
  NewLine: "\n",
  Tab: "\t",
};
const ENTITY = /&(?:#([0-9]{1,7})|#[xX]([0-9a-fA-F]{1,6})|([A-Za-z]{2,12}));?/y;

/** What one character becomes, by code point; marks are decided in context (see canonicalize). */
const cache = new Map<number, string>();
const KEEP_MARK = "\u0000mark";

/** The value of a decimal digit of any script: Unicode lays every script's digits out 0 to 9 in a run. */
function digitValue(cp: number): number {
  let zero = cp;
  while (zero > 0 && DIGIT.test(String.fromCodePoint(zero - 1))) zero--;
  return (cp - zero) % 10;
}

function mapCodePoint(cp: number): string {
  const cached = cache.get(cp);
  if (cached !== undefined) return cached;
  const ch = String.fromCodePoint(cp);
  let out: string;
  if (isInvisible(cp, ch)) out = "";
  else if (MARK.test(ch)) out = KEEP_MARK;
  else if (DIGIT.test(ch)) out = String(digitValue(cp));
  else if (DASH.test(ch)) out = "-";
  else if (SPACE.test(ch)) out = " ";
  else if (cp === 0x2028 || cp === 0x2029 || cp === 0x85) out = "\n";
  else {
    // Compatibility forms (fullwidth, mathematical, circled, ligatures) to their plain letters;
    // what that yields is mapped again, so a fullwidth hyphen ends as `-`, a superscript digit as a digit.
    const n = ch.normalize("NFKC");
    out = n === ch ? ch : mapString(n);
  }
  if (cache.size < 65_536) cache.set(cp, out);
  return out;
}

function mapString(s: string): string {
  let out = "";
  for (const c of s) {
    const m = mapCodePoint(c.codePointAt(0) as number);
    out += m === KEEP_MARK ? c : m;
  }
  return out;
}

function isAsciiAlnum(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

/** The code point an entity at `at` stands for, with the entity's end, or null when it is none. */
function entityAt(text: string, at: number): { value: string; end: number } | null {
  ENTITY.lastIndex = at;
  const m = ENTITY.exec(text);
  if (!m) return null;
  let value: string | undefined;
  if (m[1] !== undefined || m[2] !== undefined) {
    const cp = m[1] !== undefined ? Number(m[1]) : Number.parseInt(m[2] as string, 16);
    if (cp === 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return null;
    value = String.fromCodePoint(cp);
  } else {
    // A named entity needs its semicolon: `&amp` or `&dash` alone is too often just text.
    if (!m[0].endsWith(";")) return null;
    value = NAMED_ENTITIES[m[3] as string] ?? NAMED_ENTITIES[(m[3] as string).toLowerCase()];
  }
  return value === undefined ? null : { value, end: at + m[0].length };
}

/**
 * The canonical form of a text, or null when it is its own canonical form (no map needed):
 * - HTML character references decoded (`&#64;`, `&#x40;`, `&commat;`, `&ndash;`, ...), once;
 * - format and zero-width characters, soft hyphens and variation selectors removed;
 * - compatibility forms to plain ones (NFKC, one character at a time: fullwidth and mathematical
 *   letters and digits to ASCII);
 * - digits of every script to ASCII digits, every dash to `-`, every space to ` `;
 * - a combining mark removed where it sits on an ASCII letter or digit (`ja\u0301ne` is `jane`);
 *   marks on other letters stay, so words of other scripts are matched as they are.
 */
export function canonicalize(text: string): Canonical | null {
  if (isPlainAscii(text)) return null;
  const n = text.length;
  const canon = new Builder(n);
  /** Characters from `run` up to the current one are their own canonical form, not yet written. */
  let run = 0;
  let changed = false;
  /** Whether the last unit is an ASCII letter or digit: a combining mark on it is removed. */
  let onAscii = false;
  /** Plain ASCII units stepped through since the last other one. */
  let asciiRun = 0;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c < 128 && c !== 38) {
      onAscii = isAsciiAlnum(c);
      i++;
      // A long run of plain ASCII is its own canonical form: skip to the next unit that may not be.
      // A short one (a space between words of another script) is cheaper stepped through.
      if (++asciiRun === ASCII_RUN) {
        NEXT_WORK.lastIndex = i;
        const next = NEXT_WORK.test(text) ? NEXT_WORK.lastIndex - 1 : n;
        if (next > i) onAscii = isAsciiAlnum(text.charCodeAt(next - 1));
        i = next;
        asciiRun = 0;
      }
      continue;
    }
    asciiRun = 0;
    let kind = c < 0xd800 || (c > 0xdfff && c < 0x10000) ? (bmpKind[c] as number) : UNKNOWN;
    if (kind === SAME) {
      onAscii = false;
      i++;
      continue;
    }
    if (kind === UNKNOWN) {
      const cp = text.codePointAt(i) as number;
      const m = mapCodePoint(cp);
      kind = m === KEEP_MARK ? MARK_KIND : m === String.fromCodePoint(cp) ? SAME : CHANGED;
      if (cp < 0x10000 && (cp < 0xd800 || cp > 0xdfff)) bmpKind[cp] = kind;
      if (kind === SAME) {
        onAscii = false;
        i += cp > 0xffff ? 2 : 1;
        continue;
      }
    }
    if (kind === MARK_KIND && !onAscii) {
      i++;
      continue;
    }
    // This character changes: what came before it is written as it is, then its canonical form.
    canon.copy(text, run, i);
    let next: number;
    let mapped: string;
    if (c === 38) {
      const entity = entityAt(text, i);
      if (entity === null) {
        onAscii = false;
        i++;
        run = i - 1;
        continue;
      }
      next = entity.end;
      mapped = mapCodePoint(entity.value.codePointAt(0) as number);
      if (mapped === KEEP_MARK) mapped = onAscii ? "" : entity.value;
    } else if (kind === MARK_KIND) {
      next = i + 1;
      mapped = "";
    } else {
      const cp = text.codePointAt(i) as number;
      next = i + (cp > 0xffff ? 2 : 1);
      mapped = mapCodePoint(cp);
    }
    changed = true;
    if (mapped === "") canon.extendLast(next);
    else {
      canon.write(mapped, i, next);
      onAscii = isAsciiAlnum(mapped.charCodeAt(mapped.length - 1));
    }
    i = next;
    run = i;
  }
  if (!changed) return null;
  canon.copy(text, run, n);
  return canon.done();
}

const UNKNOWN = 0;
const SAME = 1;
const CHANGED = 2;
const MARK_KIND = 3;
/** What each BMP character is, learnt on first sight: its own canonical form, changed, or a mark. */
const bmpKind = new Uint8Array(0x10000);
bmpKind[38] = CHANGED;

/** The canonical text and its map, written in runs. */
class Builder {
  private parts: string[] = [];
  private length = 0;
  private start: Int32Array;
  private end: Int32Array;

  constructor(capacity: number) {
    this.start = new Int32Array(capacity + 16);
    this.end = new Int32Array(capacity + 16);
  }

  private reserve(units: number): void {
    if (this.length + units <= this.start.length) return;
    const size = Math.max(this.start.length * 2, this.length + units);
    const start = new Int32Array(size);
    const end = new Int32Array(size);
    start.set(this.start);
    end.set(this.end);
    this.start = start;
    this.end = end;
  }

  /** Original units [from, to) as they are. */
  copy(text: string, from: number, to: number): void {
    if (to <= from) return;
    this.reserve(to - from);
    this.parts.push(text.slice(from, to));
    let at = this.length;
    for (let u = from; u < to; u++, at++) {
      this.start[at] = u;
      this.end[at] = u + 1;
    }
    this.length = at;
  }

  /** `value`, read from original units [from, to). */
  write(value: string, from: number, to: number): void {
    this.reserve(value.length);
    this.parts.push(value);
    for (let k = 0; k < value.length; k++, this.length++) {
      this.start[this.length] = from;
      this.end[this.length] = to;
    }
  }

  /** A removed character joins the span of the unit before it (none before: it is dropped). */
  extendLast(to: number): void {
    if (this.length > 0) this.end[this.length - 1] = to;
  }

  done(): Canonical {
    return {
      text: this.parts.join(""),
      start: this.start.subarray(0, this.length),
      end: this.end.subarray(0, this.length),
    };
  }
}

/** The original span of the canonical span [s, e) (e > s). */
export function originalSpan(canon: Canonical | null, s: number, e: number): { start: number; end: number } {
  if (canon === null) return { start: s, end: e };
  return { start: canon.start[s] as number, end: canon.end[e - 1] as number };
}

/** Characters read on each side of a line break that cuts a token (docs/behaviour.md#line-breaks-in-values). */
export const JOIN_WINDOW = 64;

/**
 * The text around each line break that cuts a token carrying a digit or an `@`
 * (`jane.doe@exam\nple.com`, `4111 1111 11\n11 1111`), with those breaks taken out: up to
 * JOIN_WINDOW characters on each side, windows that meet merged, all in one string with a barrier
 * between windows that no detector reads across (`from` is -1 there). Null when there is none. A
 * break between words is left, so words on two lines are never read as one. `from[i]` is the index
 * in `text` of unit `i`. Only the windows are read again, each detector once, so a long text with
 * many lines costs little more than one without.
 */
export function joinBrokenTokens(text: string): { text: string; from: number[] } | null {
  const cuts: { start: number; end: number }[] = [];
  // Found with indexOf, which is several times faster here than any pattern.
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) {
    const start = i > 0 && text.charCodeAt(i - 1) === 13 ? i - 1 : i;
    addCut(text, start, i + 1, cuts);
  }
  if (text.includes("\r")) {
    for (let i = text.indexOf("\r"); i >= 0; i = text.indexOf("\r", i + 1))
      if (text.charCodeAt(i + 1) !== 10) addCut(text, i, i + 1, cuts);
    cuts.sort((a, b) => a.start - b.start);
  }
  if (cuts.length === 0) return null;
  let out = "";
  const from: number[] = [];
  let k = 0;
  while (k < cuts.length) {
    const first = k;
    let end = Math.min(text.length, (cuts[k] as { end: number }).end + JOIN_WINDOW);
    while (k + 1 < cuts.length && (cuts[k + 1] as { start: number }).start - JOIN_WINDOW <= end) {
      k++;
      end = Math.min(text.length, (cuts[k] as { end: number }).end + JOIN_WINDOW);
    }
    let pos = Math.max(0, (cuts[first] as { start: number }).start - JOIN_WINDOW);
    if (out.length > 0) {
      out += BARRIER;
      for (let b = 0; b < BARRIER.length; b++) from.push(-1);
    }
    for (let c = first; c <= k; c++) {
      const cut = cuts[c] as { start: number; end: number };
      out += text.slice(pos, cut.start);
      for (let u = pos; u < cut.start; u++) from.push(u);
      pos = cut.end;
    }
    out += text.slice(pos, end);
    for (let u = pos; u < end; u++) from.push(u);
    k++;
  }
  return { text: out, from };
}

/** A line break [start, end) between two characters that are not spaces, in a token holding a value mark. */
function addCut(text: string, start: number, end: number, cuts: { start: number; end: number }[]): void {
  if (start === 0 || end >= text.length) return;
  if (isSpace(text.charCodeAt(start - 1)) || isSpace(text.charCodeAt(end))) return;
  if (tokenHasValueMark(text, start, end)) cuts.push({ start, end });
}

/** Between two windows: spaces and a character no value holds, so no match runs across. */
const BARRIER = " \u0000 ";

function isSpace(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13 || c === 12 || c === 11;
}

/** The token around a break (up to 64 characters each side) holds a digit or an `@`. */
function tokenHasValueMark(text: string, cutStart: number, cutEnd: number): boolean {
  for (let k = cutStart - 1; k >= 0 && cutStart - k <= 64; k--) {
    const c = text.charCodeAt(k);
    if (isSpace(c)) break;
    if (c === 64 || (c >= 48 && c <= 57)) return true;
  }
  for (let k = cutEnd; k < text.length && k - cutEnd < 64; k++) {
    const c = text.charCodeAt(k);
    if (isSpace(c)) break;
    if (c === 64 || (c >= 48 && c <= 57)) return true;
  }
  return false;
}
