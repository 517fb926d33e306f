import type { AppError } from "../../domain/errors.js";
import { isObject, type Json } from "../chunk-shape.js";
import type { AnswerDefaults } from "../surfaces/surface.js";
import type { Channels, DoorRefusal, StreamAdapter } from "./stream.js";

/**
 * Answer filters on a native Responses stream (docs/gateway.md#answer-streams): each text of an
 * output item (its content part, refusal, reasoning text or summary) is a channel. Text deltas pass
 * through its window; what it holds goes out in a delta before the part's `.done` event, and every
 * event that repeats the text whole (`.done`, `content_part.done`, `output_item.done`,
 * `response.completed`) carries it redacted the same. Function call arguments are held until
 * `function_call_arguments.done` and sent as one delta. Sequence numbers are the gateway's own,
 * numbered on over the events it adds.
 */

/** Delta events: the field of their `.done` event that repeats the text whole. */
const DELTAS: Record<string, { done: string; field: string }> = {
  "response.output_text.delta": { done: "response.output_text.done", field: "text" },
  "response.refusal.delta": { done: "response.refusal.done", field: "refusal" },
  "response.reasoning_text.delta": { done: "response.reasoning_text.done", field: "text" },
  "response.reasoning_summary_text.delta": { done: "response.reasoning_summary_text.done", field: "text" },
};
const DONE: Record<string, string> = Object.fromEntries(
  Object.entries(DELTAS).map(([delta, d]) => [d.done, delta]),
);

/** The channel of an event: its item, its part and the kind of text. */
function keyOf(e: Json, kind: string): string {
  const part = e.content_index ?? e.summary_index ?? 0;
  return `${String(e.output_index ?? 0)}:${String(part)}:${kind}`;
}

export class ResponsesAdapter implements StreamAdapter {
  private sequence = 0;
  /** Function call arguments as they came and as they were sent, to rewrite the events that repeat them. */
  private readonly finals = new Map<string, string>();
  /** Held function call arguments, by output index. */
  private readonly args = new Map<number, string>();
  /** The open channels' delta events, for a delta synthesized at the end. */
  private readonly open = new Map<string, Json>();
  responseId: string | undefined;

  constructor(private readonly channels: Channels) {}

  frame(data: string): string {
    const type = (JSON.parse(data) as { type: string }).type;
    return `event: ${type}\ndata: ${data}\n\n`;
  }

  private out(e: Json): string {
    e.sequence_number = this.sequence++;
    return JSON.stringify(e);
  }

  /** A text repeated whole: as the channel sent it when it came through one, else scanned whole. */
  private redacted(text: string): string {
    return this.finals.get(text) ?? this.channels.whole(text, false);
  }

  rewrite(data: string): string[] {
    let e: unknown;
    try {
      e = JSON.parse(data);
    } catch {
      return [data];
    }
    if (!isObject(e) || typeof e.type !== "string") return [data];
    const type = e.type;
    const delta = DELTAS[type];
    if (delta && typeof e.delta === "string") {
      const key = keyOf(e, type);
      this.open.set(key, { ...e, delta: "" });
      e.delta = this.channels.push(key, e.delta);
      return [this.out(e)];
    }
    const deltaType = DONE[type];
    if (deltaType !== undefined) {
      const field = (DELTAS[deltaType] as { field: string }).field;
      const key = keyOf(e, deltaType);
      const out: string[] = [];
      const rest = this.channels.finish(key);
      const opened = this.open.get(key);
      this.open.delete(key);
      if (rest !== "" && opened) out.push(this.out({ ...opened, delta: rest }));
      if (typeof e[field] === "string") e[field] = this.redacted(e[field] as string);
      out.push(this.out(e));
      return out;
    }
    if (type === "response.function_call_arguments.delta" && typeof e.delta === "string") {
      const i = Number(e.output_index ?? 0);
      this.args.set(i, (this.args.get(i) ?? "") + e.delta);
      return [];
    }
    if (type === "response.function_call_arguments.done") {
      const i = Number(e.output_index ?? 0);
      const held = this.args.get(i) ?? "";
      this.args.delete(i);
      const whole = typeof e.arguments === "string" ? e.arguments : held;
      const redacted = this.channels.whole(whole, true);
      this.finals.set(whole, redacted);
      e.arguments = redacted;
      const { arguments: _a, ...rest } = e;
      return [
        this.out({ ...rest, type: "response.function_call_arguments.delta", delta: redacted }),
        this.out(e),
      ];
    }
    if (type === "response.content_part.done" && isObject(e.part)) this.redactPart(e.part);
    if ((type === "response.output_item.done" || type === "response.output_item.added") && isObject(e.item))
      this.redactItem(e.item);
    if (isObject(e.response)) {
      if (typeof e.response.id === "string") this.responseId = e.response.id;
      if (Array.isArray(e.response.output))
        for (const item of e.response.output) if (isObject(item)) this.redactItem(item);
    }
    return [this.out(e)];
  }

  private redactPart(part: Json): void {
    for (const field of ["text", "refusal"]) {
      const v = part[field];
      if (typeof v === "string" && v !== "") part[field] = this.redacted(v);
    }
  }

  private redactItem(item: Json): void {
    for (const list of [item.content, item.summary])
      if (Array.isArray(list)) for (const p of list) if (isObject(p)) this.redactPart(p);
    if (typeof item.arguments === "string" && item.arguments !== "") {
      const v = item.arguments;
      item.arguments = this.finals.get(v) ?? this.channels.whole(v, true);
    }
  }

  /** The sequence number of the next event the gateway sends (a refusal's). */
  nextSequence(): number {
    return this.sequence++;
  }

  flush(): string[] {
    const out: string[] = [];
    for (const [key, opened] of this.open) {
      const rest = this.channels.finish(key);
      if (rest !== "") out.push(this.out({ ...opened, delta: rest }));
    }
    this.open.clear();
    return out;
  }
}

/**
 * The Responses door's end of a refused stream, native or translated: `response.failed` carrying
 * the error (docs/gateway.md#answer-streams).
 */
export function responsesRefusal(
  defaults: AnswerDefaults,
  sequence: () => number,
  id: () => string | undefined,
): DoorRefusal {
  return (error: AppError) => {
    const event = {
      type: "response.failed",
      sequence_number: sequence(),
      response: {
        id: id() ?? defaults.id,
        object: "response",
        created_at: defaults.created,
        status: "failed",
        model: defaults.model,
        output: [],
        error: { code: error.code, message: error.message, metadata: error.metadata },
        incomplete_details: null,
        usage: null,
      },
    };
    return `event: response.failed\ndata: ${JSON.stringify(event)}\n\n`;
  };
}
