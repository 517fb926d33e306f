import type { Span } from "../content-scan.js";
import { around, collect, isAsciiLetter, isDigit, lowerBefore, mayEndWith } from "./spans.js";

/**
 * Telephone numbers in the shapes people write them, one pattern with five alternatives:
 * 1. international with `+` (or the `00` access prefix) and groups: `+44 20 7946 0958`,
 *    `+1 (202) 456-1111`, `+44 (0)20 ...`, `0044 20 7946 0011`;
 * 2. E.164 without separators: `+14155550134`;
 * 3. North American with separators: area code and exchange start with 2-9 (NANP rules);
 * 4. national with a trunk 0 and groups: `020 7946 0321`, `06 12 34 56 78`, `0412 345 678`;
 * 5. seven to fifteen bare digits, or a seven-digit local number (`555-0100`), kept only after a
 *    phone cue (`phone:`, `tel`, `dial`, `call me at`).
 * Every group after the first begins with a separator (or a parenthesis), so the pattern cannot
 * split a digit run in more than one way: no backtracking blow-up on long digit strings.
 *
 * Leading digit counts are written out (`\d\d\d{0,3}` for `\d{2,5}`, the same language): the regex
 * engine then skips through text that cannot start a number instead of trying every position, a
 * third of the pattern's cost on prose.
 *
 * What is refused: a number glued to letters or to more digits on either side (versions, IPs,
 * card and account numbers, `+1.5`), one that continues with a separator and more digits, and one
 * labelled as something else (`Order no. 415-555-0134`, `SKU`, `ISBN`, `invoice`, ...).
 */
const PHONE = new RegExp(
  [
    // A group may be the whole national number (`+49 15112345678`, docs/detectors.md#world-pii).
    String.raw`(?:\+|00)[1-9]\d{0,3}(?:[ .-]?\(\d{1,4}\)\d{0,8}|[ .-]\d{1,12}){1,6}`,
    String.raw`\+[1-9]\d\d\d\d\d\d\d\d{0,7}`,
    String.raw`(?:1[ .-]?)?(?:\([2-9]\d\d\)[ .]?|[2-9]\d\d[ .-])[2-9]\d\d[ .-]\d\d\d\d`,
    // A slash after the area code (`0711/1234567`, `0470/12.34.56`) and dots (`06.12.34.56.78`)
    // are national styles too (docs/detectors.md#world-pii); keep() holds dotted ones to pairs.
    String.raw`\(?0[1-9]\d{0,4}\)?[ ./-]\d\d\d{0,6}(?:[ .-]\d{2,4}){0,4}`,
    String.raw`\b\d\d\d\d\d\d\d\d{0,8}`,
    String.raw`\b[2-9]\d\d[ .-]\d{4}`,
    // National groupings without a trunk 0 (docs/detectors.md#phone-national): captured, so that
    // keep() can ask for a cue or the Brazilian shape. Spaces and hyphens only: dotted groups are
    // versions, dates and addresses far more often, and would cost a cue check each.
    String.raw`(\(?\b\d\d\d{0,3}\)?(?:[ -]\d{2,5}){1,4})`,
  ].join("|"),
  "g",
);

/**
 * Words that announce a phone number, in English and in the languages of the national plans the
 * detector reads (docs/detectors.md#phone-national, docs/detectors.md#world-pii): Spanish,
 * Portuguese (`telemóvel` in Portugal), French, German, Polish,
 * Italian, Hindi. A JSON key or a form field may close the cue (`"telefono": "`, `phone=`). The
 * added words must start a word: `cel` ends `parcel` and `excel`.
 */
