import type { Span } from "../content-scan.js";
import {
  DOTTED_TITLE,
  FILLER,
  GIVEN,
  GIVEN_NAMES,
  INSTITUTION,
  SURNAME_STOP,
  TITLE,
  WORD_FLAGS,
} from "./name-lists.js";
import { isAsciiLetter, lowerBefore } from "./spans.js";

/**
 * Person names. A name has no checksum, so this detector looks for what makes a capitalized word a
 * name (the lists are in name-lists.ts):
 * 1. an honorific before it: `Dr. Emily Carter`, `Ms. O'Neil`, `Prof. Nakamura`;
 * 2. a label or phrase that introduces a name: `my name is`, `Patient:`, `Signed,`, `Approved by`
 *    take a capitalized name of two words (or a listed given name alone), unless a word is one
 *    that fills such slots without being a name (`Customer: Premium Tier`, `Regards, The Team`);
 * 3. a greeting, sign-off or verb of contact (`Hi`, `Dear`, `Thanks,`, `ask`, `spoke with`) before a
 *    listed given name;
 * 4. a listed given name followed by a capitalized surname (`Michael Thompson`, `Kevin O'Brien`),
 *    unless the second word is a place, institution or title word (`Jordan River`, `Austin Texas`,
 *    `Elizabeth Line`) or a further word makes the whole an institution (`George Washington
 *    University`).
 * Case matters: names written in lower case or all capitals are not found.
 */
const NAME_WORD = String.raw`\p{Lu}\p{Ll}{0,30}(?:['’]\p{Lu}?\p{Ll}{1,30}|\p{Lu}\p{Ll}{1,30})?(?:-\p{Lu}\p{Ll}{1,30})?`;
const WORD = new RegExp(NAME_WORD, "gu");
/** The next name part: one to three spaces, then an initial (`J.`) or a capitalized word. */
const NEXT = new RegExp(String.raw`[ \t]{1,3}(?:(\p{Lu})\.?(?=[ \t])|(${NAME_WORD}))`, "uy");

const STRONG_CUE =
  /(?:\bmy name is|\bmy name's|\bname is|\bname|\bpatient|\bcustomer|\bemployee|\bcandidate|\bapplicant|\btenant|\bcontact|\battn|\battention|\bsigned|\bsigned by|\bapproved by|\bauthor|\bregards|\bsincerely|\bowner|\bassignee|\breporter)[ \t]{0,2}[:,—-]?[ \t]*\r?\n?[ \t]*$/;
const WEAK_CUE =
  /(?:\bhi|\bhello|\bhey|\bdear|\bthanks|\bthank you|\bcheers|\bbest|\bi am|\bi'm|\bthis is|\bask|\bwith|\bcc|\bcall|\bemail|\bping|\btell)[ \t]{0,2}[:,]?[ \t]*\r?\n?[ \t]*$/;

function flagsOf(word: string): number {
  return WORD_FLAGS.get(word) ?? 0;
}

/** A listed given name; accents are optional in the list (José, Zoë are compared without them). */
function isGiven(word: string, flags: number): boolean {
  if (flags & GIVEN) return true;
  for (let i = 1; i < word.length; i++) {
    if (word.charCodeAt(i) > 127)
      return GIVEN_NAMES.has(word.normalize("NFD").replace(/[\u0300-\u036f]/g, ""));
  }
  return false;
}

interface Part {
  flags: number;
  end: number;
  initial: boolean;
}

/** Up to `max` name parts after `from`: initials and capitalized words. */
function partsAfter(text: string, from: number, max: number): Part[] {
  const parts: Part[] = [];
  let at = from;
  while (parts.length < max) {
    NEXT.lastIndex = at;
    const m = NEXT.exec(text);
    if (!m) break;
    at = m.index + m[0].length;
    const word = m[2];
    const flags = word === undefined ? 0 : flagsOf(word);
    parts.push({ flags, end: at, initial: word === undefined });
    if (flags & FILLER) break;
  }
  return parts;
}

/**
 * The end of a name whose first word is read: the next word is the surname unless it is a place,
 * institution or title word; more words extend it (Martin Luther King) unless one of them makes the
 * whole an institution (George Washington University). Initials may stand between.
 */
function surnameEnd(parts: Part[]): number | null {
  let end: number | null = null;
  for (const p of parts) {
    if (p.initial) continue;
    if (end !== null && p.flags & INSTITUTION) return null;
    if (p.flags & (FILLER | SURNAME_STOP)) break;
    end = p.end;
  }
  return end;
}

type Cue = "strong" | "weak" | null;

function cueBefore(text: string, start: number): Cue {
  const before = lowerBefore(text, start, 32);
  if (STRONG_CUE.test(before)) return "strong";
  if (WEAK_CUE.test(before)) return "weak";
  return null;
}

/**
 * Whether a cue can stand before `start`: after a label or sign-off (`:`, `,`, a line break) or
 * after `is`, `by`, `'s` (my name is, approved by, my name's). Most capitalized words follow a
 * sentence end or an ordinary word, and skip the cue patterns entirely.
 */
function cueCanPrecede(text: string, start: number): boolean {
  let i = start - 1;
  while (i >= 0 && (text.charCodeAt(i) === 32 || text.charCodeAt(i) === 9)) i--;
  const c = text.charCodeAt(i);
  if (c === 58 || c === 44 || c === 10 || c === 13 || c === 0x2014) return true;
  if (i === start - 1) return false;
  const a = text.charCodeAt(i - 1) | 32;
  const b = c | 32;
  if (a === 39 && b === 115) return true;
  return !isAsciiLetter(text.charCodeAt(i - 2)) && ((a === 105 && b === 115) || (a === 98 && b === 121));
}

export function findPersonNames(text: string): Span[] {
  const spans: Span[] = [];
  WORD.lastIndex = 0;
  for (let m = WORD.exec(text); m !== null; m = WORD.exec(text)) {
    const start = m.index;
    const word = m[0];
    const wordEnd = start + word.length;
    const prev = text.charCodeAt(start - 1);
    // Inside a longer word (iPhone, macOS): not a name.
    if (prev >= 97 && prev <= 122) continue;
    const flags = flagsOf(word);
    let end: number | null = null;
    const dot = text.charCodeAt(wordEnd) === 46;
    if (flags & TITLE || (dot && flags & DOTTED_TITLE)) {
      end = surnameEnd(partsAfter(text, dot ? wordEnd + 1 : wordEnd, 4));
    } else if (flags & FILLER) {
      continue;
    } else if (isGiven(word, flags)) {
      const parts = partsAfter(text, wordEnd, 3);
      // "Austin Texas", "Jordan River": the given name is part of a place.
      const next = parts[0];
      if (next && !next.initial && next.flags & SURNAME_STOP) continue;
      // With a surname it is a name; alone, only after a cue (Hi David, Thanks, Priya).
      end = surnameEnd(parts) ?? (cueBefore(text, start) !== null ? wordEnd : null);
    } else if (cueCanPrecede(text, start) && cueBefore(text, start) === "strong") {
      end = surnameEnd(partsAfter(text, wordEnd, 3));
    }
    if (end !== null) {
      spans.push({ start, end });
      WORD.lastIndex = end;
    }
  }
  return spans;
}
