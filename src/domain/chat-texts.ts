import { isUtf8 } from "node:buffer";
import { invalidRequest } from "./errors.js";

/**
 * The texts a chat completion request carries to the provider, and the same request with some of
 * them replaced (redaction). The rule is inverted: every string of the request is a text, wherever
 * it sits (messages, tools, tool_choice, response_format, prediction, unknown pass-through fields),
 * except a short allow-list of values that are not text: routing fields, enums, ids, links and
 * binary payloads (docs/gateway.md#what-is-scanned). Pure: the request is never mutated, and a
 * redacted copy shares every subtree it did not change.
 */

/** The parts of an OpenAI-style chat request that the gateway reads; everything else passes through. */
export interface ChatMessage {
  role: string;
  content?: unknown;
  tool_calls?: unknown;
  function_call?: unknown;
  [other: string]: unknown;
}

export interface ChatBody {
  model: string;
  messages: ChatMessage[];
  [other: string]: unknown;
}

/** Deeper than this many nested objects and arrays, a request is refused (400). */
export const MAX_NESTING = 128;
/** More strings to scan than this, and a request is refused (400): a bound on one request's work. */
export const MAX_TEXTS = 50_000;

/**
 * The role given to texts outside the messages (tool definitions, response_format, prediction, ...):
 * the application writes them, not its end user, so a `user_only` scan scope leaves them out.
 */
export const REQUEST_ROLE = "developer";

type Container = Record<string, unknown> | unknown[];

/** An object or array on the way from the request (the root) to a string. */
export interface PathNode {
  readonly value: Container;
  readonly parent: PathNode | null;
  /** Where `value` sits in the parent ("" for the root). */
  readonly key: string | number;
}

/** How a text payload's bytes are read (docs/gateway.md#data-urls). */
type Charset = "utf8" | "latin1" | "utf16le" | "utf16be";

/** A `data:` URL whose payload is text: how to decode it and encode a changed text back. */
interface DataUrl {
  /** Everything up to and including the comma. */
  head: string;
  encoding: "base64" | "percent" | "plain";
  charset: Charset;
  /** The payload decoded: what is scanned, and what a redaction rewrites. */
  text: string;
  /**
   * The payload is base64 in a form decoders read differently (line breaks or spaces, the URL-safe
   * alphabet, missing padding): it is forwarded re-encoded as canonical base64 of what was scanned.
   */
  recode: boolean;
}

/** Where a text sits, enough to write a replacement back (or to name the place in a refusal). */
export interface TextPlace {
  /** The object or array holding the string, or the object whose property name is the text. */
  node: PathNode;
  key: string | number;
  /** The text is the property name `key` itself, not its value. */
  isKey?: true;
  /** The string is a `data:` URL; the text is (or lies in) its decoded payload. */
  dataUrl?: DataUrl;
  /** The string (or decoded payload) is JSON; the text is the token at [start, end) of it. */
  token?: { start: number; end: number };
}

/**
 * - `text`: rewritten in place by a redaction;
 * - `name`: a function, schema or participant name; `key`: a property name. Other parts of the
 *   request (or the application) refer to these by their exact spelling, so they are scanned but
 *   never rewritten: a redaction that matches one refuses the request instead.
 */
export type TextKind = "text" | "name" | "key";

