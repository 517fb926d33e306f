import type { IncomingHttpHeaders } from "node:http";
import type { TSchema } from "typebox";
import type { Api } from "../../domain/catalog.js";
import type { ChatText } from "../../domain/chat-texts.js";
import type { ErrorEnvelope } from "../../domain/errors.js";

/**
 * One governed API (a surface): everything the governed request path needs to know about its
 * vocabulary, so the path itself (complete.ts: decide, admit, forward, answer) is the same for every
 * API it governs. The decision never sees a surface: it takes the model, the texts, the message count
 * and the output cap that the surface reads from its request (CONTRIBUTING.md#adding-a-surface).
 *
 * Members are read on every request: a surface is one object built once, whose members neither
 * allocate closures nor copy the body where nothing changes.
 */
export interface Surface<Body extends object> {
  /** A short name: "chat". */
  readonly id: string;
  /**
   * The catalog API it is served on: only a model of this API, only through endpoints whose
   * provider speaks it (docs/gateway.md#provider-apis).
   */
  readonly api: Api;
  /**
   * The catalog APIs of the models it serves (a model's `api`), when more than its own: Responses
   * serves the chat models too, whose providers speak it (docs/gateway.md#provider-apis). Absent:
   * only models of `api`.
   */
  readonly modelApis?: readonly Api[];
  /** The route the service serves it on: "/api/v1/chat/completions". */
  readonly route: string;
  /**
   * A header its clients send the inference key in, beside `Authorization: Bearer` (Messages:
   * "x-api-key", docs/gateway.md#messages). Absent: Authorization only.
   */
  readonly keyHeader?: string;
  /** The request body's TypeBox schema, for validation, the request's type and the API document. */
  readonly requestSchema: TSchema;
  /** The path appended to a provider's base URL to call this API there: "/chat/completions". */
  readonly upstreamPath: string;
  /**
   * The data of the stream event that ends an upstream's stream ("[DONE]"), dropped as it comes:
   * the relay sends `streamEnd` itself once the spend is settled. Undefined when the API has none.
   */
  readonly streamTerminator: string | undefined;
  /** What the relay writes last, after settling: "data: [DONE]\n\n", or "" for nothing. */
  readonly streamEnd: string;

  /** The model the request names. */
  model(body: Body): string;
  /** Whether the client asked for a stream. */
  streams(body: Body): boolean;
  /** The prompt texts the content filters scan, each with its role and its place in the body. */
  collectTexts(body: Body): ChatText[];
  /** The body with `replacements` written back (redaction); the same object when there are none. */
  replaceTexts(
    body: Body,
    replacements: { text: ChatText; value: string }[],
    texts: readonly ChatText[],
  ): Body;
  /**
   * Where the request carries input no content filter can read (embeddings' token arrays), as a
   * JSON pointer: such a request is refused while a filter applies. Absent: everything is text.
   */
  unscannable?(body: Body): string | undefined;
  /** How many messages the request carries (the prompt's token bound counts them). */
  messageCount(body: Body): number;
  /** The output limit the client set, or null when it set none. */
  maxOutputTokens(body: Body): number | null;
  /** The body with its output limited to `cap` tokens; the same object when `cap` is null. */
  withOutputCap(body: Body, cap: number | null): Body;
  /**
   * The body as forwarded: `body` (redacted and capped) with what the gateway adds to it (chat: ask
   * a stream to report its usage); `client` is the request as the client sent it. The same object
   * when nothing is added, so the client's own text can be forwarded (forward-body.ts).
   */
  forwardBody(body: Body, client: Body, stream: boolean): Body;
  /**
   * The client's headers of this API's own that a provider speaking it is sent (Messages:
   * `anthropic-version`, `anthropic-beta`, docs/gateway.md#messages); throws the 400 for a bad one.
   * Absent: none.
   */
  upstreamHeaders?(headers: IncomingHttpHeaders): Record<string, string>;
  /** The usage a whole (non-streamed) answer reports. */
  usageOf(answer: unknown): Usage | undefined;
  /**
   * A successful answer's text as sent to the client, with the fields its API requires filled in
   * where the upstream left them out; `parsed` is the text parsed (undefined when it is not JSON).
   */
  completeAnswer(text: string, parsed: unknown, defaults: AnswerDefaults): string;
  /** A reader of one streamed answer's events, made once per stream. */
  eventReader(body: Body, defaults: AnswerDefaults): EventReader;

  /**
   * How a request of this API reaches a provider that speaks only chat completions: translated
   * there, and its answer translated back (docs/gateway.md#provider-apis). Absent: only providers
   * that speak this API serve it.
   */
  translation?: ChatTranslation<Body>;
  /**
   * The error body of an API whose errors have another envelope than the service's
   * (docs/behaviour.md#errors): used for every error answered on its route, and for an error that
   * ends its stream (Messages: docs/gateway.md#messages-errors). Absent: the service's own.
   */
  errorBody?: ErrorEnvelope;
  /**
   * The event name a stream's error is sent under (`event: error`), for an API whose clients read
   * only named events. Absent: the error is a bare `data:` event.
   */
  readonly errorEvent?: string;
}

/**
 * An API carried over chat completions: the request as a chat completion request, the chat answer
 * and its stream events as this API's.
 */
export interface ChatTranslation<Body extends object> {
  /** The path of chat completions at a provider: "/chat/completions". */
  readonly upstreamPath: string;
  /** The data of the event that ends a chat completion stream: "[DONE]". */
  readonly streamTerminator: string;
  /**
   * The request (redacted and capped) as a chat completion request ready to forward (a stream asks
   * for its usage), and the tools it carried that a chat completion cannot (hosted tools), left out.
   */
  request(body: Body, stream: boolean): { body: object; dropped: string[] };
  /** The usage a whole chat completion answer reports. */
  usageOf(answer: unknown): Usage | undefined;
  /** A successful whole chat completion answer (its text and its parse) as this API's answer text. */
  answer(text: string, parsed: unknown, body: Body, defaults: AnswerDefaults): string;
  /** A reader of a chat completion stream's events that sends this API's events instead. */
  events(body: Body, defaults: AnswerDefaults): EventReader;
}

/** Token counts an upstream reports. */
export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  /**
   * Of the prompt tokens, those written to and read from the provider's prompt cache, when it
   * reports them (docs/gateway.md#cache-prices).
   */
  cache_write_tokens?: number;
  cache_read_tokens?: number;
}

/** What the gateway fills in where an upstream's answer leaves a required field out. */
export interface AnswerDefaults {
  /** Used when the upstream sends no id: the request's own id. */
  id: string;
  /** Unix seconds. */
  created: number;
  /** The catalog slug the request was routed to. */
  model: string;
}

/** What the relay takes from one event of a stream (docs/gateway.md#streaming). */
export interface EventFacts {
  /** What to send the client instead of it: null to send it as it came, "" for nothing. */
  send: string | null;
  /** The usage it reports, if any. */
  usage: Usage | undefined;
  /** The UTF-8 bytes of the answer text it carries. */
  contentBytes: number;
}

/** Reads the events of one streamed answer, in order. */
export interface EventReader {
  /** The facts of one event, from its data (the joined values of its `data:` lines). */
  read(data: string): EventFacts;
  /**
   * What to send once the upstream's stream has ended and its spend is settled, before the
   * surface's `streamEnd` (a translated stream's closing events). Absent: nothing.
   */
  end?(): string;
}
