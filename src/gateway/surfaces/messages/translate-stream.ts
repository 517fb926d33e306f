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
  chatUsage,
  type MessagesBody,
  messageId,
  messagesUsage,
  stopReason,
  toolUseId,
  UPSTREAM_FAILURE,
} from "./translate.js";

/** A chunk's fit for the text fast path: it carries nothing but its text (docs/gateway.md#stream-fast-paths). */
const plainText = (probed: Chunk) => plainTextChunk(probed as Json);

/** What ends a text delta event after its text, written as a JSON string without its quotes. */
const TEXT_DELTA_END = '"}}\n\n';

/**
 * A chat completions stream, event by event, as an Anthropic Messages stream
 * (docs/gateway.md#messages-translation-stream). Fed the data of each chat event in order (the JSON
 * of each chunk, then "[DONE]" if the relay passes it on), it gives the Anthropic events to send,
 * each `event: <type>\ndata: <json>\n\n`:
 *
 * - `message_start` before anything else, with an empty content and zero usage (chat reports its
 *   usage last);
 * - per block, `content_block_start`, its deltas (`text_delta`, or `input_json_delta` with the tool
 *   call's arguments as they come), and `content_block_stop` when the next block starts or the
 *   answer ends. The text and refusal of the answer are one text block;
 * - at "[DONE]" or at `end()` (the usage chunk comes after `finish_reason`): the open block closed,
 *   then `message_delta` with the stop reason and the whole usage, and `message_stop`.
 *
 * An error chunk (`{"error": ...}`), a `finish_reason` of "error", or an upstream that closes
 * without a finish reason end the stream with an `error` event whose error is fixed (the upstream's
 * own text is not relayed). What follows the end is read for its usage and sends nothing.
 *
 * It is an EventReader: `read` also reports each event's usage and the bytes of the output it
 * carries (text and call arguments) for the relay's estimate.
 */
export class ChatToMessagesStream implements EventReader {
  private started = false;
  private ended = false;
  private model: string;
  /**
   * The blocks started so far. Only their number and the open one's kind are kept: the events
   * carry each piece as it comes, and nothing of a block is sent again, so a stream holds none of
   * its text.
   */
  private blocks = 0;
  /** The block deltas go to unless a call names another, by its index; -1 for none. */
  private open = -1;
  /**
   * The open text block's delta event up to its text's opening quote (`text_delta` and the index
   * written once per block, not per piece); "" while the open block is no text block.
   */
  private textHead = "";
  /** Chat's tool call index → the call's block index. */
  private readonly calls = new Map<number, number>();
  private finishReason: string | null = null;
  private refused = false;
  private rawUsage: unknown;
  private bytes = 0;

  constructor(
    _request: MessagesBody,
    private readonly defaults: AnswerDefaults,
  ) {
    this.model = defaults.model;
  }

  /** Chunks that differ from an earlier one only in their text, read without parsing them. */
  private readonly shape = new ChunkShape();

  /** The Anthropic events for one chat event's data, with its usage and output bytes. */
  read(data: string): EventFacts {
    const before = this.bytes;
    // A chunk in the shape of an earlier plain text chunk, with plain non-empty text: the same
    // chunk with that text, so what `chunk` below would send (docs/gateway.md#stream-fast-paths).
    const text = this.ended ? undefined : this.shape.match(data);
    if (text !== undefined && text !== "" && !NOT_PLAIN.test(text)) {
      // The text goes into its event as it is: no object, no JSON of it, and one concatenation.
      const bytes = Buffer.byteLength(text);
      this.bytes += bytes;
      const send =
        this.textHead !== ""
          ? this.textHead + text + TEXT_DELTA_END
          : this.openText() + this.textHead + text + TEXT_DELTA_END;
      return { send, usage: undefined, contentBytes: bytes };
    }
    let chunk: unknown;
    if (data !== DONE) {
      try {
        chunk = JSON.parse(data);
      } catch {
        chunk = undefined;
      }
    }
    const usage: Usage | undefined = chatUsage(chunk);
    if (usage) this.rawUsage = (chunk as Json).usage;
    if (this.ended) return { send: "", usage, contentBytes: 0 };
    let out = this.start(chunk);
    if (data === DONE) out += this.finishReason === null ? this.fail() : this.close();
    else if (isObject(chunk)) {
      if (chunk.error !== undefined && chunk.error !== null) out += this.fail();
      else {
        out += this.chunk(chunk);
        if (text === undefined && !usage && !this.ended) this.shape.learn(data, chunk as Chunk, plainText);
      }
    }
    return { send: out, usage, contentBytes: this.bytes - before };
  }

