import type { FastifyInstance } from "fastify";
import { buildApp, serviceLogger } from "./app.js";
import type { Config } from "./config.js";
import { Catalog } from "./domain/catalog.js";
import { Upstreams } from "./gateway/upstream.js";
import { listenForRegion, type RegionListener } from "./http/region-listeners.js";
import { type LocalUpstream, startLocalUpstream } from "./local-upstream/server.js";
import { prettyLogStream } from "./pretty-log.js";
import { serviceDepsFor } from "./services/context.js";
import { bootstrap } from "./services/organizations.js";
import { releaseExpired } from "./services/release-expired-reservations.js";
import { openDatabase } from "./storage/open.js";
import type { DatabaseHandle } from "./storage/ports.js";

export interface RunningServer {
  app: FastifyInstance;
  database: DatabaseHandle;
  address: string;
  /** Where each region's own listener is (docs/behaviour.md#ingress-region); empty when regions come from the Host. */
  regionAddresses: Partial<Record<"europe" | "us", string>>;
  /** Stops accepting, finishes requests in flight, closes the database. */
  stop(): Promise<void>;
}

/** A database address fit for printing: any password is masked. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.protocol === "sqlite:" ? url : parsed.toString();
  } catch {
    return url;
  }
}

/** The catalog id of the bundled echo provider. */
const ECHO_PROVIDER = "local";

/** Log lines for a person on a terminal, JSON lines for everything else (docs/configuration.md). */
function logStream(config: Config): { write(line: string): void } | undefined {
  const pretty =
    config.logFormat === "pretty" || (config.logFormat === "auto" && process.stdout.isTTY === true);
  if (!pretty) return undefined;
  const color = process.stdout.isTTY === true && !process.env.NO_COLOR;
  return prettyLogStream({ color, write: (text) => process.stdout.write(text) });
}

/**
 * Composition root: config → database → services → app → listen. The banner goes to stderr, apart
 * from the log on stdout, so a log collector reads only log lines.
 */
