import Type, { type Static, type TEnumValue, type TSchema } from "typebox";
import { MAX_ALERT_PERCENT, MAX_ALERT_THRESHOLDS, MIN_ALERT_PERCENT } from "../../domain/budget-alerts.js";
import { REGIONS } from "../../domain/catalog.js";
import {
  APPLY_TO,
  BUILTIN_SLUGS,
  FILTER_ACTIONS,
  MAX_CUSTOM_FILTERS,
  MAX_LABEL_LENGTH,
  MAX_PATTERN_LENGTH,
  SCAN_SCOPES,
} from "../../domain/content-filters.js";
import { type GuardrailBody, type PresentedGuardrail, RESET_INTERVALS } from "../../domain/guardrail.js";
import { Pagination, Uuid } from "./common.js";

/** Bounds on list sizes: nobody needs more, and they keep a body's cost predictable. */
export const MAX_MODEL_ITEMS = 1000;
export const MAX_PROVIDER_ITEMS = 200;
const MAX_ID_LENGTH = 200;

/** An enum whose static type keeps its literals, so a validated body needs no cast to the domain type. */
function literals<const V extends TEnumValue[]>(values: readonly [...V], description?: string) {
  return Type.Enum(values, description ? { description } : {});
}

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/**
 * Nullable for responses: `type: [T, "null"]` rather than anyOf, so the response serializer writes
 * the value directly instead of trying each branch (anyOf made serialization a hot spot).
 */
function NullableOut<T extends TSchema>(schema: T) {
  const raw = schema as unknown as { type?: string; enum?: unknown[] };
  const type = raw.type ?? "string";
  const out: Record<string, unknown> = { ...(schema as object), type: [type, "null"] };
  if (raw.enum) out.enum = [...raw.enum, null];
  return Type.Unsafe<Static<T> | null>(out);
}

const Region = literals(REGIONS, "Ingress region: global, europe or us.");
const Action = literals(FILTER_ACTIONS, "block refuses, redact replaces with the label, flag only records.");

const ApplyToInput = literals(
  APPLY_TO,
  "What the filter reads: request (the default), response (the model's answers) or both.",
);

/** Returned as it was sent, and absent when it was not (docs/behaviour.md#apply-to). */
const ApplyToOutput = () =>
  literals(
    APPLY_TO,
    "What the filter reads, as it was sent: request, response (the model's answers) or both; absent: the request.",
  );

const BuiltinFilterInput = Type.Object(
  {
    slug: literals(BUILTIN_SLUGS),
    action: Action,
    label: Type.Optional(
      Type.String({ maxLength: MAX_LABEL_LENGTH, description: "Ignored: builtin labels are the system's." }),
    ),
    scan_scope: Type.Optional(
      literals(SCAN_SCOPES, "Only for regex-prompt-injection; default all_messages."),
    ),
    apply_to: Type.Optional(ApplyToInput),
  },
  { additionalProperties: false },
);

const CustomFilterInput = Type.Object(
  {
    pattern: Type.String({
      minLength: 1,
      maxLength: MAX_PATTERN_LENGTH,
      description:
        "RE2 / JavaScript syntax, matched in linear time; lookaround and backreferences are refused.",
    }),
    action: Action,
    label: Type.Optional(Nullable(Type.String({ maxLength: MAX_LABEL_LENGTH }))),
    apply_to: Type.Optional(ApplyToInput),
  },
  { additionalProperties: false },
);

const stringList = (maxItems: number, description: string) =>
  Nullable(
    Type.Array(Type.String({ minLength: 1, maxLength: MAX_ID_LENGTH }), {
      minItems: 1,
      maxItems,
      description,
    }),
  );

/** The properties shared by create and update (docs/behaviour.md#guardrail-fields; docs/behaviour.md#content-filters). */
function policyProperties(familyIds: string[]) {
  const zdrFlags: Record<string, TSchema> = {};
  for (const family of familyIds) {
    zdrFlags[`enforce_zdr_${family}`] = Type.Optional(
      Type.Boolean({
        description: `Zero data retention for models of the ${family} family; falls back to enforce_zdr.`,
      }),
    );
  }
  return {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
    allowed_data_regions: Type.Optional(
      Nullable(Type.Array(Region, { minItems: 1, maxItems: 10, description: "null: ingress unrestricted." })),
    ),
    allowed_models: Type.Optional(stringList(MAX_MODEL_ITEMS, "Model slugs or canonical slugs.")),
    allowed_providers: Type.Optional(stringList(MAX_PROVIDER_ITEMS, "Provider ids.")),
    ignored_models: Type.Optional(stringList(MAX_MODEL_ITEMS, "Models excluded from routing.")),
    ignored_providers: Type.Optional(stringList(MAX_PROVIDER_ITEMS, "Providers excluded from routing.")),
    // "An empty list is always a 400; null means no restriction" (docs/behaviour.md#empty-lists): filter lists too.
    content_filter_builtins: Type.Optional(
      Nullable(Type.Array(BuiltinFilterInput, { minItems: 1, maxItems: BUILTIN_SLUGS.length })),
    ),
    content_filters: Type.Optional(
      Nullable(Type.Array(CustomFilterInput, { minItems: 1, maxItems: MAX_CUSTOM_FILTERS })),
    ),
    enable_free_model_publication: Type.Optional(Type.Boolean()),
    enable_free_model_training: Type.Optional(Type.Boolean()),
    enable_paid_model_training: Type.Optional(Type.Boolean()),
    enforce_zdr: Type.Optional(
      Nullable(
        Type.Boolean({ deprecated: true, description: "Copied into every enforce_zdr_* flag not sent." }),
      ),
    ),
    ...zdrFlags,
    include_byok_in_budgets: Type.Optional(Type.Boolean()),
    limit_usd: Type.Optional(
      Nullable(
        Type.Number({ minimum: 0, description: "USD; needs reset_interval. Kept to the micro-dollar." }),
      ),
    ),
    reset_interval: Type.Optional(Nullable(literals(RESET_INTERVALS))),
    alert_thresholds: Type.Optional(
      Nullable(
        Type.Array(Type.Integer({ minimum: MIN_ALERT_PERCENT, maximum: MAX_ALERT_PERCENT }), {
          minItems: 1,
          maxItems: MAX_ALERT_THRESHOLDS,
          description:
            "Percents of each window's limit (whole numbers, 1 to 100) whose crossing by settled spend writes an audit entry and sends the budget alert webhook, once per window and threshold. Apply only while limit_usd is set.",
        }),
      ),
    ),
  };
}

