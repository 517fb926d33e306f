import type { Span } from "../content-scan.js";
import { before, merge, scan } from "./spans.js";

// ---- email --------------------------------------------------------------------------------------

/** The domain after an @: labels of letters, digits and inner hyphens, a top-level domain of letters. */
const EMAIL_DOMAIN = /(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.){1,8}[A-Za-z]{2,24}(?![\w-])/y;
const LOCAL_PART = /^[A-Za-z0-9](?:[A-Za-z0-9._%+-]{0,62}[A-Za-z0-9])?$/;

function isAlnum(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57);
}

function isLocalChar(c: number): boolean {
  // letters, digits, and . _ % + -
  return (
    (c >= 97 && c <= 122) ||
    (c >= 65 && c <= 90) ||
    (c >= 48 && c <= 57) ||
    c === 46 ||
    c === 95 ||
    c === 37 ||
    c === 43 ||
    c === 45
  );
}

/** Asset names like logo@2x.png look like addresses; a file extension is not a top-level domain. */
const FILE_EXTENSIONS = new Set([
  "png",
  "jpg",
  "jpeg",
  "gif",
  "svg",
  "webp",
  "bmp",
  "ico",
  "tif",
  "tiff",
  "heic",
  "pdf",
  "js",
  "mjs",
  "ts",
  "tsx",
  "jsx",
  "css",
  "scss",
  "map",
  "json",
  "html",
  "txt",
  "md",
  "zip",
  "gz",
  "tar",
  "mp4",
  "mp3",
  "wav",
  "mov",
  "woff",
  "woff2",
  "ttf",
  "py",
  "rb",
  "go",
  "rs",
  "java",
  "lock",
  "yml",
  "yaml",
  "xml",
]);

/** Anchored on each @ rather than trying every position of the text: the local part is read backwards. */
export function findEmails(text: string): Span[] {
  const spans: Span[] = [];
  for (let at = text.indexOf("@"); at > 0; at = text.indexOf("@", at + 1)) {
    let start = at;
    while (start > 0 && at - start <= 64 && isLocalChar(text.charCodeAt(start - 1))) start--;
    // A local part longer than 64 characters, or one glued to more text, is not an address.
    if (at - start > 64 || start === at) continue;
    // Punctuation before the address ("...jane@", "(-jane@") is not part of it.
    while (start < at && !isAlnum(text.charCodeAt(start))) start++;
    const local = text.slice(start, at);
    if (!LOCAL_PART.test(local) || local.includes("..")) continue;
    EMAIL_DOMAIN.lastIndex = at + 1;
    const domain = EMAIL_DOMAIN.exec(text);
    if (!domain) continue;
    const tld = domain[0].slice(domain[0].lastIndexOf(".") + 1).toLowerCase();
    if (FILE_EXTENSIONS.has(tld)) continue;
    const end = at + 1 + domain[0].length;
    spans.push({ start, end });
    at = end - 1;
  }
  return spans;
}

// ---- phone --------------------------------------------------------------------------------------

/** North American numbers: area code and exchange start with 2-9 (NANP), separators required. */
const NANP =
  /(?<![\w+.-])(?:\+?1[ .-]?)?(?:\(([2-9]\d\d)\)[ .-]?|([2-9]\d\d)[ .-])([2-9]\d\d)[ .-](\d{4})(?![\w-]|\.\d)/g;
/** International numbers written with a leading + and a country code. */
const INTERNATIONAL = /(?<![\w+])\+[1-9]\d{0,2}(?:[ .-]?\(?\d{1,4}\)?){2,5}(?![\w-]|\.\d)/g;
/** National numbers after an explicit cue word. */
const CUED =
  /\b(?:phone|tel|telephone|mobile|cell|fax|whatsapp|call me at|text me at)\b[.:]?\s{0,3}(?:(?:number|no\.?|#)\s{0,3}:?\s{0,3})?(\(?0?\d[\d ()-]{6,16}\d)/gi;

function digitCount(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 48 && c <= 57) n++;
  }
  return n;
}

export function findPhones(text: string): Span[] {
  const nanp = scan(NANP, text);
  const intl = scan(INTERNATIONAL, text, (m) => {
    const digits = digitCount(m[0]);
    return digits >= 8 && digits <= 15;
  });
  const cued = scan(
    CUED,
    text,
    (m) => {
      const digits = digitCount(m[1] ?? "");
      return digits >= 8 && digits <= 15;
    },
    1,
  );
  return merge(nanp, intl, cued);
}

// ---- ssn ----------------------------------------------------------------------------------------