export async function startServer(
  config: Config,
  print: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<RunningServer> {
  const database = await openDatabase(config.databaseUrl, {
    sqliteSynchronous: config.sqliteSynchronous,
    postgres: config.postgres,
    server: true,
  });
  let echo: LocalUpstream | undefined;
  let providers = config.catalog.providers;
  if (config.echoProvider && providers.some((p) => p.id === ECHO_PROVIDER)) {
    // A loopback port of its own, so the request path is the same HTTP hop as to any provider.
    echo = await startLocalUpstream({ port: 0, host: "127.0.0.1" });
    const url = echo.url;
    providers = providers.map((p) => (p.id === ECHO_PROVIDER ? { ...p, base_url: url } : p));
  }
  const upstreams = new Upstreams(providers, config.providerKeys);
  const deps = {
    ...serviceDepsFor(database, new Catalog(config.catalog)),
    ping: database.ping,
    regionBaseUrls: config.regionBaseUrls,
    trustForwardedHost: config.trustForwardedHost,
    regionByListener: config.regionFrom === "listener",
    upstreams,
  };
  const boot = await database.withStartupLock(() => bootstrap(deps, config.managementKey));
  // Reservations left by a process that died mid-request are released once their hold expires.
  await releaseExpired(deps);
  const sweep = setInterval(() => {
    releaseExpired(deps).catch((err: unknown) =>
      app.log.error({ err }, "releasing expired reservations failed"),
    );
  }, 60_000);
  sweep.unref();
  const app = await buildApp(deps, {
    bodyLimit: config.bodyLimit,
    requestTimeoutMs: config.requestTimeoutMs,
    authThrottle: { failures: config.authFailuresPerMinute, windowMs: 60_000 },
    scan: config.scan,
    output: config.output,
    alerts: config.alerts,
    logger: serviceLogger(config.logLevel, logStream(config)),
  });
  // Several instances on one database: a change made through another instance reaches this one's
  // caches through its notice; while notices cannot be received, nothing cached is served.
  const listener = await database.listenForChanges?.({
    onChange: (notice) => deps.changes.bump(notice),
    onState: (listening) => {
      deps.changes.setTrusted(listening);
      if (listening) app.log.info("receiving change notices from other instances");
      else app.log.warn("change notices lost; serving without caches until reconnected");
    },
    onError: (err) => app.log.warn({ err }, "change notice connection failed"),
  });
  const address = await app.listen({ port: config.port, host: config.host });
  const echoProvider = providers.find((p) => p.id === ECHO_PROVIDER);
  const lines = [
    "",
    `guardrails: listening on ${address}`,
    `  API       ${address}/api/v1 (OpenAI-compatible: POST /api/v1/chat/completions)`,
    `  docs      ${address}/docs`,
  ];
  const regionListeners: RegionListener[] = [];
  const regionAddresses: RunningServer["regionAddresses"] = {};
  /** Stops what the start opened, in the reverse order of opening. */
  const closeAll = async () => {
    clearInterval(sweep);
    await Promise.all(regionListeners.map((l) => l.close()));
    await app.close();
    await upstreams.close();
    await echo?.close();
    await listener?.close();
    await database.close();
  };
  try {
    for (const [region, at] of Object.entries(config.regionListeners)) {
      const listening = await regionListener(app, region as "europe" | "us", at);
      regionListeners.push(listening);
      regionAddresses[region as "europe" | "us"] = listening.address;
    }
  } catch (err) {
    // A region that cannot listen stops the start: serving without it would send its clients elsewhere.
    await closeAll();
    throw err;
  }
  if (config.regionFrom === "listener") {
    lines.push(`  region    global  ${address}/api/v1`);
    for (const l of regionListeners) lines.push(`  region    ${l.region.padEnd(7)} ${l.address}/api/v1`);
  } else {
    for (const region of ["europe", "us"] as const) {
      lines.push(`  region    ${region.padEnd(7)} ${config.regionBaseUrls[region]} (by Host header)`);
    }
  }
  lines.push(`  database  ${redactUrl(config.databaseUrl)}`);
  if (echoProvider) {
    lines.push(
      echo
        ? `  echo      the bundled echo provider (${ECHO_PROVIDER}) is served in-process at ${echoProvider.base_url}`
        : `  echo      the bundled echo provider (${ECHO_PROVIDER}) is expected at ${echoProvider.base_url} (npx guardrails upstream)`,
    );
  }
  if (upstreams.unavailable.size > 0) {
    const missing = config.catalog.providers
      .filter((p) => upstreams.unavailable.has(p.id))
      .map((p) => `${p.id} (${p.api_key_env})`);
    lines.push(`  providers without an API key are unavailable: ${wrap(missing, 3).join(",\n    ")}`);
  }
  if (boot.configuredKeyRevoked) {
    lines.push(
      "",
      "  GUARDRAILS_MANAGEMENT_KEY names a revoked management key: it stays refused. Unset it, or set it to a new secret.",
    );
  }
  if (boot.createdSecret) {
    lines.push(
      "",
      "  A management key was created for the default organization; it is shown only now:",
      `    ${boot.createdSecret}`,
    );
  }
  lines.push("");
  for (const line of lines) print(line);
  let stopping: Promise<void> | undefined;
  return {
    app,
    database,
    address,
    regionAddresses,
    stop() {
      stopping ??= closeAll();
      return stopping;
    },
  };
}

/** A region's listener, or a start-up error that names the variable to change (docs/configuration.md#region-addresses). */
async function regionListener(
  app: FastifyInstance,
  region: "europe" | "us",
  at: { host: string; port: number },
): Promise<RegionListener> {
  try {
    return await listenForRegion(app, region, at);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const variable = region === "europe" ? "GUARDRAILS_EUROPE_LISTEN" : "GUARDRAILS_US_LISTEN";
    if (code === "EADDRINUSE" || code === "EACCES" || code === "EADDRNOTAVAIL") {
      throw new Error(
        `${variable}: the ${region} region cannot listen on ${at.host}:${at.port} (${code}); set ${variable} to a free port or host:port`,
      );
    }
    throw err;
  }
}

/** Groups items a few to a line, so a long list stays readable in a terminal. */
function wrap(items: string[], perLine: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < items.length; i += perLine) out.push(items.slice(i, i + perLine).join(", "));
  return out;
}
