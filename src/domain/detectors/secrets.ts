import type { Span } from "../content-scan.js";
import { collect, isAsciiLetter, isDigit, normalizeSpans } from "./spans.js";

/**
 * Credentials, found four ways:
 * 1. by issuer prefix and shape: formats the issuers publish so that leaked keys can be found
 *    (cloud, code hosting, payment, messaging and model-provider keys, JWTs);
 * 2. PEM private key blocks (public keys and certificates are not secrets);
 * 3. the password of a connection URL (`postgres://user:password@host`);
 * 4. a value assigned to a credential-named key (`DB_PASSWORD=...`, `"client_secret": "..."`,
 *    `Authorization: Bearer ...`), if the value looks like a credential rather than a placeholder.
 * Every match must look random: a placeholder of repeated characters (`ghp_xxxx...`,
 * `AKIAXXXXXXXXXXXXXXXX`) has too few distinct characters. Hashes, UUIDs and base64 data carry no
 * prefix and no credential name, so they are left alone.
 */
const PREFIXED = new RegExp(
  [
    "(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}", // AWS key ids
    "gh[pousr]_[A-Za-z0-9]{36,255}", // GitHub tokens
    "github_pat_[A-Za-z0-9_]{50,255}", // GitHub fine-grained tokens
    "gl(?:pat|dt|rt|ptt)-[A-Za-z0-9_-]{20,64}", // GitLab tokens
    "xox[abposr]-[A-Za-z0-9-]{10,250}", // Slack tokens
    "hooks\\.slack\\.com/services/T[A-Z0-9]{6,12}/B[A-Z0-9]{6,12}/[A-Za-z0-9]{16,32}", // Slack webhooks
    "(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,247}", // Stripe secret and restricted keys
    "whsec_[A-Za-z0-9+/=]{24,64}", // Stripe webhook secrets
    "sk-ant-[A-Za-z0-9_-]{32,200}", // Anthropic
    "sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,200}", // OpenAI and alike: checked below
    "AIza[0-9A-Za-z_-]{35}", // Google API keys
    "ya29\\.[0-9A-Za-z_-]{20,300}", // Google OAuth access tokens
    "SG\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43}", // SendGrid
    "npm_[A-Za-z0-9]{36}", // npm
    "pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,300}", // PyPI upload tokens
    "hf_[A-Za-z0-9]{34,40}", // Hugging Face
    "SK[0-9a-fA-F]{32}", // Twilio API keys
    "do[por]_v1_[a-f0-9]{64}", // DigitalOcean
    "shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}", // Shopify
    "hv[sb]\\.[A-Za-z0-9_-]{24,200}", // HashiCorp Vault
    "gsk_[A-Za-z0-9]{48,56}", // Groq
    "key-[a-f0-9]{32}", // Mailgun
    "dapi[a-f0-9]{32}", // Databricks
    "lin_api_[A-Za-z0-9]{40}", // Linear
    "r8_[A-Za-z0-9]{37}", // Replicate
    "PMAK-[a-f0-9]{24}-[a-f0-9]{34}", // Postman
    "sq0(?:atp|csp)-[0-9A-Za-z_-]{22,43}", // Square
    "AGE-SECRET-KEY-1[0-9A-Z]{58}", // age
    "(?:bot)?[0-9]{8,10}:AA[A-Za-z0-9_-]{33}", // Telegram bots
    "eyJ[A-Za-z0-9_-]{10,2000}\\.eyJ[A-Za-z0-9_-]{10,4000}\\.[A-Za-z0-9_-]{10,2000}", // JWTs
  ].join("|"),
  "g",
);

/**
 * Where a prefixed credential can be: a separator (`_ - . : /`) followed by sixteen token
 * characters, or one of the prefixes that have no separator. Scanning for this is much cheaper than
 * running the thirty formats at every position; each hit is widened to its token, and only the
 * token is searched with PREFIXED. The sixteen token characters are written out rather than
 * counted (`{16}`), the same language: the regex engine then skips through prose several characters
 * at a time instead of trying every position.
 */
const CANDIDATE = new RegExp(
  `[_.:/-]${"[A-Za-z0-9_-]".repeat(16)}|A(?:KIA|SIA|BIA|CCA|GPA|IDA|ROA|NPA|NVA|IPA|Iza)[A-Za-z0-9]|SK[0-9a-fA-F]{8}|dapi[0-9a-f]{8}`,
  "g",
);
const MAX_TOKEN = 8192;

