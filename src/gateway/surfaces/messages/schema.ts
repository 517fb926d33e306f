import Type, { type Static } from "typebox";

/** Bounds that keep one request's work small: the body limit caps the bytes, these the shapes. */
export const MAX_MESSAGES = 2048;
export const MAX_CONTENT_BLOCKS = 256;
export const MAX_TOOLS = 512;
export const MAX_STOP_SEQUENCES = 64;

/** One content block (text, image, document, tool_use, tool_result, thinking, ...): only its type is read. */
const Block = Type.Object(
  { type: Type.String({ minLength: 1, maxLength: 64 }), text: Type.Optional(Type.String()) },
  { additionalProperties: true },
);

const Message = Type.Object(
  {
    // "system" too: Claude Code sends a system turn among the messages (docs/gateway.md#claude-code).
    role: Type.Union([Type.Literal("user"), Type.Literal("assistant"), Type.Literal("system")]),
    content: Type.Union([Type.String(), Type.Array(Block, { maxItems: MAX_CONTENT_BLOCKS })]),
  },
  { additionalProperties: true },
);

/**
 * An Anthropic Messages request (docs/gateway.md#messages). The fields the gateway reads are typed
 * strictly; other parameters pass through to the provider unchanged.
 */
export const MessagesRequest = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 256 }),
    max_tokens: Type.Integer({ minimum: 1 }),
    messages: Type.Array(Message, { maxItems: MAX_MESSAGES }),
    system: Type.Optional(
      Type.Union([
        Type.String(),
        Type.Array(
          Type.Object({ type: Type.Literal("text"), text: Type.String() }, { additionalProperties: true }),
          { maxItems: MAX_CONTENT_BLOCKS },
        ),
      ]),
    ),
    tools: Type.Optional(
      Type.Array(
        Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 256 }),
            type: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
            description: Type.Optional(Type.String()),
            input_schema: Type.Optional(Type.Object({}, { additionalProperties: true })),
          },
          { additionalProperties: true },
        ),
        { maxItems: MAX_TOOLS },
      ),
    ),
    // null as absent, as Anthropic's SDKs send an unset option.
    tool_choice: Type.Optional(
      Type.Union([
        Type.Object({ type: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: true }),
        Type.Null(),
      ]),
    ),
    stop_sequences: Type.Optional(Type.Array(Type.String(), { maxItems: MAX_STOP_SEQUENCES })),
    stream: Type.Optional(Type.Boolean()),
    temperature: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()])),
    top_p: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()])),
    top_k: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.Null()])),
    metadata: Type.Optional(Type.Object({}, { additionalProperties: true })),
    thinking: Type.Optional(
      Type.Object({ type: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: true }),
    ),
  },
  { additionalProperties: true },
);
export type MessagesRequest = Static<typeof MessagesRequest>;
export type MessagesBody = MessagesRequest & Record<string, unknown>;

/**
 * What `POST /api/v1/messages/count_tokens` takes: a Messages request whose `max_tokens` may be left
 * out, as Anthropic's count takes it (docs/gateway.md#messages-count-tokens).
 */
export const MessagesCountRequest = Type.Object(
  { ...MessagesRequest.properties, max_tokens: Type.Optional(Type.Integer({ minimum: 1 })) },
  { additionalProperties: true },
);
