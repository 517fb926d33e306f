import { AnswerHits, AnswerWindow, answerWindow } from "../../domain/answer-window.js";
import type { ContentFilters, FilterHit } from "../../domain/content-scan.js";
import type { AppError } from "../../domain/errors.js";
import { type Chunk, ChunkShape, isObject, type Json, NOT_PLAIN } from "../chunk-shape.js";
import type { AnswerDefaults, EventFacts, EventReader, Usage } from "../surfaces/surface.js";
import { answerUnscanned } from "./policy.js";

/**
 * Answer filters on a streamed answer (docs/gateway.md#answer-streams): the upstream's events are
 * rewritten by an adapter of the upstream's API (chat chunks, Responses events, Messages events)
 * before the surface's reader, or its translation, reads them, so a translated door is served by
 * the chat adapter and a native door by its own.
 */

/** The channels of one answer, each with its window, and the hits over all of them. */
export class Channels {
  readonly hits: AnswerHits;
  private readonly windows = new Map<string, AnswerWindow>();
  private readonly w: number;

  constructor(
    private readonly filters: ContentFilters,
    /** Throws the refusal of an answer a `block` filter matched. */
    private readonly blocked: (hit: FilterHit) => never,
  ) {
    this.hits = new AnswerHits(filters);
    this.w = answerWindow(filters);
  }

  private window(key: string): AnswerWindow {
    let w = this.windows.get(key);
    if (!w) {
      w = new AnswerWindow(this.filters, this.w, this.hits);
      this.windows.set(key, w);
    }
    return w;
  }

  /** Whether the channel holds text not sent yet. */
  holding(key: string): boolean {
    return this.windows.get(key)?.holding === true;
  }

  /** The keys of the channels that hold text. */
  held(): string[] {
    return [...this.windows].filter(([, w]) => w.holding).map(([k]) => k);
  }

  /** The part of the channel's text that may go out now. */
  push(key: string, delta: string): string {
    const step = this.step(() => this.window(key).push(delta));
    return step;
  }

  /** The rest of the channel's text: the channel has ended. */
  finish(key: string): string {
    const w = this.windows.get(key);
    if (!w) return "";
    return this.step(() => w.finish());
  }

  /** A text complete in itself (tool call arguments, a JSON text): scanned whole, redacted. */
  whole(text: string, json: boolean): string {
    const w = new AnswerWindow(this.filters, this.w, this.hits, json);
    return this.step(() => {
      const a = w.push(text);
      if (a.block) return a;
      const b = w.finish();
      return { release: a.release + b.release, block: b.block };
    });
  }

  private step(run: () => { release: string; block: FilterHit | null }): string {
    let out: { release: string; block: FilterHit | null };
    try {
      out = run();
    } catch {
      // Fail closed: a scan that cannot finish ends the stream, never with the text unscanned.
      throw answerUnscanned();
    }
    if (out.block) this.blocked(out.block);
    return out.release;
  }
}

/** One upstream event rewritten: the data of the events to read instead (none: drop it). */
export interface StreamAdapter {
  /** The events to read in place of this one; `undefined`: the event as it came. */
  rewrite(data: string): string[] | undefined;
  /** The upstream has ended: events carrying what is still held, if any. */
  flush(): string[];
  /** How a rewritten event is framed on the wire (with its `event:` line where the API names them). */
  frame(data: string): string;
}

/** What the relay asks of a guarded reader beyond an EventReader. */
export interface GuardedReader extends EventReader {
  /** The upstream has ended: what is still held, as events to send (may throw a refusal). */
  finish(): EventFacts;
  /** The door's end of a refused stream (docs/gateway.md#answer-streams). */
  refusal(error: AppError): string;
  /** What the answer filters found (never the text). */
  hits(): FilterHit[];
}

/** How each door ends a refused stream. */
export type DoorRefusal = (error: AppError) => string;

/** An EventReader whose upstream events pass through an adapter before the surface's reader. */
export class GuardedEvents implements GuardedReader {
  constructor(
    private readonly inner: EventReader,
    private readonly adapter: StreamAdapter,
    private readonly channels: Channels,
    private readonly refuse: DoorRefusal,
  ) {}

  read(data: string): EventFacts {
    const events = this.adapter.rewrite(data);
    if (events === undefined) return this.inner.read(data);
    return this.readAll(events);
  }

