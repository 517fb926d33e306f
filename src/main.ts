import type { FastifyInstance } from "fastify";
import { buildApp } from "./app.js";
import type { Config } from "./config.js";
import { Catalog } from "./domain/catalog.js";
import { createServiceDeps } from "./services/context.js";
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
  const database = await openDatabase(config.databaseUrl, { sqliteSynchronous: config.sqliteSynchronous });
  const deps = {
    ...createServiceDeps({
      db: database.db,
      transact: database.transact,
      catalog: new Catalog(config.catalog),
    }),
    ping: database.ping,
    regionBaseUrls: config.regionBaseUrls,
    trustForwardedHost: config.trustForwardedHost,
  };
  const boot = await bootstrap(deps, config.managementKey);
  const app = await buildApp(deps, {
    bodyLimit: config.bodyLimit,
    logger: {
      level: config.logLevel,
      // Secrets and message text never reach the log (DEVELOPERS.md, security).
      redact: ["req.headers.authorization", "req.headers['idempotency-key']"],
    },
  });
  const address = await app.listen({ port: config.port, host: config.host });
  print(`guardrails: listening on ${address} (API under ${address}/api/v1, reference at ${address}/docs)`);
  print(`guardrails: database ${redactUrl(config.databaseUrl)}`);
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
        await app.close();
        await database.close();
      })();
      return stopping;
    },
  };
}
