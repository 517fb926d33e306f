import type { Endpoint, Model } from "../domain/catalog.js";
import { costMicros, promptTokenBound } from "../domain/decision.js";
import type { KeyPolicy } from "../services/effective-policy.js";
import type { AlertWatch } from "../services/raise-budget-alerts.js";
import type { GatewayDeps, Prepared } from "./prepare.js";
import { type Reservation, release, settle } from "./spend.js";
import type { Usage } from "./surfaces/surface.js";

/** Where the gateway logs: the request's logger, which carries the request id. */
export interface GatewayLog {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

/**
 * One forwarded request and its reservation's lifecycle: renewed while in flight, then settled on
 * the usage or released (docs/behaviour.md#budget-reservations).
 */
export class Attempt {
  reservation: Reservation | null = null;
  /** The timer that renews the reservation (keepHeld). */
  private renewal: NodeJS.Timeout | undefined;
  endpoint: Endpoint;
  started = process.hrtime.bigint();
  /** The agent session the client named, recorded with the spend (docs/behaviour.md#usage-by-session). */
  sessionId: string | null = null;

  constructor(
    readonly gw: GatewayDeps,
    readonly keyPolicy: KeyPolicy,
    readonly model: Model,
    readonly prepared: Prepared<object>,
    readonly requestId: string,
    readonly log: GatewayLog,
  ) {
    this.endpoint = prepared.decision.endpoints[0] as Endpoint;
  }

  /** Upstream usage when reported; otherwise the prompt bound and about four bytes a token. */
  usage(reported: Usage | undefined, completionBytes: number): Usage {
    if (reported) return reported;
    const texts = this.prepared.texts;
    return {
      prompt_tokens: promptTokenBound(texts, this.prepared.messageCount),
      completion_tokens: Math.ceil(completionBytes / 4),
    };
  }

  /**
   * Renews the reservation at half its hold while the request is in flight, so that a request that
   * runs longer than its first hold (a long stream) is never swept while it still spends.
   */
  keepHeld(holdMs: number): void {
    const reservation = this.reservation;
    if (!reservation) return;
    const services = this.gw.services;
    this.renewal = setInterval(() => {
      const expiresAt = new Date(services.now().getTime() + holdMs).toISOString();
      services.spend.renew(reservation, expiresAt).catch((err: unknown) => {
        this.log.warn({ err }, "renewing a budget reservation failed");
      });
    }, holdMs / 2);
    this.renewal.unref();
  }

  async settle(usage: Usage): Promise<void> {
    clearInterval(this.renewal);
    const cache =
      usage.cache_write_tokens || usage.cache_read_tokens
        ? { write: usage.cache_write_tokens ?? 0, read: usage.cache_read_tokens ?? 0 }
        : undefined;
    const cost = costMicros(this.model, this.endpoint, usage.prompt_tokens, usage.completion_tokens, cache);
    const provider = this.endpoint.provider;
    await settle(this.gw.services, this.reservation, {
      requestId: this.requestId,
      key: this.keyPolicy.key,
      model: this.model.canonical_slug,
      provider,
      byok: this.endpoint.byok,
      promptTokens: usage.prompt_tokens,
      completionTokens: usage.completion_tokens,
      costMicros: cost,
      guardrailIds: this.keyPolicy.applied.map((a) => a.guardrail.id),
      api: this.prepared.api,
      sessionId: this.sessionId,
    });
    this.watchAlerts();
    this.gw.metrics.spendMicros.inc({ provider }, cost);
    this.gw.metrics.upstreamSeconds.observe(
      { provider },
      Number(process.hrtime.bigint() - this.started) / 1e9,
    );
  }

  async release(): Promise<void> {
    clearInterval(this.renewal);
    await release(this.gw.services, this.reservation);
  }

  /** Hands the charged counters whose guardrail has alert thresholds to the alerts; never waits. */
  private watchAlerts(): void {
    const alerts = this.gw.alerts;
    const counters = this.reservation?.counters;
    if (!alerts || !counters) return;
    // The reservation's counters are those of the counted layers, in order, in the request's window.
    const counted = this.prepared.decision.budgets.filter((c) => c.counts);
    const watches: AlertWatch[] = [];
    counted.forEach((c, i) => {
      const counter = counters[i];
      const thresholds = this.keyPolicy.applied.find((a) => a.guardrail.id === c.layer.guardrail_id)
        ?.guardrail.alert_thresholds;
      if (counter && thresholds && thresholds.length > 0)
        watches.push({ counter, limit_micros: c.layer.limit_micros, thresholds });
    });
    if (watches.length > 0)
      alerts.check({
        organizationId: this.keyPolicy.key.organization_id,
        keyHash: this.keyPolicy.key.hash,
        watches,
      });
  }
}
