/**
 * What the load benchmarks share: server children started the same way (each in its own Node
 * process, so the load generator never shares a server's event loop) and one autocannon measurement.
 *
 * Environment: BENCH_DURATION (seconds measured per scenario, default 8), BENCH_WARMUP (default 2),
 * BENCH_CONNECTIONS (default 50), BENCH_CPU_PROF (a folder: the server children write --cpu-prof
 * profiles there).
 */
import { type ChildProcess, fork } from "node:child_process";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import type { ReadyMessage } from "./shared.js";

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
  stop(): Promise<void>;
}

/** Starts bench/servers/<name>.ts in its own Node process and waits until it listens. */
export async function startServer(name: string, env: Record<string, string> = {}): Promise<ServerChild> {
  const execArgv = ["--import", "tsx"];
  // One folder per server: the tsx loader thread writes a profile of its own beside the main thread's.
  if (CPU_PROF) execArgv.push("--cpu-prof", `--cpu-prof-dir=${resolve(CPU_PROF, name)}`);
  const child: ChildProcess = fork(resolve(HERE, "servers", `${name}.ts`), [], {
    execArgv,
    stdio: ["ignore", "inherit", "inherit", "ipc"],
    env: { ...process.env, ...env },
  });
  const ready = await new Promise<ReadyMessage>((resolveReady, reject) => {
    child.once("message", (m) => resolveReady(m as ReadyMessage));
    child.once("exit", (code) => reject(new Error(`${name} server exited (${code}) before it was ready`)));
  });
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (ready.key) headers.authorization = `Bearer ${ready.key}`;
  return {
    name,
    origin: ready.origin,
    headers,
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
): Promise<autocannon.Result> {
  const { path, ...rest } = load;
  const servers = Array.isArray(server) ? server : [server];
  return autocannon({
    // autocannon takes several URLs and spreads the connections over them (its README, `url`);
    // its type declarations only name a single string.
    url: servers.map((s) => `${s.origin}${path}`) as unknown as string,
    connections: CONNECTIONS,
    duration,
    headers: servers[0]?.headers ?? {},
    ...rest,
  });
}

/** Warms up, then measures one scenario against one server (or instances sharing the load). */
export async function measure(
  scenario: string,
  server: ServerChild | ServerChild[],
  load: Load,
): Promise<Measured> {
  await drive(server, load, WARMUP);
  const r = await drive(server, load, DURATION);
  const statuses = Object.entries(r.statusCodeStats ?? {})
    .map(([code, s]) => `${code}×${s.count ?? 0}`)
    .join(" ");
  return {
    scenario,
    server: Array.isArray(server) ? server.map((s) => s.name).join("+") : server.name,
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors,
    statuses,
  };
}
