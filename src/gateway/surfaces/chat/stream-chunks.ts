import { chatUsage } from "../../chat-usage.js";
import { type Chunk, ChunkShape, NOT_PLAIN } from "../../chunk-shape.js";
import type { AnswerDefaults, EventFacts, EventReader } from "../surface.js";
import { completeChunk } from "./response-fields.js";

/** The usage a chunk or a whole answer reports (shared by every surface carried over chat). */
export const usageOf = chatUsage;

/** What the relay takes from one chunk; its `contentBytes` are those of the choices' `delta.content`. */
export type ChunkFacts = EventFacts;

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

/**
 * Reads the events of one streamed answer. Every event is parsed, except one in the shape of an
 * earlier parsed chunk (ChunkShape) that needs nothing filled in (response-fields.ts) and reports no
 * usage: it is sent as it came, its text's bytes counted, nothing parsed.
 */
export class ChunkReader implements EventReader {
  private readonly shape = new ChunkShape();
  private readonly fits = (probed: Chunk) => !usageOf(probed) && !completeChunk(probed, this.defaults);

  constructor(
    private readonly defaults: AnswerDefaults,
    /** Whether the usage-only chunk (no choices) goes on to the client. */
    private readonly clientWantsUsage: boolean,
  ) {}

  /** The facts of one event, from its data. */
  read(data: string): ChunkFacts {
    const text = this.shape.match(data);
    if (text !== undefined && !NOT_PLAIN.test(text))
      return { send: null, usage: undefined, contentBytes: Buffer.byteLength(text) };
    const parsed = parseChunk(data, this.defaults, this.clientWantsUsage);
    const { facts, chunk } = parsed;
    // A chunk in the shape already held (its text needed parsing) has nothing new to teach.
    if (parsed.plain && text === undefined) this.shape.learn(data, chunk, this.fits);
    return facts;
  }
}
