import type { Span } from "../content-scan.js";
import { collect, isAsciiLetter, isDigit, lowerBefore, normalizeSpans, whole } from "./spans.js";

/**
 * Postal addresses, in the forms that carry their own evidence:
 * 1. house number, street name and a street type from a list (`221B Baker Street`, `1600
 *    Pennsylvania Ave NW`, `20 W 34th St`, `45-17 Queens Blvd`), with a unit if one follows;
 * 2. the type-first forms of Romance languages (`Via Roma 15`, `Calle Mayor 10`, `12 Rue de
 *    Rivoli`) and German compounds (`Hauptstraße 5`, `Lindenallee 23`);
 * 3. PO boxes (`P.O. Box 1234`);
 * 4. postcodes in a form that names the place: `City, ST 12345` with a real US state code, a UK
 *    postcode whose area exists (`SW1A 1AA`), a Canadian postal code after its province (`ON K1A 0B1`).
 * Numbers are counts as often as house numbers, so the street form is refused when a label or a
 * quantity word stands before the number (`Section 230`, `Over 200`, `Top 10`, `Page 5`), when a
 * capitalized word follows the type (`5 Star Plaza Hotel`), and, for types that are also ordinary
 * words (Drive, Court, Place, Way, Square, Trail, ...), unless a comma and a place, a unit, or an
 * address cue (`at`, `to`, `address`, `:`) is beside it.
 */
const UNAMBIGUOUS_TYPES =
  "Street|St|Avenue|Ave|Av|Road|Rd|Boulevard|Blvd|Lane|Ln|Highway|Hwy|Parkway|Pkwy|Dr|Ct|Pl|Sq|Ter|Cir|Trl|Cres|Expressway|Expy|Freeway|Fwy";
const AMBIGUOUS_TYPES =
  "Drive|Court|Place|Terrace|Way|Circle|Square|Trail|Crescent|Close|Row|Alley|Plaza|Loop|Walk|Gardens|Green|Hill|Mews|Grove|Rise|View";
const ROMANCE_TYPES =
  "Rue|Avenue|Avenida|Calle|Carrer|Via|Viale|Piazza|Corso|Rua|Paseo|Boulevard|Chemin|Quai|Largo|Praça|Impasse|Allée";
const PARTICLES = "(?:(?:de|del|della|delle|dei|di|da|do|dos|das|du|des|la|le|les|el)[ ]{1,2}|l'|d'){0,2}";
const CAPITALIZED = String.raw`\p{Lu}\p{Ll}{1,25}`;
const CANADIAN_PROVINCES = "AB|BC|MB|NB|NL|NS|NT|NU|ON|PE|QC|SK|YT";

/**
 * What stands before the number in the forms whose number comes last or whose letters come first;
 * checked by lookbehind after the digits match, and used again (anchored at the end) to find where
 * the span starts.
 */
const NUMBER_LAST_PREFIX =
  `(?:(?:${ROMANCE_TYPES})[ ]{1,2}${PARTICLES}${CAPITALIZED}(?:[ ]{1,2}${CAPITALIZED}){0,2},?` +
  String.raw`|\p{Lu}\p{Ll}{2,30}(?:straße|strasse|str\.|weg|gasse|platz|allee))[ ]{1,2}`;
const PO_BOX_PREFIX = String.raw`\b(?:[Pp]\.?[ ]?[Oo]\.?|Post[ ]Office)[ ]{0,2}[Bb]ox[ ]{0,2}#?`;

/**
 * One pattern, one pass; the named group that matched says which form it is. Every alternative
 * starts with a digit (the words before a number are checked by lookbehind once the digits match),
 * so text without digits is skipped at the speed of a character-class scan, and every repetition
 * is bounded.
 */
