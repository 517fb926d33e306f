import Type, { type TSchema } from "typebox";

/** The one error body (docs/behaviour.md#error-body). */
export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      code: Type.Integer({ description: "Equals the HTTP status." }),
      message: Type.String(),
      metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    }),
  },
  { $id: "ErrorBody", description: "Every error has this shape." },
);

export const Uuid = Type.String({ format: "uuid" });

export const Pagination = Type.Object(
  {
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
  },
  { additionalProperties: false },
);

export function page(query: { offset?: number; limit?: number }): { offset: number; limit: number } {
  return { offset: query.offset ?? 0, limit: query.limit ?? 50 };
}

export function dataOf<T extends TSchema>(schema: T) {
  return Type.Object({ data: schema });
}

export function listOf<T extends TSchema>(schema: T) {
  return Type.Object({ data: Type.Array(schema), total_count: Type.Integer() });
}

export const Deleted = Type.Object({ deleted: Type.Literal(true) });

/** The error responses every authenticated route can give, for the OpenAPI document. */
export function errorResponses(...statuses: number[]): Record<number, typeof ErrorBody> {
  return Object.fromEntries(statuses.map((s) => [s, ErrorBody]));
}
