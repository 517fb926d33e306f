import { isObject } from "../chunk-shape.js";
import type { Channels, StreamAdapter } from "./stream.js";

/**
 * Answer filters on a native Messages stream (docs/gateway.md#answer-streams): each content block is
 * a channel. `text_delta` and `thinking_delta` pass through the block's window; a `tool_use` block's
 * `input_json_delta`s are held until its `content_block_stop`, then sent as one delta of the whole
 * input, redacted and still valid JSON. What a block holds goes out in a delta before its stop.
 */

/** The delta types whose text a window reads, with the field that carries it. */
const TEXT_DELTAS: Record<string, string> = { text_delta: "text", thinking_delta: "thinking" };

export class MessagesAdapter implements StreamAdapter {
  /** Each open block's delta type (text or thinking), by index, for its last delta. */
  private readonly kinds = new Map<number, string>();
  /** The held input of each tool_use block, by index. */
  private readonly inputs = new Map<number, string>();

  constructor(private readonly channels: Channels) {}

  frame(data: string): string {
    let type = "message";
    try {
      const parsed = JSON.parse(data) as { type?: unknown };
      if (typeof parsed.type === "string") type = parsed.type;
    } catch {
      // A frame of the adapter's own is always JSON.
    }
    return `event: ${type}\ndata: ${data}\n\n`;
  }

  rewrite(data: string): string[] | undefined {
    let event: unknown;
    try {
      event = JSON.parse(data);
    } catch {
      return undefined;
    }
    if (!isObject(event)) return undefined;
    const index = typeof event.index === "number" ? event.index : 0;
    switch (event.type) {
      case "content_block_start": {
        const block = isObject(event.content_block) ? event.content_block : {};
        if (block.type === "text" || block.type === "thinking") {
          const field = block.type === "text" ? "text" : "thinking";
          this.kinds.set(index, `${field}_delta`);
          const v = block[field];
          if (typeof v === "string" && v !== "") {
            block[field] = this.channels.push(String(index), v);
            return [JSON.stringify(event)];
          }
        }
        return undefined;
      }
      case "content_block_delta": {
        const delta = isObject(event.delta) ? event.delta : {};
        const type = typeof delta.type === "string" ? delta.type : "";
        const field = TEXT_DELTAS[type];
        if (field !== undefined && typeof delta[field] === "string") {
          this.kinds.set(index, type);
          delta[field] = this.channels.push(String(index), delta[field] as string);
          return [JSON.stringify(event)];
        }
        if (type === "input_json_delta" && typeof delta.partial_json === "string") {
          this.inputs.set(index, (this.inputs.get(index) ?? "") + delta.partial_json);
          return [];
        }
        return undefined;
      }
      case "content_block_stop": {
        const before = this.flushBlock(index);
        return before.length === 0 ? undefined : [...before, data];
      }
      default:
        return undefined;
    }
  }

  /** What one block holds, as its last delta. */
  private flushBlock(index: number): string[] {
    const out: string[] = [];
    const input = this.inputs.get(index);
    if (input !== undefined) {
      this.inputs.delete(index);
      const partial = this.channels.whole(input, true);
      out.push(
        JSON.stringify({
          type: "content_block_delta",
          index,
          delta: { type: "input_json_delta", partial_json: partial },
        }),
      );
    }
    const rest = this.channels.finish(String(index));
    if (rest !== "") {
      const type = this.kinds.get(index) ?? "text_delta";
      const field = TEXT_DELTAS[type] ?? "text";
      out.push(JSON.stringify({ type: "content_block_delta", index, delta: { type, [field]: rest } }));
    }
    return out;
  }

  flush(): string[] {
    const blocks = new Set<number>(this.inputs.keys());
    for (const k of this.channels.held()) blocks.add(Number(k));
    return [...blocks].sort((a, b) => a - b).flatMap((i) => this.flushBlock(i));
  }
}