/** Letters, digits and `_ - . / : + = ~`: what keys, JWTs and the URLs that carry them are made of. */
function isTokenChar(c: number): boolean {
  return (
    isAsciiLetter(c) ||
    isDigit(c) ||
    c === 95 ||
    c === 45 ||
    c === 46 ||
    c === 47 ||
    c === 58 ||
    c === 43 ||
    c === 61 ||
    c === 126
  );
}

const PRIVATE_KEY_BEGIN = /-----BEGIN (?:[A-Z0-9]{2,10} ){0,3}PRIVATE KEY(?: BLOCK)?-----/g;
/**
 * The body of a key whose END line is missing: base64 lines (or JSON-escaped `\n` between them)
 * and the headers of old encrypted keys, so the prose after a truncated paste is not swallowed.
 */
const PEM_BODY =
  /(?:(?:[ \t\r\n]|\\n){1,4}(?:[A-Za-z0-9+/=]{16,8192}|(?:Proc-Type|DEK-Info):[^\r\n\\]{1,80})){0,400}/y;
const MAX_PEM = 16_000;

/** The password of `scheme://user:password@host`, or `redis://:password@host` with no user. */
const URL_PASSWORD = /[a-z][a-z0-9+.-]{1,20}:\/\/[^\s:@/]{0,64}:([^\s@/]{3,128})@/g;

/**
 * A credential-named key, then `:` `=` `=>` or `:=`, then the value. The name may be one part of a
 * longer identifier (`DB_PASSWORD`, `aws_secret_access_key`); `Bearer` takes a value after a space.
 */
