/**
 * Turns the phrase notation of injection-patterns.ts into the two patterns regex-prompt-injection.ts
 * runs: the exact pattern, for the normalized text, and the anchor, for the raw text.
 *
 * The anchor is what the prefilter looks for: the last two required parts of a phrase (usually the
 * object, the rarer half: "previous instructions", "unrestricted AI", "system prompt"), the first
 * of them cut to its last letters and the second to its first letters, anything optional between
 * them a bounded gap, every letter in any of its raw forms (case, look-alike digits, accented and
 * Cyrillic or Greek look-alike letters) followed by any separators, and every misspellable keyword
 * also in its misspelled forms. Each step keeps a superset: a text whose normalized copy holds the
 * phrase holds its anchor. The cuts keep the RE2 program of all anchors small, which is what lets
 * RE2 compile one set of them and run it from its cache at the speed of one pass.
 */

import { HOMOGLYPHS, LOOK_ALIKES } from "./injection-text.js";

/** The notation parsed: a sequence of words and groups. */
export type Item =
  | { kind: "word"; word: string }
  | { kind: "group"; alternatives: Item[][]; quantifier: string };

/** Parses the notation; anything outside it is a mistake in injection-patterns.ts. */
export function parse(source: string): Item[] {
  const tokens = source.match(/[a-z]+|\(|\)|\||\?|\{\d+,\d+\}|\S/g) ?? [];
  let at = 0;
  const sequence = (): Item[] => {
    const items: Item[] = [];
    for (let t = tokens[at]; t !== undefined && t !== ")" && t !== "|"; t = tokens[at]) {
      at++;
      if (/^[a-z]+$/.test(t)) {
        items.push({ kind: "word", word: t });
      } else if (t === "(") {
        const alternatives = [sequence()];
        while (tokens[at] === "|") {
          at++;
          alternatives.push(sequence());
        }
        if (tokens[at++] !== ")") throw new Error(`unclosed group in injection phrase: ${source}`);
        const next = tokens[at] ?? "";
        let quantifier = "";
        if (next === "?" || /^\{\d+,\d+\}$/.test(next)) {
          quantifier = next;
          at++;
        }
        items.push({ kind: "group", alternatives, quantifier });
      } else {
        throw new Error(`injection phrase uses unsupported syntax '${t}': ${source}`);
      }
    }
    return items;
  };
  const items = sequence();
  if (at !== tokens.length) throw new Error(`unbalanced injection phrase: ${source}`);
  return items;
}

/** Every word of the items. */
export function wordsOf(items: Item[], out: Set<string> = new Set()): Set<string> {
  for (const item of items) {
    if (item.kind === "word") out.add(item.word);
    else for (const a of item.alternatives) wordsOf(a, out);
  }
  return out;
}

function render(items: Item[], word: (w: string) => string): string {
  return items
    .map((item) =>
      item.kind === "word"
        ? word(item.word)
        : `(?:${item.alternatives.map((a) => render(a, word)).join("|")})${item.quantifier}`,
    )
    .join("");
}

/**
 * The exact pattern, for the normalized text. `l` also matches `i`: normalization reads `1` as `i`,
 * and `1` and `I` are written for `l` as often (`a11`, `AII`).
 */
export function exactSource(items: Item[]): string {
  return render(items, (w) => w.replace(/l/g, "[li]"));
}

// ---------- the anchor alphabet ----------

function hex(cp: number): string {
  return `\\x{${cp.toString(16)}}`;
}

/**
 * Characters normalization drops, as the anchors skip them. Inside a word only ASCII punctuation
 * and spaces (`ig-nore`, `i g n o r e`): a multi-byte character in the class after every letter
 * would make the RE2 program several times larger. Between words also Latin-1 punctuation
 * (no-break space, soft hyphen, guillemets, middle dot), the multiplication and division signs and
 * General Punctuation (typographic spaces and quotes, dashes, bullets, ellipsis, zero-width
 * characters). A typographic character inside a word is left to the gates.
 */
const INSIDE = "[\\x00-\\x2f\\x3a-\\x40\\x5b-\\x60\\x7b-\\x7f]*";
const BETWEEN = `[\\x00-\\x2f\\x3a-\\x40\\x5b-\\x60\\x7b-\\x7f${hex(0xa0)}-${hex(0xbf)}${hex(0xd7)}${hex(0xf7)}${hex(0x2000)}-${hex(0x206f)}]*`;
/** Letters any of which may stand for any letter: Latin-1 and Latin Extended-A, the ordinals and superscript digits. */
const LATIN = `${hex(0xaa)}${hex(0xb2)}${hex(0xb3)}${hex(0xb9)}${hex(0xba)}${hex(0xc0)}-${hex(0x17f)}`;

