import {
  type Chunk,
  ChunkShape,
  DONE,
  isObject,
  type Json,
  NOT_PLAIN,
  plainTextChunk,
} from "../../chunk-shape.js";
import type { AnswerDefaults, EventFacts, EventReader, Usage } from "../surface.js";
import {
  type AnswerFacts,
  chatUsage,
  idBase,
  itemIds,
  type OutputItem,
  outputText,
  type ResponsesBody,
  reasoningText,
  renderItem,
  responseObject,
  responsesUsage,
} from "./translate.js";

/**
 * Whether a chat chunk is only the text delta of `ChatToResponsesStream`: a plain text chunk
 * (chunk-shape.ts) with no reasoning either, which would open an item of its own. A chunk
 * differing from it only in its text may be read by its text alone (docs/gateway.md#stream-fast-paths).
 */
const plainText = (probed: Chunk) => plainTextChunk(probed as Json, (delta) => reasoningText(delta) === "");

type MessageItem = Extract<OutputItem, { kind: "message" }>;
type CallItem = Extract<OutputItem, { kind: "call" }>;

/**
 * A chat completions stream, event by event, as a Responses stream
 * (docs/gateway.md#responses-translation). Fed the data of each chat event in order (the JSON of
 * each chunk, then "[DONE]"), it gives the Responses events to send, each `event: <type>\ndata:
 * <json>\n\n` with `sequence_number` counting from 0:
 *
 * - `response.created` and `response.in_progress` before anything else;
 * - per item, `output_item.added`, its deltas, and its closing events up to `output_item.done`. A
 *   reasoning or message item is closed when an item of another kind starts; function calls stay
 *   open until the stream ends, since chat may interleave the arguments of several calls by index;
 * - at "[DONE]" (the usage chunk comes after `finish_reason`), or at `finish()` for an upstream that
 *   closes without it: the open items closed, then `response.completed`, `response.incomplete` or
 *   `response.failed` with the whole response object, the one `chatToResponses` gives for the same
 *   answer whole.
 *
 * An error chunk (`{"error": ...}`) ends the stream at once with `response.failed`, whose error is
 * fixed (the upstream's own text is not relayed); so does a stream that ends with neither
 * `finish_reason` nor "[DONE]". What follows the end is read for its usage and sends nothing.
 *
 * It is an EventReader: `read` also reports each event's usage and the bytes of the output it
 * carries (text, refusal, reasoning and call arguments) for the relay's estimate.
 */
export class ChatToResponsesStream implements EventReader {
  private sequence = 0;
  private started = false;
  private ended = false;
  private readonly base: string;
  private created: number;
  private model: string;
  private readonly items: OutputItem[] = [];
  /** The reasoning or message item deltas go to, by its place in `items`; -1 for none. */
  private open = -1;
  /** Whether the open message's text part has been announced. */
  private textPart = false;
  private messages = 0;
  private readonly calls = new Map<number, number>();
  private readonly openCalls: number[] = [];
  private finishReason: string | null = null;
  private rawUsage: unknown;
  private seenUsage: Usage | undefined;
  private failed = false;
  private bytes = 0;
  /** Chunks that differ from an earlier one only in their text, read without parsing them. */
  private readonly shape = new ChunkShape();

  constructor(
    private readonly request: ResponsesBody,
    private readonly defaults: AnswerDefaults,
    /** Unix seconds, read once when the response completes; absent, the creation time is used. */
    private readonly clock?: () => number,
  ) {
    this.base = idBase(defaults);
    this.created = defaults.created;
    this.model = defaults.model;
  }

  /** The usage the stream has reported so far (its usage chunk), as the relay reads it. */
  usage(): Usage | undefined {
    return this.seenUsage;
  }

  /** The UTF-8 bytes of output read so far. */
  outputBytes(): number {
    return this.bytes;
  }

  /** The Responses events for one chat event's data, with its usage and output bytes. */
  read(data: string): EventFacts {
    const before = this.bytes;
    // A chunk in the shape of an earlier plain text chunk, with plain non-empty text: the same
    // chunk with that text, so what `chunk` below would send (docs/gateway.md#stream-fast-paths).
    const text = this.ended ? undefined : this.shape.match(data);
    if (text !== undefined && text !== "" && !NOT_PLAIN.test(text)) {
      const send = this.textDelta(text);
      return { send, usage: undefined, contentBytes: this.bytes - before };
    }
    let chunk: unknown;
    if (data !== DONE) {
      try {
        chunk = JSON.parse(data);
      } catch {
        chunk = undefined;
      }
    }
    const usage = chatUsage(chunk);
    if (usage) {
      this.seenUsage = usage;
      this.rawUsage = (chunk as Json).usage;
    }
    if (this.ended) return { send: "", usage, contentBytes: 0 };
    let out = this.start(chunk);
    if (data === DONE) out += this.close(true);
    else if (isObject(chunk)) {
      if (isObject(chunk.error)) {
        this.failed = true;
        out += this.close(false);
      } else {
        out += this.chunk(chunk);
        if (text === undefined && !usage && !this.ended) this.shape.learn(data, chunk as Chunk, plainText);
      }
    }
    return { send: out, usage, contentBytes: this.bytes - before };
  }