  private readAll(events: string[]): EventFacts {
    let send = "";
    let usage: Usage | undefined;
    let contentBytes = 0;
    for (const d of events) {
      const facts = this.inner.read(d);
      send += facts.send ?? this.adapter.frame(d);
      usage = facts.usage ?? usage;
      contentBytes += facts.contentBytes;
    }
    return { send, usage, contentBytes };
  }

  finish(): EventFacts {
    return this.readAll(this.adapter.flush());
  }

  end(): string {
    return this.inner.end?.() ?? "";
  }

  refusal(error: AppError): string {
    return this.refuse(error);
  }

  hits(): FilterHit[] {
    return this.channels.hits.hits();
  }
}

/* ------------------------------------------------------------------------------------------------
 * Chat completion chunks (also the upstream of the translated Responses and Messages doors).
 */

/** The text fields of a chat delta, each a channel of its choice. */
const CHAT_TEXT_FIELDS = ["content", "refusal", "reasoning", "reasoning_content"] as const;

interface HeldCall {
  choice: number;
  index: number;
  args: string;
}

export class ChatChunkAdapter implements StreamAdapter {
  /** The last chunk's id, created and model, for a chunk of held text at the end. */
  private head: Json = {};
  /** The chunks that differ only in their text (docs/gateway.md#stream-fast-paths), and their channel. */
  private readonly shape = new ChunkShape();
  private shapeKey = "";
  /** Tool calls whose arguments are held, by `choice:index`. */
  private readonly calls = new Map<string, HeldCall>();
  /** Each choice seen, open or finished: a refusal finishes the open ones (docs/gateway.md#answer-stream-refusal). */
  private readonly choices = new Map<number, "open" | "finished">();

  constructor(private readonly channels: Channels) {}

  frame(data: string): string {
    return `data: ${data}\n\n`;
  }

  rewrite(data: string): string[] | undefined {
    // The common chunk, one choice's few characters of content in a shape already seen, is not
    // parsed (as the chat reader's own fast path, stream-chunks.ts): parsing and serializing every
    // chunk cost more than the whole relay without answer filters.
    const text = this.shape.match(data);
    if (text !== undefined && !NOT_PLAIN.test(text)) {
      const release = this.channels.push(this.shapeKey, text);
      // Nothing to send yet: the chunk carried only held text.
      if (release === "") return [];
      if (release === text) return undefined;
      return [this.shape.around(NOT_PLAIN.test(release) ? JSON.stringify(release).slice(1, -1) : release)];
    }
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch {
      return undefined;
    }
    this.learn(data, chunk);
    if (!isObject(chunk) || !Array.isArray(chunk.choices) || chunk.choices.length === 0) return undefined;
    this.head = { id: chunk.id, object: chunk.object, created: chunk.created, model: chunk.model };
    let changed = false;
    chunk.choices.forEach((c: unknown, position: number) => {
      if (!isObject(c)) return;
      const i = typeof c.index === "number" ? c.index : position;
      if (!this.choices.has(i)) this.choices.set(i, "open");
      const delta = isObject(c.delta) ? c.delta : undefined;
      if (delta) {
        for (const field of CHAT_TEXT_FIELDS) {
          const v = delta[field];
          if (typeof v !== "string" || v === "") continue;
          delta[field] = this.channels.push(`${i}:${field}`, v);
          changed = true;
        }
        if (Array.isArray(delta.tool_calls)) {
          const out: unknown[] = [];
          for (const call of delta.tool_calls) {
            if (!isObject(call)) continue;
            changed = true;
            const k = typeof call.index === "number" ? call.index : 0;
            // A new call completes the ones before it in this choice.
            for (const held of this.callsOf(i)) if (held.index !== k) out.push(this.complete(held));
            const key = `${i}:${k}`;
            const held = this.calls.get(key) ?? { choice: i, index: k, args: "" };
            this.calls.set(key, held);
            const fn = isObject(call.function) ? call.function : undefined;
            if (fn && typeof fn.arguments === "string") {
              held.args += fn.arguments;
              fn.arguments = "";
            }
            // The call's id, type and name go on at once; its arguments once they are complete.
            if (call.id !== undefined || (fn && fn.name !== undefined)) out.push(call);
          }
          if (out.length > 0) delta.tool_calls = out;
          else delete delta.tool_calls;
        }
      }
      if (c.finish_reason !== null && c.finish_reason !== undefined) {
        changed = true;
        const d = delta ?? {};
        // A block found in what the choice held is the refusal's: the choice is still open then.
        this.flushChoice(i, d);
        c.delta = d;
        this.choices.set(i, "finished");
      }
    });
    return changed ? [JSON.stringify(chunk)] : undefined;
  }