export function guardrailSchemas(familyIds: string[]) {
  const props = policyProperties(familyIds);
  const CreateGuardrailBody = Type.Object(
    { ...props, workspace_id: Type.Optional(Uuid) },
    { additionalProperties: false, $id: "CreateGuardrailBody" },
  );
  const UpdateGuardrailBody = Type.Object(
    { ...props, name: Type.Optional(props.name) },
    { additionalProperties: false, $id: "UpdateGuardrailBody" },
  );

  const zdrOut: Record<string, TSchema> = {};
  for (const family of familyIds) zdrOut[`enforce_zdr_${family}`] = Type.Boolean();
  const Guardrail = Type.Object(
    {
      id: Uuid,
      name: Type.String(),
      description: NullableOut(Type.String()),
      workspace_id: Uuid,
      created_at: Type.String({ format: "date-time" }),
      updated_at: NullableOut(Type.String({ format: "date-time" })),
      allowed_data_regions: NullableOut(Type.Array(Region)),
      allowed_models: NullableOut(Type.Array(Type.String())),
      allowed_providers: NullableOut(Type.Array(Type.String())),
      ignored_models: NullableOut(Type.Array(Type.String())),
      ignored_providers: NullableOut(Type.Array(Type.String())),
      content_filter_builtins: NullableOut(
        Type.Array(
          Type.Object({
            slug: Type.String(),
            action: Action,
            label: Type.String(),
            scan_scope: Type.Optional(literals(SCAN_SCOPES)),
            apply_to: Type.Optional(ApplyToOutput()),
          }),
        ),
      ),
      content_filters: NullableOut(
        Type.Array(
          Type.Object({
            pattern: Type.String(),
            action: Action,
            label: NullableOut(Type.String()),
            apply_to: Type.Optional(ApplyToOutput()),
          }),
        ),
      ),
      enable_free_model_publication: Type.Boolean(),
      enable_free_model_training: Type.Boolean(),
      enable_paid_model_training: Type.Boolean(),
      enforce_zdr: Type.Null({ deprecated: true }),
      ...zdrOut,
      include_byok_in_budgets: Type.Boolean(),
      limit_usd: NullableOut(Type.Number()),
      reset_interval: NullableOut(literals(RESET_INTERVALS)),
      alert_thresholds: NullableOut(Type.Array(Type.Integer())),
    },
    { $id: "Guardrail" },
  );
  const ListGuardrailsQuery = Type.Object(
    { ...Pagination.properties, workspace_id: Type.Optional(Uuid) },
    { additionalProperties: false },
  );
  return { CreateGuardrailBody, UpdateGuardrailBody, Guardrail, ListGuardrailsQuery };
}

/** Properties a PATCH may not carry, with a clearer message than "unknown property" (docs/behaviour.md#not-updatable). */
export const NOT_UPDATABLE = ["id", "workspace_id", "created_at", "updated_at"];

// The schemas are the types: the domain's body and response types are checked against the static
// types of these schemas when the project compiles, so a property added to one and not the other,
// or a value the domain cannot take, fails `npm run typecheck`.
type Schemas = ReturnType<typeof guardrailSchemas>;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Holds<T extends true> = T;
/** The property names a type spells out, without its index signatures. */
type NamedKeys<T> = keyof {
  [K in keyof T as string extends K ? never : `enforce_zdr_${string}` extends K ? never : K]: T[K];
};
export type GuardrailTypesMatchSchemas = [
  Holds<Static<Schemas["CreateGuardrailBody"]> extends GuardrailBody ? true : false>,
  Holds<Static<Schemas["UpdateGuardrailBody"]> extends GuardrailBody ? true : false>,
  Holds<Same<NamedKeys<GuardrailBody>, keyof Static<Schemas["CreateGuardrailBody"]>>>,
  Holds<PresentedGuardrail extends Static<Schemas["Guardrail"]> ? true : false>,
  Holds<Same<NamedKeys<PresentedGuardrail>, keyof Static<Schemas["Guardrail"]>>>,
];
