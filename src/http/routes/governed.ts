import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import type { TSchema } from "typebox";
import { completeGoverned } from "../../gateway/complete.js";
import type { GatewayDeps } from "../../gateway/prepare.js";
import type { Surface } from "../../gateway/surfaces/index.js";
import { principalOf } from "../auth.js";
import { errorResponses } from "../schemas/common.js";
import { asSent } from "../schemas/responses.js";

/** What the API document says of one governed route. */
export interface GovernedRouteDoc {
  summary: string;
  description: string;
  /** The successful answer's schema, and whether the API answers a stream when asked. */
  answer: { description: string; schema: TSchema; streams: boolean };
  /** The error body's schema, for an API with its own envelope (Surface.errorBody); absent: the service's. */
  errors?: TSchema;
  /** Statuses of its API's own that it answers besides the common ones (Messages: 529, docs/gateway.md#upstream-overloaded). */
  moreErrorStatuses?: number[];
  /** The ways the key may come (OpenAPI security requirements); absent: the document's default, Bearer. */
  security?: Record<string, string[]>[];
}

/** Every error status a governed route answers, from its own layers and the common ones. */
const ERROR_STATUSES = [400, 401, 403, 404, 413, 415, 429, 500, 502, 503, 504];

/**
 * A governed API's route (inference key): the surface's body schema, the governed request path, and
 * its answer sent as it came: JSON text, or server-sent events (docs/gateway.md#what-happens-to-a-request).
 * Every surface is served by this one handler, and by the direct path with the same code
 * (src/http/direct-gateway.ts).
 */
export function governedRoute<Body extends object>(
  parent: FastifyInstance,
  gw: GatewayDeps,
  surface: Surface<Body>,
  doc: GovernedRouteDoc,
): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const content: Record<string, { schema: TSchema | { type: "string" } }> = {
    "application/json": { schema: doc.answer.schema },
  };
  if (doc.answer.streams) content["text/event-stream"] = { schema: { type: "string" } };
  app.post(
    surface.route,
    {
      config: { auth: "inference", keyHeader: surface.keyHeader, errorBody: surface.errorBody },
      ...asSent,
      schema: {
        tags: ["Gateway"],
        summary: doc.summary,
        description: doc.description,
        body: surface.requestSchema,
        ...(doc.security ? { security: doc.security } : {}),
        response: {
          200: { description: doc.answer.description, content },
          ...(doc.errors
            ? Object.fromEntries(
                [...ERROR_STATUSES, ...(doc.moreErrorStatuses ?? [])].map((s) => [s, doc.errors]),
              )
            : errorResponses(400, 401, 403, 404, 413, 429, 502, 503, 504)),
        },
      },
    },
    async (request, reply) => {
      const answer = await completeGoverned(
        gw,
        surface,
        principalOf(request).keyHash,
        // The route's schema is the surface's own: the body is the surface's request.
        { body: request.body as Body, text: request.jsonText, headers: request.headers },
        request.ingressRegion,
        request.id,
        request.log,
        (details) => {
          request.logDetails = details;
        },
      );
      reply.headers(answer.headers);
      // The status is the provider's success status; the declared responses type it as 200. The
      // payload is the answer's JSON text (a string is not serialized again), which the declared
      // answer describes but cannot type.
      if (answer.kind === "json")
        return reply
          .code(answer.status as 200)
          .type(answer.contentType)
          .send(answer.payload as never);
      reply.header("cache-control", "no-cache");
      // A stream of server-sent events: the serializer does not touch a stream.
      return reply.type("text/event-stream").send(answer.stream as never);
    },
  );
}