const ADDRESS = new RegExp(
  [
    // 221B Baker Street, 1600 Pennsylvania Ave NW, 20 W 34th St, Apt 4B
    String.raw`(?<street>\b\d{1,6}(?:-\d{1,4})?[A-Za-z]?[ ]{1,2}(?:(?:N|S|E|W|NE|NW|SE|SW|North|South|East|West)\.?[ ]{1,2})?` +
      String.raw`(?:(?:\p{Lu}[\p{Ll}'’]{1,20}|\p{Lu}\.?|\d{1,3}(?:st|nd|rd|th))[ ]{1,2}){1,4}` +
      `(?:(?<plainType>${UNAMBIGUOUS_TYPES})|(?<wordType>${AMBIGUOUS_TYPES}))\\b\\.?` +
      String.raw`(?:[ ]{1,2}(?:NE|NW|SE|SW|N|S|E|W)\b)?` +
      String.raw`(?<unit>,?[ ]{1,2}(?:Apt|Apartment|Suite|Ste|Unit|Fl|Floor|Rm|Room|#)\.?[ ]{0,2}#?[A-Za-z0-9-]{1,6})?)`,
    // 12 Rue de Rivoli
    `\\b\\d{1,4}(?:[ ]?(?:bis|ter))?,?[ ]{1,2}(?:${ROMANCE_TYPES})[ ]{1,2}${PARTICLES}${CAPITALIZED}`,
    // Via Roma 15, Calle Mayor 10, Hauptstraße 5, Lindenallee 23
    `(?<numberLast>\\b\\d{1,4}(?!\\d)(?<=\\p{Lu}[\\p{Ll}.]{1,30},?[ ]{1,2}\\d{1,4})(?<=${NUMBER_LAST_PREFIX}\\d{1,4})[a-zA-Z]?(?![\\p{L}\\p{N}]))`,
    // P.O. Box 1234, PO Box 12, Post Office Box 9
    `(?<poBox>\\b\\d{1,8}(?!\\d)(?<=[Bb]ox[ ]{0,2}#?\\d{1,8})(?<=${PO_BOX_PREFIX}\\d{1,8})\\b)`,
    // SW1A 1AA: a UK postcode (the area letters are read before the first digit)
    String.raw`(?<uk>\d(?<=\b[A-Z]{1,2}\d)[A-Z\d]?[ ]{1,2}\d[ABD-HJLNP-UW-Z]{2}\b)`,
    // IL 62704: a US ZIP code after a state code
    String.raw`(?<zip>\b\d{5}(?!\d)(?<=\b[A-Z]{2}[ ]{1,2}\d{5})(?:-\d{4})?\b)`,
    // ON K1A 0B1: a Canadian postal code after its province
    `(?<canada>\\d(?<=\\b(?:${CANADIAN_PROVINCES})[ ]{1,2}[ABCEGHJ-NPRSTVXY]\\d)[ABCEGHJ-NPRSTV-Z][ ]?\\d[ABCEGHJ-NPRSTV-Z]\\d\\b)`,
  ].join("|"),
  "gu",
);
const NUMBER_LAST_START = new RegExp(`${NUMBER_LAST_PREFIX}$`, "u");
const PO_BOX_START = new RegExp(`${PO_BOX_PREFIX}$`);
const CANADA_START = new RegExp(`\\b(?:${CANADIAN_PROVINCES})[ ]{1,2}[A-Z]$`);

const UK_AREAS = new Set(
  (
    "AB AL B BA BB BD BH BL BN BR BS BT CA CB CF CH CM CO CR CT CV CW DA DD DE DG DH DL DN DT DY E EC EH EN EX " +
    "FK FY G GL GU GY HA HD HG HP HR HS HU HX IG IM IP IV JE KA KT KW KY L LA LD LE LL LN LS LU M ME MK ML N NE " +
    "NG NN NP NR NW OL OX PA PE PH PL PO PR RG RH RM S SA SE SG SK SL SM SN SO SP SR SS ST SW SY TA TD TF TN TQ " +
    "TR TS TW UB W WA WC WD WF WN WR WS WV YO ZE"
  ).split(" "),
);
const US_STATES = new Set(
  (
    "AL AK AZ AR CA CO CT DE DC FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY NC ND " +
    "OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY PR"
  ).split(" "),
);