export interface ChatText {
  text: string;
  /** The role of the message it belongs to, or REQUEST_ROLE outside the messages. */
  role: string;
  /** The index of that message, or null outside the messages. */
  message: number | null;
  /** Raw JSON text that could not be parsed: a label put into it must be JSON-escaped. */
  json: boolean;
  kind: TextKind;
  place: TextPlace;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/* The allow-list. Each entry is a value that is not text; see docs/gateway.md#what-is-scanned. */

/** Top-level fields skipped whole: routing and output settings, model slugs, enums, token ids. */
const TOP_LEVEL_SKIPPED = new Set([
  "model",
  "models",
  "provider",
  "route",
  "transforms",
  "service_tier",
  "reasoning_effort",
  "verbosity",
  "modalities",
  "audio",
  "logit_bias",
  "stream",
  "stream_options",
]);
/** Top-level fields that are enums when they are strings ("auto", "none", "required"). */
const TOP_LEVEL_ENUMS = new Set(["tool_choice", "function_call"]);
/** Values that are enums or opaque ids wherever the API uses these names. */
const ENUM_OR_ID_FIELDS = new Set([
  "type",
  "role",
  "id",
  "tool_call_id",
  // a Responses function call and its output pair by it (docs/gateway.md#responses-roles)
  "call_id",
  "file_id",
  "signature",
  "encrypted_content",
  // an Anthropic tool_result block names its tool_use by it (docs/gateway.md#messages-roles)
  "tool_use_id",
  // the type of an Anthropic content block's source (docs/gateway.md#messages)
  "media_type",
]);
/** JSON Schema references: their values are open, so they are scanned, as names (never rewritten). */
const REFERENCES = new Set(["$ref", "$schema"]);
/** Objects whose property names are names (JSON Schema): every key is scanned, values are schemas. */
const NAME_MAPS = new Set(["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]);
/** Fields whose whole content is data: every key and value is scanned, nothing is allow-listed. */
const DATA_FIELDS = new Set(["enum", "const", "default", "examples", "metadata"]);

/**
 * The API's own field names (OpenAI and OpenRouter chat requests, JSON Schema keywords): the
 * property names that are not scanned, outside name maps and data. Any other key is a name the
 * caller chose and is scanned.
 */
const KNOWN_FIELDS = new Set([
  ...TOP_LEVEL_SKIPPED,
  ...ENUM_OR_ID_FIELDS,
  ...REFERENCES,
  ...NAME_MAPS,
  ...DATA_FIELDS,
  // requests and messages
  "messages",
  "content",
  "name",
  "refusal",
  "reasoning",
  "reasoning_content",
  "reasoning_details",
  "summary",
  "text",
  "data",
  "format",
  "index",
  "tool_calls",
  "function",
  "function_call",
  "arguments",
  "tools",
  "tool_choice",
  "functions",
  "parameters",
  "strict",
  "description",
  "response_format",
  "json_schema",
  "schema",
  "image_url",
  "url",
  "detail",
  "input_audio",
  "file",
  "filename",
  "file_data",
  "input_text",
  "output_text",
  "annotations",
  "url_citation",
  "title",
  "start_index",
  "end_index",
  "cache_control",
  "ttl",
  "prediction",
  "max_tokens",
  "max_completion_tokens",
  "temperature",
  "top_p",
  "top_k",
  "top_a",
  "min_p",
  "n",
  "stop",
  "seed",
  "presence_penalty",
  "frequency_penalty",
  "repetition_penalty",
  "logprobs",
  "top_logprobs",
  "parallel_tool_calls",
  "include_usage",
  "store",
  "user",
  // embeddings requests (docs/gateway.md#embeddings)
  "input",
  "encoding_format",
  "dimensions",
  "safety_identifier",
  "prompt_cache_key",
  "usage",
  "include",
  "plugins",
  "effort",
  "exclude",
  "enabled",
  "web_search_options",
  "search_context_size",
  "user_location",
  "approximate",
  "city",
  "country",
  "region",
  "timezone",
  // Responses requests (docs/gateway.md#responses): the names, not their values
  "instructions",
  "max_output_tokens",
  "max_tool_calls",
  "previous_response_id",
  "background",
  "conversation",
  "prompt",
  "truncation",
  "output",
  "status",
  "input_image",
  "input_file",
  "file_url",
  // Anthropic Messages requests (docs/gateway.md#messages): the names, not their values
  "system",
  "stop_sequences",
  "input_schema",
  "is_error",
  "source",
  "thinking",
  "budget_tokens",
  "citations",
  "disable_parallel_tool_use",
  // JSON Schema
  "$id",
  "$anchor",
  "$comment",
  "additionalProperties",
  "required",
  "items",
  "prefixItems",
  "additionalItems",
  "contains",
  "minContains",
  "maxContains",
  "pattern",
  "minLength",
  "maxLength",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minItems",
  "maxItems",
  "uniqueItems",
  "minProperties",
  "maxProperties",
  "dependentRequired",
  "dependencies",
  "propertyNames",
  "unevaluatedProperties",
  "unevaluatedItems",
  "allOf",
  "anyOf",
  "oneOf",
  "not",
  "if",
  "then",
  "else",
  "contentEncoding",
  "contentMediaType",
  "deprecated",
  "readOnly",
  "writeOnly",
  "nullable",
]);

/** How the members of a container are read. */
const STRUCT = 0; // the request's own structure: known fields are not scanned as names, enums skipped
const NAMES = 1; // a JSON Schema name map: keys are names, values are schemas (STRUCT)
const DATA = 2; // caller data: every key and value scanned
const SKIPPED = 3; // allow-listed: only walked to bound the nesting
type Mode = typeof STRUCT | typeof NAMES | typeof DATA | typeof SKIPPED;

interface Frame {
  node: PathNode;
  /** Object keys, or null for an array. */
  keys: string[] | null;
  next: number;
  depth: number;
  mode: Mode;
  role: string;
  message: number | null;
  /** For an array: the property it is the value of, so `"type": ["string", "null"]` stays an enum. */
  field: string;
}

/** JSON pointer of a place (RFC 6901); `key` appended when given. */
function pointerOf(node: PathNode, key?: string | number): string {
  const parts: string[] = key === undefined ? [] : [String(key)];
  for (let n: PathNode | null = node; n?.parent; n = n.parent) parts.push(String(n.key));
  let out = "";
  for (let i = parts.length - 1; i >= 0; i--)
    out += `/${(parts[i] as string).replaceAll("~", "~0").replaceAll("/", "~1")}`;
  return out;
}

/**
 * Where a text sits, as a JSON pointer into the request. A property name is pointed at through the
 * object that holds it, and a token of JSON text through that string: the pointer never repeats
 * the text itself, so it can go into a refusal.
 */
export function textPointer(text: ChatText): string {
  const { node, key, isKey } = text.place;
  return isKey ? pointerOf(node) : pointerOf(node, key);
}

/* data: URLs (RFC 2397). */

const MIME = /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/;
const CANONICAL_BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const LOOSE_BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;
/** A header longer than this is not a data: URL header (and a huge string is not searched for one). */
const MAX_DATA_HEAD = 512;

function isTextMime(mime: string): boolean {
  if (mime === "" || mime.startsWith("text/")) return true;
  if (mime.endsWith("+json") || mime.endsWith("+xml")) return true;
  return [
    "application/json",
    "application/ld+json",
    "application/x-ndjson",
    "application/jsonl",
    "application/xml",
    "application/javascript",
    "application/ecmascript",
    "application/x-javascript",
    "application/yaml",
    "application/x-yaml",
    "application/toml",
    "application/sql",
    "application/graphql",
    "application/x-www-form-urlencoded",
    "application/x-sh",
    "application/x-tex",
  ].includes(mime);
}

type DataUrlRead =
  | { kind: "none" }
  | { kind: "binary" }
  | { kind: "undecodable"; why: string }
  | { kind: "text"; url: DataUrl; json: boolean };

/** The charset a `charset=` parameter names, "" when none is given, or null for one not read here. */
function charsetNamed(name: string): Charset | "" | "utf16" | null {
  switch (name) {
    case "":
      return "";
    case "utf-8":
    case "utf8":
    case "us-ascii":
    case "ascii":
      return "utf8";
    case "iso-8859-1":
    case "iso_8859-1":
    case "latin1":
    case "latin-1":
    case "l1":
      return "latin1";
    case "utf-16":
    case "utf16":
      return "utf16";
    case "utf-16le":
      return "utf16le";
    case "utf-16be":
      return "utf16be";
    default:
      return null;
  }
}

/**
 * The bytes of a base64 payload as a forgiving decoder reads them: spaces and line breaks (RFC 2045)
 * dropped, the URL-safe alphabet (`-`, `_`) read as `+` and `/`, padding optional. Null when some
 * character is neither (decoders that skip such characters and decoders that refuse them disagree)
 * or when both alphabets are mixed.
 */
function base64Bytes(payload: string): { bytes: Buffer; canonical: boolean } | null {
  if (payload.length % 4 === 0 && CANONICAL_BASE64.test(payload))
    return { bytes: Buffer.from(payload, "base64"), canonical: true };
  let p = payload.replace(/[ \t\r\n\f]+/g, "");
  if (!LOOSE_BASE64.test(p)) return null;
  const urlSafe = p.includes("-") || p.includes("_");
  if (urlSafe && (p.includes("+") || p.includes("/"))) return null;
  if (urlSafe) p = p.replaceAll("-", "+").replaceAll("_", "/");
  const bare = p.endsWith("=") ? p.slice(0, p.indexOf("=")) : p;
  if (bare.length % 4 === 1) return null;
  return { bytes: Buffer.from(bare, "base64"), canonical: false };
}

/** The bytes of a percent-encoded payload: `%XX` decoded, anything else (a stray `%` too) as written. */
function percentBytes(payload: string): Buffer {
  const raw = Buffer.from(payload, "utf8");
  const out = Buffer.allocUnsafe(raw.length);
  let n = 0;
  for (let i = 0; i < raw.length; i++) {
    const byte = raw[i] as number;
    if (byte === 0x25 && i + 2 < raw.length && isHex(raw[i + 1]) && isHex(raw[i + 2])) {
      out[n++] = Number.parseInt(raw.toString("latin1", i + 1, i + 3), 16);
      i += 2;
    } else out[n++] = byte;
  }
  return out.subarray(0, n);
}

function isHex(byte: number | undefined): boolean {
  return byte !== undefined && ((byte >= 48 && byte <= 57) || ((byte | 32) >= 97 && (byte | 32) <= 102));
}

/**
 * Decodes a text payload's bytes. A byte-order mark decides first, whatever the label says (as a
 * browser's decoder does); then the charset named; with none, UTF-8, or each byte as one character
 * when the bytes are not UTF-8. A string when decoded, or why it cannot be.
 */
function decodeText(
  bytes: Buffer,
  named: Charset | "" | "utf16",
): { text: string; charset: Charset } | string {
  let charset: Charset | "" | "utf16" = named;
  if (bytes[0] === 0xfe && bytes[1] === 0xff) charset = "utf16be";
  else if (bytes[0] === 0xff && bytes[1] === 0xfe) charset = "utf16le";
  else if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) charset = "utf8";
  if (charset === "utf16")
    return "a UTF-16 payload without a byte-order mark is read in either byte order; send a BOM, or charset utf-16le or utf-16be";
  if (charset === "utf16le" || charset === "utf16be") {
    if (bytes.length % 2 !== 0) return "the UTF-16 payload has an odd number of bytes";
    const le = charset === "utf16le" ? bytes : Buffer.from(bytes).swap16();
    return { text: le.toString("utf16le"), charset };
  }
  if (charset === "latin1") return { text: bytes.toString("latin1"), charset };
  if (isUtf8(bytes)) return { text: bytes.toString("utf8"), charset: "utf8" };
  if (charset === "utf8") return "the payload is not valid UTF-8, its declared charset";
  return { text: bytes.toString("latin1"), charset: "latin1" };
}

/**
 * Reads a string as a data: URL: not one, one of a binary type, one of a text type decoded, or one
 * of a text type whose payload cannot be decoded (which is refused, never forwarded unscanned).
 */
function readDataUrl(value: string): DataUrlRead {
  // "data:" in any case; the first character rules out most strings before anything is allocated.
  if (value.length < 6 || (value.charCodeAt(0) | 32) !== 100 || value.slice(1, 5).toLowerCase() !== "ata:")
    return { kind: "none" };
  const comma = value.indexOf(",", 5);
  if (comma < 0 || comma > MAX_DATA_HEAD) return { kind: "none" };
  const params = value.slice(5, comma).split(";");
  const mime = (params[0] ?? "").trim().toLowerCase();
  if (mime !== "" && !MIME.test(mime)) return { kind: "none" };
  let base64 = false;
  let charsetName = "";
  for (let i = 1; i < params.length; i++) {
    const p = (params[i] as string).trim().toLowerCase();
    if (p === "base64" && i === params.length - 1) base64 = true;
    else if (p.startsWith("charset=")) charsetName = p.slice(8).replaceAll('"', "").trim();
    else if (!p.includes("=")) return { kind: "none" };
  }
  if (!isTextMime(mime)) return { kind: "binary" };
  const named = charsetNamed(charsetName);
  if (named === null)
    return {
      kind: "undecodable",
      why: "the payload's charset is not one the gateway reads (UTF-8, ISO-8859-1, UTF-16)",
    };
  const head = value.slice(0, comma + 1);
  const payload = value.slice(comma + 1);
  const json = mime.endsWith("json");
  let bytes: Buffer;
  let encoding: DataUrl["encoding"] = "plain";
  let recode = false;
  if (base64) {
    // A URL's own percent-escapes are undone before the base64 is read, as a browser does.
    const read = base64Bytes(payload.includes("%") ? percentBytes(payload).toString("latin1") : payload);
    if (read === null) return { kind: "undecodable", why: "the payload is not base64" };
    bytes = read.bytes;
    encoding = "base64";
    recode = !read.canonical || payload.includes("%");
  } else if (payload.includes("%")) {
    bytes = percentBytes(payload);
    encoding = "percent";
  } else if (named === "" || named === "utf8") {
    // The common case: the payload is the text.
    return { kind: "text", url: { head, encoding, charset: "utf8", text: payload, recode }, json };
  } else bytes = Buffer.from(payload, "utf8");
  const decoded = decodeText(bytes, named);
  if (typeof decoded === "string") return { kind: "undecodable", why: decoded };
  const url: DataUrl = { head, encoding, charset: decoded.charset, text: decoded.text, recode };
  return { kind: "text", url, json };
}

/** The bytes of a text in a payload's charset. */
function encodeText(text: string, charset: Charset): Buffer {
  if (charset === "utf16be") return Buffer.from(text, "utf16le").swap16();
  return Buffer.from(text, charset);
}

/** Percent-encodes bytes: unreserved ASCII as it is, every other byte as %XX. */
function percentEncode(bytes: Buffer): string {
  let out = "";
  for (const byte of bytes) {
    const unreserved =
      (byte >= 48 && byte <= 57) ||
      ((byte | 32) >= 97 && (byte | 32) <= 122) ||
      byte === 45 ||
      byte === 46 ||
      byte === 95 ||
      byte === 126;
    out += unreserved
      ? String.fromCharCode(byte)
      : `%${byte < 16 ? "0" : ""}${byte.toString(16).toUpperCase()}`;
  }
  return out;
}

function encodeDataUrl(url: DataUrl, text: string): string {
  switch (url.encoding) {
    case "base64":
      return url.head + encodeText(text, url.charset).toString("base64");
    case "percent":
      return (
        url.head +
        (url.charset === "utf8" ? encodeURIComponent(text) : percentEncode(encodeText(text, url.charset)))
      );
    case "plain":
      // A "%" written plainly would be read as the start of an escape.
      if (url.charset !== "utf8") return url.head + percentEncode(encodeText(text, url.charset));
      return url.head + (text.includes("%") ? encodeURIComponent(text) : text);
  }
}

/* JSON text (tool-call arguments, JSON data: URLs). */

/** One string or number token of a JSON text. */
export interface JsonToken {
  start: number;
  end: number;
  /** The string's value, or the number as written. */
  value: string;
  key: boolean;
}

function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

/**
 * The string and number tokens of a JSON text, or null when it is not JSON. Each string is decoded
 * (so `\n` before an address or `\u0040` inside one hides nothing from the detectors) and a
 * replacement is written back as a whole JSON string, so the text stays valid JSON. Numbers are
 * scanned too: a card or account number is often written as one.
 */
export function jsonTokens(src: string): JsonToken[] | null {
  try {
    JSON.parse(src);
  } catch {
    return null;
  }
  // Valid JSON from here on, so the tokens can be found without checking the grammar again.
  const tokens: JsonToken[] = [];
  const n = src.length;
  let i = 0;
  while (i < n) {
    const c = src.charCodeAt(i);
    if (c === 34) {
      let j = i + 1;
      let escaped = false;
      for (let d = src.charCodeAt(j); d !== 34; d = src.charCodeAt(j)) {
        if (d === 92) {
          escaped = true;
          j += 2;
        } else j++;
      }
      const end = j + 1;
      let k = end;
      while (k < n && isSpace(src.charCodeAt(k))) k++;
      const value = escaped ? (JSON.parse(src.slice(i, end)) as string) : src.slice(i + 1, j);
      tokens.push({ start: i, end, value, key: src.charCodeAt(k) === 58 });
      i = end;
    } else if (c === 45 || (c >= 48 && c <= 57)) {
      let j = i + 1;
      for (let d = src.charCodeAt(j); j < n && !isSpace(d) && d !== 44 && d !== 93 && d !== 125; )
        d = src.charCodeAt(++j);
      tokens.push({ start: i, end: j, value: src.slice(i, j), key: false });
      i = j;
    } else i++;
  }
  return tokens;
}

/* The walk. */

function tooDeep(pointer: string): never {
  throw invalidRequest([
    { path: pointer, message: `the request is nested deeper than ${MAX_NESTING} objects and arrays` },
  ]);
}

function tooMany(): never {
  throw invalidRequest([{ path: "", message: `the request carries more than ${MAX_TEXTS} strings to scan` }]);
}

/*
 * The forms of the allow-listed values (docs/gateway.md#what-is-scanned): a value that is not
 * scanned must be what it claims to be, or free text would pass beside the filters.
 */

/** Enum values, open (`type`, `role`, settings): lower-case identifiers, no spaces. */
const IDENTIFIER = /^[a-z][a-z0-9_.:-]{0,63}$/;
/** Ids made by providers and SDKs (`call_…`, `toolu_…`, `file-…`). */
const ID = /^[A-Za-z0-9_.:|=+/-]{1,512}$/;
/** Base64 in either alphabet (signatures, encrypted content, audio). */
const BASE64_VALUE = /^[A-Za-z0-9+/_-]*={0,2}$/;
/** A media type without parameters (`image/png`, `application/pdf`). */
const MEDIA_TYPE = /^[a-z0-9!#$&^_.+-]{1,64}\/[a-z0-9!#$&^_.+-]{1,64}$/;
/** Catalog model and provider slugs. */
const SLUG = /^[A-Za-z0-9~][A-Za-z0-9._:/~+-]{0,255}$/;
/** A token id, as `logit_bias` keys are written. */
const TOKEN_ID = /^-?[0-9]{1,10}$/;

type Issue = { path: string; message: string };
/** Checks a value at `path`: the first problem, or undefined. */
type Check = (value: unknown, path: string) => Issue | undefined;

const text =
  (form: RegExp, what: string): Check =>
  (value, path) =>
    typeof value === "string" && form.test(value) ? undefined : { path, message: `must be ${what}` };
const oneOf =
  (...values: string[]): Check =>
  (value, path) =>
    typeof value === "string" && values.includes(value)
      ? undefined
      : { path, message: `must be one of ${values.join(", ")}` };
const boolean: Check = (value, path) =>
  typeof value === "boolean" ? undefined : { path, message: "must be a boolean" };
const number: Check = (value, path) =>
  typeof value === "number" ? undefined : { path, message: "must be a number" };
const decimal: Check = (value, path) =>
  typeof value === "number" || (typeof value === "string" && /^[0-9]{1,20}(\.[0-9]{1,20})?$/.test(value))
    ? undefined
    : { path, message: "must be a number, or a decimal number written as a string" };
const nullable =
  (check: Check): Check =>
  (value, path) =>
    value === null ? undefined : check(value, path);
const either =
  (first: Check, second: Check): Check =>
  (value, path) =>
    first(value, path) && second(value, path);
const listOf =
  (item: Check): Check =>
  (value, path) => {
    if (!Array.isArray(value)) return { path, message: "must be an array" };
    for (let i = 0; i < value.length; i++) {
      const found = item(value[i], `${path}/${i}`);
      if (found) return found;
    }
    return undefined;
  };
const pointerToken = (key: string) => key.replaceAll("~", "~0").replaceAll("/", "~1");
const objectOf =
  (members: Record<string, Check>): Check =>
  (value, path) => {
    if (!isRecord(value)) return { path, message: "must be an object" };
    for (const [key, item] of Object.entries(value)) {
      const at = `${path}/${pointerToken(key)}`;
      const check = Object.hasOwn(members, key) ? members[key] : undefined;
      if (!check) return { path: at, message: "is not a known member of this object" };
      const found = check(item, at);
      if (found) return found;
    }
    return undefined;
  };

const identifier = text(IDENTIFIER, "a lower-case identifier (letters, digits, _ . : -)");
const slug = text(SLUG, "a model or provider slug");
const slugs = nullable(listOf(slug));
const percentiles = objectOf({
  p50: nullable(number),
  p75: nullable(number),
  p90: nullable(number),
  p99: nullable(number),
});

/**
 * The top-level fields that are not scanned, each with the form it must have: OpenRouter's routing
 * fields (`provider` as in its provider preferences) and the output settings of the OpenAI API.
 */
const TOP_LEVEL_FORMS: Record<string, Check> = {
  model: slug,
  models: listOf(slug),
  route: identifier,
  transforms: listOf(identifier),
  service_tier: nullable(identifier),
  reasoning_effort: nullable(identifier),
  verbosity: nullable(identifier),
  modalities: nullable(listOf(identifier)),
  stream: nullable(boolean),
  stream_options: nullable(objectOf({ include_usage: boolean, include_obfuscation: boolean })),
  audio: nullable(
    objectOf({ voice: either(identifier, objectOf({ id: text(ID, "a voice id") })), format: identifier }),
  ),
  logit_bias: nullable((value, path) => {
    if (!isRecord(value)) return { path, message: "must be an object of token ids to numbers" };
    for (const [key, bias] of Object.entries(value)) {
      const at = `${path}/${pointerToken(key)}`;
      if (!TOKEN_ID.test(key)) return { path: at, message: "must be a token id (an integer)" };
      if (typeof bias !== "number") return { path: at, message: "must be a number" };
    }
    return undefined;
  }),
  provider: nullable(
    objectOf({
      order: slugs,
      only: slugs,
      ignore: slugs,
      allow_fallbacks: nullable(boolean),
      require_parameters: nullable(boolean),
      data_collection: nullable(oneOf("allow", "deny")),
      zdr: nullable(boolean),
      enforce_distillable_text: nullable(boolean),
      quantizations: nullable(listOf(identifier)),
      sort: nullable(
        either(identifier, objectOf({ by: nullable(identifier), partition: nullable(identifier) })),
      ),
      max_price: objectOf({
        prompt: decimal,
        completion: decimal,
        image: decimal,
        audio: decimal,
        request: decimal,
      }),
      preferred_min_throughput: nullable(either(number, percentiles)),
      preferred_max_latency: nullable(either(number, percentiles)),
    }),
  ),
};

/** Checks the top-level fields that are skipped whole; throws the 400 naming the first bad value. */
function checkTopLevel(body: ChatBody): void {
  for (const key of Object.keys(body)) {
    const check = TOP_LEVEL_SKIPPED.has(key) ? TOP_LEVEL_FORMS[key] : undefined;
    const found = check?.(body[key], `/${pointerToken(key)}`);
    if (found) throw invalidRequest([found]);
  }
}

/** What an allow-listed string must look like, by its field. */
function formOf(key: string): [RegExp, string] {
  switch (key) {
    case "type":
    case "role":
    case "effort":
    case "summary":
    case "tool_choice":
    case "function_call":
      return [IDENTIFIER, "a lower-case identifier (letters, digits, _ . : -)"];
    case "id":
    case "tool_call_id":
    case "call_id":
    case "file_id":
    case "tool_use_id":
      return [ID, "an id (letters, digits, _ . : | = + / -)"];
    case "media_type":
      return [MEDIA_TYPE, "a media type (type/subtype)"];
    default:
      // signature, encrypted_content, data
      return [BASE64_VALUE, "base64"];
  }
}

/** Throws the 400 naming an allow-listed string that is not of its field's form. */
function checkForm(node: PathNode, key: string | number, field: string, value: string): void {
  const [form, what] = formOf(field);
  if (!form.test(value)) throw invalidRequest([{ path: pointerOf(node, key), message: `must be ${what}` }]);
}

/** A link the provider fetches (`image_url.url`): scanned decoded, as a name (never rewritten). */
function isLink(value: string): boolean {
  return /^https?:\/\//i.test(value);
}

/** A link as the provider's server reads it: percent-escapes decoded, `+` in the query a space. */
function decodedLink(value: string): string {
  const query = value.indexOf("?");
  const spaced = query < 0 ? value : value.slice(0, query) + value.slice(query).replaceAll("+", " ");
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced;
  }
}

/** Whether the string `key` of a STRUCT container is on the allow-list (its form is then checked). */
function allowListed(node: PathNode, key: string): boolean {
  if (ENUM_OR_ID_FIELDS.has(key)) return true;
  const parent = node.parent;
  if (parent === null) return TOP_LEVEL_SKIPPED.has(key) || TOP_LEVEL_ENUMS.has(key);
  // The top-level reasoning settings; a message's `reasoning` is its text and is scanned.
  if (parent.parent === null && node.key === "reasoning") return key === "effort" || key === "summary";
  if (key === "data") {
    const holder = node.value as Record<string, unknown>;
    return (
      node.key === "input_audio" ||
      holder.type === "reasoning.encrypted" ||
      // An Anthropic image or PDF as base64 (docs/gateway.md#messages): binary, as a binary data:
      // URL is. A text source (`type` "text") is scanned.
      (node.key === "source" &&
        holder.type === "base64" &&
        typeof holder.media_type === "string" &&
        !isTextMime(holder.media_type))
    );
  }
  return false;
}

/** An Anthropic tool_use block (or a server tool's), whose `input` holds the call's arguments. */
function isToolUse(value: Container): boolean {
  const type = (value as Record<string, unknown>).type;
  return type === "tool_use" || type === "server_tool_use";
}

/**
 * The helpers of collectTexts are functions of the module rather than closures made on every call:
 * the walk runs on every request, and under tsx, which the benches run, each closure made costs a
 * call naming it.
 */
function addText(
  texts: ChatText[],
  frame: Frame,
  text: string,
  kind: TextKind,
  json: boolean,
  place: TextPlace,
): void {
  if (text.length === 0) return;
  if (texts.length >= MAX_TEXTS) tooMany();
  texts.push({ text, role: frame.role, message: frame.message, json, kind, place });
}

/** A string value: a data: URL of a binary type is skipped, JSON is read token by token. */
function addString(
  texts: ChatText[],
  frame: Frame,
  key: string | number,
  value: string,
  kind: TextKind,
  parseJson: boolean,
): void {
  const node = frame.node;
  let text = value;
  let json = parseJson;
  let dataUrl: DataUrl | undefined;
  const read = readDataUrl(value);
  if (read.kind === "binary") return;
  if (read.kind === "undecodable") throw invalidRequest([{ path: pointerOf(node, key), message: read.why }]);
  if (read.kind === "text") {
    text = read.url.text;
    json = read.json;
    dataUrl = read.url;
  }
  const tokens = json ? jsonTokens(text) : null;
  if (tokens === null) {
    addText(texts, frame, text, kind, json, dataUrl ? { node, key, dataUrl } : { node, key });
    return;
  }
  for (const t of tokens) {
    const place: TextPlace = { node, key, token: { start: t.start, end: t.end } };
    if (dataUrl) place.dataUrl = dataUrl;
    addText(texts, frame, t.value, t.key ? "key" : "text", false, place);
  }
}

/**
 * Every text of the request, in document order. Throws a 400 (invalid_request) when the request is
 * nested deeper than MAX_NESTING or carries more than MAX_TEXTS strings to scan.
 */
export function collectTexts(body: ChatBody): ChatText[] {
  checkTopLevel(body);
  const texts: ChatText[] = [];
  const root: PathNode = { value: body, parent: null, key: "" };
  const stack: Frame[] = [
    {
      node: root,
      keys: Object.keys(body),
      next: 0,
      depth: 1,
      mode: STRUCT,
      role: REQUEST_ROLE,
      message: null,
      field: "",
    },
  ];

  for (let frame = stack.at(-1); frame !== undefined; frame = stack.at(-1)) {
    const container = frame.node.value;
    const keys = frame.keys;
    const length = keys ? keys.length : (container as unknown[]).length;
    if (frame.next >= length) {
      stack.pop();
      continue;
    }
    const index = frame.next++;
    const key: string | number = keys ? (keys[index] as string) : index;
    const value = keys
      ? (container as Record<string, unknown>)[key as string]
      : (container as unknown[])[index];
    const field = keys ? (key as string) : frame.field;
    const mode = frame.mode;
    const atRoot = frame.node.parent === null;

    if (keys && mode !== SKIPPED && (mode !== STRUCT || !KNOWN_FIELDS.has(key as string))) {
      addText(texts, frame, key as string, "key", false, { node: frame.node, key, isKey: true });
    }
    if (typeof value === "string") {
      if (mode === SKIPPED) continue;
      if (mode === STRUCT && keys && allowListed(frame.node, key as string)) {
        // The top-level skipped fields were checked whole before the walk.
        if (!atRoot || !TOP_LEVEL_SKIPPED.has(key as string))
          checkForm(frame.node, key, key as string, value);
        continue;
      }
      if (mode === STRUCT && !keys && ENUM_OR_ID_FIELDS.has(field)) {
        checkForm(frame.node, key, field, value);
        continue;
      }
      const structural = mode === STRUCT && keys !== null;
      if (
        structural &&
        ((key === "url" && frame.node.key === "image_url") || key === "image_url") &&
        isLink(value)
      ) {
        addText(texts, frame, decodedLink(value), "name", false, { node: frame.node, key });
        continue;
      }
      addString(
        texts,
        frame,
        key,
        value,
        structural && (key === "name" || REFERENCES.has(key as string)) ? "name" : "text",
        structural && key === "arguments",
      );
      continue;
    }
    if (typeof value !== "object" || value === null) continue;

    const node: PathNode = { value: value as Container, parent: frame.node, key };
    const depth = frame.depth + 1;
    if (depth > MAX_NESTING) tooDeep(pointerOf(node));
    let childMode: Mode = mode;
    if (mode === NAMES) childMode = STRUCT;
    else if (mode === STRUCT && keys) {
      if (atRoot && TOP_LEVEL_SKIPPED.has(key as string)) childMode = SKIPPED;
      else if (NAME_MAPS.has(key as string) && isRecord(value)) childMode = NAMES;
      else if (DATA_FIELDS.has(key as string)) childMode = DATA;
      // An Anthropic tool call's arguments are an object, not JSON text: caller data, every key
      // and value scanned (docs/gateway.md#messages-roles).
      else if (key === "input" && !atRoot && isToolUse(frame.node.value)) childMode = DATA;
    }
    let role = frame.role;
    let message = frame.message;
    // The messages: each one's texts carry its role and index.
    if (!keys && frame.node.parent?.parent === null && frame.node.key === "messages" && isRecord(value)) {
      role = typeof value.role === "string" ? value.role : "";
      message = index;
    }
    stack.push({
      node,
      keys: Array.isArray(value) ? null : Object.keys(value),
      next: 0,
      depth,
      mode: childMode,
      role,
      message,
      field,
    });
  }
  return texts;
}

/* Replacement. */

interface Rewrite {
  node: PathNode;
  key: string | number;
  dataUrl?: DataUrl;
  whole?: string;
  tokens: { start: number; end: number; value: string }[];
}

/** The string after its rewrites: whole, or token by token (each written back as a JSON string). */
function rewritten(original: string, r: Rewrite): string {
  const decoded = r.dataUrl ? r.dataUrl.text : original;
  let next = r.whole ?? decoded;
  if (r.whole === undefined) {
    r.tokens.sort((a, b) => a.start - b.start);
    next = "";
    let at = 0;
    for (const t of r.tokens) {
      next += decoded.slice(at, t.start) + JSON.stringify(t.value);
      at = t.end;
    }
    next += decoded.slice(at);
  }
  return r.dataUrl ? encodeDataUrl(r.dataUrl, next) : next;
}

/** The copy of `node` in `copies`, made (with the copies of its parents) on first use. */
function writable(copies: Map<PathNode, Container>, node: PathNode): Container {
  let copy = copies.get(node);
  if (copy) return copy;
  copy = Array.isArray(node.value) ? node.value.slice() : { ...node.value };
  copies.set(node, copy);
  if (node.parent) (writable(copies, node.parent) as Record<string | number, unknown>)[node.key] = copy;
  return copy;
}

/**
 * A copy of the request with the given texts replaced, and with every base64 `data:` payload among
 * `texts` that is not canonical written canonically. Only the objects and arrays on the way to a
 * changed string are copied; every other subtree is shared. Names and property names (`kind` other
 * than `text`) are never rewritten: the decision refuses a request whose redaction would need it.
 */
export function replaceTexts(
  body: ChatBody,
  replacements: { text: ChatText; value: string }[],
  texts: readonly ChatText[] = [],
): ChatBody {
  const rewrites = new Map<PathNode, Map<string | number, Rewrite>>();
  const rewriteOf = (place: TextPlace): Rewrite => {
    const { node, key, dataUrl } = place;
    let byKey = rewrites.get(node);
    if (!byKey) {
      byKey = new Map();
      rewrites.set(node, byKey);
    }
    let r = byKey.get(key);
    if (!r) {
      r = { node, key, tokens: [] };
      if (dataUrl) r.dataUrl = dataUrl;
      byKey.set(key, r);
    }
    return r;
  };
  for (const { text, value } of replacements) {
    if (text.kind !== "text") continue;
    const r = rewriteOf(text.place);
    const token = text.place.token;
    if (token) r.tokens.push({ start: token.start, end: token.end, value });
    else r.whole = value;
  }
  // Base64 a decoder could read otherwise is sent as canonical base64 of what was scanned
  // (docs/gateway.md#data-urls).
  for (const text of texts) if (text.place.dataUrl?.recode) rewriteOf(text.place);
  if (rewrites.size === 0) return body;

  const copies = new Map<PathNode, Container>();
  let root: PathNode | undefined;
  for (const [node, byKey] of rewrites) {
    for (const r of byKey.values()) {
      const original = (node.value as Record<string | number, unknown>)[r.key] as string;
      (writable(copies, node) as Record<string | number, unknown>)[r.key] = rewritten(original, r);
    }
    root = node;
  }
  while (root?.parent) root = root.parent;
  return (root ? copies.get(root) : body) as ChatBody;
}