  /**
   * The closing events once the upstream's stream has ended (the relay drops the chat "[DONE]"
   * before reading it): the message's end, or the error event when no finish reason came.
   */
  end(): string {
    if (this.ended) return "";
    return this.start(undefined) + (this.finishReason === null ? this.fail() : this.close());
  }

  /** The same as `end()`, by the name the Responses translation uses. */
  finish(): string {
    return this.end();
  }

  private event(type: string, fields: Json): string {
    return `event: ${type}\ndata: ${JSON.stringify({ type, ...fields })}\n\n`;
  }

  private start(chunk: unknown): string {
    if (this.started) return "";
    this.started = true;
    if (isObject(chunk) && typeof chunk.model === "string" && chunk.model !== "") this.model = chunk.model;
    const message = {
      id: messageId(this.defaults),
      type: "message",
      role: "assistant",
      model: this.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: messagesUsage(undefined),
    };
    return this.event("message_start", { message });
  }

  private chunk(chunk: Json): string {
    const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
    // A message is one answer: the first choice (chat's `n` is refused by the translation).
    const choice = choices.find((c) => isObject(c) && (c.index === 0 || c.index === undefined));
    if (!isObject(choice)) return "";
    let out = "";
    const delta = isObject(choice.delta) ? choice.delta : {};
    if (typeof delta.content === "string" && delta.content !== "") out += this.textDelta(delta.content);
    if (typeof delta.refusal === "string" && delta.refusal !== "") {
      this.refused = true;
      out += this.textDelta(delta.refusal);
    }
    if (Array.isArray(delta.tool_calls)) {
      delta.tool_calls.forEach((call, position) => {
        if (isObject(call)) out += this.callDelta(call, position);
      });
    }
    if (typeof choice.finish_reason === "string") {
      if (choice.finish_reason === "error") return out + this.fail();
      this.finishReason = choice.finish_reason;
    }
    return out;
  }

  private textDelta(text: string): string {
    this.bytes += Buffer.byteLength(text);
    const open = this.textHead !== "" ? "" : this.openText();
    // Inside the head's quotes: the text as JSON writes it (lone surrogates escaped too).
    return open + this.textHead + JSON.stringify(text).slice(1, -1) + TEXT_DELTA_END;
  }

  /** Closes the open block and starts a text block: its `content_block_start`. */
  private openText(): string {
    const out = this.closeOpen();
    this.open = this.blocks++;
    this.textHead = `event: content_block_delta\ndata: {"type":"content_block_delta","index":${this.open},"delta":{"type":"text_delta","text":"`;
    return (
      out + this.event("content_block_start", { index: this.open, content_block: { type: "text", text: "" } })
    );
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
      out += this.closeOpen();
      const id = toolUseId(call.id, this.defaults, this.calls.size);
      index = this.blocks++;
      this.calls.set(key, index);
      this.open = index;
      out += this.event("content_block_start", {
        index,
        content_block: { type: "tool_use", id, name, input: {} },
      });
    }
    // A piece for a call whose block has closed (a provider interleaving several calls) is still
    // sent at that block's index, where clients gather the input by (docs/gateway.md#messages-translation-stream).
    if (args !== "") {
      const data = `{"type":"content_block_delta","index":${index},"delta":{"type":"input_json_delta","partial_json":${JSON.stringify(args)}}}`;
      out += `event: content_block_delta\ndata: ${data}\n\n`;
    }
    return out;
  }

  private closeOpen(): string {
    const index = this.open;
    this.open = -1;
    this.textHead = "";
    if (index < 0) return "";
    return this.event("content_block_stop", { index });
  }

  private close(): string {
    this.ended = true;
    const hasCalls = this.calls.size > 0;
    return (
      this.closeOpen() +
      this.event("message_delta", {
        delta: {
          stop_reason: stopReason(this.finishReason, hasCalls, this.refused),
          stop_sequence: null,
        },
        usage: messagesUsage(this.rawUsage),
      }) +
      this.event("message_stop", {})
    );
  }

  private fail(): string {
    this.ended = true;
    return this.event("error", { error: UPSTREAM_FAILURE });
  }
}
