import RE2 from "re2";
import type { Span } from "../content-scan.js";
import { INJECTION_PATTERNS } from "./injection-patterns.js";
import { isAsciiLetter } from "./spans.js";

/**
 * Prompt-injection phrases (injection-patterns.ts), matched on a normalized copy of the text so that
 * spacing, case, punctuation, invisible characters, accents, fullwidth or styled letters and digit
 * look-alikes cannot split a phrase: `I g n o r e  ALL prev10us\u200b instructions` reads as
 * `ignoreallpreviousinstructions`.
 *
 * Normalization is one pass over the text that keeps, for every character it emits, the index of
 * the original character it came from, so a match maps back to a span of the original text.
 * Three steps keep it precise and cheap:
 * - a prefilter: the same phrases, compiled into one RE2 set in which every letter may be written in
 *   any of its forms and followed by any non-alphanumeric characters. It runs in one linear pass
 *   over the raw text and is a superset of the normalized match, so text it rejects (almost all
 *   text) is never normalized;
 * - sentence ends survive normalization as a barrier, so "feel free to ignore. Previous
 *   instructions still apply" does not join into a phrase. Only a segment of three or more words
 *   ends a sentence, so `Ignore. All. Previous. Instructions.` still reads as one phrase;
 * - a match must start and end at word boundaries of the original (`You are now Daniel's` is not
 *   `you are now DAN`).
 */

/** Digits and signs written in place of letters (1gn0re, in$tructions). */
const LOOK_ALIKES: Record<string, string> = {
  "0": "o",
  "1": "i",
  "3": "e",
  "4": "a",
  "5": "s",
  "7": "t",
  "@": "a",
  $: "s",
};

/** ASCII code → normalized code (0 drops the character). */
const ASCII = new Uint8Array(128);
for (let c = 48; c <= 57; c++) ASCII[c] = c;
for (let c = 97; c <= 122; c++) {
  ASCII[c] = c;
  ASCII[c - 32] = c;
}
for (const [from, to] of Object.entries(LOOK_ALIKES)) ASCII[from.charCodeAt(0)] = to.charCodeAt(0);

/**
 * Blocks holding letters that decompose (NFKD) to an ASCII letter: accented Latin, modifier and
 * phonetic letters, super- and subscripts, letterlike and enclosed forms, fullwidth and
 * mathematical styles. In the prefilter any character of these blocks may stand for any letter:
 * a few whole ranges keep the RE2 program small, and a false hit only costs the exact check.
 */
const LETTER_BLOCKS: [number, number][] = [
  [0x00c0, 0x02ff],
  [0x1d00, 0x1dbf],
  [0x1e00, 0x1eff],
  [0x2070, 0x209f],
  [0x2100, 0x24ff],
  [0xff00, 0xffef],
  [0x1d400, 0x1d7ff],
  [0x1f100, 0x1f1ff],
];
const STYLED = LETTER_BLOCKS.map(([low, high]) => `${reClassChar(low)}-${reClassChar(high)}`).join("");

const BARRIER = 124; // "|": never part of a pattern

function reClassChar(cp: number): string {
  return `\\x{${cp.toString(16)}}`;
}

/** For every letter a-z, the RE2 class of the ways to write it. */
function letterClasses(): Map<string, string> {
  const classes = new Map<string, string>();
  for (let c = 97; c <= 122; c++) {
    const letter = String.fromCharCode(c);
    const alikes = Object.entries(LOOK_ALIKES)
      .filter(([, to]) => to === letter)
      .map(([from]) => reClassChar(from.charCodeAt(0)))
      .join("");
    classes.set(letter, `[${letter}${letter.toUpperCase()}${alikes}${STYLED}]`);
  }
  return classes;
}

/**
 * The prefilter form of a normalized pattern: each letter becomes "any form of it, then any run of
 * characters that normalization drops". Only the syntax injection-patterns.ts allows is handled.
 */