const CUE =
  /(?:phone|tel|telephone|mobile|cell|fax|whatsapp|sms|call|text|ring|dial|(?<![a-zà-ÿ])(?:tel[eé]fono|telefone|telem[oó]vel|t[eé]l[eé]phone|telefon|tfno|tlf|m[oó]vil|celular|cel|portable|handy|mobil|kom[oó]rka|kom|cellulare|llámame al|llama al|ligue para|zadzwoń)|फ़ोन|फ़ोन|फोन|मोबाइल)(?: ?(?:me|us|him|her))?(?: ?(?:at|on|al|para))?(?: ?(?:no\.?|number|#|nº|n°|nr\.?|नंबर|नम्बर))?[ .:#"'=]{0,5}$/;
/**
 * Brazil's mobile `(DD) 9XXXX-XXXX` (area codes use digits 1-9 only): a shape no other number
 * takes, kept without a cue like the North American one. The landline `(DD) XXXX-XXXX` needs a cue:
 * `(11) 2019-2020` is a season.
 */
const BRAZIL = /^\([1-9]{2}\) ?9\d{4}-\d{4}$/;
export const LABELLED =
  /\b(?:order|invoice|sku|part|ref|reference|ticket|case|tracking|serial|account|acct|po|isbn|model|item|lot|batch|id|receipt|transaction|customer)\.?(?: ?(?:no\.?|number|num|#|id))?[ .:#]{0,4}$/;
/** The last character of every word and mark of LABELLED (mayEndWith). */
export const LABELLED_LAST = "reutfglonmhd.#";

function digitCount(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) if (isDigit(s.charCodeAt(i))) n++;
  return n;
}

function isSeparator(c: number): boolean {
  return c === 32 || c === 45 || c === 46;
}

function keep(text: string, m: RegExpExecArray): Span | null {
  const { raw, start, end, prev, next } = around(text, m);
  // Glued to a word, a longer number or a sign: part of something else.
  if (isAsciiLetter(prev) || isDigit(prev) || prev === 43 || prev === 95) return null;
  if (isAsciiLetter(next) || isDigit(next) || next === 95) return null;
  if (isSeparator(prev) && isDigit(text.charCodeAt(start - 2))) return null;
  if (isSeparator(next) && isDigit(text.charCodeAt(end + 1))) return null;
  if ((next === 45 || next === 46) && isAsciiLetter(text.charCodeAt(end + 1))) return null;
  // A colon and a digit after it: the hour of a time after a date (`06-06-2027 21:14`) or a port
  // (docs/detectors.md#world-pii).
  if (next === 58 && isDigit(text.charCodeAt(end + 1))) return null;
  const digits = digitCount(raw);
  const first = raw.charCodeAt(0);
  if (first === 43) return digits >= 8 && digits <= 15 ? { start, end } : null;
  const context = lowerBefore(text, start, 28);
  if (mayEndWith(context, LABELLED_LAST, " .:#", 4) && LABELLED.test(context)) return null;
  if (m[1] !== undefined) {
    if (digits < 8 || digits > 13) return null;
    return BRAZIL.test(raw) || CUE.test(context) ? { start, end } : null;
  }
  if (raw.length === digits || digits === 7) return CUE.test(context) ? { start, end } : null;
  if (raw.startsWith("00")) return digits >= 10 && digits <= 17 ? { start, end } : null;
  if (first === 48 || (first === 40 && raw.charCodeAt(1) === 48)) {
    // Dotted, only as France and Belgium write numbers, in pairs after the area code: dates and
    // times (`05.11.2026 14.30`) use dots too.
    if (raw.includes(".") && !DOTTED.test(raw)) return null;
    if (digits >= 9 && digits <= 12) return { start, end };
    // Eight digits with the trunk 0 (Sweden's `029-725 12`, small Austrian towns) only after a cue
    // (docs/detectors.md#world-pii).
    return digits === 8 && CUE.test(context) ? { start, end } : null;
  }
  return { start, end };
}

/**
 * `06.12.34.56.78`, `0470/12.34.56`, `09/223.45.67`: pairs of digits after the area code (a group
 * of three after a slash), joined by dots.
 */
const DOTTED = /^0[1-9]\d{0,3}(?:\.\d\d|\/\d\d\d?)(?:\.\d\d){2,3}$/;
/** An extension written after the number (`x6280`, `ext. 12`, `extension 4411`) belongs to it. */
const EXTENSION = /[ ]{0,2}(?:x|ext\.?|extension)[ ]{0,2}\d{1,6}(?!\d)/iy;
/** `047-75-5024`: the area-group-serial shape of an SSN, which no phone numbering plan uses. */
const SSN_SHAPE = /^\d{3}-\d{2}-\d{4}$/;

export function findPhones(text: string): Span[] {
  return collect(PHONE, text, (m) => {
    if (SSN_SHAPE.test(m[0])) return null;
    const span = keep(text, m);
    if (span === null) return null;
    EXTENSION.lastIndex = span.end;
    const ext = EXTENSION.exec(text);
    return ext ? { start: span.start, end: span.end + ext[0].length } : span;
  });
}
