import RE2 from "re2";
import type { Span } from "../content-scan.js";
import {
  anchorSources,
  exactSource,
  expand,
  GATES,
  type Item,
  LATIN1_GATE,
  misspellingSource,
  misspellingsOf,
  parse,
  TWO_BYTE,
  wordsOf,
} from "./injection-compile.js";
import { ENCODED_TRIGGERS, encodedPayloads, hasBase64Run, mayHoldRot13, rot13 } from "./injection-encoded.js";
import { FAMILY_ANCHORS, FAMILY_RULES, QUALIFIERS } from "./injection-families.js";
import {
  type Check,
  FUZZY_KEYWORDS,
  NOT_MISSPELLINGS,
  PHRASES,
  type Phrase,
  TEMPLATE_TOKENS,
} from "./injection-patterns.js";
import {
  BARRIER,
  type Corrections,
  corrections as correctionsOf,
  foldWord,
  type Normalized,
  nextAfter,
  normalizeForInjection as normalize,
  wordsAfter,
  wordsBefore,
} from "./injection-text.js";
import { isAsciiLetter, normalizeSpans } from "./spans.js";

/**
 * Prompt-injection phrases (injection-patterns.ts), matched on a normalized copy of the text so that
 * spacing, case, punctuation, invisible characters, accents, fullwidth or styled letters, Cyrillic
 * and Greek look-alikes, digit look-alikes and misspelled keywords cannot hide a phrase:
 * `I g n o r e  ALL prev10us\u200b instrucitons` reads as `ignoreallpreviousinstructions`.
 *
 * Normalizing costs several times what the other detectors spend on a text, so it happens only when
 * a prefilter says it may find something. The prefilter is one RE2 pass over the raw text that is a
 * superset of what normalization can find: the anchor of every phrase (injection-compile.ts), every
 * misspelling normalization corrects, the forged chat-template tokens, and gates for the characters
 * the anchors do not read (Latin-1 punctuation inside a word; and, in the variant of the set for
 * strings V8 does not hold as Latin-1, styled letters, other scripts or symbols against an ASCII
 * letter, invisible characters). A text none of these match (almost every text) is done. Otherwise
 * the text is normalized and one more RE2 set, of the exact phrases, runs on the normalized copy;
 * only the phrases it names are matched one by one, for their positions and their checks:
 * - sentence ends (not an abbreviation's period), camelCase boundaries and code braces keep words
 *   from joining into a phrase ("feel free to ignore. Previous instructions still apply",
 *   `if (ignorePrevious) { rules = [] }`);
 * - a match must start and end at word boundaries of the original (`You are now Daniel's` is not
 *   `you are now DAN`);
 * - the phrase's checks read the original words around it (injection-patterns.ts).
 * Normalization keeps, for every character it emits, the index of the original character it came
 * from, so a match maps back to a span of the original text.
 */

export type { Normalized };

const BARRIER_CHAR = String.fromCharCode(BARRIER);

const parsed: Item[][] = PHRASES.map((p) => parse(p.source));
const EXACT: RegExp[] = parsed.map((items) => new RegExp(exactSource(items), "g"));
/** The exact phrases, for the normalized text: which phrases to match one by one. */
const EXACT_SET = new RE2.Set(
  parsed.map((items) => exactSource(items)),
  "u",
);

/** Words that are not misspellings: the phrases' own words, and English words near a keyword. */
const taken = new Set<string>(NOT_MISSPELLINGS);
for (const items of parsed) wordsOf(items, taken);
const MISSPELLINGS = FUZZY_KEYWORDS.map((k) => ({ keyword: k, slips: misspellingsOf(k, taken) }));

/** Every misspelling, as the word it is read as (built on first use: several hundred words). */
let corrections: Corrections | undefined;
function correctionsMap(): Corrections {
  if (!corrections) {
    const map = new Map<string, string>();
    for (const { keyword, slips } of MISSPELLINGS) {
      for (const slip of slips) for (const word of expand(slip)) if (!map.has(word)) map.set(word, keyword);
    }
    corrections = correctionsOf(map);
  }
  return corrections;
}

const ANCHORS = anchorSources(parsed.map((items, i) => ({ items, last: PHRASES[i]?.anchorLast })));
/** The families read on the raw text (injection-families.ts): which ones a text holds, then each. */
const FAMILY_SET = new RE2.Set(
  FAMILY_RULES.map((r) => r.source),
  "u",
);
const FAMILY_RES = FAMILY_RULES.map((r) => new RE2(r.source, "gu"));

