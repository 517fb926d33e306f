import { createHmac } from "node:crypto";
import { alertEvent, type BudgetAlert } from "../domain/budget-alerts.js";
import { newId } from "../domain/ids.js";
import type { ServiceDeps } from "../services/context.js";
import { type AlertWatch, raiseBudgetAlerts } from "../services/raise-budget-alerts.js";

/** Where budget alerts are sent and how hard delivery tries (docs/configuration.md). */
export interface AlertSettings {
  /** The operator's receiver; without one, alerts are only written to the audit log. */
  webhookUrl: string | undefined;
  /** Signs every event (HMAC-SHA256); required with a URL. */
  secret: string | undefined;
  /** Deliveries of one event, the first included. */
  maxAttempts: number;
  /** Wait before the first retry; each later one waits twice as long. */
  firstRetryMs: number;
  /** Time one delivery attempt may take. */
  timeoutMs: number;
  /** Checks and deliveries waiting or under way at most; beyond it new ones are dropped (and logged). */
  queueSize: number;
}

export const DEFAULT_ALERT_SETTINGS: AlertSettings = {
  webhookUrl: undefined,
  secret: undefined,
  maxAttempts: 6,
  firstRetryMs: 1000,
  timeoutMs: 10_000,
  queueSize: 1000,
};

export const SIGNATURE_HEADER = "x-guardrails-signature";
export const TIMESTAMP_HEADER = "x-guardrails-timestamp";
export const EVENT_ID_HEADER = "x-guardrails-event-id";

/** `sha256=<hex>` of HMAC-SHA256(secret, "<timestamp>.<body>"): the timestamp is signed too, so a captured event cannot be replayed as new. */
export function signEvent(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`;
}

interface AlertLog {
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

/** What a settled request asks to be checked: its organization, key and charged counters. */
export interface AlertCheck {
  organizationId: string;
  keyHash: string;
  watches: AlertWatch[];
}

/**
 * Budget alerts off the request path. A settled request hands its counters over with `check`, which
 * only queues them and returns: the check (a read, and a write only when a threshold is newly
 * reached), the audit entry and the webhook with its retries all run afterwards, one check at a
 * time, so a slow database or receiver never holds a request. The queue is bounded: when it is full,
 * a check is dropped and logged, and the next request that charges the counter checks it again
 * (what is reached stays reached until the window ends).
 */
export class BudgetAlerts {
  private readonly checks: AlertCheck[] = [];
  private readonly deliveries = new Set<Promise<void>>();
  /** Wakes each delivery waiting to retry (on close, which then ends it). */
  private readonly waiting = new Set<() => void>();
  private readonly aborts = new Set<AbortController>();
  private draining = false;
  private closed = false;
  /** Alerts this process has seen claimed, so that it does not write to claim them again. */
  private readonly known = new Set<string>();

  constructor(
    private readonly deps: ServiceDeps,
    private readonly settings: AlertSettings,
    private readonly log: AlertLog,
  ) {}

  /** Queues a check; never waits. */
  check(job: AlertCheck): void {
    if (this.closed) return;
    const watches = job.watches.filter((w) => w.thresholds.some((t) => !this.known.has(this.id(w, t))));
    if (watches.length === 0) return;
    if (this.checks.length + this.deliveries.size >= this.settings.queueSize) {
      this.log.warn({ organization_id: job.organizationId }, "budget alert queue full; check dropped");
      return;
    }
    this.checks.push({ ...job, watches });
    if (!this.draining) void this.drain();
  }

  /** Stops retrying and drops what waits; deliveries under way are aborted. */
  async close(): Promise<void> {
    this.closed = true;
    this.checks.length = 0;
    for (const wake of [...this.waiting]) wake();
    for (const a of this.aborts) a.abort();
    await Promise.allSettled([...this.deliveries]);
  }

  private id(w: AlertWatch, threshold: number): string {
    const c = w.counter;
    return `${c.guardrail_id}|${c.scope}|${c.subject}|${c.reset_interval}|${c.window_start}|${threshold}`;
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      for (let job = this.checks.shift(); job && !this.closed; job = this.checks.shift()) {
        let outcome: { raised: BudgetAlert[]; reached: BudgetAlert[] };
        try {
          outcome = await raiseBudgetAlerts(this.deps, job.organizationId, job.keyHash, job.watches);
        } catch (err) {
          this.log.error({ err }, "checking budget alerts failed");
          continue;
        }
        // Bounded: a new window has new ids, so the set is simply cleared when it grows large.
        if (this.known.size > 100_000) this.known.clear();
        for (const alert of outcome.reached) this.known.add(this.idOf(alert));
        for (const alert of outcome.raised) this.deliver(alert);
      }
    } finally {
      this.draining = false;
    }
  }

  private idOf(alert: BudgetAlert): string {
    return `${alert.guardrail_id}|${alert.scope}|${alert.subject}|${alert.reset_interval}|${alert.window_start}|${alert.threshold_percent}`;
  }

  private deliver(alert: BudgetAlert): void {
    const { webhookUrl, secret } = this.settings;
    if (!webhookUrl || !secret) return;
    const body = JSON.stringify(alertEvent(alert, newId()));
    const delivery = this.send(webhookUrl, secret, body).finally(() => {
      this.deliveries.delete(delivery);
    });
    this.deliveries.add(delivery);
  }

  private async send(url: string, secret: string, body: string): Promise<void> {
    const eventId = (JSON.parse(body) as { id: string }).id;
    for (let attempt = 1; !this.closed; attempt++) {
      const timestamp = String(Math.floor(this.deps.now().getTime() / 1000));
      const abort = new AbortController();
      this.aborts.add(abort);
      const timer = setTimeout(() => abort.abort(), this.settings.timeoutMs);
      let failure: string;
      try {
        const res = await fetch(url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            [TIMESTAMP_HEADER]: timestamp,
            [SIGNATURE_HEADER]: signEvent(secret, timestamp, body),
            [EVENT_ID_HEADER]: eventId,
          },
          body,
          signal: abort.signal,
        });
        await res.arrayBuffer().catch(() => undefined);
        if (res.ok) return;
        failure = `status ${res.status}`;
      } catch (err) {
        failure = err instanceof Error ? err.message : String(err);
      } finally {
        clearTimeout(timer);
        this.aborts.delete(abort);
      }
      if (attempt >= this.settings.maxAttempts || this.closed) {
        this.log.error(
          { event_id: eventId, attempts: attempt, failure },
          "budget alert webhook not delivered",
        );
        return;
      }
      this.log.warn({ event_id: eventId, attempt, failure }, "budget alert webhook failed; retrying");
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(wait);
          this.waiting.delete(wake);
          resolve();
        };
        const wait = setTimeout(wake, this.settings.firstRetryMs * 2 ** (attempt - 1));
        this.waiting.add(wake);
      });
    }
  }
}
