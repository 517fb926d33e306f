import Type, { type Static } from "typebox";

/** Bounds that keep one request's work small (OpenAI's own: 2048 inputs, 8192 tokens each). */
export const MAX_INPUTS = 2048;
export const MAX_INPUT_TOKENS = 8192;

const TokenArray = Type.Array(Type.Integer({ minimum: 0 }), { minItems: 1, maxItems: MAX_INPUT_TOKENS });

/**
 * An OpenAI embeddings request. The fields the gateway reads are typed strictly; other parameters
 * pass through to the provider unchanged (docs/gateway.md#embeddings).
 */
export const EmbeddingsRequest = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 256 }),
    input: Type.Union(
      [
        Type.String(),
        Type.Array(Type.String(), { minItems: 1, maxItems: MAX_INPUTS }),
        TokenArray,
        Type.Array(TokenArray, { minItems: 1, maxItems: MAX_INPUTS }),
      ],
      {
        description:
          "The text to embed: a string, an array of strings, or token arrays (refused with 400 when a content filter applies: they cannot be read).",
      },
    ),
    encoding_format: Type.Optional(Type.Union([Type.Literal("float"), Type.Literal("base64")])),
    dimensions: Type.Optional(Type.Integer({ minimum: 1 })),
    user: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);
export type EmbeddingsRequest = Static<typeof EmbeddingsRequest>;
