import { chatUsage } from "../../chat-usage.js";
import { stringEnd } from "../../forward-body.js";
import type { AnswerDefaults, EventFacts, EventReader } from "../surface.js";
import { completeChunk } from "./response-fields.js";

/** The usage a chunk or a whole answer reports (shared by every surface carried over chat). */
export const usageOf = chatUsage;

/** What the relay takes from one chunk; its `contentBytes` are those of the choices' `delta.content`. */
export type ChunkFacts = EventFacts;

type Chunk = { choices?: unknown };

/**
 * The facts of one event's data, parsed: what every event cost before shapes, and the rule the
 * reader's shapes keep to. `plain`: the chunk needs nothing filled in and reports no usage, so its
 * shape may be kept.
 */
export function parseChunk(
  data: string,
  defaults: AnswerDefaults,
  clientWantsUsage: boolean,
): { facts: ChunkFacts; chunk: Chunk | undefined; plain: boolean } {
  let chunk: Chunk | undefined;
  try {
    chunk = JSON.parse(data);
  } catch {
    chunk = undefined;
  }
  const usage = usageOf(chunk);
  let contentBytes = 0;
  const choices = Array.isArray(chunk?.choices) ? (chunk.choices as unknown[]) : [];
  for (const c of choices) {
    const content = (c as { delta?: { content?: unknown } } | null)?.delta?.content;
    if (typeof content === "string") contentBytes += Buffer.byteLength(content);
  }
  // The usage-only chunk: choices present and empty.
  const usageOnly = (chunk?.choices as { length?: unknown } | undefined)?.length === 0;
  if (!clientWantsUsage && usageOnly && usage)
    return { facts: { send: "", usage, contentBytes }, chunk, plain: false };
  const filled = completeChunk(chunk, defaults);
  const send = filled ? `data: ${JSON.stringify(filled)}\n\n` : null;
  return { facts: { send, usage, contentBytes }, chunk, plain: !filled && !usage };
}

/** A chunk's text around its one choice's `delta.content` string, whose value alone varies. */
interface Shape {
  before: string;
  after: string;
}

/** What a string's JSON text may hold for it to be read as it is: no quote, escape or control character. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: what JSON forbids unescaped is looked for
const NOT_PLAIN = /["\\\u0000-\u001f]/;
const CONTENT_KEY = '"content":"';
/** The text a shape is checked with: a string only the varied member can have parsed to. */
const PROBE_TEXT = "probe\\u0000";
const PROBE = "probe\u0000";
/** Shapes taken per stream at most: an upstream whose chunks differ in more than their text is parsed. */
const MAX_SHAPES = 4;

/**
 * Reads the events of one streamed answer. Every event is parsed, except one that differs from an
 * earlier parsed chunk only in its text: most chunks of a stream repeat the same id, created,
 * model and choice, and carry a few characters of the answer. After parsing a chunk that needs
 * nothing filled in (response-fields.ts), reports no usage and carries one choice whose
 * `delta.content` is a string, the reader keeps the chunk's text before and after that string
 * (its shape), checked by parsing the shape around a probe string. A later event whose data is
 * that shape around a string with no quote, escape or control character parses to the same chunk
 * with that string as its text: it is sent as it came, its text's bytes counted, nothing parsed.
 */
export class ChunkReader implements EventReader {
  private shape: Shape | undefined;
  private shapes = 0;

  constructor(
    private readonly defaults: AnswerDefaults,
    /** Whether the usage-only chunk (no choices) goes on to the client. */
    private readonly clientWantsUsage: boolean,
  ) {}

  /** The facts of one event, from its data. */
  read(data: string): ChunkFacts {
    const shape = this.shape;
    // Compared as slices: V8's startsWith walks a long prefix several times slower than equality.
    const inShape =
      shape !== undefined &&
      data.length >= shape.before.length + shape.after.length &&
      data.slice(0, shape.before.length) === shape.before &&
      data.slice(data.length - shape.after.length) === shape.after;
    if (inShape) {
      const text = data.slice(shape.before.length, data.length - shape.after.length);
      if (!NOT_PLAIN.test(text))
        return { send: null, usage: undefined, contentBytes: Buffer.byteLength(text) };
    }
    const parsed = parseChunk(data, this.defaults, this.clientWantsUsage);
    const { facts, chunk } = parsed;
    // A chunk in the shape already held (its text needed parsing) has nothing new to teach.
    if (parsed.plain && !inShape && this.shapes < MAX_SHAPES) this.learn(data, chunk);
    return facts;
  }

  /** Takes the shape of a parsed chunk that needs nothing, when its one choice carries text. */
  private learn(data: string, chunk: Chunk | undefined): void {
    const choices = chunk?.choices;
    if (!Array.isArray(choices) || choices.length !== 1) return;
    const content = (choices[0] as { delta?: { content?: unknown } } | null)?.delta?.content;
    if (typeof content !== "string") return;
    const at = data.lastIndexOf(CONTENT_KEY);
    if (at < 0) return;
    const start = at + CONTENT_KEY.length;
    // The string's opening quote ends the key; `after` starts with its closing one.
    const end = stringEnd(data, start - 1);
    if (end < 0) return;
    const before = data.slice(0, start);
    const after = data.slice(end - 1);
    this.shapes++;
    let probed: Chunk | undefined;
    try {
      probed = JSON.parse(`${before}${PROBE_TEXT}${after}`);
    } catch {
      return;
    }
    const probedChoices = probed?.choices;
    if (!Array.isArray(probedChoices) || probedChoices.length !== 1) return;
    if ((probedChoices[0] as { delta?: { content?: unknown } } | null)?.delta?.content !== PROBE) return;
    if (usageOf(probed) || completeChunk(probed, this.defaults)) return;
    this.shape = { before, after };
  }
}
