import type { Api } from "./catalog.js";
import { type ChatText, type JsonToken, jsonTokens, type PathNode } from "./chat-texts.js";

/**
 * The texts of a whole (non-streamed) answer as the upstream sent it, in each API's shape, and the
 * answer with some of them replaced (docs/gateway.md#answer-filters). Unlike a request's texts,
 * which every string is unless allow-listed, an answer's texts are the places an API puts what the
 * model wrote: its text, refusal, tool and function call arguments and reasoning. The rest of an
 * answer (ids, usage, finish reasons) is the provider's, not the model's. Pure: the answer is never
 * mutated.
 */

/** The answer shapes that carry text: embeddings answer with vectors (docs/gateway.md#answer-filters). */
export type AnswerShape = "chat" | "responses" | "messages";

/** The shape of an answer of this API, or null when its answers carry no text. */
export function answerShapeOf(api: Api): AnswerShape | null {
  return api === "embeddings" ? null : api;
}

/** The role every text of an answer has: the model wrote it. */
export const ANSWER_ROLE = "assistant";

type Json = Record<string, unknown>;
type Path = readonly (string | number)[];

/**
 * How a string of the answer is read and written back: as it is; as JSON text (arguments), token
 * by token so a redaction stays inside its string value; or an object (Messages' tool input),
 * read as its JSON text and parsed back.
 */
type Form = "text" | "json" | "object";

interface Slot {
  path: Path;
  form: Form;
  /** The string, or the object's JSON text. */
  source: string;
}

export interface AnswerTexts {
  /** The texts to scan; each one's `place.key` is the index of its slot, `place.token` its token. */
  texts: ChatText[];
  slots: Slot[];
}

/** Every answer text's place hangs from this node: write-back goes by slot, not by the node. */
const ANSWER_NODE: PathNode = { value: [], parent: null, key: "" };

