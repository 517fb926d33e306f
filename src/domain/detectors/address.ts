import type { Span } from "../content-scan.js";
import { chainBack, chainForward, keepPostal, POSTAL_LETTER_FORMS, postalForms } from "./address-world.js";
import { ENGLISH_WORD_SET, nameKey } from "./name-data.js";
import { collect, isAsciiLetter, isDigit, lowerBefore, normalizeSpans } from "./spans.js";
import {
  AMBIGUOUS_STREET_TYPES,
  alternation,
  TYPE_FIRST_STREET_TYPES,
  UNAMBIGUOUS_STREET_TYPES,
} from "./street-types.js";
import { PLACE_QUALIFIERS_DATA } from "./word-data/place-qualifiers.js";

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
const UNAMBIGUOUS_TYPES = alternation(UNAMBIGUOUS_STREET_TYPES);
const AMBIGUOUS_TYPES = alternation(AMBIGUOUS_STREET_TYPES);
const ROMANCE_TYPES = alternation(TYPE_FIRST_STREET_TYPES);
const PARTICLES = "(?:(?:de|del|della|delle|dei|di|da|do|dos|das|du|des|la|le|les|el)[ ]{1,2}|l'|d'){0,2}";
// `D'Amore`, `O'Reilly` as well.
const CAPITALIZED = String.raw`(?:\p{Lu}['’])?\p{Lu}\p{Ll}{1,25}`;
const CANADIAN_PROVINCES = "AB|BC|MB|NB|NL|NS|NT|NU|ON|PE|QC|SK|YT";

/**
 * What stands before the number in the forms whose number comes last or whose letters come first;
 * checked by lookbehind after the digits match, and used again (anchored at the end) to find where
 * the span starts.
 */
const NUMBER_LAST_PREFIX =
  `(?:(?:${ROMANCE_TYPES})[ ]{1,2}${PARTICLES}${CAPITALIZED}(?:[ ]{1,2}${PARTICLES}${CAPITALIZED}){0,3},?` +
  String.raw`|\p{Lu}\p{Ll}{2,30}(?:straße|strasse|str\.|weg|gasse|platz|allee|ring|damm|ufer|steig|pfad|chaussee|markt|graben|stieg)` +
  // Dutch, Swedish, Danish, Norwegian and Finnish street types written as the end of the name
  // (libpostal's street-type dictionaries; word-data/SOURCES.md): `Keizersgracht 123`, `Drottninggatan 53`
  String.raw`|\p{Lu}\p{Ll}{2,30}(?:straat|gracht|laan|plein|kade|singel|dijk|dreef|plantsoen|steenweg|gatan|vägen|gränd|vej|gade|stræde|vænget|veien|vegen|katu|kuja|polku|väylä|aukio|ranta|rinne|raitti|kaari)` +
  // Polish streets after their type (`ul. Marszałkowska 10/12`)
  String.raw`|(?:ul\.|al\.|pl\.|os\.|ulica|aleja|plac|osiedle)[ ]{1,2}\p{Lu}\p{Ll}{1,30}(?:[ ]\p{Lu}\p{Ll}{1,30}){0,2}` +
  String.raw`|\p{Lu}\p{Ll}{2,30}[ ](?:Str\.|Straße|Strasse|Weg|Allee|Platz|Gasse|Ring|Damm)` +
  String.raw`|\p{Lu}\p{Ll}{1,30}(?:er|e)[ ](?:Mühle|Hof|Feld|Berg|Heide|Wiese|Garten|Grund|Hecke|Kamp|Busch|Graben|Markt|Ufer|Steig|Pfad|Tor|Brücke|Aue|Höhe|Siedlung|Winkel|Bogen|Stieg|Kuhle|Holz|Wald|Hang|Gärten|Höfe|Wiesen|Felder)` +
  String.raw`|(?:\p{Lu}[\p{Ll}.]{1,20}-){1,4}(?:Str\.|Straße|Strasse|Allee|Weg|Platz|Ring)` +
  String.raw`|(?:Am|Im|An|Auf|In|Zum|Zur|Alter|Alte|Neue|Neuer|Hinter|Unter|Vor)[ ](?:der[ ]|dem[ ]|den[ ]|St\.[ ])?\p{Lu}\p{Ll}{2,30}(?:[ ]\p{Lu}\p{Ll}{2,30})?)[ ]{1,2}`;
const PO_BOX_PREFIX = String.raw`\b(?:[Pp]\.?[ ]?[Oo]\.?|Post[ ]Office)[ ]{0,2}[Bb]ox[ ]{0,2}#?`;

