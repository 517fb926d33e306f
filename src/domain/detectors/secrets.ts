import type { Span } from "../content-scan.js";
import { merge, scan } from "./spans.js";

/**
 * Credentials recognised by their issuer's prefix and shape. Each pattern names a format that is
 * public (cloud, code hosting, payment and model-provider keys, private keys, tokens); generic
 * `password = ...` assignments are caught too, with placeholders and code references left alone.
 */
const PREFIXED = new RegExp(
  [
    "\\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\\b", // AWS access key id
    "\\bgh[pousr]_[A-Za-z0-9]{36,255}\\b", // GitHub tokens
    "\\bgithub_pat_[A-Za-z0-9_]{50,255}\\b", // GitHub fine-grained token
    "\\bglpat-[A-Za-z0-9_-]{20,64}\\b", // GitLab personal token
    "\\bxox[abposr]-[A-Za-z0-9-]{10,250}\\b", // Slack tokens
    "https://hooks\\.slack\\.com/services/T[A-Z0-9]{6,12}/B[A-Z0-9]{6,12}/[A-Za-z0-9]{16,32}", // Slack webhook
    "\\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,247}\\b", // Stripe secret and restricted keys
    "\\bwhsec_[A-Za-z0-9]{24,64}\\b", // Stripe webhook secret
    "\\bsk-ant-[A-Za-z0-9_-]{32,200}", // Anthropic
    "\\bAIza[0-9A-Za-z_-]{35}(?![\\w-])", // Google API key
    "\\bSG\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43}\\b", // SendGrid
    "\\bnpm_[A-Za-z0-9]{36}\\b", // npm token
    "\\bhf_[A-Za-z]{34}\\b", // Hugging Face
    "\\bSK[0-9a-f]{32}\\b", // Twilio API key
    "\\beyJ[A-Za-z0-9_-]{10,2000}\\.eyJ[A-Za-z0-9_-]{10,4000}\\.[A-Za-z0-9_-]{10,2000}", // JWT
  ].join("|"),
  "g",
);

/** OpenAI-style keys: sk- and a long random tail (mixed case and digits, unlike a slug). */
const SK = /\bsk-(?:proj-|svcacct-|admin-)?([A-Za-z0-9_-]{20,200})(?![\w-])/g;

const PRIVATE_KEY =
  /-----BEGIN (?:[A-Z]{2,10} ){0,2}PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]{0,12000}?-----END (?:[A-Z]{2,10} ){0,2}PRIVATE KEY(?: BLOCK)?-----)?/g;

/** user:password@ in a connection URL: the password is the secret. */
const URL_PASSWORD =
  /\b(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|redis|rediss|amqps?|ftp|https?):\/\/[^\s:@/]{1,64}:([^\s@/]{3,128})@/g;

const ASSIGNMENT =
  /(?<![A-Za-z0-9])(?:password|passwd|pwd|secret|api[_-]?key|apikey|access[_-]?token|auth[_-]?token|client[_-]?secret|private[_-]?key)\b["']?\s{0,3}[:=]\s{0,3}["']?([^\s"'`,;]{8,128})/gi;

/** Values that stand for a secret rather than being one. */
const PLACEHOLDER =
  /^(?:\$|\{|<|%|\*+$|x+$|\.{3}|os\.|process\.env|env\(|getenv|none$|null$|undefined$|true$|false$|changeme|password$|your[_-]|example|redacted|secret$|\[)/i;

function looksRandom(s: string): boolean {
  return /[0-9]/.test(s) && /[a-z]/.test(s) && /[A-Z]/.test(s);
}

/** A value that is a secret: no placeholder, and a digit or symbol in it (or a long passphrase). */
function plausibleValue(value: string): boolean {
  if (PLACEHOLDER.test(value)) return false;
  return /[^A-Za-z]/.test(value) || value.length >= 16;
}

export function findSecrets(text: string): Span[] {
  return merge(
    scan(PREFIXED, text),
    scan(SK, text, (m) => looksRandom(m[1] ?? "")),
    text.includes("-----BEGIN") ? scan(PRIVATE_KEY, text) : [],
    text.includes("://") ? scan(URL_PASSWORD, text, () => true, 1) : [],
    scan(ASSIGNMENT, text, (m) => plausibleValue(m[1] ?? ""), 1),
  );
}
