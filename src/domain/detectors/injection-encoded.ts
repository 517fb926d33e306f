/**
 * Payloads hidden in an encoding (docs/detectors.md#injection-families): base64, hex (plain,
 * spaced or `\x` escaped) and ROT13, decoded so that the detector can read them. Bounded: only
 * tokens of a plausible length, at most MAX_DECODES decodes per text, and a decoded token counts
 * only when it reads as text (mostly printable, with spaces), so a hash, an image or a key is
 * dropped after one decode. A finding in a decoded token is reported as the span of the whole
 * encoded token; ROT13 keeps every character in place, so its spans are the decoded text's.
 */

/** ROT13 named, or an attack's keywords in it: "vtaber" (ignore), "vafgehpgvbaf", "flfgrz cebzcg". */
const ROT13_WORDS = "rot-?13|vtaber|qvfertneq|vafgehpgvba|flfgrz|cebzcg|cerivbhf|sbetrg\\s";

/**
 * Prefilter entries (RE2) for text that may hold an encoded payload. The base64 run is not among
 * them: its count of 24 multiplied the states of the prefilter's automaton, which made the pass
 * over every text a tenth slower; `hasBase64Run` answers it on the side.
 */
export const ENCODED_TRIGGERS = [
  // hex bytes separated by spaces or colons, or escaped
  "(?:[0-9a-fA-F]{2}[ :]){11,}[0-9a-fA-F]{2}",
  "(?:\\\\x[0-9a-fA-F]{2}){12,}",
  `(?i:${ROT13_WORDS})`,
];

const ROT13 = new RegExp(ROT13_WORDS, "i");
const BASE64 = /[A-Za-z0-9+/_-]{24,}={0,2}/g;
const SPACED_HEX = /(?:[0-9a-fA-F]{2}[ :]){11,}[0-9a-fA-F]{2}/g;
const ESCAPED_HEX = /(?:\\x[0-9a-fA-F]{2}){12,}/g;
const HEX = /^[0-9a-fA-F]+$/;

/** Decodes per text: a text full of tokens pays for this many, and no more. */
export const MAX_DECODES = 8;
/** The longest token decoded: a longer one is data (an image, a file), not a prompt. */
const MAX_TOKEN = 8192;

export interface Payload {
  /** Where the encoded token is in the original text. */
  start: number;
  end: number;
  text: string;
}

/** Whether decoded bytes read as text: at least 90 % printable, a space, and no replacement character. */
function readable(text: string): boolean {
  if (text.length < 8 || !text.includes(" ") || text.includes("\ufffd")) return false;
  let printable = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c >= 0x20 && c < 0x7f) || c === 9 || c === 10 || c === 13 || c >= 0xa0) printable++;
  }
  return printable >= text.length * 0.9;
}

function fromHex(hex: string): string {
  return Buffer.from(hex.replace(/[^0-9a-fA-F]/g, ""), "hex").toString("utf8");
}

/** For each ASCII code: 1 in the base64 alphabet (with the URL-safe `-` and `_`), 2 in spaced hex's. */
const ALPHABETS = new Uint8Array(128);
for (const ch of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-")
  ALPHABETS[ch.charCodeAt(0)] = 1;
for (const ch of "0123456789abcdefABCDEF :")
  ALPHABETS[ch.charCodeAt(0)] = (ALPHABETS[ch.charCodeAt(0)] ?? 0) | 2;
/** The shortest base64 token looked at (BASE64), and the shortest spaced hex (SPACED_HEX: 12 bytes and 11 separators). */
const BASE64_RUN = 24;
const SPACED_HEX_RUN = 35;

/**
 * Whether `text` holds `min` consecutive characters of the alphabet `bit`, reading one character
 * in `min`: every such run covers one of them, so only the characters around a hit are read.
 */
function hasRun(text: string, bit: number, min: number): boolean {
  const n = text.length;
  for (let i = min - 1; i < n; ) {
    const c = text.charCodeAt(i);
    if (c >= 128 || ((ALPHABETS[c] ?? 0) & bit) === 0) {
      i += min;
      continue;
    }
    let lo = i;
    while (lo > 0) {
      const d = text.charCodeAt(lo - 1);
      if (d >= 128 || ((ALPHABETS[d] ?? 0) & bit) === 0) break;
      lo--;
    }
    let hi = i + 1;
    while (hi < n && hi - lo < min) {
      const d = text.charCodeAt(hi);
      if (d >= 128 || ((ALPHABETS[d] ?? 0) & bit) === 0) break;
      hi++;
    }
    if (hi - lo >= min) return true;
    // The run ends at `hi`, a character outside the alphabet: the next run starts after it.
    i = hi + min;
  }
  return false;
}

/** Whether `text` holds a run of base64 long enough to be a token: what `[A-Za-z0-9+/_-]{24,}` finds. */
export function hasBase64Run(text: string): boolean {
  return hasRun(text, 1, BASE64_RUN);
}

/** The encoded tokens of `text` that decode to readable text, at most MAX_DECODES decoded. */
export function encodedPayloads(text: string): Payload[] {
  const out: Payload[] = [];
  let budget = MAX_DECODES;
  const take = (re: RegExp, decode: (token: string) => string) => {
    re.lastIndex = 0;
    for (let m = re.exec(text); m !== null && budget > 0; m = re.exec(text)) {
      const token = m[0];
      if (token.length > MAX_TOKEN) continue;
      budget--;
      const decoded = decode(token);
      if (readable(decoded)) out.push({ start: m.index, end: m.index + token.length, text: decoded });
    }
  };
  // Each search runs only on a text that may hold its token (a pass of V8's regular expressions
  // over a long text of prose costs more than the rest of the check): a text without `\x`, or
  // without a run of the token's alphabet as long as its shortest token, holds none, so skipping
  // the search leaves the decode budget and the payloads as they were.
  if (text.includes("\\x")) take(ESCAPED_HEX, (t) => fromHex(t.replace(/\\x/g, "")));
  if (hasRun(text, 2, SPACED_HEX_RUN)) take(SPACED_HEX, fromHex);
  if (hasBase64Run(text))
    take(BASE64, (t) =>
      HEX.test(t) && t.length % 2 === 0
        ? fromHex(t)
        : Buffer.from(t.replace(/-/g, "+").replace(/_/g, "/"), "base64").toString("utf8"),
    );
  return out;
}

/** Whether `text` may hold ROT13: it names it, or holds an attack's keyword in it. */
export function mayHoldRot13(text: string): boolean {
  return ROT13.test(text);
}

/** ROT13 of the ASCII letters; every other character, and every index, stays. */
export function rot13(text: string): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 65 && c <= 90) out += String.fromCharCode(((c - 65 + 13) % 26) + 65);
    else if (c >= 97 && c <= 122) out += String.fromCharCode(((c - 97 + 13) % 26) + 97);
    else out += text[i];
  }
  return out;
}
