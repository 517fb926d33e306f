import { Counter, Histogram, Registry } from "prom-client";

/**
 * The gateway's Prometheus metrics (docs/gateway.md#operations). One registry per app, so two apps in one
 * process (tests) do not share counts. Labels carry rules and providers, never tenants or text.
 */
export class GatewayMetrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: "guardrails_gateway_requests_total",
    help: "Governed model requests by outcome (forwarded, refused, upstream_error, error), refusal reason and API (chat, embeddings).",
    labelNames: ["outcome", "reason", "api"] as const,
    registers: [this.registry],
  });
  readonly decisionSeconds = new Histogram({
    name: "guardrails_gateway_decision_seconds",
    help: "Time to decide a request: policy, endpoint selection, content filters, budgets.",
    buckets: [0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05],
    registers: [this.registry],
  });
  readonly upstreamSeconds = new Histogram({
    name: "guardrails_gateway_upstream_seconds",
    help: "Time from sending a request upstream to its last byte, by provider.",
    labelNames: ["provider"] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers: [this.registry],
  });
  readonly upstreamErrors = new Counter({
    name: "guardrails_gateway_upstream_errors_total",
    help: "Upstream failures by provider and kind (timeout, connect, protocol, stream_broken, status).",
    labelNames: ["provider", "kind"] as const,
    registers: [this.registry],
  });
  readonly detections = new Counter({
    name: "guardrails_content_filter_detections_total",
    // `direction` is set only on answers' matches ("response"), so a request's series keeps the
    // labels it always had (docs/gateway.md#answer-filters).
    help: "Content filter matches by filter (builtin slug, or 'custom'), action and, for answers, direction.",
    labelNames: ["filter", "action", "direction"] as const,
    registers: [this.registry],
  });
  readonly spendMicros = new Counter({
    name: "guardrails_gateway_spend_micro_dollars_total",
    help: "Settled cost of forwarded requests, in micro-dollars, by provider.",
    labelNames: ["provider"] as const,
    registers: [this.registry],
  });

  async render(): Promise<string> {
    return this.registry.metrics();
  }
}
