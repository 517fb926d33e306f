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

/**
 * Sends a stored (or just made) response. It sends rather than returns: a replayed body is JSON read
 * back from the store, whose type the route's response schema cannot know, and the schema still
 * serializes it on the way out.
 */
export function sendStored(reply: FastifyReply, stored: StoredResponse & { replayed: boolean }): void {
  reply.code(stored.status);
  for (const [name, value] of Object.entries(stored.headers)) reply.header(name, value);
  if (stored.replayed) reply.header("idempotent-replayed", "true");
  reply.send(stored.body);
}
