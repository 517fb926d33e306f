import Type, { type Static } from "typebox";

/** Bounds that keep one request's work small: the body limit caps the bytes, these the shapes. */
export const MAX_MESSAGES = 2048;
export const MAX_CONTENT_PARTS = 256;
export const MAX_TOOL_CALLS = 128;

const ContentPart = Type.Object(
  { type: Type.String({ minLength: 1, maxLength: 64 }), text: Type.Optional(Type.String()) },
  { additionalProperties: true },
);

const ToolCall = Type.Object(
  {
    function: Type.Optional(
      Type.Object(
        { name: Type.Optional(Type.String()), arguments: Type.Optional(Type.String()) },
        { additionalProperties: true },
      ),
    ),
  },
  { additionalProperties: true },
);

const Message = Type.Object(
  {
    role: Type.Union(
      ["system", "developer", "user", "assistant", "tool", "function"].map((r) => Type.Literal(r)),
    ),
    content: Type.Optional(
      Type.Union([Type.String(), Type.Array(ContentPart, { maxItems: MAX_CONTENT_PARTS }), Type.Null()]),
    ),
    tool_calls: Type.Optional(Type.Array(ToolCall, { maxItems: MAX_TOOL_CALLS })),
    function_call: Type.Optional(
      Type.Object({ arguments: Type.Optional(Type.String()) }, { additionalProperties: true }),
    ),
  },
  { additionalProperties: true },
);

/**
 * An OpenAI-style chat completion request. The fields the gateway reads are typed strictly; other
 * parameters (temperature, tools, ...) pass through to the provider unchanged.
 */
export const ChatCompletionRequest = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 256 }),
    messages: Type.Array(Message, { minItems: 1, maxItems: MAX_MESSAGES }),
    stream: Type.Optional(Type.Boolean()),
    stream_options: Type.Optional(
      Type.Object({ include_usage: Type.Optional(Type.Boolean()) }, { additionalProperties: true }),
    ),
    max_tokens: Type.Optional(Type.Integer({ minimum: 1 })),
    max_completion_tokens: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { additionalProperties: true },
);
export type ChatCompletionRequest = Static<typeof ChatCompletionRequest>;