  /** The sequence number of an event sent after the last one (an answer's refusal, docs/gateway.md#answer-streams). */
  get nextSequence(): number {
    return this.sequence;
  }

  /** The closing events for a stream that ended without "[DONE]"; "" once the response has ended. */
  finish(): string {
    if (this.ended) return "";
    return this.start(undefined) + this.close(false);
  }

  private event(type: string, fields: Json): string {
    const body = { type, sequence_number: this.sequence++, ...fields };
    return `event: ${type}\ndata: ${JSON.stringify(body)}\n\n`;
  }

  /**
   * A delta event, the most frequent of a stream, written around its text: the same JSON `event`
   * gives, without building an object per piece of text.
   */
  private delta(
    type: string,
    itemId: string,
    index: number,
    middle: string,
    text: string,
    tail: string,
  ): string {
    const head = `{"type":"${type}","sequence_number":${this.sequence++},"item_id":${JSON.stringify(itemId)}`;
    const data = `${head},"output_index":${index}${middle},"delta":${JSON.stringify(text)}${tail}}`;
    return `event: ${type}\ndata: ${data}\n\n`;
  }

  private facts(): AnswerFacts {
    return {
      created: this.created,
      model: this.model,
      finishReason: this.finishReason,
      items: this.items,
      usage: responsesUsage(this.rawUsage),
      failed: this.failed,
    };
  }

  private start(chunk: unknown): string {
    if (this.started) return "";
    this.started = true;
    if (isObject(chunk)) {
      if (Number.isInteger(chunk.created)) this.created = chunk.created as number;
      if (typeof chunk.model === "string" && chunk.model !== "") this.model = chunk.model;
    }
    const response = responseObject(this.facts(), this.request, this.defaults, true);
    return this.event("response.created", { response }) + this.event("response.in_progress", { response });
  }

  private chunk(chunk: Json): string {
    const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
    // Responses has one answer: the first choice (chat's `n` is never set by the translation).
    const choice = choices.find((c) => isObject(c) && (c.index === 0 || c.index === undefined));
    if (!isObject(choice)) return "";
    let out = "";
    const delta = isObject(choice.delta) ? choice.delta : {};
    const reasoning = reasoningText(delta);
    if (reasoning !== "") out += this.reasoningDelta(reasoning);
    if (typeof delta.content === "string" && delta.content !== "") out += this.textDelta(delta.content);
    if (typeof delta.refusal === "string" && delta.refusal !== "") out += this.refusalDelta(delta.refusal);
    if (Array.isArray(delta.tool_calls)) {
      delta.tool_calls.forEach((call, position) => {
        if (isObject(call)) out += this.callDelta(call, position);
      });
    }
    if (typeof choice.finish_reason === "string") {
      this.finishReason = choice.finish_reason;
      if (choice.finish_reason === "error") this.failed = true;
    }
    return out;
  }

  /** Makes the open reasoning or message item one of `kind`, closing the one open before. */
  private openItem(kind: "reasoning" | "message"): { out: string; index: number; fresh: boolean } {
    const current = this.items[this.open];
    if (current && current.kind === kind) return { out: "", index: this.open, fresh: false };
    let out = this.closeOpen(true);
    const item: OutputItem =
      kind === "reasoning"
        ? { kind, id: itemIds.reasoning(this.base), text: "" }
        : { kind, id: itemIds.message(this.base, this.messages++), text: "", refusal: "" };
    this.items.push(item);
    this.open = this.items.length - 1;
    this.textPart = false;
    out += this.event("response.output_item.added", { output_index: this.open, item: added(item) });
    return { out, index: this.open, fresh: true };
  }

  private reasoningDelta(text: string): string {
    this.bytes += Buffer.byteLength(text);
    const { out, index, fresh } = this.openItem("reasoning");
    const item = this.items[index] as Extract<OutputItem, { kind: "reasoning" }>;
    let events = out;
    if (fresh)
      events += this.event("response.content_part.added", {
        item_id: item.id,
        output_index: index,
        content_index: 0,
        part: { type: "reasoning_text", text: "" },
      });
    item.text += text;
    return (
      events + this.delta("response.reasoning_text.delta", item.id, index, ',"content_index":0', text, "")
    );
  }

  private textDelta(text: string): string {
    this.bytes += Buffer.byteLength(text);
    const { out, index } = this.openItem("message");
    const item = this.items[index] as MessageItem;
    let events = out;
    if (!this.textPart) {
      this.textPart = true;
      events += this.event("response.content_part.added", {
        item_id: item.id,
        output_index: index,
        content_index: 0,
        part: outputText(""),
      });
    }
    item.text += text;
    return (
      events +
      this.delta("response.output_text.delta", item.id, index, ',"content_index":0', text, ',"logprobs":[]')
    );
  }

  /** A refusal is gathered and sent whole when its message closes, as the part after the text. */
  private refusalDelta(text: string): string {
    this.bytes += Buffer.byteLength(text);
    const { out, index } = this.openItem("message");
    (this.items[index] as MessageItem).refusal += text;
    return out;
  }