function isRecord(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function records(value: unknown): [number, Json][] {
  if (!Array.isArray(value)) return [];
  const out: [number, Json][] = [];
  value.forEach((item, i) => {
    if (isRecord(item)) out.push([i, item]);
  });
  return out;
}

class Collector implements AnswerTexts {
  texts: ChatText[] = [];
  slots: Slot[] = [];

  add(path: Path, value: unknown, form: Form, message: number): void {
    let source: string;
    if (form === "object") {
      if (typeof value !== "object" || value === null) return;
      source = JSON.stringify(value);
    } else if (typeof value === "string" && value !== "") source = value;
    else return;
    const key = this.slots.push({ path, form, source }) - 1;
    const tokens = form === "text" ? null : jsonTokens(source);
    if (tokens === null) {
      // Arguments that are not JSON (cut off by the output limit): a label put into them is escaped.
      this.push(source, message, form !== "text", key, undefined);
      return;
    }
    for (const t of tokens) this.push(t.value, message, false, key, t);
  }

  private push(text: string, message: number, json: boolean, key: number, token: JsonToken | undefined) {
    if (text === "") return;
    // A property name of arguments is rewritten like a value: the client reads the whole answer,
    // and nothing else refers to the name by its spelling as a request's schema does.
    this.texts.push({
      text,
      role: ANSWER_ROLE,
      message,
      json,
      kind: "text",
      place: token
        ? { node: ANSWER_NODE, key, token: { start: token.start, end: token.end } }
        : { node: ANSWER_NODE, key },
    });
  }
}

/**
 * A chat completion: each choice's message content (a string or text parts), refusal, reasoning
 * (`reasoning`, `reasoning_content`, the text and summary of `reasoning_details`), tool calls'
 * arguments and a legacy function call's arguments.
 */
function chatTexts(answer: Json, c: Collector): void {
  for (const [i, choice] of records(answer.choices)) {
    const message = choice.message;
    if (!isRecord(message)) continue;
    const at = ["choices", i, "message"];
    if (typeof message.content === "string") c.add([...at, "content"], message.content, "text", i);
    else
      for (const [j, part] of records(message.content)) {
        c.add([...at, "content", j, "text"], part.text, "text", i);
        c.add([...at, "content", j, "refusal"], part.refusal, "text", i);
      }
    c.add([...at, "refusal"], message.refusal, "text", i);
    c.add([...at, "reasoning"], message.reasoning, "text", i);
    c.add([...at, "reasoning_content"], message.reasoning_content, "text", i);
    for (const [k, detail] of records(message.reasoning_details)) {
      c.add([...at, "reasoning_details", k, "text"], detail.text, "text", i);
      c.add([...at, "reasoning_details", k, "summary"], detail.summary, "text", i);
    }
    for (const [k, call] of records(message.tool_calls))
      if (isRecord(call.function))
        c.add([...at, "tool_calls", k, "function", "arguments"], call.function.arguments, "json", i);
    if (isRecord(message.function_call))
      c.add([...at, "function_call", "arguments"], message.function_call.arguments, "json", i);
  }
}

/**
 * A Responses answer: each output item's message text and refusal, function call arguments, custom
 * tool call input, and reasoning summary and content text.
 */
function responsesTexts(answer: Json, c: Collector): void {
  for (const [i, item] of records(answer.output)) {
    const at = ["output", i];
    switch (item.type) {
      case "message":
        for (const [j, part] of records(item.content)) {
          c.add([...at, "content", j, "text"], part.text, "text", i);
          c.add([...at, "content", j, "refusal"], part.refusal, "text", i);
        }
        break;
      case "function_call":
        c.add([...at, "arguments"], item.arguments, "json", i);
        break;
      case "custom_tool_call":
        c.add([...at, "input"], item.input, "text", i);
        break;
      case "reasoning":
        for (const [j, part] of records(item.summary))
          c.add([...at, "summary", j, "text"], part.text, "text", i);
        for (const [j, part] of records(item.content))
          c.add([...at, "content", j, "text"], part.text, "text", i);
        break;
    }
  }
}

/** A Messages answer: each content block's text, tool input (an object) and thinking. */
function messagesTexts(answer: Json, c: Collector): void {
  for (const [i, block] of records(answer.content)) {
    const at = ["content", i];
    switch (block.type) {
      case "text":
        c.add([...at, "text"], block.text, "text", i);
        break;
      case "tool_use":
      case "server_tool_use":
        c.add([...at, "input"], block.input, "object", i);
        break;
      case "thinking":
        c.add([...at, "thinking"], block.thinking, "text", i);
        break;
    }
  }
}

/** The texts of a whole answer of this shape (parsed); none when it is not an object. */
export function answerTexts(shape: AnswerShape, answer: unknown): AnswerTexts {
  const c = new Collector();
  if (!isRecord(answer)) return c;
  if (shape === "chat") chatTexts(answer, c);
  else if (shape === "responses") responsesTexts(answer, c);
  else messagesTexts(answer, c);
  return c;
}

/**
 * The answer with the replacements written back, as JSON text and parsed. Only the strings that
 * changed are replaced; the answer is parsed again from `text` so the caller's parse stays as it
 * was. A token of JSON text is written back as a whole JSON string, so arguments stay valid JSON.
 */
export function writeAnswer(
  text: string,
  read: AnswerTexts,
  replacements: readonly { text: ChatText; value: string }[],
): { text: string; parsed: unknown } {
  const bySlot = new Map<
    number,
    { whole?: string; tokens: { start: number; end: number; value: string }[] }
  >();
  for (const { text: t, value } of replacements) {
    const key = t.place.key as number;
    let r = bySlot.get(key);
    if (!r) {
      r = { tokens: [] };
      bySlot.set(key, r);
    }
    if (t.place.token) r.tokens.push({ ...t.place.token, value });
    else r.whole = value;
  }
  const parsed = JSON.parse(text) as unknown;
  for (const [key, r] of bySlot) {
    const slot = read.slots[key] as Slot;
    let next = r.whole ?? slot.source;
    if (r.whole === undefined) {
      r.tokens.sort((a, b) => a.start - b.start);
      next = "";
      let at = 0;
      for (const t of r.tokens) {
        next += slot.source.slice(at, t.start) + JSON.stringify(t.value);
        at = t.end;
      }
      next += slot.source.slice(at);
    }
    setAt(parsed, slot.path, slot.form === "object" ? JSON.parse(next) : next);
  }
  return { text: JSON.stringify(parsed), parsed };
}

function setAt(root: unknown, path: Path, value: unknown): void {
  let node = root as Record<string | number, unknown>;
  for (let i = 0; i < path.length - 1; i++) node = node[path[i] as string | number] as typeof node;
  node[path[path.length - 1] as string | number] = value;
}
