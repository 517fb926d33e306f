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
  start: number[];
  end: number[];
}

/**
 * Text that canonicalizes to itself: ASCII without `&`. Nothing in it is a format character, a
 * compatibility form, a non-ASCII digit or dash, or an entity, so it needs no map (the fast path of
 * every ordinary English prompt).
 */
const NEEDS_WORK = /[&\u0080-\uffff]/;

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
  if (!NEEDS_WORK.test(text)) return null;
  let out = "";
  const start: number[] = [];
  const end: number[] = [];
  let changed = false;
  /** Whether the last unit written is an ASCII letter or digit: a mark on it is removed. */
  let onAscii = false;
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c < 128 && c !== 38) {
      out += text[i];
      start.push(i);
      end.push(i + 1);
      onAscii = isAsciiAlnum(c);
      i++;
      continue;
    }
    let next: number;
    let mapped: string;
    if (c === 38) {
      const entity = entityAt(text, i);
      if (entity === null) {
        out += "&";
        start.push(i);
        end.push(i + 1);
        onAscii = false;
        i++;
        continue;
      }
      next = entity.end;
      const cp = entity.value.codePointAt(0) as number;
      mapped = mapCodePoint(cp);
      if (mapped === KEEP_MARK) mapped = onAscii ? "" : entity.value;
      changed = true;
    } else {
      const cp = text.codePointAt(i) as number;
      next = i + (cp > 0xffff ? 2 : 1);
      mapped = mapCodePoint(cp);
      if (mapped === KEEP_MARK) {
        mapped = onAscii ? "" : text.slice(i, next);
        if (onAscii) changed = true;
      } else if (mapped !== text.slice(i, next)) changed = true;
    }
    if (mapped === "") {
      // Removed: the character joins the span of the unit before it, so a match that ends there
      // takes it along and a redaction leaves nothing of the value behind.
      if (end.length > 0) end[end.length - 1] = next;
    } else {
      out += mapped;
      for (let k = 0; k < mapped.length; k++) {
        start.push(i);
        end.push(next);
      }
      onAscii = isAsciiAlnum(mapped.charCodeAt(mapped.length - 1));
    }
    i = next;
  }
  return changed ? { text: out, start, end } : null;
}

/** The original span of the canonical span [s, e) (e > s). */
export function originalSpan(canon: Canonical | null, s: number, e: number): { start: number; end: number } {
  if (canon === null) return { start: s, end: e };
  return { start: canon.start[s] as number, end: canon.end[e - 1] as number };
}

/**
 * The text with each line break that cuts a token carrying a digit or an `@` taken out
 * (`jane.doe@exam\nple.com`, `4111 1111 11\n11 1111`), or null when it has none. A break between
 * words is left, so words on two lines are never read as one. `from[i]` is the index in `text` of
 * unit `i`.
 */
export function joinBrokenTokens(text: string): { text: string; from: number[] } | null {
  const lf = text.indexOf("\n");
  const cr = text.indexOf("\r");
  const at = lf < 0 ? cr : cr < 0 ? lf : Math.min(lf, cr);
  if (at < 0) return null;
  const cuts: { start: number; end: number }[] = [];
  for (let i = at; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 10 && c !== 13) continue;
    let j = i + 1;
    if (c === 13 && text.charCodeAt(j) === 10) j++;
    if (i > 0 && j < text.length && !isSpace(text.charCodeAt(i - 1)) && !isSpace(text.charCodeAt(j))) {
      if (tokenHasValueMark(text, i, j)) cuts.push({ start: i, end: j });
    }
    i = j - 1;
  }
  if (cuts.length === 0) return null;
  let out = "";
  const from: number[] = [];
  let pos = 0;
  for (const cut of cuts) {
    out += text.slice(pos, cut.start);
    for (let k = pos; k < cut.start; k++) from.push(k);
    pos = cut.end;
  }
  out += text.slice(pos);
  for (let k = pos; k < text.length; k++) from.push(k);
  return { text: out, from };
}

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