  /** Takes the shape of a chunk whose one choice carries only content, as the chat reader does. */
  private learn(data: string, chunk: unknown): void {
    if (!isObject(chunk) || !Array.isArray(chunk.choices) || chunk.choices.length !== 1) return;
    const c = chunk.choices[0];
    if (!isObject(c) || (c.finish_reason !== null && c.finish_reason !== undefined)) return;
    const delta = c.delta;
    if (!isObject(delta) || Object.keys(delta).some((k) => k !== "content")) return;
    // The shape is the chunk's own only if the probe lands in that choice's content, nothing else.
    const fits = (probed: Chunk): boolean => {
      const p = (probed.choices as unknown[])[0];
      return (
        isObject(p) &&
        (p.finish_reason === null || p.finish_reason === undefined) &&
        ((probed as Json).usage === undefined || (probed as Json).usage === null)
      );
    };
    if (this.shape.learn(data, chunk as Chunk, fits))
      this.shapeKey = `${typeof c.index === "number" ? c.index : 0}:content`;
  }

  private callsOf(choice: number): HeldCall[] {
    return [...this.calls.values()].filter((c) => c.choice === choice);
  }

  /** One held call's arguments, scanned whole and redacted (still valid JSON), as one delta. */
  private complete(held: HeldCall): Json {
    this.calls.delete(`${held.choice}:${held.index}`);
    return { index: held.index, function: { arguments: this.channels.whole(held.args, true) } };
  }

  /** Everything a choice holds, into its last delta: before its finish_reason is read. */
  private flushChoice(i: number, delta: Json): void {
    for (const field of CHAT_TEXT_FIELDS) {
      const rest = this.channels.finish(`${i}:${field}`);
      if (rest !== "") delta[field] = (typeof delta[field] === "string" ? delta[field] : "") + rest;
    }
    const calls = this.callsOf(i).map((h) => this.complete(h));
    if (calls.length > 0)
      delta.tool_calls = [...(Array.isArray(delta.tool_calls) ? delta.tool_calls : []), ...calls];
  }

  flush(): string[] {
    const choices = new Set<number>();
    for (const key of this.channels.held()) choices.add(Number(key.split(":")[0]));
    for (const held of this.calls.values()) choices.add(held.choice);
    const out: string[] = [];
    for (const i of [...choices].sort((a, b) => a - b)) {
      const delta: Json = {};
      this.flushChoice(i, delta);
      out.push(
        JSON.stringify({
          ...this.head,
          object: "chat.completion.chunk",
          choices: [{ index: i, delta, finish_reason: null }],
        }),
      );
    }
    return out;
  }

  /** The last chunk's id, created and model, for the refusal's last chunk. */
  lastHead(): Json {
    return this.head;
  }

  /** The choices a refusal finishes: every one seen and not finished, or the first when none was seen. */
  openChoices(): number[] {
    const open = [...this.choices].filter(([, state]) => state === "open").map(([i]) => i);
    return open.length > 0 ? open.sort((a, b) => a - b) : [0];
  }
}

/** The chat door's end of a refused stream: a last chunk finishing on content_filter, then the error. */
export function chatRefusal(adapter: ChatChunkAdapter, defaults: AnswerDefaults): DoorRefusal {
  return (error) => {
    const head = adapter.lastHead();
    const chunk = {
      id: head.id ?? defaults.id,
      object: "chat.completion.chunk",
      created: head.created ?? defaults.created,
      model: head.model ?? defaults.model,
      choices: adapter.openChoices().map((index) => ({ index, delta: {}, finish_reason: "content_filter" })),
    };
    const body = { error: { code: error.status, message: error.message, metadata: error.metadata } };
    return `data: ${JSON.stringify(chunk)}\n\ndata: ${JSON.stringify(body)}\n\n`;
  };
}
