/**
 * What the load benchmarks share: server children started the same way (each in its own Node
 * process, so the load generator never shares a server's event loop) and one autocannon measurement.
 *
 * Environment: BENCH_DURATION (seconds measured per scenario, default 8), BENCH_WARMUP (default 2),
 * BENCH_CONNECTIONS (default 50), BENCH_CPU_PROF (a folder: the server children write --cpu-prof
 * profiles there).
 */
import { type ChildProcess, fork } from "node:child_process";
import type { EventEmitter } from "node:events";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import type { CpuMessage, ReadyMessage } from "./shared.js";

const HERE = dirname(fileURLToPath(import.meta.url));

function seconds(name: string, fallback: number): number {
  const raw = process.env[name];
  const value = raw === undefined || raw === "" ? fallback : Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number of seconds`);
  return value;
}

export const DURATION = seconds("BENCH_DURATION", 8);
export const WARMUP = seconds("BENCH_WARMUP", 2);
export const CONNECTIONS = Math.round(seconds("BENCH_CONNECTIONS", 50));
export const CPU_PROF = process.env.BENCH_CPU_PROF;

export interface ServerChild {
  name: string;
  origin: string;
  headers: Record<string, string>;
  /** The window W of its key's answer filters, when the child is a gateway that reports one. */
  answerWindow: number | null;
  /** The CPU time (user + system, µs) the child's process has used so far. */
  cpu(): Promise<number>;
  stop(): Promise<void>;
}

/**
 * Starts bench/servers/<name>.ts in its own Node process and waits until it listens. `quiet` drops
 * the child's standard output (the peer gateway prints a banner and a spinner there).
 */
export async function startServer(
  name: string,
  env: Record<string, string> = {},
  quiet = false,
): Promise<ServerChild> {
  const execArgv = ["--import", "tsx"];
  // One folder per server: the tsx loader thread writes a profile of its own beside the main thread's.
  if (CPU_PROF) execArgv.push("--cpu-prof", `--cpu-prof-dir=${resolve(CPU_PROF, name)}`);
  const child: ChildProcess = fork(resolve(HERE, "servers", `${name}.ts`), [], {
    execArgv,
    stdio: ["ignore", quiet ? "ignore" : "inherit", "inherit", "ipc"],
    env: { ...process.env, ...env },
  });
  const ready = await new Promise<ReadyMessage>((resolveReady, reject) => {
    child.once("message", (m) => resolveReady(m as ReadyMessage));
    child.once("exit", (code) => reject(new Error(`${name} server exited (${code}) before it was ready`)));
  });
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (ready.key) headers.authorization = `Bearer ${ready.key}`;
  Object.assign(headers, ready.headers);
  return {
    name,
    origin: ready.origin,
    headers,
    answerWindow: ready.answerWindow ?? null,
    cpu: () =>
      new Promise<number>((done) => {
        const answer = (m: CpuMessage) => {
          if (m.type !== "cpu") return;
          child.off("message", answer);
          done(m.micros);
        };
        child.on("message", answer);
        child.send({ type: "cpu" });
      }),
    stop: () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null) return done();
        child.once("exit", () => done());
        child.send({ type: "stop" });
      }),
  };
}

export interface Measured {
  scenario: string;
  server: string;
  rps: number;
  p50: number;
  p99: number;
  /** CPU µs the server processes used over the measured window, per answer received in it. */
  cpuPerRequest: number;
  non2xx: number;
  errors: number;
  statuses: string;
}

export type Load = Pick<autocannon.Options, "method" | "body" | "requests" | "idReplacement"> & {
  path: string;
};

/**
 * Drives one load for `duration` seconds. Several servers (instances of one service, with the same
 * headers) share the connections evenly, like a round-robin load balancer.
 */
export async function drive(
  server: ServerChild | ServerChild[],
  load: Load,
  duration: number,
  /** Receives each answer's status and latency in milliseconds, to the microsecond. */
  onLatency?: (ms: number, status: number) => void,
): Promise<autocannon.Result> {
  const { path, ...rest } = load;
  const servers = Array.isArray(server) ? server : [server];
  const run = autocannon({
    // autocannon takes several URLs and spreads the connections over them (its README, `url`);
    // its type declarations only name a single string.
    url: servers.map((s) => `${s.origin}${path}`) as unknown as string,
    connections: CONNECTIONS,
    duration,
    headers: servers[0]?.headers ?? {},
    ...rest,
  });
  if (onLatency) {
    // autocannon's own percentiles are whole milliseconds (its histogram counts integers), too
    // coarse for a 1 ms target; each answer's time is reported exactly on this event.
    // The promise autocannon returns is also its instance, an EventEmitter; its types name only the promise.
    (run as unknown as EventEmitter).on(
      "response",
      (_client: unknown, status: number, _bytes: number, ms: number) => {
        onLatency(ms, status);
      },
    );
  }
  return run;
}

/** The value at fraction `q` of sorted numbers (nearest rank). */
export function quantile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number;
}

/** Warms up, then measures one scenario against one server (or instances sharing the load). */
export async function measure(
  scenario: string,
  server: ServerChild | ServerChild[],
  load: Load,
): Promise<Measured> {
  await drive(server, load, WARMUP);
  let latencies = new Float64Array(1 << 16);
  let count = 0;
  let answered = 0;
  const servers = Array.isArray(server) ? server : [server];
  const cpuBefore = await Promise.all(servers.map((s) => s.cpu()));
  const r = await drive(server, load, DURATION, (ms, status) => {
    answered++;
    if (status < 200 || status >= 300) return;
    if (count === latencies.length) {
      const grown = new Float64Array(latencies.length * 2);
      grown.set(latencies);
      latencies = grown;
    }
    latencies[count++] = ms;
  });
  const cpuAfter = await Promise.all(servers.map((s) => s.cpu()));
  const cpuUsed = cpuAfter.reduce((sum, after, i) => sum + after - (cpuBefore[i] ?? after), 0);
  const sorted = latencies.subarray(0, count).sort();
  const statuses = Object.entries(r.statusCodeStats ?? {})
    .map(([code, s]) => `${code}×${s.count ?? 0}`)
    .join(" ");
  return {
    scenario,
    server: Array.isArray(server) ? server.map((s) => s.name).join("+") : server.name,
    rps: r.requests.average,
    p50: quantile(sorted, 0.5),
    p99: quantile(sorted, 0.99),
    cpuPerRequest: answered > 0 ? cpuUsed / answered : 0,
    non2xx: r.non2xx,
    errors: r.errors,
    statuses,
  };
}
