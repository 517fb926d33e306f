import type { FastifyInstance } from "fastify";
import { buildApp, serviceLogger } from "./app.js";
import type { Config } from "./config.js";
import { Catalog } from "./domain/catalog.js";
import { releaseExpired } from "./gateway/spend.js";
import { Upstreams } from "./gateway/upstream.js";
import { serviceDepsFor } from "./services/context.js";
import { bootstrap } from "./services/organizations.js";
import { type DatabaseHandle, openDatabase } from "./storage/database.js";

export interface RunningServer {
  app: FastifyInstance;
  database: DatabaseHandle;
  address: string;
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

/** Composition root: config → database → services → app → listen. */
export async function startServer(
  config: Config,
  print: (line: string) => void = console.log,
): Promise<RunningServer> {
  const database = await openDatabase(config.databaseUrl, {
    sqliteSynchronous: config.sqliteSynchronous,
    postgres: config.postgres,
  });
  const upstreams = new Upstreams(config.catalog.providers, config.providerKeys);
  const deps = {
    ...serviceDepsFor(database, new Catalog(config.catalog)),
    ping: database.ping,
    regionBaseUrls: config.regionBaseUrls,
    trustForwardedHost: config.trustForwardedHost,
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
    scan: config.scan,
    output: config.output,
    alerts: config.alerts,
    logger: serviceLogger(config.logLevel),
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
  print(`guardrails: listening on ${address} (API under ${address}/api/v1, reference at ${address}/docs)`);
  print(`guardrails: database ${redactUrl(config.databaseUrl)}`);
  if (upstreams.unavailable.size > 0) {
    const missing = config.catalog.providers
      .filter((p) => upstreams.unavailable.has(p.id))
      .map((p) => `${p.id} (${p.api_key_env})`);
    print(`guardrails: providers without an API key are unavailable: ${missing.join(", ")}`);
  }
  if (boot.createdSecret) {
    print("guardrails: a management key was created for the default organization; it is shown only now:");
    print(`  ${boot.createdSecret}`);
  }
  let stopping: Promise<void> | undefined;
  return {
    app,
    database,
    address,
    stop() {
      stopping ??= (async () => {
        clearInterval(sweep);
        await app.close();
        await upstreams.close();
        await listener?.close();
        await database.close();
      })();
      return stopping;
    },
  };
}
