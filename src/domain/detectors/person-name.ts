import type { Span } from "../content-scan.js";
import { isHispanicPlace } from "./address-places.js";
import {
  COUNTRY_START_SET,
  ENGLISH_WORD_SET,
  FOREIGN_WORD_SET,
  GIVEN_NAME_SET,
  isCountry,
  nameKey,
  SURNAME_SET,
  WIDER_WORD_SET,
} from "./name-data.js";
import {
  DOTTED_TITLE,
  EPONYMOUS_FIRMS,
  FILLER,
  GIVEN,
  INSTITUTION,
  NOT_FIRST,
  SURNAME_STOP,
  TITLE,
  WORD_FLAGS,
} from "./name-lists.js";
import { afterGreeting, findCuedNames, hasAdjective, hasGreekWords, isOffice } from "./person-name-cued.js";
import { isAsciiLetter, isDigit, isWordChar, lowerBefore, normalizeSpans } from "./spans.js";
import { FIRMS_DATA } from "./word-data/firms.js";

/**
 * Person names. A name has no checksum, so this detector looks for what makes a capitalized word a
 * name (the lists are in name-lists.ts):
 * 1. an honorific before it: `Dr. Emily Carter`, `Ms. O'Neil`, `Prof. Nakamura`;
 * 2. a label or phrase that introduces a name: `my name is`, `Patient:`, `Signed,`, `Approved by`
 *    take a capitalized name of two words (or a listed given name alone), unless a word is one
 *    that fills such slots without being a name (`Customer: Premium Tier`, `Regards, The Team`);
 * 3. a greeting, sign-off or verb of contact (`Hi`, `Dear`, `Thanks,`, `ask`, `spoke with`) before a
 *    listed given name;
 * 4. a given name followed by a surname (`Michael Thompson`, `Donavon Prohaska`), read from public
 *    name statistics (name-data.ts): a given name of the SSA's lists, then a capitalized word that is
 *    a census surname or no common English word. A given name that is also a common word or a
 *    product (`Ruby`, `Summer`, `Claude`) needs a surname that is no common word (`Ruby Dietrich`,
 *    not `Summer Sale`); places, institutions and title words never follow (`Jordan River`,
 *    `Austin Texas`, `Elizabeth Line`), a further word can make the whole an institution (`George
 *    Washington University`), and a house number before it makes it a street (`131 Heidi Mill`);
 * 5. two capitalized words that are no common English words, the second a census surname or
 *    unknown, after a word that introduces a person (`with`, `to`, `for`, `by`, `met`, `told`):
 *    names from outside the lists (`with Olaf Goyette`, `to Ximena Gaytán`);
 * 6. a capitalized word that is no common word of any of the languages and no surname, before a
 *    census surname that is no common English word: a given name from outside the lists
 *    (`Alcibiade Robert`, `Uranio Messina`).
 * Surnames joined by `y`, `e` or `&`, or followed by a company word, name a firm, not a person.
 * Names in any case and in other scripts, where a cue marks them, are read by person-name-cued.ts;
 * the spans of both are joined, then firms are taken out and suffixes (`Jr.`, `PhD`) taken in.
 */
// A capitalized word, not the start of an all-capitals one (`OHG`, `SPA`).
const NAME_WORD = String.raw`\p{Lu}\p{Ll}{0,30}(?:['’]\p{Lu}?\p{Ll}{1,30}|\p{Lu}\p{Ll}{1,30})?(?:-\p{Lu}\p{Ll}{1,30})?(?![\p{L}\p{N}])`;
const WORD = new RegExp(NAME_WORD, "gu");
/** The next name part: one to three spaces, then an initial (`J.`), or a capitalized word after an optional particle (`De Masi`, `van der Berg`). */
const NEXT = new RegExp(
  String.raw`[ \t]{1,3}(?:(\p{Lu})\.?(?=[ \t])|(?:(?:[Dd][aeiu]|[Dd]el|[Dd]ella|[Dd]os|[Vv]an|[Vv]on|[Vv]an der|[Vv]an den|[Dd]e la|[Ll]e|[Ll]a|[Dd]u)[ \t])?(${NAME_WORD}))`,
  "uy",
);

