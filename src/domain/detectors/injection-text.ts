/**
 * The text side of the prompt-injection detector (regex-prompt-injection.ts): how a character is
 * read (look-alike digits and signs, Cyrillic and Greek homoglyphs, small capitals, accents and
 * styled letters), the normalized copy the phrases are matched on, the correction of misspelled
 * keywords in it, and reading the words around a match in the original text.
 */

/** Digits and signs written in place of letters (1gn0re, in$tructions). `1` also stands for `l`: the phrases accept it there. */
export const LOOK_ALIKES: Record<string, string> = {
  "0": "o",
  "1": "i",
  "3": "e",
  "4": "a",
  "5": "s",
  "7": "t",
  "@": "a",
  $: "s",
};

/**
 * Letters of other scripts that look like Latin ones and that Unicode does not decompose to them:
 * Cyrillic, Greek and Armenian look-alikes, Latin small capitals, dotless i, long s and regional
 * indicators. Only letters whose shape is close enough that a reader takes the word for English.
 */
const HOMOGLYPH_PAIRS: [string, string][] = [
  // Cyrillic
  ["а", "a"],
  ["е", "e"],
  ["о", "o"],
  ["р", "p"],
  ["с", "c"],
  ["у", "y"],
  ["х", "x"],
  ["і", "i"],
  ["ј", "j"],
  ["ѕ", "s"],
  ["ԁ", "d"],
  ["һ", "h"],
  ["ӏ", "l"],
  ["ԛ", "q"],
  ["ԝ", "w"],
  ["к", "k"],
  ["ү", "y"],
  ["А", "a"],
  ["В", "b"],
  ["Е", "e"],
  ["К", "k"],
  ["М", "m"],
  ["Н", "h"],
  ["О", "o"],
  ["Р", "p"],
  ["С", "c"],
  ["Т", "t"],
  ["Х", "x"],
  ["У", "y"],
  ["І", "i"],
  ["Ј", "j"],
  ["Ѕ", "s"],
  ["Ԁ", "d"],
  ["Ԛ", "q"],
  ["Ԝ", "w"],
  ["Ү", "y"],
  // Greek
  ["α", "a"],
  ["ε", "e"],
  ["ι", "i"],
  ["κ", "k"],
  ["ν", "v"],
  ["ο", "o"],
  ["ρ", "p"],
  ["τ", "t"],
  ["υ", "u"],
  ["χ", "x"],
  ["Α", "a"],
  ["Β", "b"],
  ["Ε", "e"],
  ["Ζ", "z"],
  ["Η", "h"],
  ["Ι", "i"],
  ["Κ", "k"],
  ["Μ", "m"],
  ["Ν", "n"],
  ["Ο", "o"],
  ["Ρ", "p"],
  ["Τ", "t"],
  ["Υ", "y"],
  ["Χ", "x"],
  // Armenian
  ["օ", "o"],
  ["ս", "u"],
  ["ո", "n"],
  ["հ", "h"],
  // Latin letters that do not decompose: small capitals, dotless i, alpha
  ["ᴀ", "a"],
  ["ʙ", "b"],
  ["ᴄ", "c"],
  ["ᴅ", "d"],
  ["ᴇ", "e"],
  ["ꜰ", "f"],
  ["ɢ", "g"],
  ["ʜ", "h"],
  ["ɪ", "i"],
  ["ᴊ", "j"],
  ["ᴋ", "k"],
  ["ʟ", "l"],
  ["ᴍ", "m"],
  ["ɴ", "n"],
  ["ᴏ", "o"],
  ["ᴘ", "p"],
  ["ʀ", "r"],
  ["ꜱ", "s"],
  ["ᴛ", "t"],
  ["ᴜ", "u"],
  ["ᴠ", "v"],
  ["ᴡ", "w"],
  ["ʏ", "y"],
  ["ᴢ", "z"],
  ["ı", "i"],
  ["ɑ", "a"],
];

/** Code point → the Latin letter it is read as. */
export const HOMOGLYPHS = new Map<number, string>(
  HOMOGLYPH_PAIRS.map(([from, to]) => [from.codePointAt(0) ?? 0, to]),
);
// Regional indicator symbols 🇦..🇿 spell letters when not paired into a flag.
for (let i = 0; i < 26; i++) HOMOGLYPHS.set(0x1f1e6 + i, String.fromCharCode(97 + i));

/** ASCII code → normalized code (0 drops the character). */
const ASCII = new Uint8Array(128);
for (let c = 48; c <= 57; c++) ASCII[c] = c;
for (let c = 97; c <= 122; c++) {
  ASCII[c] = c;
  ASCII[c - 32] = c;
}
for (const [from, to] of Object.entries(LOOK_ALIKES)) ASCII[from.charCodeAt(0)] = to.charCodeAt(0);

