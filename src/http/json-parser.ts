import { isUtf8 } from "node:buffer";
import type { FastifyInstance } from "fastify";
import secureJson from "secure-json-parse";
import { MAX_NESTING } from "../domain/chat-texts.js";
import { AppError } from "../domain/errors.js";
import { FORWARDED_ROUTES } from "../gateway/surfaces/index.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The JSON body's text as it arrived (the gateway forwards it when it changes nothing but the model). */
    jsonText?: string;
  }
}

/**
 * The JSON body parser: refuses invalid UTF-8 (Node would silently substitute U+FFFD) and the
 * `__proto__` / `constructor.prototype` keys that poison objects, each with a 400 in our error shape.
 */
export function installJsonParser(app: FastifyInstance): void {
  app.decorateRequest("jsonText", undefined);
  // Only JSON is accepted; any other type is a 415 (Fastify also parses text/plain by default).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    /^application\/([\w.+-]+\+)?json$/,
    { parseAs: "buffer" },
    (request, body, done) => {
      let read: JsonBody;
      try {
        read = readJsonBody(
          body as Buffer,
          request.headers["content-encoding"],
          !FORWARDED_ROUTES.has(request.routeOptions.url ?? ""),
        );
      } catch (err) {
        done(err as Error);
        return;
      }
      request.jsonText = read.text;
      done(null, read.parsed);
    },
  );
}

/** A JSON body as parsed, with its text as it arrived. */
export interface JsonBody {
  parsed: unknown;
  text: string;
}

/**
 * Reads a JSON body, or throws the 400 or 415 that says why it cannot be read: a compressed body,
 * an empty one, invalid UTF-8, nesting deeper than MAX_DEPTH, text that is not JSON or holds a
 * poisoning key, an object that repeats a key, and for a body that is `stored`, a string no
 * database can store as sent.
 */
export function readJsonBody(buffer: Buffer, contentEncoding: string | undefined, stored: boolean): JsonBody {
  if (contentEncoding !== undefined && contentEncoding.toLowerCase() !== "identity") {
    // Compressed bodies are not decoded; reading them as JSON would give a misleading 400.
    throw new AppError("unsupported_media_type", { reason: "content_encoding_not_supported" });
  }
  if (buffer.length === 0) {
    throw new AppError("invalid_request", {
      issues: [{ path: "", message: "the body is empty; send a JSON object" }],
    });
  }
  if (!isUtf8(buffer)) {
    throw new AppError("invalid_request", { issues: [{ path: "", message: "the body is not valid UTF-8" }] });
  }
  const shape = structureOf(buffer, MAX_DEPTH);
  const deepAt = shape & TOO_DEEP ? tooDeepAt(buffer, MAX_DEPTH) : undefined;
  if (deepAt !== undefined) {
    throw new AppError("invalid_request", {
      issues: [
        { path: deepAt, message: `the request is nested deeper than ${MAX_DEPTH} objects and arrays` },
      ],
      limit: "nesting_depth",
      max_depth: MAX_DEPTH,
    });
  }
  const text = buffer.toString("utf8");
  let parsed: unknown;
  try {
    parsed = mayHoldPoison(text)
      ? secureJson.parse(text, undefined, { protoAction: "error", constructorAction: "error" })
      : JSON.parse(text);
  } catch (err) {
    const poisoned = err instanceof SyntaxError && /prototype/i.test(err.message);
    const message = poisoned
      ? "the body uses a forbidden key (__proto__ or constructor.prototype)"
      : "the body is not valid JSON";
    throw new AppError("invalid_request", { issues: [{ path: "", message }] });
  }
  // JSON.parse keeps the last copy of a repeated key, but the client's own text (forwarded when
  // nothing is redacted) still holds the first: refused, so what is scanned is what is sent
  // (docs/behaviour.md#duplicate-keys).
  const duplicate = shape & DUPLICATE ? duplicateAt(buffer) : undefined;
  if (duplicate !== undefined) {
    throw new AppError("invalid_request", {
      issues: [
        {
          path: duplicate,
          message: "the property appears more than once in its object; send each property once",
        },
      ],
    });
  }
  // NUL and lone surrogates can only arrive escaped; look for them only then. Model requests are
  // forwarded, never stored, so they may carry both.
  const problem =
    stored && (buffer.includes("\\u0000") || buffer.includes("\\ud") || buffer.includes("\\uD"))
      ? findUnstorable(parsed)
      : undefined;
  if (problem !== undefined) throw new AppError("invalid_request", { issues: [problem] });
  return { parsed, text };
}

/**
 * Whether a JSON text could hold a `__proto__` or `constructor` key. secure-json-parse finds them
 * with two regular expressions over the whole text, written plainly or with \u escapes (the only
 * JSON escape that can stand for a letter), which every body would pay; a text holding neither name
 * as written and no \u escape cannot hold them, and three native searches say so.
 */
function mayHoldPoison(text: string): boolean {
  return text.includes("\\u") || text.includes("__proto__") || text.includes("constructor");
}