const STRONG_CUE =
  /(?:\bmy name is|\bmy name's|\bname is|\bname|\bpatient|\bcustomer|\bemployee|\bcandidate|\bapplicant|\btenant|\bcontact|\battn|\battention|\bsigned|\bsigned by|\bapproved by|\bauthor|\bregards|\bsincerely|\bowner|\bassignee|\breporter)[ \t]{0,2}[:,—-]?[ \t]*\r?\n?[ \t]*$/;
const WEAK_CUE =
  /(?:\bhi|\bhello|\bhey|\bdear|\bthanks|\bthank you|\bcheers|\bbest|\bi am|\bi'm|\bthis is|\bask|\bwith|\bcc|\bcall|\bemail|\bping|\btell)[ \t]{0,2}[:,]?[ \t]*\r?\n?[ \t]*$/;

/** A given name of the lists (the hand list, then the SSA's). */
function isGiven(word: string, flags: number, key: string): boolean {
  if (flags & GIVEN || GIVEN_NAME_SET.has(key)) return true;
  // Both halves: `Jean-Pierre` is a given name, `Davis-Schulist` a double surname.
  const hyphen = word.indexOf("-");
  return (
    hyphen > 0 &&
    GIVEN_NAME_SET.has(nameKey(word.slice(0, hyphen))) &&
    GIVEN_NAME_SET.has(nameKey(word.slice(hyphen + 1)))
  );
}

/** A census surname; `Goodwin-Cummings` when both halves are. */
function isSurname(word: string, key: string): boolean {
  if (SURNAME_SET.has(key)) return true;
  const hyphen = word.indexOf("-");
  return (
    hyphen > 0 &&
    SURNAME_SET.has(nameKey(word.slice(0, hyphen))) &&
    SURNAME_SET.has(nameKey(word.slice(hyphen + 1)))
  );
}

/** A word of ordinary English, or a listed product: as a given name it needs a clear surname. */
function isOrdinary(key: string, flags: number): boolean {
  return ENGLISH_WORD_SET.has(key) || (flags & NOT_FIRST) !== 0;
}

/** A word of ordinary writing in English or another European language: no surname unless listed. */
function isAnyOrdinary(key: string, flags: number): boolean {
  return isOrdinary(key, flags) || FOREIGN_WORD_SET.has(key);
}

const IS_GIVEN = 1;
const IS_SURNAME = 2;
const IS_ORDINARY = 4;
const IS_ANY_ORDINARY = 8;
const IS_COUNTRY_START = 16;
/** The list flags (name-lists.ts) sit in the low bits of a word's reading, the bits above in the rest. */
const FLAG_BITS = 8;
const FLAG_MASK = (1 << FLAG_BITS) - 1;
const MEMO_LIMIT = 50_000;
/**
 * What the lists say of a capitalized word, remembered with its list flags in one number: a text
 * repeats its capitalized words, and each reading costs a lower-casing and up to six map or set
 * lookups, where a remembered word costs one. Cleared when it grows past the limit.
 */
const memo = new Map<string, number>();

function readWord(word: string): number {
  let info = memo.get(word);
  if (info !== undefined) return info;
  const flags = WORD_FLAGS.get(word) ?? 0;
  const key = nameKey(word);
  const bits =
    (isGiven(word, flags, key) ? IS_GIVEN : 0) |
    (isSurname(word, key) ? IS_SURNAME : 0) |
    (isOrdinary(key, flags) ? IS_ORDINARY : 0) |
    (isAnyOrdinary(key, flags) ? IS_ANY_ORDINARY : 0) |
    (COUNTRY_START_SET.has(key) ? IS_COUNTRY_START : 0);
  info = flags | (bits << FLAG_BITS);
  if (memo.size >= MEMO_LIMIT) memo.clear();
  memo.set(word, info);
  return info;
}

/** The word after a given name reads as its surname (rule 4). */
function surnameFits(p: Part, firstOrdinary: boolean): boolean {
  if (p.flags & (FILLER | SURNAME_STOP)) return false;
  const bits = p.bits;
  const ordinary = (bits & IS_ANY_ORDINARY) !== 0;
  const surname = (bits & IS_SURNAME) !== 0;
  return firstOrdinary ? surname && !ordinary : !ordinary || surname;
}

/** A house number and spaces just before `start`: the words are a street's name. */
function afterHouseNumber(text: string, start: number): boolean {
  let i = start - 1;
  while (i >= 0 && text.charCodeAt(i) === 32) i--;
  if (i === start - 1) return false;
  while (i >= 0 && isAsciiLetter(text.charCodeAt(i)) && start - i < 6) i--;
  return isDigit(text.charCodeAt(i));
}

interface Part {
  word: string;
  flags: number;
  /** What the lists say of the word (readWord, without its flags); 0 for an initial. */
  bits: number;
  end: number;
  initial: boolean;
}

/** Up to `max` name parts after `from`: initials and capitalized words. */
function partsAfter(text: string, from: number, max: number): Part[] {
  const parts: Part[] = [];
  if (!partMayFollow(text, from)) return parts;
  let at = from;
  while (parts.length < max) {
    NEXT.lastIndex = at;
    const m = NEXT.exec(text);
    if (!m) break;
    at = m.index + m[0].length;
    const word = m[2];
    const info = word === undefined ? 0 : readWord(word);
    const flags = info & FLAG_MASK;
    parts.push({ word: word ?? "", flags, bits: info >> FLAG_BITS, end: at, initial: word === undefined });
    if (flags & FILLER) break;
  }
  return parts;
}

/**
 * Whether a name part can start after `from`: spaces, then a capital or the first letter of a
 * particle (`de`, `van`, `le`, ...). Most capitalized words are followed by a lower-case word or
 * punctuation; this spares them the part pattern.
 */
function partMayFollow(text: string, from: number): boolean {
  let i = from;
  while (i < from + 3 && (text.charCodeAt(i) === 32 || text.charCodeAt(i) === 9)) i++;
  if (i === from) return false;
  const c = text.charCodeAt(i);
  if (c >= 65 && c <= 90) return true;
  if (c === 100 || c === 108 || c === 118) return true;
  return c > 0xbf && c < 0x2000;
}

/**
 * The end of a name whose first word is read: the next word must fit as a surname (`fits`); more
 * words extend it (Martin Luther King, Mónica Quintana Zamudio) while they are surnames or no
 * common words, unless one of them makes the whole an institution (George Washington University).
 * Initials may stand between.
 */
function surnameEnd(parts: Part[], fits: (p: Part) => boolean): number | null {
  let end: number | null = null;
  for (const p of parts) {
    if (p.initial) continue;
    if (end !== null && p.flags & INSTITUTION) return null;
    if (end === null ? !fits(p) : !surnameFits(p, false)) break;
    end = p.end;
  }
  return end;
}

/** The given name's own test of a surname, and the looser one after an honorific or a label. */
const anySurname = (p: Part) => (p.flags & (FILLER | SURNAME_STOP)) === 0;

/** After a label: any word but one of ordinary writing that is no census surname. */
const labelledSurname = (p: Part) =>
  (p.flags & (FILLER | SURNAME_STOP)) === 0 &&
  (p.initial || (p.bits & IS_SURNAME) !== 0 || (p.bits & IS_ANY_ORDINARY) === 0);

/** A census surname that is no common English word: `Robert`, `Sanchez`, `Lefevre`, not `Cousin`. */
const clearSurname = (p: Part) =>
  !p.initial &&
  (p.flags & (FILLER | SURNAME_STOP)) === 0 &&
  (p.bits & (IS_SURNAME | IS_ORDINARY)) === IS_SURNAME;

/** After a cue: a census surname, even one that is a word of some language (`Hi Grace Wunsch`). */
const cuedSurname = (p: Part) =>
  !p.initial && (p.flags & (FILLER | SURNAME_STOP)) === 0 && (p.bits & IS_SURNAME) !== 0;

/**
 * Surnames joined by `y`, `e` or `&` name a firm more often than people (`Cano Salgado e Hijos`,
 * `Bernal Aparicio y Ballesteros`, `Johnson & Johnson`), as do the company words after them.
 */
const FIRM_AFTER =
  /^[ ]{1,2}(?:(?:y|e|&)[ ]{1,2}\p{Lu}|(?:GmbH|AG|KG|Inc|LLC|Ltd|S\.A\.|SpA|Srl|SARL|S\.L\.|Hijos|Hermanos|Hnos|Asociados|Sons|Partners)(?![\p{L}]))/u;
const FIRM_BEFORE = /\p{L}[ ]{1,2}(?:y|e|&)[ ]{1,2}$/u;

function isFirmName(text: string, start: number, end: number): boolean {
  // Most names end before punctuation or a lower-case word and follow one: two character tests.
  const after = text.charCodeAt(end + 1);
  if (
    text.charCodeAt(end) === 32 &&
    (after === 121 || after === 101 || after === 38 || (after >= 65 && after <= 90))
  ) {
    if (FIRM_AFTER.test(text.slice(end, end + 16))) return true;
  }
  const before = text.charCodeAt(start - 2);
  return (
    (before === 121 || before === 101 || before === 38) &&
    FIRM_BEFORE.test(text.slice(Math.max(0, start - 6), start))
  );
}

type Cue = "strong" | "weak" | null;

/**
 * The last word of each cue, as `\b` splits it (`i'm` ends in `m`, `my name's` in `s`): a cue pattern
 * can match only when the word before the spaces and punctuation it allows is one of these. Most
 * words are not, and skip two patterns that would each be tried at every position of the window.
 */
const STRONG_LAST = new Set(
  "is s name patient customer employee candidate applicant tenant contact attn attention signed by author regards sincerely owner assignee reporter".split(
    " ",
  ),
);
const WEAK_LAST = new Set(
  "hi hello hey dear thanks you cheers best am m is ask with cc call email ping tell".split(" "),
);

/** For each first letter (its low five bits), the lengths of the cues' last words that start with it, as bits. */
const CUE_SHAPES = new Array<number>(32).fill(0);
for (const w of [...STRONG_LAST, ...WEAK_LAST]) {
  const slot = (w.charCodeAt(0) | 32) & 31;
  CUE_SHAPES[slot] = (CUE_SHAPES[slot] as number) | (1 << w.length);
}

function isCueTrail(c: number): boolean {
  return c === 32 || c === 9 || c === 58 || c === 44 || c === 0x2014 || c === 45 || c === 13 || c === 10;
}

/** The last run of `\w` characters before what may follow a cue (spaces, `:`, `,`, dashes, a line break). */
function lastCueWord(before: string): string {
  let end = before.length;
  while (isCueTrail(before.charCodeAt(end - 1))) end--;
  let start = end;
  while (start > 0 && isWordChar(before.charCodeAt(start - 1))) start--;
  return before.slice(start, end);
}

const CUE_WINDOW = 32;

/**
 * Whether the word before `start` cannot end a cue, read on the text as written: the usual answer
 * (a sentence start, an ordinary word) then costs no lower-cased copy of the window. Where lower-
 * casing could change what is read (a letter outside ASCII at the word's edge), it answers false.
 */
function surelyNoCue(text: string, start: number): boolean {
  const floor = Math.max(0, start - CUE_WINDOW);
  let end = start;
  while (end > floor && isCueTrail(text.charCodeAt(end - 1))) end--;
  let begin = end;
  while (begin > floor && isWordChar(text.charCodeAt(begin - 1))) begin--;
  if (begin > floor && text.charCodeAt(begin - 1) > 127) return false;
  if (begin === end) return true;
  // Most words end no cue: their first letter and length say so without a lower-cased copy.
  if (
    end - begin >= 32 ||
    ((CUE_SHAPES[(text.charCodeAt(begin) | 32) & 31] as number) & (1 << (end - begin))) === 0
  )
    return true;
  const word = text.slice(begin, end).toLowerCase();
  return !STRONG_LAST.has(word) && !WEAK_LAST.has(word);
}

function cueBefore(text: string, start: number): Cue {
  if (surelyNoCue(text, start)) return null;
  const before = lowerBefore(text, start, CUE_WINDOW);
  const last = lastCueWord(before);
  if (STRONG_LAST.has(last) && STRONG_CUE.test(before)) return "strong";
  if (WEAK_LAST.has(last) && WEAK_CUE.test(before)) return "weak";
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

function isLowerLetter(c: number): boolean {
  return c >= 97 && c <= 122;
}

/** A word that introduces a person, just before a name of words outside the lists (rule 5). */
const PERSON_LEAD =
  /(?:^|[^a-z])(?:with|to|for|by|from|and|met|meet|called|asked|ask|told|tell|thank|thanks|cc|dear|hi|hello|invited|hired|emailed|texted|visited|saw|contact|contacted|named|ping|pinged|per|according to|mit|von|für|avec|pour|con|para)[ \t]{1,2}$/;

/** How many capitalized words the last `findCapitalizedNames` read: the cued reader's measure of a text written without capitals. */
let capitalizedSeen = 0;

function findCapitalizedNames(text: string): Span[] {
  const spans: Span[] = [];
  WORD.lastIndex = 0;
  capitalizedSeen = 0;
  for (let m = WORD.exec(text); m !== null; m = WORD.exec(text)) {
    capitalizedSeen++;
    const start = m.index;
    const word = m[0];
    const wordEnd = start + word.length;
    const prev = text.charCodeAt(start - 1);
    // Inside a longer word (iPhone, macOS): not a name.
    if (prev >= 97 && prev <= 122) continue;
    const info = readWord(word);
    const flags = info & FLAG_MASK;
    let end: number | null = null;
    const dot = text.charCodeAt(wordEnd) === 46;
    if (flags & TITLE || (dot && flags & DOTTED_TITLE)) {
      const parts = partsAfter(text, dot ? wordEnd + 1 : wordEnd, 4);
      // `Mr. President`, `Herr Bürgermeister`: an office, not a name (docs/detectors.md#person-name-letters).
      if (parts[0] !== undefined && !parts[0].initial && isOffice(parts[0].word)) continue;
      end = surnameEnd(parts, anySurname);
    } else if (flags & FILLER) {
      continue;
    } else {
      const bits = info >> FLAG_BITS;
      const ordinary = (bits & IS_ORDINARY) !== 0;
      if (bits & IS_GIVEN && !afterHouseNumber(text, start)) {
        const parts = partsAfter(text, wordEnd, 3);
        // "Austin Texas", "Jordan River": the given name is part of a place.
        const next = parts[0];
        if (next && !next.initial && next.flags & SURNAME_STOP) continue;
        end = surnameEnd(parts, (p) => surnameFits(p, ordinary));
        if (end === null) {
          const cue = cueBefore(text, start);
          // After a cue, a surname may also be a word of another language (Hi Grace Wunsch).
          if (cue !== null) end = surnameEnd(parts, cuedSurname);
          // Alone, only after a cue (Hi David, Thanks, Priya); a name that is also a word, after a label.
          if (end === null && (cue === "strong" || (cue === "weak" && !ordinary))) end = wordEnd;
        }
      } else if (cueCanPrecede(text, start) && cueBefore(text, start) === "strong") {
        // After a label, a first word of ordinary writing makes a thing's name (`name: Practical
        // Bronze Keyboard`), as does a common word after it that is no surname (docs/detectors.md#person-name-world).
        if ((bits & IS_ANY_ORDINARY) === 0) end = surnameEnd(partsAfter(text, wordEnd, 3), labelledSurname);
      } else if (
        (bits & IS_ANY_ORDINARY) === 0 &&
        partMayFollow(text, wordEnd) &&
        !afterHouseNumber(text, start)
      ) {
        const parts = partsAfter(text, wordEnd, 3);
        if (isLowerLetter(text.charCodeAt(start - 2)) && PERSON_LEAD.test(lowerBefore(text, start, 16))) {
          end = surnameEnd(parts, (p) => {
            if (p.flags & (FILLER | SURNAME_STOP)) return false;
            return (p.bits & IS_ANY_ORDINARY) === 0;
          });
        }
        // Rule 6: a given name from outside the lists before a clear surname (Alcibiade Robert).
        if (end === null && (bits & IS_SURNAME) === 0 && word.length > 2)
          end = surnameEnd(parts, clearSurname);
      }
      if (
        end !== null &&
        (isFirmName(text, start, end) || (bits & IS_COUNTRY_START && isCountry(text.slice(start, end))))
      ) {
        WORD.lastIndex = end;
        continue;
      }
    }
    if (end !== null) {
      spans.push({ start, end });
      WORD.lastIndex = end;
    }
  }
  return spans;
}

/** Firms named after people (docs/detectors.md#person-name-world): listed companies and the hand list. */
const FIRM_SET = new Set([
  ...FIRMS_DATA.split("|"),
  ...EPONYMOUS_FIRMS.split(/[|\n]/)
    .map((f) => f.trim())
    .filter((f) => f !== ""),
]);
/** A company's legal form or a firm's word after a name (`Smith LLP`, `Braga LTDA`, `Dubiel Sp. k.`). */
const FIRM_SUFFIX =
  /^,?[ ]{1,2}(?:&[ ]{1,2}(?:Co|Cie|Sons|Söhne|Partners?|Associates)(?![\p{L}])|(?:LLP|LLC|L\.L\.C\.|Inc|PLC|plc|Ltd|GmbH|AG|KG|OHG|SE|SA|S\.A\.|S\.L\.|S\.C\.|S\.R\.L\.|SpA|S\.p\.A\.|Srl|SARL|NV|BV|AB|HB|KB|AS|A\/S|ApS|ANS|DA|ASA|Oy|Oyj|Kommanditbolag|Aktiebolag|Handelsbolag|Asociados|Associados|Hermanos|Hnos|Hijos|Filhos|Irmãos|Bros|Brothers|Sons|Söhne|Partners?|Associates|Group|Gruppe|Gruppen|Holding|Holdings|Corp|Corporation|Company|Co|LTDA|Ltda|Sp|a\.s|s\.r\.o|e figli|e Figli|e Hijos|e Filhos|und Partner|Combinatie|Groep|Bryggerier)(?![\p{L}]))/u;
/** Surnames listed with commas and a last `und`, `og`, `y`, ... name a firm (`Kristoffersen Ruud, Kvarme og Borge`). */
const FIRM_LIST =
  /^,[ ]\p{Lu}[\p{L}'-]+(?:[ ](?:(?:de|del|da|do|dos|van|von)[ ])?\p{Lu}[\p{L}'-]+)?[ ](?:og|och|und|y|e|et|a|en|&)[ ]\p{Lu}/u;
/** Honorific and degree suffixes after a name, taken into its span (docs/detectors.md#person-name-world). */
const NAME_SUFFIX =
  /^,?[ ]{1,2}(?:Jr\.?|Sr\.?|II|III|IV|Ph\.D\.|PhD|M\.D\.|MD|DDS|DVM|Esq\.?|CPA)(?![\p{L}\p{N}])/u;
const PHRASE_WORD = /[\p{L}'’]+/gu;
/** The first word of every listed firm: a name that starts with none of them (and follows no `&`) is no firm. */
const FIRM_FIRST = new Set([...FIRM_SET].map((f) => f.split(" ")[0] as string));

/** Whether the words from `start`, ending at `end` or up to two words later, name a listed firm. */
function isListedFirm(text: string, start: number, end: number): boolean {
  const space = text.indexOf(" ", start);
  const firstEnd = space < 0 || space > end ? end : space;
  const amp = text.charCodeAt(start - 2) === 38;
  const hyphen = text.indexOf("-", start);
  const headEnd = hyphen >= 0 && hyphen < firstEnd ? hyphen : firstEnd;
  if (!amp && !FIRM_FIRST.has(nameKey(text.slice(start, headEnd)))) return false;
  const tail = text.slice(end, end + 40);
  const more = /^(?:[ ]{1,2}&[ ]{1,2}|[ -])([\p{L}'’]+)(?:(?:[ ]{1,2}&[ ]{1,2}|[ -])([\p{L}'’]+))?/u.exec(
    tail,
  );
  const words: string[] = [];
  for (const w of text.slice(start, end).match(PHRASE_WORD) ?? []) words.push(nameKey(w));
  const head = /([\p{L}'’]+)[ ]{1,2}&[ ]{1,2}$/u.exec(text.slice(Math.max(0, start - 30), start));
  const variants = [words];
  if (head?.[1]) variants.push([nameKey(head[1]), ...words]);
  for (const v of variants) {
    if (FIRM_SET.has(v.join(" "))) return true;
    if (more?.[1] && FIRM_SET.has([...v, nameKey(more[1])].join(" "))) return true;
    if (more?.[1] && more[2] && FIRM_SET.has([...v, nameKey(more[1]), nameKey(more[2])].join(" ")))
      return true;
  }
  return false;
}

export function findPersonNames(text: string): Span[] {
  const capitalized = findCapitalizedNames(text);
  const cued = findCuedNames(text, capitalizedSeen);
  const spans = cued.length === 0 ? capitalized : normalizeSpans([...capitalized, ...cued]);
  let kept = 0;
  for (const s of spans) {
    s.start = afterGreeting(text, s.start, s.end);
    // `Xana de Rosas S.A.`: the legal form's first letter was read as an initial.
    if (
      text.charCodeAt(s.end) === 46 &&
      text.charCodeAt(s.end - 2) === 32 &&
      FIRM_SUFFIX.test(text.slice(s.end - 2, s.end + 12))
    )
      continue;
    const c = text.charCodeAt(s.end);
    if (c === 32 || c === 44) {
      const after = text.slice(s.end, s.end + 14);
      if (FIRM_SUFFIX.test(after) || (c === 44 && FIRM_LIST.test(text.slice(s.end, s.end + 60)))) continue;
      const suffix = NAME_SUFFIX.exec(after);
      if (suffix) s.end += suffix[0].length;
    }
    if (
      isListedFirm(text, s.start, s.end) ||
      isPlaceName(text, s.start, s.end) ||
      isThingName(text, valueStart(text, s.start), s.end) ||
      endsInLegalForm(text, s.end)
    )
      continue;
    spans[kept++] = s;
  }
  spans.length = kept;
  return spans;
}

/**
 * A span of three words or more that is a Spanish or Mexican place (`Santiago de Compostela`, `Palma
 * de Mallorca`), or the end of one whose first word stands just before it (`San` before `Juan de
 * los Lagos`): docs/detectors.md#person-name-places.
 */
function isPlaceName(text: string, start: number, end: number): boolean {
  // Most names are one or two words: two spaces at least before any list is asked.
  const space = text.indexOf(" ", start);
  if (space < 0 || space >= end || text.indexOf(" ", space + 1) >= end || text.indexOf(" ", space + 1) < 0)
    return false;
  const words: string[] = [];
  for (const m of text.slice(start, end).match(PHRASE_WORD) ?? []) words.push(nameKey(m));
  if (isHispanicPlace(words)) return true;
  let i = start - 1;
  if (text.charCodeAt(i) !== 32) return false;
  while (i > 0 && isNameLetter(text.charCodeAt(i - 1))) i--;
  return (
    i < start - 1 && isUpperAt(text, i) && isHispanicPlace([nameKey(text.slice(i, start - 1)), ...words])
  );
}

/**
 * Where the value holding a span starts, when one capitalized word that is no given name stands
 * between the span and a quote, `:` or `=` (`"name": "Bicicleta Licenciado de Madeira"`, the span
 * from `Licenciado`): the thing test reads the value from there. A span that starts with a given
 * name, or any other span, starts where it starts.
 */
function valueStart(text: string, start: number): number {
  const before = start - 1;
  if (text.charCodeAt(before) !== 32) return start;
  let i = before;
  while (i > 0 && isNameLetter(text.charCodeAt(i - 1))) i--;
  if (i === before || !isUpperAt(text, i)) return start;
  const opener = text.charCodeAt(i - 1);
  const opened =
    opener === 34 || opener === 39 || opener === 61 || (opener === 32 && text.charCodeAt(i - 2) === 58);
  if (!opened) return start;
  let firstEnd = start;
  while (isNameLetter(text.charCodeAt(firstEnd))) firstEnd++;
  const first = text.slice(start, firstEnd);
  if ((WORD_FLAGS.get(first) ?? 0) & (GIVEN | TITLE | DOTTED_TITLE) || GIVEN_NAME_SET.has(nameKey(first)))
    return start;
  return i;
}

/**
 * A capitalized phrase of common words without a given name first names a thing, not a person
 * (`Soft Concrete Chicken`, `Tasty Rubber Tuna` after `name:`), as does a Cyrillic or Greek one
 * with an adjective (`Маленький Кожанный Куртка`, `Εργονομικό Κατεψυγμένο Ωάρι`);
 * docs/detectors.md#person-name-world. An honorific first (`Dr. Bell`) makes it a person.
 */
function isThingName(text: string, start: number, end: number): boolean {
  const c = text.charCodeAt(start);
  if (c >= 0x370 && c <= 0x52f)
    return hasAdjective(text.slice(start, end)) || (c <= 0x3ff && hasGreekWords(text.slice(start, end)));
  if (c > 0x24f) return false;
  let firstEnd = start;
  while (firstEnd < end && isNameLetter(text.charCodeAt(firstEnd))) firstEnd++;
  const firstWord = text.slice(start, firstEnd);
  // `mrs. jane doe`, `DR. PRIYA NAIR`: an honorific in any case (docs/detectors.md#person-name-mid-line).
  const flags =
    WORD_FLAGS.get(firstWord) ??
    WORD_FLAGS.get((firstWord[0] ?? "").toUpperCase() + firstWord.slice(1).toLowerCase()) ??
    0;
  if (flags & (TITLE | DOTTED_TITLE | GIVEN)) return false;
  const firstKey = nameKey(firstWord);
  if (GIVEN_NAME_SET.has(firstKey)) return false;
  // A first word that is a common word and no name, and one more common, unlisted word make the
  // phrase a thing (`Soft Concrete Chicken`). The wider lists (name-data.ts) hold names too (their
  // subtitles say `joes`, `velde`): a phrase they judge must hold no given name, and its other words
  // count only capitalized and when no surname (`Joes Kok`, `Dhr. Ela van den Broek` stay names):
  // a first word of theirs and one more such word, or two more (`Slimmad Bomull Skjorta`).
  // On the span alone: a word of a script without spaces would run to the text's end.
  const seven = ENGLISH_WORD_SET.has(firstKey) || FOREIGN_WORD_SET.has(firstKey);
  const needed = seven || WIDER_WORD_SET.has(firstKey) ? 1 : 2;
  let common = 0;
  const phrase = text.slice(firstEnd, end);
  PHRASE_WORD.lastIndex = 0;
  for (let m = PHRASE_WORD.exec(phrase); m !== null; m = PHRASE_WORD.exec(phrase)) {
    const key = nameKey(m[0]);
    if (seven) {
      if ((ENGLISH_WORD_SET.has(key) || FOREIGN_WORD_SET.has(key)) && !GIVEN_NAME_SET.has(key)) return true;
      continue;
    }
    if (GIVEN_NAME_SET.has(key)) return false;
    if (SURNAME_SET.has(key) || !isUpperAt(m[0], 0)) continue;
    if (
      (ENGLISH_WORD_SET.has(key) || FOREIGN_WORD_SET.has(key) || WIDER_WORD_SET.has(key)) &&
      ++common === needed
    )
      return true;
  }
  return false;
}

function isUpperAt(word: string, at: number): boolean {
  const ch = word[at];
  if (ch === undefined) return false;
  return ch !== ch.toLowerCase();
}

/** Legal forms that a name's last word can be read as (`Fransson Johansson Kommanditbolag`, `Nissen Elektronik ApS`). */
const LEGAL_FORM_END =
  /(?:^|[ ])(?:Kommanditbolag|Aktiebolag|Handelsbolag|ApS|Elektronik|Gruppen|Gruppe|Groep|GmbH|Ltda|LTDA|Inc|Corp|Company|Asociados|Associados|Hermanos|Hijos|Filhos|Irmãos|Όμιλος|Ομιλος)$/;

const LEGAL_FORM_LAST = new Set(
  LEGAL_FORM_END.source
    .replace(/\)\$$/, "")
    .split("|")
    .map((f) => f.charCodeAt(f.length - 1)),
);

function endsInLegalForm(text: string, end: number): boolean {
  // Most names end in a lower-case letter after a capital: only the forms' last letters are tested further.
  if (!LEGAL_FORM_LAST.has(text.charCodeAt(end - 1))) return false;
  return LEGAL_FORM_END.test(text.slice(Math.max(0, end - 16), end));
}

/** A letter of a Latin name word, or its apostrophe. */
function isNameLetter(c: number): boolean {
  return (
    isAsciiLetter(c) || c === 39 || c === 0x2019 || (c >= 0xc0 && c <= 0x24f && c !== 0xd7 && c !== 0xf7)
  );
}