const SSN = /(?<![\w-])(\d{3})([- ])(\d{2})\2(\d{4})(?![\w-])/g;
const SSN_CUED = /\b(?:ssn|social security(?: number| no\.?)?|ss#)\s{0,3}[:#]?\s{0,3}(\d{9})\b/gi;

/** Area 000, 666 and 900-999, group 00 and serial 0000 are never issued (SSA). */
function possibleSsn(area: string, group: string, serial: string): boolean {
  const a = Number(area);
  return a !== 0 && a !== 666 && a < 900 && group !== "00" && serial !== "0000";
}

export function findSsns(text: string): Span[] {
  const formatted = scan(SSN, text, (m) => possibleSsn(m[1] ?? "", m[3] ?? "", m[4] ?? ""));
  const cued = scan(
    SSN_CUED,
    text,
    (m) => {
      const d = m[1] ?? "";
      return possibleSsn(d.slice(0, 3), d.slice(3, 5), d.slice(5));
    },
    1,
  );
  return merge(formatted, cued);
}

// ---- credit-card --------------------------------------------------------------------------------

const CARD = /(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])/g;

export function luhn(digits: string): boolean {
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

/** The issuer ranges of the major networks, with their lengths. */
function knownIssuer(d: string): boolean {
  const n = d.length;
  const p2 = Number(d.slice(0, 2));
  const p3 = Number(d.slice(0, 3));
  const p4 = Number(d.slice(0, 4));
  if (d[0] === "4") return n === 13 || n === 16 || n === 19; // Visa
  if ((p2 >= 51 && p2 <= 55) || (p4 >= 2221 && p4 <= 2720)) return n === 16; // Mastercard
  if (p2 === 34 || p2 === 37) return n === 15; // American Express
  if (p4 === 6011 || p2 === 65 || (p3 >= 644 && p3 <= 649)) return n >= 16 && n <= 19; // Discover
  if (p4 >= 3528 && p4 <= 3589) return n >= 16 && n <= 19; // JCB
  if ((p3 >= 300 && p3 <= 305) || p2 === 36 || p2 === 38) return n >= 14 && n <= 19; // Diners
  if (p2 === 62) return n >= 16 && n <= 19; // UnionPay
  return false;
}

export function findCreditCards(text: string): Span[] {
  return scan(CARD, text, (m) => {
    const raw = m[0];
    // One separator style per number: "4111 1111-1111 1111" is not how a card is written.
    if (raw.includes(" ") && raw.includes("-")) return false;
    const digits = raw.replace(/[ -]/g, "");
    return digits.length >= 13 && digits.length <= 19 && knownIssuer(digits) && luhn(digits);
  });
}

// ---- ip-address ---------------------------------------------------------------------------------

const OCTET = "(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)";
const IPV4 = new RegExp(`(?<![\\w.])${OCTET}(?:\\.${OCTET}){3}(?![\\w]|\\.\\d)`, "g");
/** Candidate IPv6 text (hex groups and colons, an optional dotted tail); checked by parseIpv6. */
const IPV6 = /(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:[0-9A-Fa-f]{1,4}|(?:\d{1,3}\.){3}\d{1,3})?(?![\w:])/g;
/** Words that make a dotted quad a version or a build, not an address. */
const VERSION_CUE =
  /\b(?:version|ver\.?|release|build|firmware|v|rev\.?|update|section|chapter|clause|step|rule|python|node|java|ruby|php|kernel|linux|ios|android|macos|windows|sdk|api|edition|§)\s?:?\s?$/;

function ipv4Context(text: string, index: number): boolean {
  const prefix = before(text, index, 16);
  if (VERSION_CUE.test(prefix)) return false;
  // "Chrome/120.0.1.1" is a product token; "http://10.0.0.1" (two slashes) is an address.
  return !/[a-z]\/$/.test(prefix) || prefix.endsWith("//");
}

function parseIpv6(s: string): boolean {
  if (s.includes(":::")) return false;
  const parts = s.split("::");
  if (parts.length > 2) return false;
  const groups = parts.flatMap((p) => (p === "" ? [] : p.split(":")));
  let count = 0;
  for (const [i, g] of groups.entries()) {
    if (g.includes(".")) {
      if (i !== groups.length - 1 || !IPV4_WHOLE.test(g)) return false;
      count += 2;
    } else if (/^[0-9A-Fa-f]{1,4}$/.test(g)) {
      count += 1;
    } else {
      return false;
    }
  }
  if (parts.length === 2) return count <= 7;
  return count === 8;
}
const IPV4_WHOLE = new RegExp(`^${OCTET}(?:\\.${OCTET}){3}$`);

export function findIpAddresses(text: string): Span[] {
  const v4 = text.includes(".") ? scan(IPV4, text, (m) => ipv4Context(text, m.index)) : [];
  const v6 = text.includes(":") ? scan(IPV6, text, (m) => parseIpv6(m[0])) : [];
  return merge(v4, v6);
}