/** Greek, Cyrillic and Armenian look-alikes: two-byte characters, cheap in a class. */
const NEAR_HOMOGLYPHS = [...HOMOGLYPHS].filter(([cp]) => cp >= 0x370 && cp <= 0x58f);
const NEAR = new Set(NEAR_HOMOGLYPHS.map(([cp]) => cp));

function formsOf(letter: string): string {
  let out = `${letter}${letter.toUpperCase()}`;
  for (const [from, to] of Object.entries(LOOK_ALIKES)) if (to === letter) out += hex(from.charCodeAt(0));
  for (const [cp, to] of NEAR_HOMOGLYPHS) if (to === letter) out += hex(cp);
  return out;
}

/** For every letter a-z, the class of its raw forms. `l` includes `i`'s (see exactSource). */
const FORMS = new Map<string, string>();
for (let c = 97; c <= 122; c++) {
  const letter = String.fromCharCode(c);
  FORMS.set(letter, `[${letter === "l" ? `${formsOf("l")}${formsOf("i")}` : formsOf(letter)}${LATIN}]`);
}

/** A string of letters, with `|` where a word ends. */
function letters(s: string): string {
  let out = "";
  for (let i = 0; i < s.length; i++) {
    const ch = s[i] ?? "";
    if (ch === "|") continue;
    out += `(?:${FORMS.get(ch) ?? ch}${s[i + 1] === "|" ? BETWEEN : INSIDE})`;
  }
  return out;
}

/** A character past U+00FF: V8 answers at once for a string it holds as Latin-1. */
export const TWO_BYTE = /[\u0100-\uffff]/;

/** Characters of other scripts and symbols, less the Greek, Cyrillic and Armenian look-alikes the anchors read. */
const OTHER = (() => {
  const near = [...NEAR].sort((a, b) => a - b);
  const ranges: string[] = [];
  let from = 0x180;
  for (const cp of near) {
    if (cp > from) ranges.push(`${hex(from)}-${hex(cp - 1)}`);
    from = cp + 1;
  }
  ranges.push(`${hex(from)}-${hex(0x1fff)}`, `${hex(0x2070)}-${hex(0x10ffff)}`);
  return ranges.join("");
})();
const INVISIBLE = `${hex(0x200b)}-${hex(0x200f)}${hex(0x2060)}-${hex(0x2064)}${hex(0xfeff)}`;

/**
 * The gates for a text holding a character past U+00FF: where such a character may hide a phrase
 * from the anchors, the text goes to the exact check.
 * - a styled letter (mathematical, fullwidth, enclosed, small capitals, superscripts, regional
 *   indicators), anywhere;
 * - a letter of another script (combining marks, Latin Extended-B and beyond, the Cyrillic and
 *   Greek letters the anchors do not read) or a symbol (CJK, emoji) against an ASCII letter or digit;
 * - an invisible character (zero-width, word joiner, byte order mark) next to an ASCII character.
 * Accented Latin and the Greek and Cyrillic look-alikes need no gate (the anchors read them), nor
 * General Punctuation between words. An RE2 set of their own, run only on such a text: most texts
 * are held by V8 as Latin-1 (TWO_BYTE answers at once) and never pay for them.
 */
export const GATES = [
  `[${hex(0x250)}-${hex(0x2af)}${hex(0x1d00)}-${hex(0x1dbf)}${hex(0x2070)}-${hex(0x209f)}${hex(0x2100)}-${hex(0x214f)}${hex(0x2460)}-${hex(0x24ff)}${hex(0xa730)}-${hex(0xa731)}${hex(0xff10)}-${hex(0xff19)}${hex(0xff21)}-${hex(0xff3a)}${hex(0xff41)}-${hex(0xff5a)}${hex(0x1d400)}-${hex(0x1d7ff)}${hex(0x1f130)}-${hex(0x1f189)}${hex(0x1f1e6)}-${hex(0x1f1ff)}]`,
  `[a-zA-Z0-9][${OTHER}]|[${OTHER}][a-zA-Z0-9]`,
  `[\\x00-\\x7f][${INVISIBLE}]|[${INVISIBLE}][\\x00-\\x7f]`,
];

/** Latin-1 punctuation inside a word (`ig\u00a0nore`, `ig·nore`), or a soft hyphen: an RE2 entry, so a Latin-1 text needs no V8 scan. */
export const LATIN1_GATE = `[a-zA-Z0-9][${hex(0xa0)}-${hex(0xbf)}${hex(0xd7)}${hex(0xf7)}]+[a-zA-Z0-9]|${hex(0xad)}`;

// ---------- anchors ----------

