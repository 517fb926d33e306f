/**
 * The texts a chat completion request carries to the model (decisions §6: every message and role,
 * string and array content parts, tool-call arguments), and the same request with some of them
 * replaced (redaction). Pure: the request is never mutated.
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

/** Where a text sits in the request: which message, and which slot of it. */
export type TextSlot =
  | { kind: "content" }
  | { kind: "part"; part: number }
  | { kind: "tool_call"; call: number }
  | { kind: "function_call" };

export interface ChatText {
  message: number;
  role: string;
  slot: TextSlot;
  text: string;
  /** Tool-call arguments are JSON text: a replacement must stay valid inside a JSON string. */
  json: boolean;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Every text of the request, in message order. */
export function collectTexts(body: ChatBody): ChatText[] {
  const texts: ChatText[] = [];
  body.messages.forEach((m, message) => {
    const role = m.role;
    if (typeof m.content === "string") {
      texts.push({ message, role, slot: { kind: "content" }, text: m.content, json: false });
    } else if (Array.isArray(m.content)) {
      m.content.forEach((part: unknown, index: number) => {
        // Text parts carry `text`; other kinds (images, audio) carry no text to scan.
        if (isRecord(part) && typeof part.text === "string") {
          texts.push({ message, role, slot: { kind: "part", part: index }, text: part.text, json: false });
        }
      });
    }
    if (Array.isArray(m.tool_calls)) {
      m.tool_calls.forEach((call: unknown, index: number) => {
        const args = isRecord(call) && isRecord(call.function) ? call.function.arguments : undefined;
        if (typeof args === "string") {
          texts.push({ message, role, slot: { kind: "tool_call", call: index }, text: args, json: true });
        }
      });
    }
    const legacy = isRecord(m.function_call) ? m.function_call.arguments : undefined;
    if (typeof legacy === "string") {
      texts.push({ message, role, slot: { kind: "function_call" }, text: legacy, json: true });
    }
  });
  return texts;
}

/** A copy of the request with the given texts replaced; untouched messages are shared, not copied. */
export function replaceTexts(body: ChatBody, replacements: { text: ChatText; value: string }[]): ChatBody {
  if (replacements.length === 0) return body;
  const messages = body.messages.slice();
  for (const { text, value } of replacements) {
    const m: ChatMessage = { ...(messages[text.message] as ChatMessage) };
    const slot = text.slot;
    switch (slot.kind) {
      case "content":
        m.content = value;
        break;
      case "part": {
        const parts = (m.content as unknown[]).slice();
        parts[slot.part] = { ...(parts[slot.part] as Record<string, unknown>), text: value };
        m.content = parts;
        break;
      }
      case "tool_call": {
        const calls = (m.tool_calls as unknown[]).slice();
        const call = calls[slot.call] as Record<string, unknown>;
        calls[slot.call] = {
          ...call,
          function: { ...(call.function as Record<string, unknown>), arguments: value },
        };
        m.tool_calls = calls;
        break;
      }
      case "function_call":
        m.function_call = { ...(m.function_call as Record<string, unknown>), arguments: value };
        break;
    }
    messages[text.message] = m;
  }
  return { ...body, messages };
}
