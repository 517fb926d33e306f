/**
 * An open-loop load: requests sent at a fixed arrival rate, whatever the server's answers do, each
 * one's latency counted from the moment it was due to be sent, not from when it went out. A closed
 * loop (autocannon's connections, even with its `overallRate`, which caps each connection's requests
 * per second and times each from its actual send) waits for answers before it sends more, so a slow
 * server is offered less load and its delays go uncounted. Used by bench/gateway.ts.
 */
import { performance } from "node:perf_hooks";
import { Pool } from "undici";
import { type Load, quantile, type ServerChild } from "./load.js";

export interface OpenLoopResult {
  /** The rate the requests were due at and the rate they actually went out at. */
  rate: number;
  sentRate: number;
  answered: number;
  p50: number;
  p99: number;
  cpuPerRequest: number;
  non2xx: number;
  errors: number;
}

/** Sends `load` to `server` at `rate` a second for `seconds`; latencies in ms from each due time. */
async function send(
  pool: Pool,
  server: ServerChild,
  load: Load,
  rate: number,
  seconds: number,
  onAnswer: (ms: number, status: number) => void,
  onError: () => void,
): Promise<number> {
  const total = Math.round(rate * seconds);
  const interval = 1000 / rate;
  const start = performance.now();
  const inFlight = new Set<Promise<void>>();
  let sent = 0;
  let lastSent = start;
  await new Promise<void>((done) => {
    const tick = () => {
      const now = performance.now();
      while (sent < total && start + sent * interval <= now) {
        const due = start + sent * interval;
        sent++;
        const request = pool
          .request({
            path: load.path,
            method: load.method ?? "POST",
            headers: server.headers,
            body: load.body as string,
          })
          .then(async (answer) => {
            await answer.body.dump();
            onAnswer(performance.now() - due, answer.statusCode);
          })
          .catch(onError);
        inFlight.add(request);
        void request.finally(() => inFlight.delete(request));
      }
      lastSent = now;
      if (sent < total) setTimeout(tick, Math.max(0, start + sent * interval - performance.now()));
      else done();
    };
    tick();
  });
  await Promise.all(inFlight);
  return sent / ((lastSent - start) / 1000 + interval / 1000);
}

/** Warms up, then measures one open-loop window against `server`. */
export async function openLoop(
  server: ServerChild,
  load: Load,
  rate: number,
  warmup: number,
  seconds: number,
) {
  // A child's origin may carry a base path (the upstream's ends in /v1).
  const url = new URL(`${server.origin}${load.path}`);
  load = { ...load, path: url.pathname };
  const pool = new Pool(url.origin, { connections: 1024, pipelining: 1, keepAliveTimeout: 30_000 });
  try {
    await send(
      pool,
      server,
      load,
      rate,
      warmup,
      () => undefined,
      () => undefined,
    );
    let latencies: number[] = [];
    let answered = 0;
    let non2xx = 0;
    let errors = 0;
    const before = await server.cpu();
    const sentRate = await send(
      pool,
      server,
      load,
      rate,
      seconds,
      (ms, status) => {
        answered++;
        if (status >= 200 && status < 300) latencies.push(ms);
        else non2xx++;
      },
      () => errors++,
    );
    const cpu = (await server.cpu()) - before;
    const sorted = Float64Array.from(latencies).sort();
    latencies = [];
    return {
      rate,
      sentRate,
      answered,
      p50: quantile(sorted, 0.5),
      p99: quantile(sorted, 0.99),
      cpuPerRequest: answered > 0 ? cpu / answered : 0,
      non2xx,
      errors,
    } satisfies OpenLoopResult;
  } finally {
    await pool.close();
  }
}