/**
 * The anchors, then the template tokens, then the misspellings and the Latin-1 gate, then the
 * shapes of an encoded payload and the anchors of the families (injection-families.ts): one pass
 * over an ordinary text whatever the family. A run of base64 is looked for beside it (`screen`).
 */
const ENTRIES = [
  ...ANCHORS,
  TEMPLATE_TOKENS.join("|"),
  misspellingSource(MISSPELLINGS.flatMap((m) => m.slips)),
  LATIN1_GATE,
  ...ENCODED_TRIGGERS,
  ...FAMILY_ANCHORS,
];
/** For a string V8 holds as Latin-1 (most texts), which no other gate concerns. */
const PREFILTER = new RE2.Set(ENTRIES, "u");
/** For any other string: the same entries and the gates (injection-compile.ts), in the same single pass. */
const PREFILTER_WIDE = new RE2.Set([...ENTRIES, ...GATES], "u");
const TEMPLATES = new RE2(TEMPLATE_TOKENS.join("|"), "g");

/** The normalized copy of `text` that phrases are matched on (misspelled keywords corrected). */
export function normalizeForInjection(text: string): Normalized {
  return normalize(text, correctionsMap());
}

// ---------- checks on the original text ----------

const NEGATIONS = new Set([
  "not",
  "never",
  "dont",
  "cant",
  "cannot",
  "wont",
  "shouldnt",
  "doesnt",
  "didnt",
  "mustnt",
  "wouldnt",
  "couldnt",
  "isnt",
  "arent",
]);
/** Words before an imperative that make it a statement about something else. */
const SUBJECTS = new Set([
  "this",
  "these",
  "those",
  "that",
  "which",
  "it",
  "they",
  "we",
  "he",
  "she",
  "who",
  "rules",
  "guidelines",
  "policies",
  "settings",
  "terms",
  "changes",
  "values",
  "versions",
  "options",
  "flags",
]);
/**
 * The model named before an imperative: the subject of a statement when a determiner comes first
 * ("make an AI answer without filters" tells of a jailbreak), but the one addressed when not
 * ("Hey AI ignore all previous instructions" is the attack itself).
 */
const MODEL_WORDS = new Set(["ai", "model", "chatbot"]);
const DETERMINERS = new Set(["a", "an", "the", "this", "that", "your", "any", "every", "some", "my", "our"]);
/** Words skipped on the way back to the subject: "these rules also override", "it will override". */
const AUXILIARIES = new Set([
  "also",
  "will",
  "would",
  "may",
  "might",
  "can",
  "could",
  "should",
  "shall",
  "must",
  "always",
  "often",
  "usually",
  "generally",
  "automatically",
  "to",
  "simply",
  "just",
]);
/** Words after an object that give it a topic ("the earlier guidance on parking"). */
const TOPICS = new Set(["on", "about", "regarding", "concerning", "re", "over"]);
/** After "for", determiners that name what an object is for ("instructions for the printer"). */
const FOR_OWNERS = new Set(["the", "my", "our", "his", "her", "their", "its"]);
/** Nouns after "for the" that say for how long, not for what. */
const DURATIONS = new Set(["rest", "remainder", "moment", "time", "duration", "next", "whole", "entire"]);
/** Nouns an object qualifies ("the old rules table", "your instructions packet"). */
const COMPOUND_NOUNS = new Set([
  "table",
  "tables",
  "packet",
  "packets",
  "page",
  "pages",
  "engine",
  "file",
  "files",
  "section",
  "panel",
  "sheet",
  "document",
  "documents",
  "doc",
  "docs",
  "book",
  "booklet",
  "manual",
  "tab",
  "column",
  "field",
  "box",
  "card",
  "binder",
  "folder",
  "link",
  "button",
  "menu",
  "window",
  "template",
  "templates",
  "editor",
  "screen",
  "widget",
  "list",
  "board",
  "poster",
  "sign",
  "label",
  "leaflet",
  "pdf",
  "video",
  "slide",
  "slides",
  "deck",
  "email",
  "thread",
  "channel",
  "repo",
  "module",
  "class",
  "parser",
  "config",
  "format",
  "library",
  "engineering",
  "writer",
  "generator",
  "injection",
  "bar",
  "field",
  "text",
  "version",
  "versions",
]);
/** Words that may follow a phrase that must end its clause. */
const CONTINUATIONS = new Set([
  "and",
  "then",
  "instead",
  "now",
  "completely",
  "entirely",
  "altogether",
  "immediately",
  "please",
  "pls",
  "plz",
  "but",
  "so",
  "or",
  "just",
  "henceforth",
  "fully",
  "totally",
  "also",
  "too",
  "you",
  "lets",
  "from",
]);
/** Words after an extraction phrase that ask for a copy. */
const COPY_TAILS = new Set([
  "verbatim",
  "word",
  "exactly",
  "precisely",
  "unchanged",
  "literally",
  "starting",
  "beginning",
  "including",
  "back",
  "here",
  "raw",
  "character",
  "letter",
  "line",
  "completely",
  "fully",
  "without",
]);
const COPY_TAIL_PAIRS = new Set([
  "in full",
  "in a",
  "as is",
  "as written",
  "as it",
  "in your",
  "into your",
  "to me",
  "to us",
]);
/** Words that make a "system override" an order. */
const DIRECTIVES = new Set([
  "ignore",
  "disregard",
  "forget",
  "disable",
  "disabled",
  "deactivate",
  "deactivated",
  "enable",
  "enabled",
  "activate",
  "activated",
  "grant",
  "granted",
  "unrestricted",
  "unlock",
  "unlocked",
  "restrictions",
  "rules",
  "instructions",
  "guidelines",
  "filters",
  "jailbreak",
  "comply",
  "obey",
  "suspended",
  "lifted",
  "revoked",
  "void",
  "bypass",
  "override",
  "developer",
  "safety",
]);
const ACRONYMS = new Set(["dan", "stan", "dude", "aim"]);