/**
 * How a non-ASCII code point reads, as lower-case ASCII letters and digits: its NFKD decomposition
 * (accents, fullwidth, styled, circled letters), each part through the homoglyph table. Often ""
 * (CJK, marks, emoji, zero-width characters). Cached, since prose repeats its characters.
 */
const decomposed = new Map<number, string>();
function asciiOf(cp: number): string {
  let s = decomposed.get(cp);
  if (s === undefined) {
    s = "";
    for (const part of String.fromCodePoint(cp).normalize("NFKD")) {
      const c = part.charCodeAt(0);
      if (c < 128) {
        const v = ASCII[c] ?? 0;
        if (v !== 0) s += String.fromCharCode(v);
      } else {
        s += HOMOGLYPHS.get(part.codePointAt(0) ?? 0) ?? "";
      }
    }
    if (decomposed.size > 4096) decomposed.clear();
    decomposed.set(cp, s);
  }
  return s;
}

/**
 * Characters that are dropped without separating words: zero-width and other format characters,
 * combining marks, variation selectors, soft hyphen. `Ign\u200bore` is one word, `ig-nore` two.
 */
function isInvisible(cp: number): boolean {
  return (
    cp === 0xad ||
    (cp >= 0x200b && cp <= 0x200f) ||
    (cp >= 0x2060 && cp <= 0x2064) ||
    cp === 0xfeff ||
    (cp >= 0x0300 && cp <= 0x036f) ||
    (cp >= 0xfe00 && cp <= 0xfe0f) ||
    (cp >= 0xe0000 && cp <= 0xe007f)
  );
}

function isLower(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  return c >= 97 && c <= 122;
}

function isSpace(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13 || Number.isNaN(c);
}

export const BARRIER = 124; // "|": never part of a phrase

export interface Normalized {
  /** Lower-case letters and digits, with `|` at sentence ends. */
  text: string;
  /** For each character of `text`, the index of the original character it came from. */
  origin: Int32Array;
}

/** FNV-1a over character codes: a cheap first test of whether a word may be a known misspelling. */
function hash(codes: Uint16Array, from: number, to: number): number {
  let h = 0x811c9dc5;
  for (let i = from; i < to; i++) h = Math.imul(h ^ (codes[i] ?? 0), 0x01000193);
  return h >>> 0;
}

/**
 * Misspelled keyword → keyword, with the hashes of the misspellings: normalizeForInjection replaces
 * every whole word of the normalized copy found here (`instrucitons` reads as `instructions`), and
 * builds a word's string only when its hash is among them.
 */
export interface Corrections {
  readonly words: ReadonlyMap<string, string>;
  readonly hashes: ReadonlySet<number>;
}

export function corrections(words: ReadonlyMap<string, string>): Corrections {
  const hashes = new Set<number>();
  for (const word of words.keys()) {
    const codes = new Uint16Array(word.length);
    for (let i = 0; i < word.length; i++) codes[i] = word.charCodeAt(i);
    hashes.add(hash(codes, 0, word.length));
  }
  return { words, hashes };
}

const NO_CORRECTIONS: Corrections = { words: new Map(), hashes: new Set() };
/** Words shorter than this are never corrected: too many short words are one letter apart. */
const MIN_CORRECTED = 5;
const MAX_CORRECTED = 24;

// Reused between calls (the detector is synchronous); grown to the longest text seen.
let codes = new Uint16Array(4096);
let origin = new Int32Array(4096);
const utf16 = new TextDecoder("utf-16le");

/**
 * The normalized copy of `text` and its index map, in one pass: lower case, letters and digits
 * only, look-alikes read as the letters they imitate, a barrier at sentence ends, and each word
 * found in `corrections` replaced by its keyword.
 */