const ASSIGNMENT =
  /(?:pass(?:word|wd|phrase)?|pwd|secret|token|api[_-]?key|apikey|(?:access|secret|private|signing|encryption|master|client|app)[_-]?key|credentials?|auth[_-]?token)((?:[_-][A-Za-z0-9]{1,20}){0,4})["']?[ \t]{0,3}(?::=|=>|[:=])[ \t]{0,3}["']?((?:[^\s"'`,;&]|&(?![A-Za-z_][A-Za-z0-9_]{0,30}=)){6,300})|Bearer[ \t]{1,3}([A-Za-z0-9._~+/-]{20,2000}=*)/gi;
/**
 * The farthest a credential-named key can start before its `:` or `=`: the longest name
 * (`encryption_key`, 14), four identifier parts (84), a quote and three spaces. No key starts
 * earlier than this before the next operator, so the search starts there.
 */
const ASSIGNMENT_REACH = 14 + 84 + 1 + 3;
/** The `Bearer` form has no operator; where it may stand, the whole text is searched. */
const BEARER = /bearer/i;

/**
 * A password told in prose (docs/detectors.md#secrets-forms): `my password is hunter2!x`,
 * `the wifi password was Tr0ub4dor`. Kept only when the value mixes letters with a digit or a symbol
 * (`the password is required`, `case-sensitive` are words).
 */
const PROSE_PASSWORD =
  /(?:password|passwd|passphrase|passcode|pwd)(?: for [^\s]{1,40})? (?:is|was|is now|will be) ["'\u201c]?([^\s"'\u201d]{6,128})/iy;
/** The password of a MySQL command line: `mysql -u root -pS3cret db`, `-p'S3cret'` (docs/detectors.md#secrets-forms). */
const MYSQL_PASSWORD =
  /\b(?:mysql(?:dump|admin|sh|import)?|mariadb|sshpass)\b[^\n|;&]{0,200}? -p(?:'([^'\n]{1,128})'|"([^"\n]{1,128})"|([^\s'"-][^\s'"]{0,127}))/g;

function proseValue(value: string): string {
  const trimmed = value.replace(/[.,;:!?)]$/, "");
  if (PLACEHOLDER.test(trimmed) || !distinctAtLeast(trimmed, 5) || classes(trimmed) < 2) return "";
  // A digit or a symbol other than a hyphen: `case-sensitive` and `Required` are words.
  return /[0-9]|[^A-Za-z0-9-]/.test(trimmed) ? trimmed : "";
}

/**
 * Where the prose form's key word can start: `pass` or `pwd` in any case. A pattern that starts with
 * one character class skips the rest of the text quickly; the case-insensitive pattern of the whole
 * form, tried at every position, cost several times more on text without a password.
 */
const PROSE_START = /[pP](?:[aA][sS][sS]|[wW][dD])/g;

function findProse(text: string, spans: Span[]): void {
  PROSE_START.lastIndex = 0;
  for (let hit = PROSE_START.exec(text); hit !== null; hit = PROSE_START.exec(text)) {
    const at = hit.index;
    if (isAsciiLetter(text.charCodeAt(at - 1)) || isDigit(text.charCodeAt(at - 1))) continue;
    PROSE_PASSWORD.lastIndex = at;
    const m = PROSE_PASSWORD.exec(text);
    if (m === null) continue;
    const raw = m[1] ?? "";
    const value = proseValue(raw);
    if (value === "") continue;
    const start = at + m[0].length - raw.length;
    spans.push({ start, end: start + value.length });
    PROSE_START.lastIndex = start + value.length;
  }
}

function findMysql(text: string, spans: Span[]): void {
  collect(
    MYSQL_PASSWORD,
    text,
    (m) => {
      const value = m[1] ?? m[2] ?? m[3] ?? "";
      if (PLACEHOLDER.test(value)) return null;
      const quoted = m[3] === undefined ? 1 : 0;
      const start = m.index + m[0].length - quoted - value.length;
      return { start, end: start + value.length };
    },
    spans,
  );
}

const PLACEHOLDER =
  /^(?:[$%<{[(#]|\.{3}|x{4,}|\*{3,}|•{3,}|your[_-]|example|changeme|change_me|redacted|hidden|placeholder|none$|null$|nil$|undefined$|true$|false$|password$|secret$|token$|env\b|os\.|process\.|self\.|this\.|settings\.|config\.|https?:)/i;

/** Enough distinct characters to be random rather than a mask or a placeholder. */
function distinctAtLeast(s: string, wanted: number): boolean {
  const seen = new Set<number>();
  for (let i = 0; i < s.length && seen.size < wanted; i++) seen.add(s.charCodeAt(i));
  return seen.size >= wanted;
}

function classes(s: string): number {
  let lower = 0;
  let upper = 0;
  let digit = 0;
  let other = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 97 && c <= 122) lower = 1;
    else if (c >= 65 && c <= 90) upper = 1;
    else if (isDigit(c)) digit = 1;
    else other = 1;
  }
  return lower + upper + digit + other;
}

/** The random tail after the prefix: the last segment after `_`, `-` or `.` when it is long. */
function tailOf(token: string): string {
  const cut = Math.max(token.lastIndexOf("_"), token.lastIndexOf("-"), token.lastIndexOf("."));
  return cut >= 0 && token.length - cut > 16 ? token.slice(cut + 1) : token;
}

/** A PREFIXED match inside the token that starts at `offset` of the text. */
function keepPrefixed(text: string, m: RegExpExecArray, offset: number): Span | null {
  const token = m[0];
  const start = offset + m.index;
  const end = start + token.length;
  const prev = text.charCodeAt(start - 1);
  const next = text.charCodeAt(end);
  if (isAsciiLetter(prev) || isDigit(prev)) return null;
  if (isAsciiLetter(next) || isDigit(next)) return null;
  if (!distinctAtLeast(tailOf(token), 6)) return null;
  // sk- is also the start of words and slugs (sk-learn, sk-the-best-...): keys mix cases and digits.
  if (token.startsWith("sk-") && !token.startsWith("sk-ant-") && classes(token.slice(3)) < 3) return null;
  return { start, end };
}

/** From a BEGIN line to its END line, or over the base64 body when the END line is missing. */
function privateKeySpan(text: string, m: RegExpExecArray, nextEnd: number): Span {
  const headerEnd = m.index + m[0].length;
  if (nextEnd >= 0 && nextEnd - headerEnd <= MAX_PEM) {
    const close = text.indexOf("-----", nextEnd + 9);
    if (close >= 0 && close - nextEnd < 80) return { start: m.index, end: close + 5 };
  }
  // No END line (a truncated paste): the base64 body that follows is still the secret.
  PEM_BODY.lastIndex = headerEnd;
  const body = PEM_BODY.exec(text);
  return { start: m.index, end: headerEnd + (body ? body[0].length : 0) };
}

function findPrivateKeys(text: string, spans: Span[]): void {
  let nextEnd = -1;
  PRIVATE_KEY_BEGIN.lastIndex = 0;
  for (let m = PRIVATE_KEY_BEGIN.exec(text); m !== null; m = PRIVATE_KEY_BEGIN.exec(text)) {
    // One search for the END line serves every BEGIN before it: linear even on repeated headers.
    if (nextEnd < m.index) nextEnd = text.indexOf("-----END ", m.index);
    if (nextEnd < 0) nextEnd = text.length + 1;
    const span = privateKeySpan(text, m, nextEnd <= text.length ? nextEnd : -1);
    spans.push(span);
    PRIVATE_KEY_BEGIN.lastIndex = Math.max(span.end, m.index + m[0].length);
  }
}

/** A value that is a credential: no placeholder, and the mix of characters credentials have. */
function credentialValue(value: string, passwordLike: boolean): boolean {
  if (PLACEHOLDER.test(value) || value.includes("(") || !distinctAtLeast(value, 5)) return false;
  const kinds = classes(value);
  if (passwordLike) return kinds >= 2 || value.length >= 16;
  return (
    value.length >= 12 &&
    kinds >= 2 &&
    (isDigit(value.charCodeAt(0)) || /\d|[A-Z].*[a-z]|[a-z].*[A-Z]/.test(value))
  );
}

function keepAssignment(text: string, m: RegExpExecArray): Span | null {
  const bearer = m[3];
  if (bearer !== undefined) {
    if (!credentialValue(bearer, false) || !distinctAtLeast(bearer, 10)) return null;
    const start = m.index + m[0].length - bearer.length;
    return { start, end: start + bearer.length };
  }
  const value = m[2] ?? "";
  // The key name must start a word or an identifier part: not "bypass", "compass", "mytoken".
  if (isAsciiLetter(text.charCodeAt(m.index - 1))) return null;
  const name = m[0].slice(0, 12).toLowerCase();
  const passwordLike = name.startsWith("pass") || name.startsWith("pwd");
  if (!credentialValue(value, passwordLike)) return null;
  const start = m.index + m[0].length - value.length;
  return { start, end: start + value.length };
}

/**
 * The assignments of credentials. Most text holds few `:` and `=`, or none: instead of trying the
 * key names at every position, the search starts where a key could reach the next operator.
 */
function findAssignments(text: string, spans: Span[]): void {
  const bearer = BEARER.test(text);
  // The next `:` and `=` at or after the search position, kept so each is looked for once.
  let colon = -2;
  let equals = -2;
  ASSIGNMENT.lastIndex = 0;
  for (;;) {
    let from = ASSIGNMENT.lastIndex;
    if (!bearer) {
      if (colon !== -1 && colon < from) colon = text.indexOf(":", from);
      if (equals !== -1 && equals < from) equals = text.indexOf("=", from);
      const next = colon === -1 ? equals : equals === -1 ? colon : Math.min(colon, equals);
      if (next === -1) return;
      from = Math.max(from, next - ASSIGNMENT_REACH);
    }
    ASSIGNMENT.lastIndex = from;
    const m = ASSIGNMENT.exec(text);
    if (m === null) return;
    const span = keepAssignment(text, m);
    if (span) spans.push(span);
  }
}

/** The prefixed credentials in the token around each candidate position. */
function findPrefixed(text: string, spans: Span[]): void {
  CANDIDATE.lastIndex = 0;
  for (let m = CANDIDATE.exec(text); m !== null; m = CANDIDATE.exec(text)) {
    let start = m.index;
    while (start > 0 && m.index - start < 128 && isTokenChar(text.charCodeAt(start - 1))) start--;
    let end = m.index + m[0].length;
    while (end < text.length && end - start < MAX_TOKEN && isTokenChar(text.charCodeAt(end))) end++;
    const token = text.slice(start, end);
    PREFIXED.lastIndex = 0;
    for (let p = PREFIXED.exec(token); p !== null; p = PREFIXED.exec(token)) {
      const span = keepPrefixed(text, p, start);
      if (span) spans.push(span);
    }
    CANDIDATE.lastIndex = Math.max(CANDIDATE.lastIndex, end);
  }
}

export function findSecrets(text: string): Span[] {
  const spans: Span[] = [];
  findPrefixed(text, spans);
  if (text.includes("-----BEGIN")) findPrivateKeys(text, spans);
  if (text.includes("://")) {
    collect(
      URL_PASSWORD,
      text,
      (m) => {
        const password = m[1] ?? "";
        if (PLACEHOLDER.test(password)) return null;
        const start = m.index + m[0].length - 1 - password.length;
        return { start, end: start + password.length };
      },
      spans,
    );
  }
  findAssignments(text, spans);
  findProse(text, spans);
  // `indexOf("-p")`, not `includes(" -p")`: a search whose first character is a space stops at
  // every word.
  if (text.indexOf("-p") !== -1) findMysql(text, spans);
  return normalizeSpans(spans);
}
