import { chatUsage } from "./chat-usage.js";
import { stringEnd } from "./forward-body.js";

/**
 * Reading a chat completion stream's text chunks without parsing them, shared by the chat surface
 * and every surface carried over chat (docs/gateway.md#stream-fast-paths).
 */

/** A chat chunk as the readers first look at it. */
export type Chunk = { choices?: unknown };

/** A JSON object, as the stream readers and translations take one apart. */
export type Json = Record<string, unknown>;

export function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The data of a chat stream's last event. */
export const DONE = "[DONE]";

/**
 * Whether a chat chunk does nothing but carry its first choice's text: no usage, no error, no
 * refusal, no tool call, no finish reason. A translation of chat's stream turns such a chunk into
 * its text delta and nothing else, so a chunk differing from it only in its text may be read by its
 * text alone (docs/gateway.md#stream-fast-paths). `delta` adds what else the translation reads of
 * the choice's delta (Responses: its reasoning).
 */
export function plainTextChunk(chunk: Json, delta?: (delta: Json) => boolean): boolean {
  if (chatUsage(chunk) || (chunk.error !== undefined && chunk.error !== null)) return false;
  const choice = (chunk.choices as unknown[])[0];
  if (!isObject(choice) || (choice.index !== 0 && choice.index !== undefined)) return false;
  if (typeof choice.finish_reason === "string" || !isObject(choice.delta)) return false;
  const d = choice.delta;
  if ((typeof d.refusal === "string" && d.refusal !== "") || Array.isArray(d.tool_calls)) return false;
  return delta === undefined || delta(d);
}

/** A chunk's text around its one choice's `delta.content` string, whose value alone varies. */
interface Shape {
  before: string;
  after: string;
}

/** What a string's JSON text may hold for it to be read as it is: no quote, escape or control character. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: what JSON forbids unescaped is looked for
export const NOT_PLAIN = /["\\\u0000-\u001f]/;
const CONTENT_KEY = '"content":"';
/** The text a shape is checked with: a string only the varied member can have parsed to. */
const PROBE_TEXT = "probe\\u0000";
const PROBE = "probe\u0000";
/** Shapes taken per stream at most: an upstream whose chunks differ in more than their text is parsed. */
const MAX_SHAPES = 4;

/** The one choice's `delta.content` of a chunk, when it has exactly one choice. */
function onlyContent(chunk: Chunk | undefined): unknown {
  const choices = chunk?.choices;
  if (!Array.isArray(choices) || choices.length !== 1) return undefined;
  return (choices[0] as { delta?: { content?: unknown } } | null)?.delta?.content;
}

/**
 * The shape of the chunks of one chat stream that differ only in their text: most chunks of a
 * stream repeat the same id, created, model and choice, and carry a few characters of the answer.
 * After a chunk has been parsed and its reader found that it may be handled by its text alone, the
 * chunk's text before and after its one choice's `delta.content` string is kept, checked by parsing
 * the shape around a probe string (the reader's `fits` must hold for that parse too). A later event
 * whose data is that shape around a string with no quote, escape or control character parses to
 * the same chunk with that string as its text: its reader may take the string without parsing.
 */
export class ChunkShape {
  private shape: Shape | undefined;
  private shapes = 0;

  /**
   * The `delta.content` string of `data`, as written, when `data` is in the shape; undefined when
   * it is not. Callers read it as the text only when NOT_PLAIN finds nothing in it.
   */
  match(data: string): string | undefined {
    const shape = this.shape;
    // Compared as slices: V8's startsWith walks a long prefix several times slower than equality.
    if (
      shape !== undefined &&
      data.length >= shape.before.length + shape.after.length &&
      data.slice(0, shape.before.length) === shape.before &&
      data.slice(data.length - shape.after.length) === shape.after
    )
      return data.slice(shape.before.length, data.length - shape.after.length);
    return undefined;
  }

  /**
   * Takes the shape of a parsed chunk (`data` parsed: `chunk`) whose one choice carries text, when
   * the same chunk with a probe for its text still `fits`; says whether it did.
   */
  learn(data: string, chunk: Chunk | undefined, fits: (probed: Chunk) => boolean): boolean {
    if (this.shapes >= MAX_SHAPES || typeof onlyContent(chunk) !== "string") return false;
    const at = data.lastIndexOf(CONTENT_KEY);
    if (at < 0) return false;
    const start = at + CONTENT_KEY.length;
    // The string's opening quote ends the key; `after` starts with its closing one.
    const end = stringEnd(data, start - 1);
    if (end < 0) return false;
    const before = data.slice(0, start);
    const after = data.slice(end - 1);
    this.shapes++;
    let probed: Chunk | undefined;
    try {
      probed = JSON.parse(`${before}${PROBE_TEXT}${after}`);
    } catch {
      return false;
    }
    if (probed === undefined || onlyContent(probed) !== PROBE || !fits(probed)) return false;
    this.shape = { before, after };
    return true;
  }

  /** `data` with its text replaced by `text` (written as it goes into a JSON string). */
  around(text: string): string {
    const shape = this.shape;
    if (shape === undefined) throw new Error("no shape learned");
    return shape.before + text + shape.after;
  }
}