/**
 * One pattern, one pass; the named group that matched says which form it is. Every alternative
 * starts with a digit (the words before a number are checked by lookbehind once the digits match),
 * so text without digits is skipped at the speed of a character-class scan, and every repetition
 * is bounded. Numbers in prose are tried at every digit, so the pattern is arranged to fail them
 * early, with no match changed: the forms that start at a word boundary share one `\b` (the postcode
 * forms read letters glued to the digit, so no position suits both kinds and their order between
 * them is free), and the forms checked by lookbehind check the words before the first digit right
 * after it, rather than after the whole number, reading it back.
 */
const ADDRESS = new RegExp(
  String.raw`\b(?:` +
    [
      // 221B Baker Street, 1600 Pennsylvania Ave NW, 20 W 34th St, Apt 4B
      String.raw`(?<street>\d{1,6}(?:-\d{1,4})?[A-Za-z]?[ ]{1,2}(?:(?:N|S|E|W|NE|NW|SE|SW|North|South|East|West)\.?[ ]{1,2})?` +
        String.raw`(?:(?:\p{Lu}[\p{Ll}'’]{1,20}(?:-\p{Lu}[\p{Ll}'’]{1,20})?|\p{Lu}\.?|\d{1,3}(?:st|nd|rd|th))[ ]{1,2}){1,4}` +
        `(?:(?<plainType>${UNAMBIGUOUS_TYPES})|(?<wordType>${AMBIGUOUS_TYPES}))\\b\\.?` +
        String.raw`(?:[ ]{1,2}(?:NE|NW|SE|SW|N|S|E|W)\b)?` +
        String.raw`(?<unit>,?[ ]{1,2}(?:Apt|Apartment|Suite|Ste|Unit|Fl|Floor|Rm|Room|#)\.?[ ]{0,2}#?[A-Za-z0-9-]{1,6})?)`,
      // 12 Rue de Rivoli
      `(?<typeFirst>\\d{1,4}(?:[ ]?(?:bis|ter))?,?[ ]{1,2}(?:${ROMANCE_TYPES})[ ]{1,2}${PARTICLES}${CAPITALIZED}(?:-(?:${CAPITALIZED}|qui|la|le|les|de|du|sur|en)){0,3}(?:[ ]{1,2}(?!(?:Apt|Suite|Appartamento|Piano)\\b)(?:[Dd][aeiu][ ]|[Dd]es[ ]|[Dd]u[ ])?${CAPITALIZED}(?:-(?:${CAPITALIZED}|qui|la|le|les|de|du|sur|en)){0,3}){0,3})`,
      // Via Roma 15, Calle Mayor 10, Hauptstraße 5, Lindenallee 23
      `(?<numberLast>\\d(?<=\\p{Lu}[\\p{Ll}.]{1,30},?[ ]{1,2}\\d)\\d{0,3}(?!\\d)(?<=${NUMBER_LAST_PREFIX}\\d{1,4})[a-zA-Z]?(?:\\/\\d{1,4}[a-zA-Z]?)?(?![\\p{L}\\p{N}]))`,
      // P.O. Box 1234, PO Box 12, Post Office Box 9
      `(?<poBox>\\d(?<=[Bb]ox[ ]{0,2}#?\\d)\\d{0,7}(?!\\d)(?<=${PO_BOX_PREFIX}\\d{1,8})\\b)`,
      // the postcodes of many countries with their places (address-world.ts), and IL 62704: a US
      // ZIP code after a state code
      postalForms(String.raw`(?<zip>\d{3}(?!\d)(?<=\b[A-Z]{2}[ ]{1,2}\d{5})(?:-\d{4})?\b)`),
    ].join("|") +
    // The postcodes whose letters are read before their first digit: each one's own lookbehind
    // reads its letters; a capital right before the digit, which all need, is tested once for all,
    // rather than by each at every digit of every number.
    String.raw`)|\d(?<=[A-Z]\d)(?:` +
    [
      // SW1A 1AA: a UK postcode (the area letters are read before the first digit)
      String.raw`(?<uk>(?<=\b[A-Z]{1,2}\d)[A-Z\d]?[ ]{1,2}\d[ABD-HJLNP-UW-Z]{2}\b)`,
      // ON K1A 0B1: a Canadian postal code after its province
      ...POSTAL_LETTER_FORMS,
      `(?<canada>(?<=\\b(?:${CANADIAN_PROVINCES})[ ]{1,2}[ABCEGHJ-NPRSTVXY]\\d)[ABCEGHJ-NPRSTV-Z][ ]?\\d[ABCEGHJ-NPRSTV-Z]\\d\\b)`,
    ].join("|") +
    ")",
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

/** State codes that are also words or common abbreviations (ID, OR, IN, ME, OK, HI, ...). */
const WORD_LIKE_STATES = new Set("ID OR IN ME OK HI OH PA DE LA MA CO AL MD".split(" "));

/** Words before a number that make it a count, a label or a model, not a house number. */
const NOT_A_HOUSE_NUMBER =
  /\b(?:section|sec|chapter|page|step|part|issue|version|item|figure|table|room|gate|flight|model|level|stage|phase|season|episode|vol|no|number|article|rule|paragraph|route|highway|pier|platform|fy|top|over|under|about|around|approximately|nearly|almost|than|sold|the|of|all|only|every|just|first|last|and|those|these|apollo|boeing|windows|iphone|android|ios)\.?[ ]{1,2}$/;
const ADDRESS_CUE =
  /(?:\bat|\bto|\baddress|\blives|\blive|\blocated|\bship|\bdeliver|\boffice|\bvisit|\bmoved|\bhq|\bfrom|[:,])[ ]{1,2}$/;
/**
 * Words of a place's name that end in a full stop: abbreviations (`St. Louis`, `Mt. Vernon`, `Ste.
 * Genevieve`, `Ft. Worth`). After any other word a full stop ends a sentence, and what follows is
 * no longer the place (`742 Evergreen Terrace, Springfield. The app`).
 */
const PLACE_ABBREVIATION = "(?:St|Ste|Sta|Sto|Mt|Mte|Ft|Pt|Pte|Pto)\\.(?!-)";
const CITY_BEFORE_WORD = `(?:${PLACE_ABBREVIATION}|\\p{Lu}(?:\\p{Ll}|\\.(?=\\p{L})){1,20})`;
const CITY_BEFORE = new RegExp(`(?:${CITY_BEFORE_WORD}[ ]){0,2}${CITY_BEFORE_WORD},?[ ]{1,2}$`, "u");
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
  // An ambiguous type (Drive, Court, Way, ...) needs a unit, a place after it, a cue before it, or
  // a street name that is no everyday word (`7368 Odie Forge`, not `3 Blind Mice`).
  if (groups.wordType !== undefined && groups.unit === undefined && !CITY_AFTER.test(after)) {
    if (!ADDRESS_CUE.test(before) && !hasNameWord(m[0])) return null;
  }
  return { start, end: extendTail(text, end) };
}

