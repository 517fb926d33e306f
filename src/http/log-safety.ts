import { findSecrets } from "../domain/detectors/secrets.js";

/** Query parameters whose values are logged: paging and identifiers, none of them a secret. */
const LOGGED_QUERY = /^(offset|limit|[a-z_]*_id|[a-z_]*_hash)$/;

/** What stands in the log for a value that is not logged. */
const MASK = "[REDACTED]";

/** The prefix of this service's key secrets (src/services/keys.ts), in any case and part of any value. */
const OUR_KEY = /sk-gr-/i;
/** Ids and hashes, logged on purpose: hex digits and dashes carry none of the secret shapes below. */
const HEX_OR_UUID = /^[0-9a-fA-F-]+$/;
/** The runs of a value a generic token is looked for in: what base64, base64url and hex are made of. */
const TOKEN_RUN = /[A-Za-z0-9_+/=~.-]{24,}/g;

/**
 * Whether a path segment or query value looks like a secret (docs/behaviour.md#secrets-not-logged):
 * one of this service's keys, a credential of a shape the secrets detector knows (a provider's key,
 * a cloud key, a JWT, a password in a URL, `password=...`), or a long random-looking token: at
 * least 24 characters that mix upper and lower case letters and digits with many distinct
 * characters, as generated keys do and words, slugs, ids and hashes do not.
 */
export function looksSecret(raw: string): boolean {
  // The common cases: path words, numbers, short values; ids and hashes.
  if (raw.length < 16 || HEX_OR_UUID.test(raw)) return false;
  let value = raw;
  if (raw.includes("%")) {
    try {
      value = decodeURIComponent(raw);
    } catch {
      // Broken percent-encoding: the value is read as it came.
    }
  }
  if (OUR_KEY.test(value)) return true;
  if (findSecrets(value).length > 0) return true;
  for (const run of value.match(TOKEN_RUN) ?? []) if (randomLooking(run)) return true;
  return false;
}

function randomLooking(token: string): boolean {
  if (!/[A-Z]/.test(token) || !/[a-z]/.test(token) || !/[0-9]/.test(token)) return false;
  return new Set(token).size >= 16;
}

/** Whether a segment of the path is long enough (16 characters) to be looked at; a scan, cheaper than a regex. */
function hasLongSegment(path: string): boolean {
  let run = 0;
  for (let i = 0; i < path.length; i++) {
    if (path.charCodeAt(i) === 47) run = 0;
    else if (++run >= 16) return true;
  }
  return false;
}

function maskedPath(path: string): string {
  // The common case (the chat completions route among them): no segment long enough to hold a secret.
  if (!hasLongSegment(path)) return path;
  const segments = path.split("/");
  let changed = false;
  for (let i = 0; i < segments.length; i++) {
    if (looksSecret(segments[i] as string)) {
      segments[i] = MASK;
      changed = true;
    }
  }
  return changed ? segments.join("/") : path;
}

/**
 * A request URL fit for the log (docs/behaviour.md#secrets-not-logged): the log must never hold a
 * secret, and a client may put its API key anywhere in a URL. The value of every query parameter
 * other than paging and ids is replaced, since a client may put its key there (`?api_key=...`);
 * a path segment, a query name or a paging or id value that looks like a secret is replaced too.
 */
export function logSafeUrl(url: string): string {
  const at = url.indexOf("?");
  const path = maskedPath(at < 0 ? url : url.slice(0, at));
  if (at < 0) return path;
  const query = url
    .slice(at + 1)
    .split("&")
    .map((pair) => {
      const eq = pair.indexOf("=");
      const name = eq < 0 ? pair : pair.slice(0, eq);
      if (looksSecret(name)) return MASK;
      let decoded = name;
      try {
        decoded = decodeURIComponent(name);
      } catch {
        // A name that does not decode is no parameter we know: its value is hidden like any other.
      }
      if (eq < 0) return pair;
      if (!LOGGED_QUERY.test(decoded) || looksSecret(pair.slice(eq + 1))) return `${name}=${MASK}`;
      return pair;
    });
  return `${path}?${query.join("&")}`;
}

/** Fastify's request serializer for the log, with the URL made safe. */
export function requestForLog(request: {
  method: string;
  url: string;
  host?: string;
  ip?: string;
  socket?: { remotePort?: number };
}): Record<string, unknown> {
  return {
    method: request.method,
    url: logSafeUrl(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}