/**
 * How deep a body may nest arrays and objects: the model request's own limit, for every route.
 * Deeper bodies break whatever walks them recursively (validation, JSON.stringify when forwarding)
 * with a stack overflow; no request of the API or of an OpenAI-compatible client needs as many.
 */
export const MAX_DEPTH = MAX_NESTING;

const TOO_DEEP = 1;
const DUPLICATE = 2;

/*
 * The state of structureOf, kept between calls: it runs synchronously to the end, so one set serves
 * every body and a request allocates nothing for it but the keys of its largest objects.
 */
/** Per depth: where the open object's keys begin in `keySpans`, or -1 for an array. */
const frameKeys = new Int32Array(MAX_DEPTH + 2);
/** Per depth: the open object's keys decoded, once it has more than LINEAR_KEYS or an escaped one. */
const frameSets: (Set<string> | undefined)[] = [];
/** Per depth: 1 when the open object's keys are in frameSets. */
const frameDecoded = new Uint8Array(MAX_DEPTH + 2);
/** The byte ranges (start, end) of the keys of every open object, innermost last, up to `spansTop`. */
let keySpans = new Int32Array(1024);
let spansTop = 0;
/** Up to this many keys, an object's keys are compared byte by byte; beyond, through a Set. */
const LINEAR_KEYS = 8;

/**
 * Whether some array or object is nested deeper than `max` (TOO_DEEP) and whether some object
 * repeats a key (DUPLICATE), in one pass: the check every body pays. It crosses each string with a
 * native search for its closing quote (a prompt is mostly string) and compares a key only with the
 * keys of its own object: byte by byte while they are few and unescaped, decoded in a Set beyond
 * (so `"a"` and `"\u0061"` are one key). Reads brackets exactly as tooDeepAt and duplicateAt do,
 * which name where.
 */
function structureOf(buffer: Buffer, max: number): number {
  let depth = 0;
  let awaitingKey = false;
  let duplicate = 0;
  spansTop = 0;
  for (let i = 0; i < buffer.length; i++) {
    const byte = buffer[i];
    if (byte === 0x22) {
      // The closing quote is the first one after an even run of backslashes.
      let end = i;
      for (;;) {
        end = buffer.indexOf(0x22, end + 1);
        if (end < 0) return duplicate;
        let slashes = 0;
        while (buffer[end - 1 - slashes] === 0x5c) slashes++;
        if (slashes % 2 === 0) break;
      }
      if (awaitingKey && duplicate === 0 && repeatsKey(buffer, depth, i + 1, end)) duplicate = DUPLICATE;
      awaitingKey = false;
      i = end;
    } else if (byte === 0x7b) {
      if (++depth > max) return TOO_DEEP | duplicate;
      frameKeys[depth] = spansTop;
      frameDecoded[depth] = 0;
      awaitingKey = true;
    } else if (byte === 0x5b) {
      if (++depth > max) return TOO_DEEP | duplicate;
      frameKeys[depth] = -1;
      awaitingKey = false;
    } else if ((byte === 0x5d || byte === 0x7d) && depth > 0) {
      const from = frameKeys[depth] as number;
      if (from >= 0) {
        spansTop = from;
        if (frameDecoded[depth] === 1) frameSets[depth] = undefined;
      }
      depth--;
      awaitingKey = false;
    } else if (byte === 0x2c) awaitingKey = depth > 0 && (frameKeys[depth] as number) >= 0;
  }
  return duplicate;
}

/** Whether the key at [start, end) of the object open at `depth` repeats one of its keys; records it. */
function repeatsKey(buffer: Buffer, depth: number, start: number, end: number): boolean {
  let escaped = false;
  for (let k = start; k < end; k++) {
    if (buffer[k] === 0x5c) {
      escaped = true;
      break;
    }
  }
  const from = frameKeys[depth] as number;
  if (frameDecoded[depth] === 0 && !escaped && spansTop - from < 2 * LINEAR_KEYS) {
    const length = end - start;
    for (let s = from; s < spansTop; s += 2) {
      const at = keySpans[s] as number;
      if ((keySpans[s + 1] as number) - at !== length) continue;
      let k = 0;
      while (k < length && buffer[at + k] === buffer[start + k]) k++;
      if (k === length) return true;
    }
    if (spansTop + 2 > keySpans.length) {
      const grown = new Int32Array(keySpans.length * 2);
      grown.set(keySpans);
      keySpans = grown;
    }
    keySpans[spansTop++] = start;
    keySpans[spansTop++] = end;
    return false;
  }
  let seen = frameSets[depth];
  if (seen === undefined) {
    // Every key recorded so far is unescaped: its bytes are its name.
    seen = new Set();
    for (let s = from; s < spansTop; s += 2)
      seen.add(buffer.toString("utf8", keySpans[s] as number, keySpans[s + 1] as number));
    frameSets[depth] = seen;
    frameDecoded[depth] = 1;
  }
  const name = escaped ? keyText(buffer, start - 1, end) : buffer.toString("utf8", start, end);
  if (seen.has(name)) return true;
  seen.add(name);
  return false;
}