/** A capitalized word of a street's name that is no common English word: a name, not a phrase. */
function hasNameWord(street: string): boolean {
  const words = street.match(/\p{Lu}\p{Ll}+/gu) ?? [];
  // The last word is the street type.
  return words.slice(0, -1).some((w) => !ENGLISH_WORD_SET.has(nameKey(w)));
}

// A full stop inside a word (`St.-Denis`) or after an abbreviation; not one that ends a sentence.
const CITY_WORD = String.raw`(?:${PLACE_ABBREVIATION}|\p{Lu}\p{Ll}(?:[\p{L}'’-]|\.(?=[\p{L}-])){0,30})(?!\p{N})`;
// A link word continues a place's name only before a capitalized word (`Stratford upon Avon`).
const CITY_LINK = String.raw`(?:(?:upon|on|under|over|by|sur|sous|le|la|les|de|del|della|di|im|am|an|der|en)(?=[ ]\p{Lu})|(?:nell|sull|dell|d)'(?=\p{Lu}))`;
/**
 * What ends an Italian place's name (`Abano Terme`, `Cividale del Friuli`, `Francavilla al Mare`),
 * from ISTAT's list of municipalities, when written in lower case (`San Daniele del friuli`);
 * written capitalized, they are read as words of the place. Looked up in a set after the place:
 * as an alternation of 1,500 words inside the tail's pattern it cost a third of the detector.
 */
const QUALIFIERS = new Set(PLACE_QUALIFIERS_DATA.toLowerCase().split(" "));
const QUALIFIER_AFTER =
  /[ ](?:(?:a|al|del|della|dei|di|in|sul|nel)[ ]|nell'|dell'|sull'|d')?(\p{Ll}+)(?![\p{L}\p{N}])/uy;
const CITY = `${CITY_WORD}(?:[ ](?:${CITY_LINK}[ ]?)?${CITY_WORD}){0,4}`;
const POSTCODE = String.raw`(?:[A-Z]{2}[ ]{1,2}\d{5}(?:-\d{4})?|[A-Z]{1,2}\d[A-Z\d]?[ ]?\d[A-Z\d]{2}|[A-Z]\d[A-Z][ ]?\d[A-Z]\d|\d{4,5}|\([A-Z]{2}\))`;
/**
 * What may follow a street and belongs to the address: a unit, then the place, in the orders
 * people write it (`, North Ethan, CO 49682`, `, Upton Cassin PO05 9XX`, `, 75280 La Seyne-sur-Mer`).
 */
