import type { FastifyInstance } from "fastify";
import type { GatewayMetrics } from "../../gateway/metrics.js";

/**
 * GET /metrics in the Prometheus text format. Open like /healthz, for a scraper on the operator's
 * network: the labels name outcomes, rules and providers, never a tenant, a key or any text.
 */
export function metricsRoutes(app: FastifyInstance, metrics: GatewayMetrics): void {
  app.get("/metrics", { schema: { hide: true } }, async (_request, reply) => {
    reply.type(metrics.registry.contentType);
    return metrics.render();
  });
}
