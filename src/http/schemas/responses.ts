import Type from "typebox";
import { Uuid } from "./common.js";

/**
 * Schemas of answers that are built by hand rather than serialized through a schema: the document
 * describes them, and routes that use them serialize with JSON.stringify (`asSent`), so a field the
 * schema does not name is never dropped and a null is never coerced to the declared type. The
 * schemas are open (extra properties allowed); what they name, they name exactly.
 */

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) =>
  Type.Union([schema, Type.Null()]);
const Json = Type.Unknown();
const Region = Type.String({ enum: ["global", "europe", "us"] });

/** Serialize as sent: the route's response schema documents, it does not reshape. */
export const asSent = { serializerCompiler: () => (data: unknown) => JSON.stringify(data) };

/** A budget layer: a guardrail's budget, the key's own limit, or one of its workspace's budgets. */
const Budget = Type.Object({
  guardrail_id: Nullable(Uuid),
  layer: Type.String({ enum: ["key_limit", "key", "member", "workspace_default", "workspace_budget"] }),
  scope: Type.String({ enum: ["key", "member", "workspace"] }),
  reset_interval: Type.String({ enum: ["daily", "weekly", "monthly", "lifetime"] }),
  limit_usd: Type.Number(),
  resets_at: Nullable(Type.String({ format: "date-time" })),
});

/** A budget layer that counts a key or member, with its current window (key and member objects). */
export const BudgetState = Type.Object({
  guardrail_id: Type.Union([Uuid, Type.Null()], {
    description: "The guardrail whose budget this is; null for the key's own limit and a workspace budget.",
  }),
  layer: Type.Enum(["key_limit", "key", "member", "workspace_default", "workspace_budget"]),
  workspace_id: Type.Union([Uuid, Type.Null()]),
  scope: Type.Enum(["key", "member", "workspace"], {
    description:
      "Whose spend it counts: this key, its member's keys in the workspace, or the workspace's keys.",
  }),
  reset_interval: Type.Enum(["daily", "weekly", "monthly", "lifetime"]),
  limit_usd: Type.Number({ description: "The limit in USD." }),
  spent_usd: Type.Number({ description: "Settled spend in the current window." }),
  reserved_usd: Type.Number({ description: "Held by requests in flight." }),
  remaining_usd: Type.Number({ description: "The limit minus settled spend, never below 0." }),
  resets_at: Type.Union([Type.String({ format: "date-time" }), Type.Null()], {
    description: "When the window ends; null for a lifetime budget.",
  }),
});

export const CurrentKeyResponse = Type.Object({
  data: Type.Object({
    hash: Type.String(),
    name: Type.String(),
    label: Type.String(),
    organization_id: Uuid,
    workspace_id: Uuid,
    member_user_id: Nullable(Type.String()),
    guardrails: Type.Array(Type.Object({ layer: Type.String(), id: Uuid, name: Type.String() })),
    allowed_data_regions: Nullable(Type.Array(Region)),
    effective_policy: Type.Object(
      {},
      {
        description:
          'The guardrails combined. content_filter_builtins and content_filters list the filters that read requests, then those that read answers, each with apply_to "response".',
      },
    ),
    budgets: Type.Array(
      Type.Object({
        ...Budget.properties,
        spent_usd: Type.Number(),
        reserved_usd: Type.Number(),
        remaining_usd: Type.Number({
          description: "The limit minus settled spend and what requests in flight hold, never below 0.",
        }),
        window_start: Type.String({ format: "date-time" }),
      }),
    ),
  }),
});

export const AuditLogResponse = Type.Object({
  data: Type.Array(
    Type.Object({
      id: Type.String(),
      action: Type.String(),
      resource_type: Type.String(),
      resource_id: Type.String(),
      actor_key_hash: Type.String(),
      before: Json,
      after: Json,
      created_at: Type.String({ format: "date-time" }),
    }),
  ),
  total_count: Type.Integer(),
});

const ErrorObject = Type.Object({
  code: Type.Integer(),
  message: Type.String(),
  metadata: Type.Optional(Json),
});

export const EvaluateResponse = Type.Object({
  data: Type.Object({
    allowed: Type.Boolean(),
    status: Type.Integer(),
    error: Nullable(ErrorObject),
    violations: Type.Array(
      Type.Object({ rule: Type.String(), status: Type.Integer(), message: Type.String(), metadata: Json }),
    ),
    guardrails: Type.Array(Type.Object({ layer: Type.String(), id: Uuid, name: Type.String() })),
    model: Nullable(Type.String()),
    endpoints: Type.Array(Type.Object({ provider: Type.String(), region: Region })),
    candidates: Type.Array(Type.Object({ provider: Type.String() })),
    detections: Type.Array(Json),
    messages: Json,
    request: Type.Object({}),
    budgets: Type.Array(
      Type.Object({ ...Budget.properties, spend_usd: Type.Number(), reserved_usd: Type.Number() }),
    ),
    worst_case_cost_usd: Type.Number(),
  }),
});