/** Letters kept of a cut part: enough to be rare, few enough to keep the program small. */
const CUT = 6;
const MAX_STRINGS = 20_000;

/** A string of a part, as its words, so that a cut knows where words end and which keywords it touches. */
type Words = string[];

/**
 * The strings of a sequence of items (a finite language), as word lists. With `once`, a repeated
 * group is taken once: enough for a cut at either end, which one repetition already holds.
 */
function strings(items: Item[], once = false): Words[] {
  let out: Words[] = [[]];
  for (const item of items) {
    let options: Words[];
    if (item.kind === "word") {
      options = [[item.word]];
    } else {
      const single = item.alternatives.flatMap((a) => strings(a));
      const once_ = single;
      if (item.quantifier === "" || (once && item.quantifier.startsWith("{"))) options = once_;
      else if (item.quantifier === "?") options = [[], ...once_];
      else {
        const [min = 1, max = 1] = (item.quantifier.match(/\d+/g) ?? []).map(Number);
        options = [];
        let power: Words[] = [[]];
        for (let k = 1; k <= max; k++) {
          power = power.flatMap((p) => once_.map((o) => [...p, ...o]));
          if (k >= min) options.push(...power);
        }
      }
    }
    out = out.flatMap((prefix) => options.map((o) => [...prefix, ...o]));
    if (out.length > MAX_STRINGS) throw new Error("injection phrase part has too many strings to cut");
  }
  return out;
}

function isRequired(item: Item): boolean {
  return item.kind === "word" || (item.quantifier !== "?" && !item.quantifier.startsWith("{0,"));
}

/** The strings of a part cut to `size` letters at one end, `|` marking where its words end. */
function cuts(items: Item[], end: "first" | "last", size: number): Set<string> {
  const out = new Set<string>();
  for (const words of strings(items, true)) {
    const joined = words.join("");
    const lo = end === "first" ? 0 : Math.max(0, joined.length - size);
    const hi = end === "first" ? Math.min(size, joined.length) : joined.length;
    let piece = "";
    let pos = 0;
    for (const w of words) {
      const from = Math.max(lo, pos);
      const to = Math.min(hi, pos + w.length);
      if (from < to) {
        piece += joined.slice(from, to);
        if (to === pos + w.length) piece += "|";
      }
      pos += w.length;
    }
    out.add(piece);
  }
  return out;
}

function alternation(pieces: Set<string>): string {
  return `(?:${[...pieces].map(letters).join("|")})`;
}

/**
 * Words so common in any text that their letters say nothing: a piece's rarity counts only the
 * letters of its other words. An anchor made of common words keeps RE2's automaton busy on every
 * text and lets through texts the exact check then has to normalize.
 */
const COMMON = new Set(
  "a an the you your ur u are is was were be been to of in on at as and or for from by with that this these those which who what it its my me us we our no not now all any only new real true free more never do does did have has had will can so".split(
    " ",
  ),
);

/** The rarity of the rarest-looking text the anchor accepts: the fewest letters outside common words in any piece. */
function fewest(pieces: Set<string>): number {
  let least = Number.POSITIVE_INFINITY;
  for (const piece of pieces) {
    const words = piece.split("|");
    // A cut's first and last words may be pieces of longer words: only whole common words count as common.
    const rare = words.reduce(
      (sum, w, i) => sum + (COMMON.has(w) && i > 0 && i < words.length - 1 ? 0 : w.length),
      0,
    );
    const common = words.every((w) => w === "" || COMMON.has(w));
    least = Math.min(least, common ? 0 : rare);
  }
  return least;
}

function size(pieces: Set<string>): number {
  let total = 0;
  for (const p of pieces) total += p.length;
  return total;
}

/** Pieces with this many letters outside common words are rare enough; past it a candidate is chosen for its size. */
const RARE_ENOUGH = 6;

/** The most letters the optional items between an anchor's two parts may spell out, all alternatives together. */
const MAX_BETWEEN = 60;

/** Every letter of every alternative: the program a part costs when written out whole. */
function totalLetters(items: Item[]): number {
  let total = 0;
  for (const item of items) {
    if (item.kind === "word") total += item.word.length;
    else for (const a of item.alternatives) total += totalLetters(a);
  }
  return total;
}

/** Items written out whole, every word followed by what may separate words. */
function whole(items: Item[]): string {
  return render(items, (w) => letters(`${w}|`));
}

/**
 * The anchor of a phrase for the raw text: two required items, the earlier cut to its last letters
 * and the later to its first, with the optional items between them written out. Of the pairs
 * whose optional items are few enough, the one whose first piece is rarest (a common first piece
 * keeps RE2's automaton carrying partial matches across the spaces of ordinary text), then whose
 * second is, then the smallest. A phrase without such a pair is anchored on its last required item,
 * cut longer. With `last`, the last pair whatever its score: for a phrase whose other pairs are
 * words ordinary text puts together ("system" and "content" in any chat request's JSON).
 * Misspelled keywords are the business of `misspellingSource`.
 */
