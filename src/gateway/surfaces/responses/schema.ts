import Type, { type Static } from "typebox";

/** Bounds that keep one request's work small: the body limit caps the bytes, these the shapes. */
export const MAX_INPUT_ITEMS = 2048;
export const MAX_CONTENT_PARTS = 256;
export const MAX_TOOLS = 512;

const ContentPart = Type.Object(
  { type: Type.String({ minLength: 1, maxLength: 64 }), text: Type.Optional(Type.String()) },
  { additionalProperties: true },
);

/**
 * One input item: a message (`role` and `content`), a function call and its output, or any other
 * item kind, passed through. Only what the gateway reads is typed.
 */
const InputItem = Type.Object(
  {
    type: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    role: Type.Optional(
      Type.Union([
        Type.Literal("user"),
        Type.Literal("system"),
        Type.Literal("developer"),
        Type.Literal("assistant"),
      ]),
    ),
    content: Type.Optional(
      Type.Union([Type.String(), Type.Array(ContentPart, { maxItems: MAX_CONTENT_PARTS })]),
    ),
    call_id: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
    name: Type.Optional(Type.String()),
    arguments: Type.Optional(Type.String()),
    output: Type.Optional(
      Type.Union([Type.String(), Type.Array(ContentPart, { maxItems: MAX_CONTENT_PARTS })]),
    ),
  },
  { additionalProperties: true },
);

/** A Responses request's input: a string (the user's message) or an array of input items. */
export const ResponsesInput = Type.Union(
  [Type.String(), Type.Array(InputItem, { maxItems: MAX_INPUT_ITEMS })],
  {
    description: "A string (the user's message) or an array of input items.",
  },
);

/**
 * An OpenAI Responses request (docs/gateway.md#responses). The fields the gateway reads are typed
 * strictly; other parameters pass through to the provider unchanged. The service keeps no state:
 * `store: true`, `previous_response_id`, `background: true`, `conversation` and `prompt` are refused
 * with a 400 naming the field (responses/index.ts), not by the schema, so the message can say why.
 */
export const ResponsesRequest = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 256 }),
    input: Type.Optional(ResponsesInput),
    instructions: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    tools: Type.Optional(
      Type.Array(
        Type.Object({ type: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: true }),
        {
          maxItems: MAX_TOOLS,
        },
      ),
    ),
    tool_choice: Type.Optional(Type.Union([Type.String(), Type.Object({}, { additionalProperties: true })])),
    text: Type.Optional(Type.Object({}, { additionalProperties: true })),
    stream: Type.Optional(Type.Boolean()),
    store: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    previous_response_id: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    background: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    max_output_tokens: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
    reasoning: Type.Optional(Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()])),
    metadata: Type.Optional(
      Type.Union([Type.Record(Type.String(), Type.String(), { maxProperties: 16 }), Type.Null()]),
    ),
  },
  { additionalProperties: true },
);
export type ResponsesRequest = Static<typeof ResponsesRequest>;
export type ResponsesBody = ResponsesRequest & Record<string, unknown>;
