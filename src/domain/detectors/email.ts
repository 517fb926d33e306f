import type { Span } from "../content-scan.js";
import { isAsciiLetter, isDigit } from "./spans.js";

/**
 * Email addresses, found from each `@` rather than by trying a pattern at every position: text
 * without an `@` costs one indexOf. The local part is read backwards (at most 64 characters, RFC
 * 5321), the domain forwards with a sticky pattern. What is refused, and why:
 * - a top-level domain that is a file extension (`logo@2x.png`, `report@final.docx`);
 * - `user@host:path`, an SSH or scp target rather than a mailbox (`git@github.com:org/repo.git`);
 * - the user or password part of a URL (`https://app:pw@db.example.com`), which the secrets
 *   detector owns;
 * - invalid forms: consecutive dots, a dot or hyphen at either end of a part, a one-letter TLD.
 */

/** Labels of letters, digits and inner hyphens; a top-level domain of letters (or punycode). */
const DOMAIN =
  /(?:[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?\.){1,8}(?:\p{L}{2,24}|xn--[a-z0-9-]{1,59})(?![\p{L}\p{N}_-])/uy;
const LOCAL = /^[\p{L}\p{N}](?:[\p{L}\p{N}._%+'-]{0,62}[\p{L}\p{N}])?$/u;
const NON_ASCII_LOCAL = /[\p{L}\p{N}\p{M}]/u;

/** File extensions that are not also common top-level domains (so `.ai`, `.io`, `.me` stay addresses). */
const FILE_EXTENSIONS = new Set(
  (
    "png jpg jpeg gif svg webp avif bmp ico tif tiff heic psd pdf doc docx xls xlsx ppt pptx odt csv " +
    "js mjs cjs ts tsx jsx css scss less map json html htm txt log ini toml yml yaml xml lock " +
    "zip gz tgz bz2 xz tar rar 7z whl jar war exe dmg msi apk ipa iso img bin " +
    "mp4 mp3 wav ogg mov avi mkv webm flac woff woff2 ttf otf eot py rb java kt swift c h cpp"
  ).split(" "),
);

function isLocalChar(c: number): boolean {
  // . _ % + - and the apostrophe (o'brien@); anything non-ASCII is checked as a letter below.
  return (
    isAsciiLetter(c) || isDigit(c) || c === 46 || c === 95 || c === 37 || c === 43 || c === 45 || c === 39
  );
}

function isAlnumAt(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  return isAsciiLetter(c) || isDigit(c) || (c > 127 && NON_ASCII_LOCAL.test(text[i] ?? ""));
}

/**
 * The local part is the user (or user:password) of a URL: `//` comes before it with no space,
 * slash or quote between. Only the 130 characters before it are read.
 */
function inUrlUserinfo(text: string, start: number): boolean {
  for (let i = start - 1; i > 0 && start - i <= 130; i--) {
    const c = text.charCodeAt(i);
    if (c === 47) return text.charCodeAt(i - 1) === 47;
    if (c <= 32 || c === 64 || c === 34 || c === 39 || c === 60 || c === 62) return false;
  }
  return false;
}

export function findEmails(text: string): Span[] {
  const spans: Span[] = [];
  for (let at = text.indexOf("@"); at > 0; at = text.indexOf("@", at + 1)) {
    let start = at;
    while (start > 0 && at - start <= 64) {
      const c = text.charCodeAt(start - 1);
      if (isLocalChar(c) || (c > 127 && isAlnumAt(text, start - 1))) start--;
      else break;
    }
    if (at - start > 64 || start === at) continue;
    // Quotes and punctuation before the address ('kim@..., -jane@...) are not part of it.
    while (start < at && !isAlnumAt(text, start)) start++;
    const local = text.slice(start, at);
    if (!LOCAL.test(local) || local.includes("..")) continue;
    DOMAIN.lastIndex = at + 1;
    const domain = DOMAIN.exec(text);
    if (!domain) continue;
    const end = at + 1 + domain[0].length;
    const tld = domain[0].slice(domain[0].lastIndexOf(".") + 1).toLowerCase();
    if (FILE_EXTENSIONS.has(tld)) continue;
    // user@host:path (scp, git over SSH); a colon followed by a space still ends a sentence.
    const after = text.charCodeAt(end + 1);
    if (
      text.charCodeAt(end) === 58 &&
      (isAsciiLetter(after) || isDigit(after) || after === 47 || after === 126)
    )
      continue;
    if (inUrlUserinfo(text, start)) continue;
    spans.push({ start, end });
    at = end - 1;
  }
  return spans;
}