/** Words before a number that make it a count, a label or a model, not a house number. */
const NOT_A_HOUSE_NUMBER =
  /\b(?:section|sec|chapter|page|step|part|issue|version|item|figure|table|room|gate|flight|model|level|stage|phase|season|episode|vol|no|number|article|rule|paragraph|route|highway|pier|platform|fy|top|over|under|about|around|approximately|nearly|almost|than|sold|the|of|all|only|every|just|first|last|and|those|these|apollo|boeing|windows|iphone|android|ios)\.?[ ]{1,2}$/;
const ADDRESS_CUE =
  /(?:\bat|\bto|\baddress|\blives|\blive|\blocated|\bship|\bdeliver|\boffice|\bvisit|\bmoved|\bhq|\bfrom|[:,])[ ]{1,2}$/;
const CITY_BEFORE = /(?:\p{Lu}[\p{Ll}.]{1,20}[ ]){0,2}\p{Lu}[\p{Ll}.]{1,20},?[ ]{1,2}$/u;
const CITY_AFTER = /^,[ ]{1,2}\p{Lu}/u;
const CAPITAL_AFTER = /^[ ]{1,2}\p{Lu}\p{Ll}/u;

function keepStreet(
  text: string,
  m: RegExpExecArray,
  groups: Record<string, string | undefined>,
): Span | null {
  const start = m.index;
  const end = start + m[0].length;
  const prev = text.charCodeAt(start - 1);
  if (isAsciiLetter(prev) || isDigit(prev) || prev === 46 || prev === 45) return null;
  const before = lowerBefore(text, start, 24);
  if (NOT_A_HOUSE_NUMBER.test(before)) return null;
  const after = text.slice(end, end + 4);
  if (CAPITAL_AFTER.test(after)) return null;
  // An ambiguous type (Drive, Court, Way, ...) needs a unit, a place after it or a cue before it.
  if (groups.wordType !== undefined && groups.unit === undefined && !CITY_AFTER.test(after)) {
    if (!ADDRESS_CUE.test(before)) return null;
  }
  return { start, end };
}

/** The span of a form whose words come before its first digit: found by `prefix`, anchored at the end. */
function withPrefix(text: string, m: RegExpExecArray, prefix: RegExp, reach: number): Span | null {
  const before = prefix.exec(text.slice(Math.max(0, m.index - reach), m.index));
  if (!before) return null;
  return { start: m.index - before[0].length, end: m.index + m[0].length };
}

function keepUkPostcode(text: string, m: RegExpExecArray): Span | null {
  let start = m.index;
  while (start > 0 && m.index - start < 2 && isUpper(text.charCodeAt(start - 1))) start--;
  return UK_AREAS.has(text.slice(start, m.index)) ? { start, end: m.index + m[0].length } : null;
}

/** A state code and five digits need the city before them: "ID 12345" alone is an identifier. */
function keepZip(text: string, m: RegExpExecArray): Span | null {
  let at = m.index;
  while (at > 0 && text.charCodeAt(at - 1) === 32) at--;
  if (!US_STATES.has(text.slice(at - 2, at))) return null;
  const city = CITY_BEFORE.exec(text.slice(Math.max(0, at - 50), at - 2));
  if (!city) return null;
  return { start: at - 2 - city[0].length, end: m.index + m[0].length };
}

function isUpper(c: number): boolean {
  return c >= 65 && c <= 90;
}

export function findAddresses(text: string): Span[] {
  const spans = collect(ADDRESS, text, (m) => {
    const groups = m.groups ?? {};
    if (groups.street !== undefined) return keepStreet(text, m, groups);
    if (groups.numberLast !== undefined) return withPrefix(text, m, NUMBER_LAST_START, 100);
    if (groups.poBox !== undefined) return withPrefix(text, m, PO_BOX_START, 24);
    if (groups.uk !== undefined) return keepUkPostcode(text, m);
    if (groups.zip !== undefined) return keepZip(text, m);
    if (groups.canada !== undefined) return withPrefix(text, m, CANADA_START, 8);
    return whole(m);
  });
  return normalizeSpans(spans);
}