/** The words of the original text between `start` and `end`, as written. */
function originalWords(text: string, start: number, end: number): string[] {
  return text.slice(start, end).match(/[\p{L}\p{N}\p{M}$@\u200b-\u200d\u2060\ufeff]+/gu) ?? [];
}

function hasLowerCase(word: string): boolean {
  for (const ch of word) if (ch !== ch.toUpperCase()) return true;
  return false;
}

function isClauseEnd(text: string, end: number): boolean {
  const next = nextAfter(text, end);
  return next.kind !== "word" || CONTINUATIONS.has(next.word);
}

const CHECKS: Record<Check, (text: string, start: number, end: number) => boolean> = {
  imperative(text, start) {
    const words = wordsBefore(text, start, 5);
    for (let i = 0; i < words.length; i++) {
      const word = words[i] as string;
      if (NEGATIONS.has(word) || SUBJECTS.has(word)) return false;
      if (MODEL_WORDS.has(word)) return !DETERMINERS.has(words[i + 1] ?? "");
      if (!AUXILIARIES.has(word)) return true;
    }
    return true;
  },
  unqualified(text, _start, end) {
    const next = nextAfter(text, end);
    if (next.kind === "word" && next.word === "for") {
      // "the instructions for the coffee machine" names what they are for; "for the rest of
      // this chat" and "for a moment" say for how long.
      const [, owner = "", what = ""] = wordsAfter(text, end, 3);
      return !(FOR_OWNERS.has(owner) && !DURATIONS.has(what));
    }
    return next.kind !== "word" || (!TOPICS.has(next.word) && !COMPOUND_NOUNS.has(next.word));
  },
  clauseEnd: (text, _start, end) => isClauseEnd(text, end),
  extractEnd(text, _start, end) {
    if (isClauseEnd(text, end)) return true;
    const [first = "", second = ""] = wordsAfter(text, end, 2);
    return COPY_TAILS.has(first) || COPY_TAIL_PAIRS.has(`${first} ${second}`);
  },
  colon(text, _start, end) {
    const next = nextAfter(text, end);
    return next.kind === "mark" && ":-\u2013\u2014".includes(next.mark);
  },
  announcement(text, start, end) {
    const words = originalWords(text, start, end);
    if (words.length > 0 && !words.some(hasLowerCase)) return true;
    const next = nextAfter(text, end);
    if (next.kind === "end") return false;
    if (next.kind === "mark" && "])}!>".includes(next.mark)) return true;
    if (next.kind !== "mark" || !":-\u2013\u2014".includes(next.mark)) return false;
    return wordsAfter(text, text.indexOf(next.mark, end) + 1, 12).some((w) => DIRECTIVES.has(w));
  },
  notOf(text, _start, end) {
    const next = nextAfter(text, end);
    return next.kind !== "word" || next.word !== "of";
  },
  acronymUpper(text, start, end) {
    return originalWords(text, start, end).every((w) => !ACRONYMS.has(foldWord(w)) || !hasLowerCase(w));
  },
  notSuchAs(text, start) {
    return wordsBefore(text, start, 1)[0] !== "such";
  },
  titleCase(text, start, end) {
    return originalWords(text, start, end).every((w) => {
      const first = w.replace(/[^\p{L}]/gu, "").charAt(0);
      return first !== "" && first === first.toUpperCase();
    });
  },
};

