import type { Span } from "../content-scan.js";
import { COUNTRY_NAMES, IN_STATES, JP_PREFECTURES, placeKey, REGION_NAMES } from "./address-places.js";
import { PLACE_QUALIFIERS_DATA } from "./word-data/place-qualifiers.js";

/**
 * The postal lines of many countries and the lines around them (docs/detectors.md#address-countries).
 *
 * A postcode in its country's shape, with the place written beside it, is the anchor: `1015 CJ
 * Amsterdam`, `00-950 Warszawa`, `110 00 Praha 1`, `01310-100`, `2000-123 Lisboa`, `C1043AAZ
 * CABA`, `CP 06600 Ciudad de México`, `NSW 2000`, `Tokyo 150-0002`, `Mumbai - 400001`, `D-10115
 * Berlin`. From the anchor the address is read backwards over the lines or comma-separated parts
 * before it, as far as the farthest one that carries a house number (the street, a unit line, a
 * block number), and forwards over a region and a country. Shapes that are also how amounts and
 * counts are written (`12040 Mehmetland`, `Auckland 1010`) are kept only when such a street part
 * stands before them.
 */

/** Every alternative starts at a digit; the letters a form needs before it are read by lookbehind. */
/**
 * The postal forms, one alternative of the address detector's one pattern (address.ts), inside its
 * group that starts at a word boundary. They share their first two digits, so a word boundary that
 * is no digit pair costs one test for all of them; after the digits each form reads the rest of its
 * shape, then the words it needs before it by lookbehind (numbers in prose have those words far
 * more often than the shape). The US ZIP form (`zip`, given by address.ts) stands among them, after
 * the forms it would otherwise take (`CP 06600`) and before the bare postcodes.
 */
export function postalForms(zip: string): string {
  return (
    // Every form goes on with a third digit and a digit, space or dash, or with a dash: two-digit
    // numbers (`14`, `2.14.3`) stop here.
    String.raw`\d\d(?=\d[\d -]|-)(?:` +
    [
      // 1015 CJ Amsterdam (Netherlands: four digits, two letters; SA, SD, SS are never issued)
      String.raw`(?<nl>\d\d[ ]?(?!SA|SD|SS|MB|GB|KB|TB|AM|PM|AD|BC|CE|KG|KM|HZ|PX|ML|MM|CM)[A-Z]{2}(?![\p{L}\p{N}]))`,
      // 00-950 Warszawa (Poland), 2000-123 Lisboa (Portugal), 01310-100 (Brazil)
      String.raw`(?<dash>(?:\d{2,3})?-\d{3}(?![\p{N}-]))`,
      // 110 00 Praha, 114 55 Stockholm (Czechia, Slovakia, Sweden)
      String.raw`(?<split>\d[ ]\d{2}(?![\p{N}]))`,
      // CP 06600 (Mexico), D-10115 (a country letter before a postcode)
      String.raw`(?<prefixed>\d{2,3}(?!\d)(?<=(?:\bC\.?[ ]?P\.?:?[ ]?|\b(?:D|A|CH|F|B|I|E|L|DK|N|S|FI|NL|SK|CZ|PL)-)\d{4,5}))`,
      // NSW 2000 (an Australian state before four digits)
      String.raw`(?<au>\d{2}(?!\d)(?<=\b(?:NSW|VIC|Vic|QLD|Qld|SA|WA|TAS|Tas|ACT|NT)[ ]{1,2}\d{4}))`,
      // Tokyo 150-0002, 〒150-0002 (Japan)
      String.raw`(?<jp>\d-\d{4}(?!\d)(?<=(?:\p{Ll}|〒)[ ]?\d{3}-\d{4}))`,
      // Mumbai - 400001, Maharashtra 400001, PIN 400001 (India)
      String.raw`(?<in>\d[ ]?\d{3}(?!\d)(?<=(?:\p{Ll}[ ]?[-–][ ]?|\p{Ll},?[ ]|PIN[ ]?(?:[Cc]ode)?[: ]{1,2})[1-9]\d{2}[ ]?\d{3}))`,
      zip,
      // 12040 Mehmetland, 75001 Paris: only after a street part (checked in code)
      String.raw`(?<bare>\d{2,3}(?=[ ]{1,2}\p{Lu}))`,
      // Auckland 1010: a place before four digits, only after a street part
      String.raw`(?<placeCode>\d{2}(?![\p{N}\p{L}])(?<=\p{Lu}[\p{L}'’.-]{1,30}[ ]\d{4}))`,
    ].join("|") +
    ")"
  );
}

