import Type from "typebox";

/** An Anthropic Messages answer, with the fields the gateway fills in where a provider leaves them out. */
export const MessagesResponse = Type.Object(
  {
    id: Type.String(),
    type: Type.Literal("message"),
    role: Type.Literal("assistant"),
    model: Type.String(),
    content: Type.Array(Type.Object({ type: Type.String() }, { additionalProperties: true })),
    stop_reason: Type.Union([Type.String(), Type.Null()]),
    stop_sequence: Type.Union([Type.String(), Type.Null()]),
    usage: Type.Object(
      { input_tokens: Type.Integer(), output_tokens: Type.Integer() },
      { additionalProperties: true },
    ),
  },
  { description: "The provider's answer as it sent it, after the gateway's checks." },
);

/** An error on the Messages route, in Anthropic's envelope (docs/gateway.md#messages-errors). */
export const MessagesErrorBody = Type.Object(
  {
    type: Type.Literal("error"),
    error: Type.Object({
      type: Type.String({
        description:
          "By status: invalid_request_error (400), authentication_error (401), permission_error (403), not_found_error (404), request_too_large (413), rate_limit_error (429), api_error (5xx), overloaded_error (529).",
      }),
      message: Type.String(),
      metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    }),
  },
  { description: "Errors on this route are in Anthropic's envelope, with the service's metadata beside." },
);