  private callDelta(call: Json, position: number): string {
    const key = Number.isInteger(call.index) ? (call.index as number) : position;
    const fn = isObject(call.function) ? call.function : {};
    const name = typeof fn.name === "string" ? fn.name : "";
    const args = typeof fn.arguments === "string" ? fn.arguments : "";
    this.bytes += Buffer.byteLength(args);
    let out = "";
    let index = this.calls.get(key);
    if (index === undefined) {
      out += this.closeOpen(true);
      const n = this.calls.size;
      const item: CallItem = {
        kind: "call",
        id: itemIds.call(this.base, n),
        callId: typeof call.id === "string" && call.id !== "" ? call.id : `call_${this.base}_${n}`,
        name,
        arguments: "",
      };
      this.items.push(item);
      index = this.items.length - 1;
      this.calls.set(key, index);
      this.openCalls.push(index);
      out += this.event("response.output_item.added", { output_index: index, item: added(item) });
    } else if (name !== "") {
      // A name sent in pieces: the done events carry it whole.
      (this.items[index] as CallItem).name += name;
    }
    const item = this.items[index] as CallItem;
    if (args !== "") {
      item.arguments += args;
      out += this.delta("response.function_call_arguments.delta", item.id, index, "", args, "");
    }
    return out;
  }

  /** The status the items are closed with: the response's, as an item status. */
  private itemStatus(): "completed" | "incomplete" {
    if (this.failed) return "incomplete";
    return this.finishReason === "length" || this.finishReason === "content_filter"
      ? "incomplete"
      : "completed";
  }

  /** Closes the open reasoning or message item; `early`: another item starts, so it is complete. */
  private closeOpen(early: boolean): string {
    const index = this.open;
    const item = this.items[index];
    this.open = -1;
    if (!item) return "";
    if (early) item.finished = true;
    let out = "";
    const at = { item_id: item.id, output_index: index };
    if (item.kind === "reasoning") {
      out += this.event("response.reasoning_text.done", { ...at, content_index: 0, text: item.text });
      out += this.event("response.content_part.done", {
        ...at,
        content_index: 0,
        part: { type: "reasoning_text", text: item.text },
      });
    } else if (item.kind === "message") {
      let part = 0;
      if (this.textPart || item.refusal === "") {
        if (!this.textPart)
          out += this.event("response.content_part.added", { ...at, content_index: 0, part: outputText("") });
        out += this.event("response.output_text.done", {
          ...at,
          content_index: 0,
          text: item.text,
          logprobs: [],
        });
        out += this.event("response.content_part.done", {
          ...at,
          content_index: 0,
          part: outputText(item.text),
        });
        part = 1;
      }
      if (item.refusal !== "") {
        const refusal = { type: "refusal", refusal: item.refusal };
        out += this.event("response.content_part.added", {
          ...at,
          content_index: part,
          part: { type: "refusal", refusal: "" },
        });
        out += this.event("response.refusal.done", { ...at, content_index: part, refusal: item.refusal });
        out += this.event("response.content_part.done", { ...at, content_index: part, part: refusal });
      }
    }
    this.textPart = false;
    return (
      out +
      this.event("response.output_item.done", {
        output_index: index,
        item: renderItem(item, item.finished ? "completed" : this.itemStatus()),
      })
    );
  }

  private closeCall(index: number): string {
    const item = this.items[index] as CallItem;
    return (
      this.event("response.function_call_arguments.done", {
        item_id: item.id,
        output_index: index,
        name: item.name,
        arguments: item.arguments,
      }) +
      this.event("response.output_item.done", {
        output_index: index,
        item: renderItem(item, this.itemStatus()),
      })
    );
  }

  /** Closes what is open and sends the final event; `done`: the upstream sent "[DONE]". */
  private close(done: boolean): string {
    this.ended = true;
    if (!done && this.finishReason === null) this.failed = true;
    let out = "";
    // An answer with neither text nor calls still has its (empty) message, as chatToResponses gives.
    if (!this.failed && this.calls.size === 0 && !this.items.some((i) => i.kind === "message"))
      out += this.openItem("message").out;
    // The open reasoning or message item and the calls close in their output order.
    const closing = [...this.openCalls];
    if (this.open >= 0) closing.push(this.open);
    closing.sort((a, b) => a - b);
    const hadOpen = this.open;
    for (const index of closing) {
      out += index === hadOpen ? this.closeOpen(false) : this.closeCall(index);
    }
    this.openCalls.length = 0;
    const completedAt = this.clock?.();
    const defaults = completedAt === undefined ? this.defaults : { ...this.defaults, completedAt };
    const response = responseObject(this.facts(), this.request, defaults);
    const type =
      response.status === "completed"
        ? "response.completed"
        : response.status === "incomplete"
          ? "response.incomplete"
          : "response.failed";
    return out + this.event(type, { response });
  }
}

/** An item as `output_item.added` announces it: nothing in it yet. */
function added(item: OutputItem): Json {
  const rendered = renderItem(item, "in_progress");
  if (item.kind !== "call") rendered.content = [];
  return rendered;
}
