import type { FastifyReply, FastifyRequest } from "fastify";
import Type from "typebox";
import type { IdempotencyRequest, StoredResponse } from "../../services/idempotency.js";

export const IdempotencyHeaders = Type.Object({
  "idempotency-key": Type.Optional(
    Type.String({
      description: "Retrying with the same key and body returns the first response and creates nothing new.",
    }),
  ),
});

export function idempotencyOf(request: FastifyRequest): IdempotencyRequest | undefined {
  const key = request.headers["idempotency-key"];
  if (typeof key !== "string") return undefined;
  return { key, method: request.method, route: request.routeOptions.url ?? request.url, body: request.body };
}

export function sendStored(reply: FastifyReply, stored: StoredResponse & { replayed: boolean }): unknown {
  reply.code(stored.status);
  for (const [name, value] of Object.entries(stored.headers)) reply.header(name, value);
  if (stored.replayed) reply.header("idempotent-replayed", "true");
  return stored.body;
}