// ---------- matching ----------

/** The end (exclusive) in the original text of the character at `index` (a surrogate pair is one). */
function endOf(text: string, index: number): number {
  const c = text.charCodeAt(index);
  const next = text.charCodeAt(index + 1);
  return c >= 0xd800 && c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff ? index + 2 : index + 1;
}

const CODE = /[{}=]/;

function matchPhrase(
  text: string,
  normalized: Normalized,
  phrase: Phrase,
  exact: RegExp,
  spans: Span[],
): void {
  const { text: flat, origin } = normalized;
  exact.lastIndex = 0;
  for (let m = exact.exec(flat); m !== null; m = exact.exec(flat)) {
    if (m[0].length === 0 || m[0].includes(BARRIER_CHAR)) {
      exact.lastIndex = m.index + 1;
      continue;
    }
    const start = origin[m.index] ?? 0;
    const end = endOf(text, origin[m.index + m[0].length - 1] ?? start);
    // Word boundaries of the original: not "Daniel" for "dan", not "signore" for "ignore"; and
    // no code syntax inside: `if (ignorePrevious) { rules = [] }` joins into a phrase only when
    // its braces are dropped.
    const bounded = !isAsciiLetter(text.charCodeAt(start - 1)) && !isAsciiLetter(text.charCodeAt(end));
    const code = CODE.test(text.slice(start, end));
    if (bounded && !code && (phrase.checks ?? []).every((c) => CHECKS[c](text, start, end))) {
      spans.push({ start, end });
    } else {
      exact.lastIndex = m.index + 1;
    }
  }
}

/**
 * The prefilter entries `text` matches. When RE2 runs out of memory (a text built to blow up its
 * cache), the answer is "check everything", never "nothing".
 */
function prefilter(
  set: { match(text: string | Buffer): number[] },
  text: string | Buffer,
  all: number[],
): number[] {
  try {
    return set.match(text);
  } catch {
    return all;
  }
}
/** What an RE2 failure answers: every phrase is checked. */
const ALL_PHRASES = PHRASES.map((_, i) => i);

function templateSpans(text: string, spans: Span[]): Span[] {
  TEMPLATES.lastIndex = 0;
  for (let m = TEMPLATES.exec(text); m !== null; m = TEMPLATES.exec(text)) {
    spans.push({ start: m.index, end: m.index + m[0].length });
  }
  return spans;
}