export function normalizeForInjection(text: string, fixes: Corrections = NO_CORRECTIONS): Normalized {
  // A character may decompose to several letters (ﬃ, ㎑): room for four each.
  if (codes.length < text.length * 4 + 32) {
    codes = new Uint16Array(text.length * 4 + 32);
    origin = new Int32Array(text.length * 4 + 32);
  }
  let n = 0;
  // Words are runs of two or more kept characters; single letters (i g n o r e) do not count.
  let run = 0;
  let words = 0;
  // Start of the current word: a word is what lies between visible dropped characters.
  let wordStart = 0;
  const correcting = fixes.hashes.size > 0;
  const endWord = () => {
    const length = n - wordStart;
    if (correcting && length >= MIN_CORRECTED && length <= MAX_CORRECTED) {
      if (fixes.hashes.has(hash(codes, wordStart, n))) {
        const keyword = fixes.words.get(String.fromCharCode(...codes.subarray(wordStart, n)));
        if (keyword !== undefined) {
          const from = origin.slice(wordStart, n);
          for (let k = 0; k < keyword.length; k++) {
            codes[wordStart + k] = keyword.charCodeAt(k);
            origin[wordStart + k] = from[Math.min(k, from.length - 1)] ?? 0;
          }
          n = wordStart + keyword.length;
          // The keyword's last character maps to the word's last, so that a span ends there.
          origin[n - 1] = from[from.length - 1] ?? 0;
        }
      }
    }
    wordStart = n;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 128) {
      const v = ASCII[c] ?? 0;
      if (v !== 0) {
        // A camelCase boundary (`ignorePrevious`) separates the words of an identifier: code, not prose.
        if (
          c >= 65 &&
          c <= 90 &&
          isLower(text, i - 1) &&
          isLower(text, i - 2) &&
          isLower(text, i + 1) &&
          isLower(text, i + 2)
        ) {
          endWord();
          codes[n] = BARRIER;
          origin[n++] = i;
          wordStart = n;
        }
        codes[n] = v;
        origin[n++] = i;
        if (++run === 2) words++;
        continue;
      }
      run = 0;
      const wordLength = n - wordStart;
      if (wordLength > 0) endWord();
      // A sentence end (". ", "! ", "? ") closes the segment; one of three or more words is a
      // sentence, and the barrier keeps phrases from joining across it. A period after a single
      // letter is an abbreviation (`A.I.`, `U.S.`), not a sentence end.
      const abbreviation = c === 46 && wordLength === 1;
      if ((c === 46 || c === 33 || c === 63) && isSpace(text.charCodeAt(i + 1)) && !abbreviation) {
        if (words >= 3) {
          codes[n] = BARRIER;
          origin[n++] = i;
          wordStart = n;
        }
        words = 0;
      }
      continue;
    }
    const at = i;
    const cp = text.codePointAt(i) ?? c;
    if (cp > 0xffff) i++;
    if (isInvisible(cp)) continue;
    const ascii = asciiOf(cp);
    if (ascii.length === 0) {
      run = 0;
      if (n > wordStart) endWord();
      continue;
    }
    for (let k = 0; k < ascii.length; k++) {
      codes[n] = ascii.charCodeAt(k);
      origin[n++] = at;
      if (++run === 2) words++;
    }
  }
  if (n > wordStart) endWord();
  return { text: utf16.decode(codes.subarray(0, n)), origin: origin.slice(0, n) };
}

/** One word of the original text read as the normalized copy reads it (`4ND` → `and`). */
export function foldWord(word: string): string {
  let out = "";
  for (const ch of word) {
    const c = ch.charCodeAt(0);
    if (c < 128) {
      const v = ASCII[c] ?? 0;
      if (v !== 0) out += String.fromCharCode(v);
    } else if (!isInvisible(ch.codePointAt(0) ?? 0)) {
      out += asciiOf(ch.codePointAt(0) ?? 0);
    }
  }
  return out;
}

/** What follows a match in the original text: the end, a punctuation mark, or a word. */
export type Next =
  | { kind: "end" }
  | { kind: "mark"; mark: string }
  | { kind: "word"; word: string; end: number };

const WORD_CHAR = /[\p{L}\p{N}\p{M}$@'’\u200b-\u200d\u2060\ufeff]/u;

function isWordChar(ch: string): boolean {
  return WORD_CHAR.test(ch);
}

/** The first thing after `index`, spaces skipped: the end of the text, a mark, or a word (folded). */
export function nextAfter(text: string, index: number): Next {
  let i = index;
  while (i < text.length && isSpace(text.charCodeAt(i)) && text.charCodeAt(i) !== 10) i++;
  if (i >= text.length) return { kind: "end" };
  const cp = text.codePointAt(i) ?? 0;
  const ch = String.fromCodePoint(cp);
  if (!isWordChar(ch) || ch === "'" || ch === "’") return { kind: "mark", mark: ch };
  let j = i;
  while (j < text.length) {
    const next = String.fromCodePoint(text.codePointAt(j) ?? 0);
    if (!isWordChar(next)) break;
    j += next.length;
  }
  return { kind: "word", word: foldWord(text.slice(i, j)), end: j };
}

/** The words after `index` (folded), at most `count`, stopping at any mark but an apostrophe. */
export function wordsAfter(text: string, index: number, count: number): string[] {
  const out: string[] = [];
  let at = index;
  while (out.length < count) {
    const next = nextAfter(text, at);
    if (next.kind !== "word") break;
    out.push(next.word);
    at = next.end;
  }
  return out;
}

/** The words before `index` (folded, nearest first), at most `count`, stopping at a sentence mark. */
export function wordsBefore(text: string, index: number, count: number): string[] {
  const out: string[] = [];
  let i = index;
  while (out.length < count) {
    while (i > 0 && isSpace(text.charCodeAt(i - 1))) i--;
    if (i === 0) break;
    let j = i;
    while (j > 0) {
      const c = text.charCodeAt(j - 1);
      const ch = c >= 0xdc00 && c <= 0xdfff && j > 1 ? text.slice(j - 2, j) : text.charAt(j - 1);
      if (!isWordChar(ch)) break;
      j -= ch.length;
    }
    if (j === i) break;
    out.push(foldWord(text.slice(j, i)));
    i = j;
  }
  return out;
}
