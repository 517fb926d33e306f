import Type, { type Static } from "typebox";
import { ChatCompletionRequest } from "../../gateway/surfaces/chat/schema.js";
import { EmbeddingsRequest } from "../../gateway/surfaces/embeddings/schema.js";
import { ResponsesInput } from "../../gateway/surfaces/responses/schema.js";

/**
 * The dry run takes the same request as the gateway, plus the key and the region address: every
 * field the gateway would scan (tools, response_format, ...) is scanned here too.
 */
export const EvaluateRequest = Type.Object(
  {
    key_hash: Type.String({
      minLength: 1,
      maxLength: 128,
      description: "The inference key to evaluate for.",
    }),
    ingress_region: Type.Optional(
      Type.Union([Type.Literal("global"), Type.Literal("europe"), Type.Literal("us")], {
        description: "The region address the request would arrive through (default global).",
      }),
    ),
    api: Type.Optional(
      Type.Union(
        [
          Type.Literal("chat"),
          Type.Literal("embeddings"),
          Type.Literal("responses"),
          Type.Literal("messages"),
        ],
        {
          description:
            "The API the request is made on (default chat): `chat` takes a chat completion request (`messages` required), `embeddings` an embeddings request (`input` required), `responses` an OpenAI Responses request (`input`, `instructions`, ...), `messages` an Anthropic Messages request (`messages` and `max_tokens` required, `system`, ...).",
        },
      ),
    ),
    ...ChatCompletionRequest.properties,
    // Required by the chat API only: which fields a request needs is checked against its API's schema.
    messages: Type.Optional(ChatCompletionRequest.properties.messages),
    input: Type.Optional(Type.Union([EmbeddingsRequest.properties.input, ResponsesInput])),
    encoding_format: Type.Optional(EmbeddingsRequest.properties.encoding_format),
    dimensions: Type.Optional(EmbeddingsRequest.properties.dimensions),
  },
  { additionalProperties: true },
);
export type EvaluateRequest = Static<typeof EvaluateRequest>;
