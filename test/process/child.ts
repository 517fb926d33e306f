import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { after, before } from "node:test";
import { fileURLToPath } from "node:url";

/** The project root: the real service is started from here, as an operator would. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const CLI = ["--import", "tsx", "src/cli/main.ts"];
/**
 * Every wait is bounded, so a broken server fails the test instead of hanging the suite. The bound
 * is generous: a child starts through tsx, which on a loaded 2-core machine took over 15 s to answer
 * /healthz; only a server that never answers should fail here. TEST_WAIT_MS overrides it.
 */
export const WAIT_MS = Number(process.env.TEST_WAIT_MS ?? 60_000);

export function randomManagementKey(): string {
  return `test-mgmt-${randomBytes(24).toString("hex")}`;
}

/** A free loopback port: listen on port 0, read the port, close. */
export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      const port = typeof address === "object" && address ? address.port : 0;
      probe.close(() => resolvePort(port));
    });
  });
}

/**
 * The first of `count` free loopback ports in a row, for a service that listens on PORT and the
 * ports after it (its regions by default, docs/behaviour.md#ingress-region).
 */
export async function freePortRun(count: number): Promise<number> {
  const taken = (port: number) =>
    new Promise<boolean>((resolveTaken) => {
      const probe = createServer();
      probe.once("error", () => resolveTaken(true));
      probe.listen(port, "127.0.0.1", () => probe.close(() => resolveTaken(false)));
    });
  for (let tries = 0; tries < 50; tries++) {
    const first = await freePort();
    if (first + count - 1 > 65535) continue;
    let free = true;
    for (let port = first + 1; free && port < first + count; port++) free = !(await taken(port));
    if (free) return first;
  }
  throw new Error(`no ${count} free loopback ports in a row`);
}

/** The environment of a child: ours, minus anything that configures the service, plus `env`. */
function childEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (name.startsWith("GUARDRAILS_") || ["DATABASE_URL", "PORT", "HOST", "LOG_LEVEL"].includes(name))
      continue;
    base[name] = value;
  }
  // undefined removes a variable the test process has (so a test can rely on its absence).
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete base[name];
    else base[name] = value;
  }
  return base;
}

export interface Child {
  process: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (or the signal's name) within WAIT_MS, else rejects. */
  exited(): Promise<number | string>;
  kill(signal?: NodeJS.Signals): void;
}

export function spawnCli(args: string[], env: Record<string, string | undefined>): Child {
  const child = spawn(process.execPath, [...CLI, ...args], {
    cwd: ROOT,
    env: childEnv(env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    out += chunk;
  });
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    err += chunk;
  });
  const exit = new Promise<number | string>((resolveExit) => {
    // "close" comes after the pipes are drained: all output has been read by then.
    child.once("close", (code, signal) => resolveExit(code ?? signal ?? -1));
  });
  return {
    process: child,
    stdout: () => out,
    stderr: () => err,
    exited: () => withTimeout(exit, `exit of guardrails ${args.join(" ")}`),
    kill(signal: NodeJS.Signals = "SIGKILL") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
  };
}

/**
 * Runs `guardrails serve` where start-up must fail: asserts that it exits by itself with a non-zero
 * code, and returns the child so that the test can read what it printed.
 */
export async function failedStart(env: Record<string, string | undefined>): Promise<Child> {
  const child = spawnCli(["serve"], { PORT: "0", ...env });
  try {
    const code = await child.exited();
    assert.equal(typeof code, "number", `ended by ${String(code)}, not by itself`);
    assert.notEqual(code, 0);
    return child;
  } finally {
    child.kill("SIGKILL");
  }
}

export function withTimeout<T>(promise: Promise<T>, what: string, ms = WAIT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Polls until `check` returns a value, for at most WAIT_MS. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${WAIT_MS} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface ServerChild extends Child {
  origin: string;
  port: number;
}

/**
 * Starts `guardrails serve` on a free port and waits until GET /healthz answers. The two ports after
 * it are free too, for the region listeners of the default configuration (docs/behaviour.md#ingress-region).
 */
export async function startServerProcess(env: Record<string, string | undefined>): Promise<ServerChild> {
  // A free port can be taken by another process between the probe and the server's listen (tests
  // run side by side): a start that fails on a port in use is tried again on other ports.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startServerOnce(env);
    } catch (err) {
      if (attempt >= 3 || !(err instanceof Error) || !err.message.includes("EADDRINUSE")) throw err;
    }
  }
}

async function startServerOnce(env: Record<string, string | undefined>): Promise<ServerChild> {
  const port = await freePortRun(3);
  const child = spawnCli(["serve"], { PORT: String(port), HOST: "127.0.0.1", LOG_LEVEL: "silent", ...env });
  const origin = `http://127.0.0.1:${port}`;
  let exitedEarly = false;
  child.process.once("exit", () => {
    exitedEarly = true;
  });
  try {
    await waitFor("GET /healthz", async () => {
      if (exitedEarly) throw new Error(`the server exited at start: ${child.stderr()}`);
      try {
        const res = await fetch(`${origin}/healthz`, { signal: AbortSignal.timeout(2000) });
        return res.status === 200 ? true : undefined;
      } catch {
        return undefined;
      }
    });
  } catch (err) {
    child.kill();
    throw err;
  }
  return { ...child, origin, port };
}

/** JSON over HTTP against a child server. */
export async function api(
  origin: string,
  method: string,
  path: string,
  key: string,
  body?: unknown,
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON bodies and assert on them.
): Promise<{ status: number; headers: Headers; body: any }> {
  const res = await fetch(`${origin}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    signal: AbortSignal.timeout(WAIT_MS),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

/** Runs one CLI command to its end; returns its exit code and output. */
export async function runCli(args: string[], env: Record<string, string>) {
  const child = spawnCli(args, { LOG_LEVEL: "silent", ...env });
  try {
    const code = await child.exited();
    return { code, stdout: child.stdout(), stderr: child.stderr() };
  } finally {
    child.kill("SIGKILL");
  }
}

/** A server process on a fresh SQLite file with a known management key, as a suite's before/after. */
export interface ServerBench {
  dir: string;
  server: ServerChild;
  env: Record<string, string>;
  mgmt: string;
  /** Every process the suite started: killed after it. */
  children: Child[];
}

/** Starts the bench before the suite's tests and removes it after them. */
export function serverOnFreshDatabase(prefix: string): ServerBench {
  const bench = { children: [] as Child[] } as ServerBench;
  before(async () => {
    bench.dir = mkdtempSync(join(tmpdir(), prefix));
    bench.mgmt = randomManagementKey();
    bench.env = { DATABASE_URL: `sqlite:${join(bench.dir, "g.db")}`, GUARDRAILS_MANAGEMENT_KEY: bench.mgmt };
    bench.server = await startServerProcess(bench.env);
    bench.children.push(bench.server);
  });
  after(() => {
    for (const child of bench.children) child.kill("SIGKILL");
    rmSync(bench.dir, { recursive: true, force: true });
  });
  return bench;
}
