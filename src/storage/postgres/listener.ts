import { randomUUID } from "node:crypto";
import pg from "pg";
import type { ChangeListener, ChangeListenerHandlers } from "../ports.js";
import { CHANGES_CHANNEL, noticeOf } from "./notices.js";

/** How the change listener's connection shows in pg_stat_activity (the pool's show as "guardrails"). */
export const LISTENER_APPLICATION_NAME = "guardrails-listener";
/** How often the listener checks that a notice it sends itself comes back. */
const PROBE_EVERY_MS = 250;
/** A probe not back after this long means notices have stopped arriving: the connection is dropped. */
export const PROBE_DEADLINE_MS = 1000;

/**
 * LISTENs on its own connection (a pooled one would be handed to other work). When the connection
 * drops, it reports that it is not listening, so caches stop serving, and reconnects with backoff;
 * once listening again, everything cached before is treated as stale.
 *
 * A connection can also die without closing (a network partition, a stopped server process) or
 * accept LISTEN without ever delivering a notice (a pooler in transaction mode). So the listener
 * sends itself a probe on a channel of its own every PROBE_EVERY_MS and counts itself deaf when one
 * is not back within PROBE_DEADLINE_MS; a new connection is trusted only once its first probe is back.
 */
export async function listenForChanges(
  config: pg.PoolConfig,
  handlers: ChangeListenerHandlers,
): Promise<ChangeListener> {
  const probeChannel = `guardrails_probe_${randomUUID().replaceAll("-", "")}`;
  let closed = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  let delay = 100;
  let sequence = 0;
  /** The probe sent on the current connection and not back yet. */
  let outstanding: { payload: string; sentAt: number } | undefined;

  const connect = async (): Promise<void> => {
    const next = new pg.Client({ ...config, keepAlive: true });
    let firstProbeBack: (() => void) | undefined;
    next.on("notification", (message) => {
      if (message.channel === probeChannel) {
        if (client === next && outstanding?.payload === message.payload) outstanding = undefined;
        firstProbeBack?.();
        return;
      }
      if (message.channel !== CHANGES_CHANNEL) return;
      try {
        handlers.onChange(noticeOf(message.payload));
      } catch {
        handlers.onChange({ keys: true });
      }
    });
    next.on("error", (err) => {
      handlers.onError(err);
      lost(next);
    });
    next.on("end", () => lost(next));
    try {
      await next.connect();
      await next.query(`listen ${CHANGES_CHANNEL}`);
      await next.query(`listen ${probeChannel}`);
      const back = new Promise<void>((resolve) => {
        firstProbeBack = resolve;
      });
      await next.query("select pg_notify($1, $2)", [probeChannel, "first"]);
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<"late">((resolve) => {
        timer = setTimeout(() => resolve("late"), PROBE_DEADLINE_MS);
      });
      const outcome = await Promise.race([back, late]);
      clearTimeout(timer);
      if (outcome === "late") {
        throw new Error(
          `DATABASE_URL: a notice sent on this connection did not come back within ${PROBE_DEADLINE_MS} ms, so changes made by other instances would go unseen; LISTEN/NOTIFY needs a direct connection or a pooler in session mode (not transaction mode)`,
        );
      }
      firstProbeBack = undefined;
      if (closed) throw new Error("closed");
    } catch (err) {
      await next.end().catch(() => undefined);
      throw err;
    }
    client = next;
    outstanding = undefined;
    delay = 100;
    handlers.onState(true);
  };

  const lost = (which: pg.Client) => {
    if (client !== which) return;
    client = undefined;
    outstanding = undefined;
    handlers.onState(false);
    // A connection that went silent may never close by itself; let it go without waiting.
    which.end().catch(() => undefined);
    schedule();
  };

  const probe = () => {
    const current = client;
    if (!current) return;
    if (outstanding) {
      if (Date.now() - outstanding.sentAt > PROBE_DEADLINE_MS) {
        handlers.onError(
          new Error(`change notices stopped arriving: a probe was not back within ${PROBE_DEADLINE_MS} ms`),
        );
        lost(current);
      }
      return;
    }
    const payload = String(++sequence);
    outstanding = { payload, sentAt: Date.now() };
    current.query("select pg_notify($1, $2)", [probeChannel, payload]).catch((err: unknown) => {
      handlers.onError(err);
      lost(current);
    });
  };

  const schedule = () => {
    if (closed || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      connect().catch((err: unknown) => {
        if (closed) return;
        handlers.onError(err);
        delay = Math.min(delay * 2, 5_000);
        schedule();
      });
    }, delay);
    retry.unref();
  };

  await connect();
  const ticker = setInterval(probe, PROBE_EVERY_MS);
  ticker.unref();
  return {
    async close() {
      closed = true;
      clearInterval(ticker);
      if (retry) clearTimeout(retry);
      const current = client;
      client = undefined;
      // A connection that went silent would never finish closing: shutting down does not wait on it.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        current?.end().catch(() => undefined),
        new Promise((resolve) => {
          timer = setTimeout(resolve, PROBE_DEADLINE_MS);
        }),
      ]);
      clearTimeout(timer);
    },
  };
}