function spacingTolerant(source: string, classes: Map<string, string>): string {
  let out = "";
  for (let i = 0; i < source.length; i++) {
    const ch = source[i] ?? "";
    if (source.startsWith("(?:", i)) {
      out += "(?:";
      i += 2;
    } else if (ch === "{") {
      const close = source.indexOf("}", i);
      out += source.slice(i, close + 1);
      i = close;
    } else if (ch >= "a" && ch <= "z") {
      out += `(?:${classes.get(ch) ?? ch}[^a-zA-Z0-9]*)`;
    } else if (ch === "(" || ch === ")" || ch === "|" || ch === "?") {
      out += ch;
    } else {
      throw new Error(`injection pattern uses unsupported syntax '${ch}': ${source}`);
    }
  }
  return out;
}

const classes = letterClasses();
const PREFILTER = new RE2.Set(
  INJECTION_PATTERNS.map((p) => spacingTolerant(p, classes)),
  "u",
);
const PHRASES = new RegExp(INJECTION_PATTERNS.join("|"), "g");

/** Decompositions of non-ASCII code points, to ASCII letters and digits (often "", for CJK etc.). */
const decomposed = new Map<number, string>();
function asciiOf(cp: number): string {
  let s = decomposed.get(cp);
  if (s === undefined) {
    s = String.fromCodePoint(cp)
      .normalize("NFKD")
      .replace(/[^A-Za-z0-9]/g, "")
      .toLowerCase();
    if (decomposed.size > 4096) decomposed.clear();
    decomposed.set(cp, s);
  }
  return s;
}

function isSpace(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13 || Number.isNaN(c);
}

export interface Normalized {
  /** Lower-case letters and digits, with `|` at sentence ends. */
  text: string;
  /** For each character of `text`, the index of the original character it came from. */
  origin: number[];
}

/** The normalized copy of `text` and its index map, in one pass. */
export function normalizeForInjection(text: string): Normalized {
  const codes: number[] = [];
  const origin: number[] = [];
  // Words are runs of two or more kept characters; single letters (i g n o r e) do not count.
  let run = 0;
  let words = 0;
  const keep = (code: number, from: number) => {
    codes.push(code);
    origin.push(from);
    if (++run === 2) words++;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 128) {
      const v = ASCII[c] ?? 0;
      if (v !== 0) {
        keep(v, i);
        continue;
      }
      run = 0;
      // A sentence end (". ", "! ", "? ") closes the segment; one of three or more words is a
      // sentence, and the barrier keeps phrases from joining across it.
      if ((c === 46 || c === 33 || c === 63) && isSpace(text.charCodeAt(i + 1))) {
        if (words >= 3) {
          codes.push(BARRIER);
          origin.push(i);
        }
        words = 0;
      }
      continue;
    }
    const cp = text.codePointAt(i) ?? c;
    const ascii = asciiOf(cp);
    if (ascii.length === 0) run = 0;
    // Through the same table as ASCII text, so a circled ① is a look-alike for i as 1 is.
    for (let k = 0; k < ascii.length; k++) keep(ASCII[ascii.charCodeAt(k)] ?? 0, i);
    if (cp > 0xffff) i++;
  }
  let normalized = "";
  for (let at = 0; at < codes.length; at += 4096) {
    normalized += String.fromCharCode(...codes.slice(at, at + 4096));
  }
  return { text: normalized, origin };
}

/** The end (exclusive) in the original text of the character at `index` (a surrogate pair is one). */
function endOf(text: string, index: number): number {
  const c = text.charCodeAt(index);
  const next = text.charCodeAt(index + 1);
  return c >= 0xd800 && c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff ? index + 2 : index + 1;
}

export function findPromptInjections(text: string): Span[] {
  if (!PREFILTER.test(text)) return [];
  const { text: normalized, origin } = normalizeForInjection(text);
  const spans: Span[] = [];
  PHRASES.lastIndex = 0;
  for (let m = PHRASES.exec(normalized); m !== null; m = PHRASES.exec(normalized)) {
    const start = origin[m.index] ?? 0;
    const end = endOf(text, origin[m.index + m[0].length - 1] ?? start);
    // Word boundaries of the original: not "Daniel" for "dan", not "signore" for "ignore".
    if (isAsciiLetter(text.charCodeAt(start - 1)) || isAsciiLetter(text.charCodeAt(end))) {
      PHRASES.lastIndex = m.index + 1;
      continue;
    }
    const last = spans[spans.length - 1];
    if (last && start <= last.end) last.end = Math.max(last.end, end);
    else spans.push({ start, end });
  }
  return spans;
}
