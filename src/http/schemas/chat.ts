import Type, { type Static } from "typebox";
import { ChatCompletionRequest } from "../../gateway/surfaces/chat/schema.js";

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
    ...ChatCompletionRequest.properties,
  },
  { additionalProperties: true },
);
export type EvaluateRequest = Static<typeof EvaluateRequest>;