/** An OpenAI-compatible chat completion, or with `stream: true` server-sent chunks (text/event-stream). */
export const ChatCompletionResponse = Type.Object(
  {
    id: Type.String(),
    object: Type.String(),
    created: Type.Integer(),
    model: Type.String(),
    choices: Type.Array(
      Type.Object({
        index: Type.Integer(),
        message: Type.Optional(Type.Object({ role: Type.String(), content: Nullable(Type.String()) })),
        finish_reason: Nullable(Type.String()),
      }),
    ),
    usage: Type.Optional(
      Type.Object({
        prompt_tokens: Type.Integer(),
        completion_tokens: Type.Integer(),
        total_tokens: Type.Integer(),
      }),
    ),
  },
  { description: "The provider's answer as it sent it, after the gateway's checks." },
);

/** An OpenAI embeddings answer: one vector per input, floats or (`encoding_format: "base64"`) base64. */
export const EmbeddingsResponse = Type.Object(
  {
    object: Type.String(),
    data: Type.Array(
      Type.Object({
        object: Type.String(),
        index: Type.Integer(),
        embedding: Type.Union([Type.Array(Type.Number()), Type.String()], {
          description:
            'The vector, or with `encoding_format: "base64"` its little-endian float32 bytes in base64.',
        }),
      }),
    ),
    model: Type.String(),
    usage: Type.Optional(Type.Object({ prompt_tokens: Type.Integer(), total_tokens: Type.Integer() })),
  },
  { description: "The provider's answer as it sent it, after the gateway's checks." },
);

const CatalogEndpoint = Type.Object({
  provider: Type.String(),
  region: Region,
  zdr: Type.Boolean(),
  trains_on_data: Type.Boolean(),
  publishes_prompts: Type.Boolean(),
  free: Type.Boolean(),
  byok: Type.Boolean(),
});

/** A model of the catalog, as the list and `GET /api/v1/models/{id}` send it (more fields pass as sent). */
export const ModelResponse = Type.Object({
  id: Type.String(),
  canonical_slug: Type.String(),
  name: Type.String(),
  context_length: Type.Integer(),
  pricing: Type.Object({ prompt: Type.String(), completion: Type.String() }),
  endpoints: Type.Array(
    Type.Object({
      ...CatalogEndpoint.properties,
      available: Type.Boolean({
        description: "Whether this endpoint's provider is configured here (has its API key, or needs none).",
      }),
    }),
  ),
});

export const ModelListResponse = Type.Object({
  data: Type.Array(ModelResponse),
  total_count: Type.Integer(),
});

/** A model as the Anthropic Models API presents it (docs/gateway.md#anthropic-model-list). */
export const AnthropicModel = Type.Object({
  type: Type.Literal("model"),
  id: Type.String(),
  display_name: Type.String(),
  created_at: Type.String({ format: "date-time" }),
});

export const AnthropicModelList = Type.Object({
  data: Type.Array(AnthropicModel),
  has_more: Type.Boolean(),
  first_id: Nullable(Type.String()),
  last_id: Nullable(Type.String()),
});

export const ModelCountResponse = Type.Object({ data: Type.Object({ count: Type.Integer() }) });

export const ModelEndpointsResponse = Type.Object({
  data: Type.Object({
    id: Type.String(),
    canonical_slug: Type.String(),
    name: Type.String(),
    endpoints: Type.Array(
      Type.Object({ ...CatalogEndpoint.properties, provider_name: Type.String(), available: Type.Boolean() }),
    ),
  }),
});

/** An OpenAI Responses answer, with the fields the gateway fills in where a provider leaves them out. */
export const ResponsesResponse = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal("response"),
    created_at: Type.Integer(),
    model: Type.String(),
    status: Type.String(),
    output: Type.Array(Type.Object({ type: Type.String() }, { additionalProperties: true })),
    usage: Type.Optional(
      Nullable(
        Type.Object({
          input_tokens: Type.Integer(),
          output_tokens: Type.Integer(),
          total_tokens: Type.Integer(),
        }),
      ),
    ),
  },
  { description: "The provider's answer as it sent it, after the gateway's checks." },
);