/** A match's start moved past the separator a pattern reads before its first word. */
function wordStart(text: string, start: number, end: number): number {
  let i = start;
  while (i < end && /[^\p{L}\p{N}<#[(]/u.test(text.charAt(i))) i++;
  return i;
}

/** A match's end moved back over the separator a pattern reads after its last word. */
function wordEnd(text: string, start: number, end: number): number {
  let i = end;
  while (i > start + 1 && /[^\p{L}\p{N}>\]]/u.test(text.charAt(i - 1))) i--;
  return i;
}

/** The word after `end`, spaces skipped, lower case without accents ("" when a mark comes first). */
function rawNextWord(text: string, end: number): string {
  const m = /^[\s\u00a0]*([\p{L}\p{M}]+)/u.exec(text.slice(end, end + 40));
  return m?.[1] ? m[1].toLowerCase().normalize("NFD").replace(/\p{M}/gu, "") : "";
}

/**
 * The families on the raw text (docs/detectors.md#injection-families). Given the text's UTF-8, the
 * set reads it as it is: converting a long string again costs as much as the set's pass.
 */
function familySpans(text: string, spans: Span[], utf8?: Buffer): void {
  for (const i of prefilter(FAMILY_SET, utf8 ?? text, ALL_FAMILIES)) {
    const rule = FAMILY_RULES[i];
    const re = FAMILY_RES[i];
    if (!rule || !re) continue;
    re.lastIndex = 0;
    for (let m = re.exec(text); m !== null; m = re.exec(text)) {
      const start = wordStart(text, m.index, m.index + m[0].length);
      const end = wordEnd(text, start, m.index + m[0].length);
      const qualified = rule.unqualified === true && QUALIFIERS.has(rawNextWord(text, end));
      if (!qualified && (!rule.imperative || CHECKS.imperative(text, start, end))) spans.push({ start, end });
      if (m[0].length === 0) re.lastIndex++;
    }
  }
}
const ALL_FAMILIES = FAMILY_RULES.map((_, i) => i);

/**
 * Payloads in base64, hex or ROT13 (injection-encoded.ts), each decoded text read by the detector
 * once (a payload inside a payload is not decoded again); a finding marks the whole encoded token.
 */
function encodedSpans(text: string, spans: Span[]): void {
  for (const payload of encodedPayloads(text)) {
    if (find(payload.text, true, false).length > 0) spans.push({ start: payload.start, end: payload.end });
  }
  if (mayHoldRot13(text)) spans.push(...find(rot13(text), true, false));
}

/** The exact check: normalize, find the phrases the normalized copy holds, match each; then the families and the encodings. */
function find(text: string, templates: boolean, decode = true, utf8?: Buffer): Span[] {
  const spans: Span[] = [];
  const normalized = normalizeForInjection(text);
  for (const i of prefilter(EXACT_SET, normalized.text, ALL_PHRASES)) {
    const phrase = PHRASES[i];
    const exact = EXACT[i];
    if (phrase && exact) matchPhrase(text, normalized, phrase, exact, spans);
  }
  if (templates) templateSpans(text, spans);
  familySpans(text, spans, utf8);
  if (decode) encodedSpans(text, spans);
  return normalizeSpans(spans);
}

/** The exact check without the prefilter: what the prefilter must never lose. */
export function findWithoutPrefilter(text: string): Span[] {
  return find(text, true);
}

/**
 * The prefilter: whether `text` may hold a phrase, and whether it may hold a template token. Given
 * the text's UTF-8 (`utf8`), the set reads it as it is: converting the string is a third of the pass.
 *
 * The set is asked only whether anything matches, so its search stops at the first match
 * (docs/detectors.md#injection-cost-cliff): asked for every entry, it read a long text of attacks
 * to its end, and the many automaton states that built filled and reset the cache it shares with
 * every ordinary text, which then paid to rebuild them (a short text after a long attack cost up
 * to 100 times its usual pass). Which entries matched is not needed: the exact check that follows
 * finds the phrases itself, and the template tokens are looked for on their own.
 */
function screen(text: string, utf8?: Buffer): { phrases: boolean; templates: boolean } {
  // As many UTF-8 bytes as characters: every character is ASCII, so none is two-byte, and the
  // search through the text is not needed.
  const wide = (utf8 === undefined || utf8.length !== text.length) && TWO_BYTE.test(text);
  const set = wide ? PREFILTER_WIDE : PREFILTER;
  if (!hasBase64Run(text) && !anyEntry(set, utf8 ?? text)) return NOTHING;
  TEMPLATES.lastIndex = 0;
  return { phrases: true, templates: TEMPLATES.test(text) };
}

const NOTHING = { phrases: false, templates: false };

/** Whether `text` matches any entry; when RE2 runs out of memory, "yes", never "no". */
function anyEntry(set: { test(text: string | Buffer): boolean }, text: string | Buffer): boolean {
  try {
    return set.test(text);
  } catch {
    return true;
  }
}

/** Whether the prefilter sends `text` to the exact check (for tests: ordinary prose must not go). */
export function passesPrefilter(text: string): boolean {
  const { phrases, templates } = screen(text);
  return phrases || templates;
}

export function findPromptInjections(text: string, utf8?: Buffer): Span[] {
  const { phrases, templates } = screen(text, utf8);
  if (!phrases && !templates) return [];
  return phrases ? find(text, templates, true, utf8) : templateSpans(text, []);
}