export function anchorSource(items: Item[], last = false): [string, string] {
  const required = items.map((item, i) => (isRequired(item) ? i : -1)).filter((i) => i >= 0);
  let best: { score: number; cost: number; source: [string, string] } | undefined;
  const consider = (score: number, cost: number, source: () => [string, string]) => {
    if (!best || score > best.score || (score === best.score && cost < best.cost)) {
      best = { score, cost, source: source() };
    }
  };
  for (let k = last ? required.length - 1 : 1; k < required.length; k++) {
    const before = required[k - 1] as number;
    const after = required[k] as number;
    const between = items.slice(before + 1, after);
    if (totalLetters(between) > MAX_BETWEEN) continue;
    const head = cuts([items[before] as Item], "last", CUT);
    const tail = cuts([items[after] as Item], "first", CUT);
    const score = 2 * Math.min(fewest(head), RARE_ENOUGH) + Math.min(fewest(tail), RARE_ENOUGH);
    consider(score, size(head) + size(tail) + totalLetters(between), () => [
      `${alternation(head)}${whole(between)}`,
      alternation(tail),
    ]);
  }
  if (!best) {
    const final = required[required.length - 1];
    if (final === undefined) throw new Error("injection phrase has no required part");
    return ["", alternation(cuts([items[final] as Item], "first", 2 * CUT))];
  }
  return best.source;
}

/**
 * The anchors of all phrases as RE2 sources, those with the same second part joined into one entry
 * (`(?:first parts)second part`): one copy of each second part keeps the automaton's states small.
 */
export function anchorSources(phrases: { items: Item[]; last?: boolean }[]): string[] {
  const byTail = new Map<string, Set<string>>();
  for (const { items, last } of phrases) {
    const [head, tail] = anchorSource(items, last);
    const heads = byTail.get(tail) ?? new Set<string>();
    heads.add(head);
    byTail.set(tail, heads);
  }
  return [...byTail].map(([tail, heads]) => (heads.has("") ? tail : `(?:${[...heads].join("|")})${tail}`));
}

/**
 * Misspellings of keywords, each a word given as the letters allowed at each position (one letter,
 * or several where a slip may put any other letter).
 */
export type Misspelling = string[];

/**
 * The slips normalization corrects (injection-text.ts) for one keyword: adjacent letters swapped, a
 * letter doubled, a letter dropped (six letters or more), each a word that is neither the keyword
 * nor in `taken` (words the phrases use, English words). A replaced letter (`instrictions`) is not
 * among them: the 25 forms of every position made the prefilter's program half as large again,
 * and its automaton slower on every text.
 */
export function misspellingsOf(keyword: string, taken: ReadonlySet<string>): Misspelling[] {
  const out: Misspelling[] = [];
  const seen = new Set<string>();
  const add = (word: string) => {
    if (word !== keyword && !taken.has(word) && !seen.has(word)) {
      seen.add(word);
      out.push([...word]);
    }
  };
  for (let i = 0; i < keyword.length; i++) {
    const head = keyword.slice(0, i);
    const ch = keyword[i] ?? "";
    const tail = keyword.slice(i + 1);
    if (i + 1 < keyword.length) add(head + (keyword[i + 1] ?? "") + ch + keyword.slice(i + 2));
    add(head + ch + ch + tail);
    if (keyword.length >= 6) add(head + tail);
  }
  return out;
}

/** Every word a misspelling stands for. */
export function expand(m: Misspelling): string[] {
  let words = [""];
  for (const letters of m) words = words.flatMap((w) => [...letters].map((l) => w + l));
  return words;
}

/**
 * One prefilter entry for all misspellings, as whole words of the raw text: a text holding one goes
 * to the exact check whatever the anchors say. Plain letters in either case or as a look-alike
 * digit: a keyword both misspelled and spaced out is not looked for.
 */
export function misspellingSource(misspellings: Misspelling[]): string {
  const forms = (letters: string) => {
    let out = "";
    for (const ch of letters) {
      out += `${ch}${ch.toUpperCase()}`;
      for (const [from, to] of Object.entries(LOOK_ALIKES)) if (to === ch) out += hex(from.charCodeAt(0));
    }
    return `[${out}]`;
  };
  const words = misspellings.map((m) => m.map(forms).join(""));
  return `(?:^|[^a-zA-Z0-9$@])(?:${words.join("|")})(?:[^a-zA-Z0-9$@]|$)`;
}