// A place written after a postcode: capitalized words (or a word in capitals, as Norway writes it),
// with the link words of place names, and a district number (`Praha 1`, `Wien 3`).
const PLACE_AFTER =
  /[ ]{1,2}(?:\p{Lu}[\p{L}'’.]{1,30}(?:-\p{L}[\p{L}'’.]{0,30}){0,3})(?:[ ](?:(?:de|del|la|las|los|do|da|dos|das|di|am|an|im|in|der|sur|en|le|les|upon|on|y|e|bei|ob|nad|pod|aan|op|bij|den)[ ]){0,2}\p{Lu}[\p{L}'’.]{1,30}(?:-\p{L}[\p{L}'’.]{0,30}){0,3}){0,3}(?:[ ](?:\d{1,2}|\p{Lu})(?![\p{N}\p{L}]))?(?:[ ]\(\p{Lu}{2}\))?/uy;
// A place written before a postcode, read back from it (`Auckland 1010`, `Sydney NSW 2000`).
const PLACE_BEFORE = /(?:\p{Lu}[\p{L}'’.-]{1,30}[ ]){1,4}$/u;
const PLACE_BEFORE_COMMA = /(?:\p{Lu}[\p{L}'’.-]{1,30}[ ]){0,3}\p{Lu}[\p{L}'’.-]{1,30},?[ ]{1,2}$/u;

interface Anchor {
  start: number;
  end: number;
  /** A weak anchor is kept only when a street part stands before it. */
  weak: boolean;
}

/**
 * What ends an Italian place's name in lower case (`del friuli`, `terme`; from ISTAT's list, as in
 * address.ts), or a Spanish one (`Ojo de agua`), then a province in brackets (`(MI)`).
 */
const QUALIFIERS = new Set(PLACE_QUALIFIERS_DATA.toLowerCase().split(" "));
const PLACE_TAIL =
  /[ ](?:(?:a|al|del|della|dei|di|in|sul|nel|de|la)[ ]|nell'|dell'|sull'|d')?(\p{Ll}{3,})(?![\p{L}\p{N}])/uy;
/** A lower-case word right before a province in brackets is the end of the place (`San Otilia lido (SI)`). */
const BEFORE_PROVINCE = /[ ](?:nell'|dell'|sull'|d')?\p{Ll}{3,}(?=[ ]\(\p{Lu}{2}\))/uy;
const PROVINCE = /[ ]\(\p{Lu}{2}\)/uy;

function placeAfter(text: string, end: number): number {
  PLACE_AFTER.lastIndex = end;
  const m = PLACE_AFTER.exec(text);
  if (m === null) return -1;
  let e = end + m[0].length;
  PLACE_TAIL.lastIndex = e;
  const tail = PLACE_TAIL.exec(text);
  BEFORE_PROVINCE.lastIndex = e;
  const qualified = tail !== null && (QUALIFIERS.has(tail[1] as string) || /^[ ]de[ ]/.test(tail[0]));
  const beforeProvince = qualified ? null : BEFORE_PROVINCE.exec(text);
  if (qualified || beforeProvince !== null) {
    e += qualified ? (tail as RegExpExecArray)[0].length : (beforeProvince as RegExpExecArray)[0].length;
    PROVINCE.lastIndex = e;
    const p = PROVINCE.exec(text);
    if (p !== null) e += p[0].length;
  }
  // A full stop ends the sentence, not the place (`... 1015 CJ Amsterdam.`).
  while (text.charCodeAt(e - 1) === 46) e--;
  return e;
}

function isSeparatorBefore(text: string, at: number): boolean {
  let i = at - 1;
  while (i >= 0 && text.charCodeAt(i) === 32) i--;
  if (i < 0) return true;
  const c = text.charCodeAt(i);
  // start of a line, a comma, a quote, a colon, a dash between parts
  return c === 10 || c === 44 || c === 34 || c === 39 || c === 58 || c === 45 || c === 40 || c === 61;
}

function anchorOf(text: string, m: RegExpExecArray, g: Record<string, string | undefined>): Anchor | null {
  const start = m.index;
  const end = start + m[0].length;
  // Postcodes of the Netherlands start at 1000.
  if (g.nl !== undefined && text.charCodeAt(start) === 48) return null;
  if (g.nl !== undefined || g.split !== undefined || g.ar !== undefined) {
    // The CPA's letter stands before the digit its form starts at.
    const s = g.ar !== undefined ? start - 1 : start;
    if (!isSeparatorBefore(text, s)) return null;
    const e = placeAfter(text, end);
    return e < 0 ? null : { start: s, end: e, weak: false };
  }
  if (g.dash !== undefined) {
    const prev = text.charCodeAt(start - 1);
    if (prev === 45 || prev === 46 || prev === 47) return null;
    const e = placeAfter(text, end);
    // The Brazilian CEP stands alone on its line, or after `CEP`.
    if (m[0].length === 9) {
      const cep = /\bCEP:?[ ]?$/.test(text.slice(Math.max(0, start - 5), start));
      if (e < 0 && !cep && !isSeparatorBefore(text, start)) return null;
      return {
        start: cep ? start - (text.slice(start - 5, start).match(/CEP:?[ ]?$/)?.[0].length ?? 0) : start,
        end: Math.max(e, end),
        weak: !cep && e < 0,
      };
    }
    if (e < 0 || !isSeparatorBefore(text, start)) return null;
    return { start, end: e, weak: false };
  }
  if (g.prefixed !== undefined) {
    const lead = /(?:\bC\.?[ ]?P\.?:?[ ]?|\b[A-Z]{1,2}-)$/.exec(
      text.slice(Math.max(0, start - 6), start + 1).slice(0, -1),
    );
    const s = lead ? start - lead[0].length : start;
    const e = placeAfter(text, end);
    if (e < 0) return null;
    return { start: s, end: e, weak: false };
  }
  if (g.ie !== undefined) {
    const s = start - 1;
    // An Eircode is read beside its county (`Co. Cork`) or before `Ireland`.
    const before = text.slice(Math.max(0, s - 30), s);
    const after = text.slice(end, end + 12);
    if (
      !/\b(?:Co\.|County)[ ]\p{Lu}\p{Ll}+,?[ \n]{1,3}$|\bDublin(?:[ ]\d{1,2})?,?[ \n]{1,3}$/u.test(before) &&
      !/^,?[ \n]{1,3}(?:Ireland|Éire)\b/.test(after)
    )
      return null;
    return { start: s, end, weak: false };
  }
  if (g.au !== undefined) {
    const state = /(?:NSW|VIC|Vic|QLD|Qld|SA|WA|TAS|Tas|ACT|NT)[ ]{1,2}$/.exec(
      text.slice(Math.max(0, start - 6), start),
    );
    if (state === null) return null;
    const s = start - state[0].length;
    const place = PLACE_BEFORE_COMMA.exec(text.slice(Math.max(0, s - 60), s));
    if (place === null) return null;
    return { start: s - place[0].length, end, weak: false };
  }
  if (g.jp !== undefined) {
    if (text.charCodeAt(start - 1) === 0x3012 || text.charCodeAt(start - 2) === 0x3012)
      return { start: text.lastIndexOf("〒", start), end, weak: false };
    const word = /(\p{Lu}\p{Ll}+)(?:-(?:ken|fu|to))?,?[ ]$/u.exec(text.slice(Math.max(0, start - 24), start));
    if (word === null || !JP_PREFECTURES.has((word[1] as string).toLowerCase())) return null;
    return { start: start - word[0].length, end, weak: false };
  }
  if (g.in !== undefined) {
    const before = text.slice(Math.max(0, start - 40), start);
    const pin = /PIN[ ]?(?:[Cc]ode)?[: ]{1,2}$/.exec(before);
    if (pin) return { start: start - pin[0].length, end, weak: false };
    const dash = /(?:\(?\p{Lu}[\p{L}.-]{1,30}\)?[ ]){0,2}\(?\p{Lu}[\p{L}.-]{1,30}\)?[ ]?[-–][ ]?$/u.exec(
      before,
    );
    if (dash) return { start: start - dash[0].length, end, weak: false };
    const state = /((?:\p{Lu}\p{Ll}+[ ]){0,2}\p{Lu}\p{Ll}+),?[ ]$/u.exec(before);
    if (state && IN_STATES.has((state[1] as string).toLowerCase()))
      return { start: start - state[0].length, end, weak: false };
    // `Mumbai 400001`: the town alone is no evidence; a state after it, or a street part before it, is.
    const town = /(?:\p{Lu}[\p{L}.-]{1,30}[ ]){0,2}\p{Lu}[\p{L}.-]{1,30}[ ]$/u.exec(before);
    if (town === null) return null;
    const after = /^,?[ \n]{1,3}((?:\p{Lu}\p{Ll}+[ ]?){1,3})/u.exec(text.slice(end, end + 40));
    const stateAfter = after !== null && IN_STATES.has((after[1] as string).trim().toLowerCase());
    return { start: start - town[0].length, end, weak: !stateAfter };
  }
  if (g.bare !== undefined) {
    const prev = text.charCodeAt(start - 1);
    if (prev === 45 || prev === 46 || prev === 47 || prev === 44 || !isSeparatorBefore(text, start))
      return null;
    const e = placeAfter(text, end);
    return e < 0 ? null : { start, end: e, weak: true };
  }
  if (g.placeCode !== undefined) {
    const place = PLACE_BEFORE.exec(text.slice(Math.max(0, start - 50), start));
    if (place !== null && isSeparatorBefore(text, start - place[0].length))
      return { start: start - place[0].length, end, weak: true };
  }
  return null;
}

// --- the parts of an address around an anchor -------------------------------------------------

/** Words that may stand inside the parts of an address besides capitalized words and numbers. */
const LINK_WORDS = new Set(
  (
    "de del della delle dei di da do dos das du des la las los le les el y e van der den ter ten von zu am im an " +
    "upon on sur sous bei ob nad pod ul. al. pl. os. m. bus bis ter apto apto. apt apt. sala casa int. depto. depto " +
    "th tv mf st. no. nr. nº n° of and rue dit " +
    // street types written in lower case after a name: Czech, Slovak, Nordic (`Karl Johans gate 22`)
    "náměstí nábřeží třída ulice námestie nábrežie gate gata gatan vei veien veg vegen vej gade allé alle väg " +
    "vägen gränd torg torget plass plassen plads"
  ).split(" "),
);
/** Particles of a street's name that may start it (`van der Meerlaan`, `de la Reina`). */
const NAME_PARTICLES = new Set(
  "de van der den ter ten het la le el los las del da do dos das di du des von zu".split(" "),
);
/** Words that begin a unit: a part may start with them (`apto 12`, `Piso 3`, `m. 204`). */
const UNIT_WORDS = new Set(
  "apto apto. apt apt. sala casa int. int depto. depto piso bus m. lgh. lgh hus leil. flat unit room suite level floor".split(
    " ",
  ),
);
/** Words that begin a unit or a street and may start a part without a capital. */
const PART_LEAD = /^(?:ul\.|al\.|pl\.|os\.|rondo|park|skwer|rynek|aleja|ulica|plac|osiedle)$/;

/**
 * Where the address-like end of a part begins, and whether it carries a number (a house number, a
 * unit, a block) — or -1 when nothing of it is address-like.
 */
function partStart(text: string, from: number, to: number): { start: number; numbered: boolean } | null {
  const part = text.slice(from, to);
  const tokens = part.split(/([ ]+)/);
  let at = part.length;
  let start = -1;
  let numbered = false;
  let words = 0;
  let rightStart = -2;
  for (let i = tokens.length - 1; i >= 0; i -= 2) {
    const t = tokens[i] as string;
    const sep = i > 0 ? (tokens[i - 1] as string).length : 0;
    at -= t.length;
    if (t === "") {
      at -= sep;
      continue;
    }
    const isNumber =
      /^(?:\d{1,5}[\p{L}]{0,2}(?:[/-]\d{1,5}[\p{L}]?){0,2}[º°ª.]?|[A-Z]\d{0,3}|\d{1,2}\.|\d{1,2}[º°ª])$/u.test(
        t,
      );
    const isCap = /^(?:[dlDL]['’])?\(?\p{Lu}/u.test(t) && /^[\p{L}'’.()-]+$/u.test(t);
    const lower = t.toLowerCase();
    const isUnit = UNIT_WORDS.has(lower);
    const isLink = isUnit || LINK_WORDS.has(lower) || PART_LEAD.test(t);
    if (!isNumber && !isCap && !isLink) break;
    if (++words > 8) return null;
    if (isNumber) numbered = true;
    // A particle joins the word after it only when that word began the part so far.
    if (isNumber || isCap || isUnit || PART_LEAD.test(t) || (NAME_PARTICLES.has(t) && start === rightStart))
      start = at;
    rightStart = at;
    at -= sep;
  }
  if (start < 0) return null;
  return { start: from + start, numbered };
}

/**
 * The separator before `at` (a comma, one line break, ` - `), and the start of the part before it:
 * a part ends where a sentence, a quote, a label or a blank line does.
 */
function partBefore(text: string, at: number): { from: number; to: number } | null {
  let i = at;
  while (i > 0 && text.charCodeAt(i - 1) === 32) i--;
  const c = text.charCodeAt(i - 1);
  if (c === 44) i--;
  else if (c === 10) {
    i--;
    if (text.charCodeAt(i - 1) === 13) i--;
    // A blank line ends the block.
    let j = i;
    while (j > 0 && text.charCodeAt(j - 1) === 32) j--;
    if (j === 0 || text.charCodeAt(j - 1) === 10) return null;
  } else if (c === 45 && text.charCodeAt(i - 2) === 32) i -= 2;
  else return null;
  while (i > 0 && text.charCodeAt(i - 1) === 32) i--;
  const to = i;
  let from = to;
  while (from > 0 && to - from < 80) {
    const d = text.charCodeAt(from - 1);
    // An apostrophe inside a name (`O'Keefe`) is no quote.
    if (d === 39 && !/\p{L}/u.test(text[from - 2] ?? "")) break;
    if (
      d === 44 ||
      d === 10 ||
      d === 34 ||
      d === 58 ||
      d === 59 ||
      d === 61 ||
      d === 9 ||
      d === 124 ||
      d === 123
    )
      break;
    if (d === 32 && text.charCodeAt(from - 2) === 45 && text.charCodeAt(from - 3) === 32) break;
    // A full stop, ! or ? before a space ends a sentence unless it abbreviates (`ul.`, `Co.`).
    if (d === 32 && /[!?]/.test(text[from - 2] ?? "")) break;
    if (
      d === 32 &&
      text.charCodeAt(from - 2) === 46 &&
      !/(?:^|[^\p{L}])(?:\p{Lu}\p{Ll}{0,4}|ul|al|pl|os|bulw|apto|depto|lgh|leil|m|C\.P|\d{1,2})\.$/u.test(
        text.slice(Math.max(0, from - 8), from - 1),
      )
    )
      break;
    from--;
  }
  while (from < to && text.charCodeAt(from) === 32) from++;
  if (to - from >= 80 || from === to) return null;
  return { from, to };
}

const LABEL_LED =
  /^(?:Section|Sec|Chapter|Page|Step|Part|Issue|Version|Item|Figure|Table|Gate|Flight|Model|Stage|Phase|Season|Episode|Vol|Number|Article|Rule|Paragraph|Order|Invoice|Ticket|Build|Release|Top|Over|Under|About|Around|Nearly|Almost|Sold|The|All|Only|Every|Just|First|Last|Windows|Office|Apollo|Boeing|Model|Since|In|On|By|Q[1-4])(?![\p{L}\p{N}])/iu;

/** How far back the parts before an anchor reach, up to the farthest part with a number. */
function chainBack(text: string, start: number): number {
  let at = start;
  let best = start;
  // A part without a number directly before the farthest numbered one is its street (`Rua Augusta, 1500`).
  let pendingName = -1;
  let bare = false;
  for (let n = 0; n < 5; n++) {
    const part = partBefore(text, at);
    if (part === null) break;
    const s = partStart(text, part.from, part.to);
    if (s === null) break;
    // `Section 12, Paris 2024`: a number after a label counts something; it is no house number.
    if (s.numbered && LABEL_LED.test(text.slice(s.start, part.to))) break;
    if (s.numbered) {
      best = s.start;
      bare = /^\d{1,5}[a-zA-Z]?(?:[ ]\d{1,2}[º°ª.](?:[ ][\p{L}.]{1,6})?)?$/u.test(
        text.slice(s.start, part.to),
      );
      pendingName = -1;
    } else if (bare && pendingName < 0) pendingName = s.start;
    if (s.start !== part.from) break;
    at = part.from;
  }
  // The named part is taken only as the street of a bare number (`Calle Mayor, 5`).
  return bare && pendingName >= 0 ? pendingName : best;
}

const FORWARD_WORDS =
  /^(?:\(?[A-Z]{2,4}\)?|\p{Lu}[\p{L}.'’-]*(?:[ ](?:of|do|de|and|y|und|et)?[ ]?\p{L}[\p{L}.'’-]*){0,3})(?![\p{L}\p{N}])/u;

/** How far the region and country after an address reach (`, SP`, `\nMaharashtra`, `, Japan`). */
function chainForward(text: string, end: number, closing = false): number {
  let at = end;
  for (let n = 0; n < 3; n++) {
    let i = at;
    while (text.charCodeAt(i) === 32) i++;
    const c = text.charCodeAt(i);
    if (c === 44) i++;
    else if (c === 10) i++;
    else if (c === 45 && text.charCodeAt(i + 1) === 32) i++;
    else if (c === 13 && text.charCodeAt(i + 1) === 10) i += 2;
    else break;
    while (text.charCodeAt(i) === 32) i++;
    const m = FORWARD_WORDS.exec(text.slice(i, i + 48));
    if (m === null) break;
    // The longest run of words that names a region or country (`Česká republika`, `New South Wales`).
    let word = m[0];
    let key = "";
    let named = false;
    for (;;) {
      key = placeKey(word.replace(/[()]/g, ""));
      named = COUNTRY_NAMES.has(key) || REGION_NAMES.has(key) || COUNTRY_NAMES.has(key.replace(/\./g, ""));
      const cut = word.lastIndexOf(" ");
      if (named || cut < 0) break;
      word = word.slice(0, cut);
    }
    if (!named) word = m[0];
    const isCode = /^\(?[A-Z]{2,4}\)?$/.test(word);
    // After an Indian PIN the state closes the address, named as its writer spells it
    // (`Andra Pradesh`): a place that ends the value is taken there.
    if (!isCode && !named && !(closing && endsValue(text, i + word.length))) break;
    // A code stands alone on its part: `, SP` yes, `, OK then`, no.
    if (isCode && !named) {
      const next = text.charCodeAt(i + word.length);
      if (
        !(
          Number.isNaN(next) ||
          next === 10 ||
          next === 44 ||
          next === 34 ||
          next === 39 ||
          next === 13 ||
          next === 46
        )
      )
        break;
    }
    // A full stop after a country or region ends the sentence (`, Netherlands.`), unless it abbreviates (`Co.`).
    at = i + word.length - (word.endsWith(".") && !REGION_NAMES.has(key) ? 1 : 0);
  }
  return at;
}

/** Nothing of the value follows: the end of the text, a quote, a blank line, or a country. */
function endsValue(text: string, at: number): boolean {
  const rest = text.slice(at, at + 40);
  if (/^(?:$|["'\n]?$|["']|\n[ ]*\n|\n[ ]*$)/.test(rest)) return true;
  const country = /^,?[ ]?\n?[ ]*(\p{Lu}[\p{L} ]{2,30}?)(?![\p{L}])/u.exec(rest);
  return country !== null && COUNTRY_NAMES.has(placeKey(country[1] as string));
}

/**
 * The postal forms that start with a capital glued to the digits: outside the word-boundary group,
 * read from right after their first digit (address.ts's pattern matches that digit and the capital
 * before it for all of them), reading the capital back, as the UK form does.
 */
export const POSTAL_LETTER_FORMS: string[] = [
  // C1043AAZ (Argentina's CPA)
  String.raw`(?<ar>(?<=\b[A-HJ-NP-Z]\d)\d{3}[A-Z]{3}\b)`,
  // D02 X285, D6W 1234 (Irish Eircode), checked beside its county or country in code
  String.raw`(?<ie>(?<=\b[AC-FHKNPRTV-Y]\d)\d[ ]?[0-9AC-FHKNPRTV-Y]{4}\b|W(?<=\bD6W)[ ]?[0-9AC-FHKNPRTV-Y]{4}\b)`,
];

/**
 * A postal form's match as a span: the anchor with the parts before it and the region and country
 * after it, or null. `found` holds the spans found before it in the text.
 */
export function keepPostal(
  text: string,
  m: RegExpExecArray,
  groups: Record<string, string | undefined>,
  found: Span[],
): Span | null {
  const a = anchorOf(text, m, groups);
  if (a === null) return null;
  const start = chainBack(text, a.start);
  if (
    a.weak &&
    !(start < a.start && namesStreet(text.slice(start, a.start))) &&
    !endsStreet(found, a.start, text)
  )
    return null;
  return { start, end: chainForward(text, a.end, groups.in !== undefined) };
}

/**
 * The parts before a weak anchor name a street: a word that is no unit (`Room 12, 2500 Guests` is a
 * count; `Kamptalweg 35b, 12040 Mehmetland` is an address).
 */
function namesStreet(parts: string): boolean {
  const words = parts.match(/(?:^|[^\p{L}])\p{L}{2,}/gu) ?? [];
  return words.some((w) => !UNIT_WORDS.has(w.replace(/^[^\p{L}]/u, "").toLowerCase()) && /\p{L}{3}/u.test(w));
}

/** A span found by the street forms ends in the part right before `at`. */
function endsStreet(spans: Span[], at: number, text: string): boolean {
  return spans.some((s) => s.end <= at && /^[ ,\n-]*$/.test(text.slice(s.end, at)));
}

export { chainBack, chainForward };