const TAIL = new RegExp(
  String.raw`(?:,?[ ]{1,2}(?:(?:Apt|Apartment|Suite|Ste|Unit|Fl|Floor|Appartamento|Piano|Piso|Zimmer)\.?[ ]{0,2}#?[A-Za-z0-9-]{1,6}|\d{1,2}[ ](?:étage|OG|Stock)|\d{1,2}º[ ]?(?:Dcha\.|Izda\.|[A-Z])|Ático|Bajo|s\/n\.))?` +
    String.raw`(?:,[ ]{1,2}(?:\d{4,5}[ ]{1,2}${CITY}|${CITY}(?:,?[ ]{1,2}${POSTCODE}(?![\p{L}\p{N}]))?))?`,
  "uy",
);

function extendTail(text: string, end: number): number {
  TAIL.lastIndex = end;
  const m = TAIL.exec(text);
  if (!m || m[0].length === 0) return end;
  // A full stop after the place ends the sentence (`, London.`); after a short word it abbreviates (`St.`).
  let tailEnd = end + m[0].length;
  QUALIFIER_AFTER.lastIndex = tailEnd;
  const qualifier = isLetter(text.charCodeAt(tailEnd - 1)) ? QUALIFIER_AFTER.exec(text) : null;
  if (qualifier !== null && QUALIFIERS.has(qualifier[1] as string)) tailEnd += qualifier[0].length;
  if (text.charCodeAt(tailEnd - 1) === 46) {
    const word = /\p{L}+\.$/u.exec(text.slice(Math.max(end, tailEnd - 8), tailEnd));
    if (word === null || word[0].length > 4) tailEnd--;
  }
  return tailEnd;
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
  const state = text.slice(at - 2, at);
  if (!US_STATES.has(state)) return null;
  const city = CITY_BEFORE.exec(text.slice(Math.max(0, at - 50), at - 2));
  if (!city) return null;
  // `Order ID 12345`, `Form OR 20000`: a code that is also a word or an abbreviation needs the comma.
  if (WORD_LIKE_STATES.has(state) && !city[0].includes(",")) return null;
  return { start: at - 2 - city[0].length, end: m.index + m[0].length };
}

function isLetter(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c > 0xbf;
}

function isUpper(c: number): boolean {
  return c >= 65 && c <= 90;
}

/**
 * A Spanish address without a house number writes `s/n` (sin número) in its place: `Calle Mariano
 * s/n.`, `Polígono Ana María Casas Reyna s/n., 80664 Puertollano`.
 */
const WITHOUT_NUMBER = new RegExp(
  `(?<![\\p{L}\\p{N}])(?:${ROMANCE_TYPES})[ ]{1,2}${PARTICLES}${CAPITALIZED}(?:[ ]{1,2}${PARTICLES}${CAPITALIZED}){0,3},?[ ]{1,2}s\\/n(?![\\p{L}\\p{N}])\\.?`,
  "gu",
);

export function findAddresses(text: string): Span[] {
  const spans: Span[] = [];
  collect(
    ADDRESS,
    text,
    (m) => {
      const groups = m.groups ?? {};
      if (groups.street !== undefined) return keepStreet(text, m, groups);
      if (groups.numberLast !== undefined) {
        const span = withPrefix(text, m, NUMBER_LAST_START, 100);
        return span && { start: span.start, end: extendTail(text, span.end) };
      }
      if (groups.typeFirst !== undefined)
        return { start: m.index, end: extendTail(text, m.index + m[0].length) };
      if (groups.poBox !== undefined) return withPrefix(text, m, PO_BOX_START, 24);
      if (groups.uk !== undefined) return withChain(text, keepUkPostcode(text, m));
      if (groups.zip !== undefined) return withChain(text, keepZip(text, m));
      if (groups.canada !== undefined) return withChain(text, withPrefix(text, m, CANADA_START, 8));
      const span = keepPostal(text, m, groups, spans);
      // The place and region after a postcode are read; the pattern goes on after them.
      if (span !== null && ADDRESS.lastIndex < span.end) ADDRESS.lastIndex = span.end;
      return span;
    },
    spans,
  );
  if (text.includes("s/n")) {
    collect(
      WITHOUT_NUMBER,
      text,
      (m) => ({ start: m.index, end: extendTail(text, m.index + m[0].length) }),
      spans,
    );
  }
  for (const s of spans) s.end = chainForward(text, s.end);
  return normalizeSpans(spans);
}

/** A postcode form with the parts of the address before it (docs/detectors.md#address-countries). */
function withChain(text: string, span: Span | null): Span | null {
  return span && { start: chainBack(text, span.start), end: span.end };
}
