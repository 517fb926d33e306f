import type { Span } from "../content-scan.js";
import { around, collect, isAsciiLetter, isDigit } from "./spans.js";

/**
 * Payment card numbers: 13 to 19 digits, bare or grouped by spaces or hyphens, that pass three
 * checks, each of which removes a family of look-alikes:
 * 1. the Luhn checksum (nine in ten random digit strings fail it);
 * 2. the issuer range and a length that network issues (order, tracking and account numbers
 *    start with digits no network uses; an IMEI passes Luhn but has 15 digits in a 16-digit range);
 * 3. the grouping people write: one separator throughout, groups of four (the last may be
 *    shorter), or Amex and Diners 4-6-5 and 4-6-4. `4 5 6 7 ...` is a list, not a card.
 * The separator may be a space, a tab or one line break (all one kind), a hyphen (every dash is one
 * in the canonical text the scan reads), `.`, `_` or `/` (docs/behaviour.md#normalization): the
 * checks above hold the precision, since an IP address, a date or a decimal has no 4-4-4-4 groups.
 */
const CARD = /\b\d(?:[ \t\n._/-]?\d){12,18}(?!\d)/g;
const SEPARATORS = /[ \t\n._/-]/g;

export function passesLuhn(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

/** Issuer identification ranges of the major networks, with the lengths each issues. */
export function hasKnownIssuer(d: string): boolean {
  const n = d.length;
  const p2 = Number(d.slice(0, 2));
  const p3 = Number(d.slice(0, 3));
  const p4 = Number(d.slice(0, 4));
  if (d[0] === "4") return n === 13 || n === 16 || n === 19; // Visa
  if ((p2 >= 51 && p2 <= 55) || (p4 >= 2221 && p4 <= 2720)) return n === 16; // Mastercard
  if (p4 >= 2200 && p4 <= 2204) return n >= 16 && n <= 19; // Mir
  if (p2 === 34 || p2 === 37) return n === 15; // American Express
  if (p4 === 6011 || p2 === 65 || (p3 >= 644 && p3 <= 649)) return n >= 16 && n <= 19; // Discover
  if (p4 >= 3528 && p4 <= 3589) return n >= 16 && n <= 19; // JCB
  if ((p3 >= 300 && p3 <= 305) || p2 === 36 || p2 === 38 || p2 === 39) return n >= 14 && n <= 19; // Diners
  if (p2 === 62) return n >= 16 && n <= 19; // UnionPay
  if ([5018, 5020, 5038, 5893, 6304, 6759, 6761, 6762, 6763].includes(p4)) return n >= 13 && n <= 19; // Maestro
  if (p2 === 60 || p3 === 508) return n === 16; // RuPay
  return false;
}

/** Spaces, tabs and a line break separate alike. */
function kindOf(c: string | undefined): string | undefined {
  return c === "\t" || c === "\n" ? " " : c;
}

/** The one kind of separator a grouped number uses, or null when they are mixed ("" when none). */
function separatorOf(raw: string): string | null {
  let sep = "";
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c >= 48 && c <= 57) continue;
    const k = kindOf(raw[i]) as string;
    if (sep === "") sep = k;
    else if (k !== sep) return null;
  }
  return sep;
}

/** Group lengths of a separated number, or null when separators are mixed. */
function groups(raw: string): number[] | null {
  if (separatorOf(raw) === null) return null;
  return raw.split(SEPARATORS).map((g) => g.length);
}

function writtenLikeACard(raw: string, digits: number): boolean {
  if (raw.length === digits) return true;
  const lengths = groups(raw);
  if (!lengths) return false;
  const key = lengths.join("-");
  if (key === "4-6-5" || key === "4-6-4") return true;
  const last = lengths[lengths.length - 1] ?? 0;
  return lengths.slice(0, -1).every((g) => g === 4) && last >= 1 && last <= 4;
}

function keep(text: string, m: RegExpExecArray): Span | null {
  const { raw, start, end, prev, next } = around(text, m);
  if (isAsciiLetter(prev) || isAsciiLetter(next) || prev === 46 || prev === 45) return null;
  const digits = raw.replace(SEPARATORS, "");
  if (!writtenLikeACard(raw, digits.length)) return null;
  // A grouped number that goes on with the same separator and more digits is longer than a card.
  const sep = separatorOf(raw);
  if (sep && kindOf(text[end]) === sep && isDigit(text.charCodeAt(end + 1))) return null;
  if (sep && kindOf(text[start - 1]) === sep && isDigit(text.charCodeAt(start - 2))) return null;
  if (!hasKnownIssuer(digits) || !passesLuhn(digits)) return null;
  return { start, end };
}

/**
 * What every number keep() accepts holds: four digits, at most one separator, four more. It is all
 * digits (13 or more), or its first group is four digits and the next one four or six. A text
 * without this cannot hold a card, and this pattern, written out digit by digit, lets the regex
 * engine skip through text several characters at a time where CARD looks at every position.
 */
const FOUR_FOUR = /\d\d\d\d[ \t\n._/-]?\d\d\d\d/;

export function findCreditCards(text: string): Span[] {
  if (!FOUR_FOUR.test(text)) return [];
  return collect(CARD, text, (m) => keep(text, m));
}
