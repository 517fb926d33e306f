import type { FastifyInstance } from "fastify";
import { buildApp } from "./app.js";
import type { Config } from "./config.js";
import { Catalog } from "./domain/catalog.js";
import { bootstrap } from "./services/organizations.js";
import { type DatabaseHandle, openDatabase } from "./storage/database.js";

export interface RunningServer {
  app: FastifyInstance;
  database: DatabaseHandle;
  address: string;
  /** Stops accepting, finishes requests in flight, closes the database. */
  stop(): Promise<void>;
}

/** Composition root: config → database → services → app → listen. */
export async function startServer(
  config: Config,
  print: (line: string) => void = console.log,
): Promise<RunningServer> {
  const database = await openDatabase(config.databaseUrl, { sqliteSynchronous: config.sqliteSynchronous });
  const deps = {
    db: database.db,
    catalog: new Catalog(config.catalog),
    now: () => new Date(),
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
  print(`guardrails: database ${config.databaseUrl}`);
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
