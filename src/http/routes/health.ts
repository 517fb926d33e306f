import type { FastifyInstance } from "fastify";

export function healthRoutes(app: FastifyInstance, deps: { ping: () => Promise<void> }): void {
  // The ingress region shows operators which region address a request came through (docs/behaviour.md#ingress-region).
  app.get("/healthz", { schema: { hide: true } }, async (request) => ({
    status: "ok",
    ingress_region: request.ingressRegion,
  }));
  app.get("/readyz", { schema: { hide: true } }, async (request, reply) => {
    try {
      await deps.ping();
      return { status: "ready" };
    } catch (err) {
      request.log.error({ err }, "database does not answer");
      reply.code(503);
      return {
        error: { code: 503, message: "Service Unavailable", metadata: { reason: "database_unavailable" } },
      };
    }
  });
}