/**
 * The JSON pointer of the first array or object nested deeper than `max`, read byte by byte
 * without parsing (a deep body costs no more than a flat one); undefined when none is. Brackets
 * inside strings do not count; escapes are skipped.
 */
function tooDeepAt(buffer: Buffer, max: number): string | undefined {
  const frames: { array: boolean; token: string; index: number; awaitingKey: boolean }[] = [];
  let stringStart = -1;
  for (let i = 0; i < buffer.length; i++) {
    const byte = buffer[i];
    if (stringStart >= 0) {
      if (byte === 0x5c) i++;
      else if (byte === 0x22) {
        const top = frames[frames.length - 1];
        if (top && !top.array && top.awaitingKey) {
          top.token = keyText(buffer, stringStart, i);
          top.awaitingKey = false;
        }
        stringStart = -1;
      }
      continue;
    }
    if (byte === 0x22) stringStart = i;
    else if (byte === 0x5b || byte === 0x7b) {
      if (frames.length >= max)
        return frames.map((f) => `/${f.array ? f.index : pointerToken(f.token)}`).join("");
      frames.push({ array: byte === 0x5b, token: "", index: 0, awaitingKey: byte === 0x7b });
    } else if (byte === 0x5d || byte === 0x7d) frames.pop();
    else if (byte === 0x2c) {
      const top = frames[frames.length - 1];
      if (top?.array) top.index++;
      else if (top) top.awaitingKey = true;
    }
  }
  return undefined;
}

/**
 * The JSON pointer of the first member whose key repeats an earlier key of its object (decoded),
 * read byte by byte like tooDeepAt; undefined when none does. Runs only once structureOf found one.
 */
function duplicateAt(buffer: Buffer): string | undefined {
  const frames: { keys: Set<string> | null; token: string; index: number; awaitingKey: boolean }[] = [];
  let stringStart = -1;
  for (let i = 0; i < buffer.length; i++) {
    const byte = buffer[i];
    if (stringStart >= 0) {
      if (byte === 0x5c) i++;
      else if (byte === 0x22) {
        const top = frames[frames.length - 1];
        if (top?.keys && top.awaitingKey) {
          top.token = keyText(buffer, stringStart, i);
          top.awaitingKey = false;
          if (top.keys.has(top.token))
            return frames.map((f) => `/${f.keys ? pointerToken(f.token) : f.index}`).join("");
          top.keys.add(top.token);
        }
        stringStart = -1;
      }
      continue;
    }
    if (byte === 0x22) stringStart = i;
    else if (byte === 0x5b || byte === 0x7b)
      frames.push({
        keys: byte === 0x7b ? new Set() : null,
        token: "",
        index: 0,
        awaitingKey: byte === 0x7b,
      });
    else if (byte === 0x5d || byte === 0x7d) frames.pop();
    else if (byte === 0x2c) {
      const top = frames[frames.length - 1];
      if (top && !top.keys) top.index++;
      else if (top) top.awaitingKey = true;
    }
  }
  return undefined;
}

/** A property name as written between the quotes at `from` and `to`, escapes decoded. */
function keyText(buffer: Buffer, from: number, to: number): string {
  const raw = buffer.toString("utf8", from, to + 1);
  try {
    return JSON.parse(raw) as string;
  } catch {
    return raw.slice(1, -1);
  }
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

const pointerToken = (key: string) => key.replaceAll("~", "~0").replaceAll("/", "~1");

/**
 * The first string (or key) that cannot be stored as sent, with its JSON pointer: U+0000, which
 * PostgreSQL text cannot hold, or a lone UTF-16 surrogate, which has no UTF-8 form (SQLite would keep
 * invalid bytes and read them back as U+FFFD). No name or pattern needs either, so both are refused on
 * every database alike and what is stored reads back exactly. Walked with a stack, not recursion.
 */
function findUnstorable(root: unknown): { path: string; message: string } | undefined {
  const check = (text: string, path: string) => {
    if (text.includes("\0")) return { path, message: "must not contain the NUL character (U+0000)" };
    if (LONE_SURROGATE.test(text))
      return { path, message: "must not contain a lone UTF-16 surrogate (\\ud800 to \\udfff unpaired)" };
    return undefined;
  };
  const stack: { value: unknown; path: string }[] = [{ value: root, path: "" }];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const { value, path } = next;
    if (typeof value === "string") {
      const found = check(value, path);
      if (found) return found;
      continue;
    }
    if (value === null || typeof value !== "object") continue;
    // Pushed in reverse, so the first offending property in document order is the one named.
    for (const [key, item] of Object.entries(value).reverse()) {
      const at = `${path}/${pointerToken(key)}`;
      const found = check(key, at);
      if (found) return found;
      stack.push({ value: item, path: at });
    }
  }
  return undefined;
}
