/**
 * The service as the bench server children boot it (from the build ../build.ts names), the way
 * test/helpers/server.ts does: the real app on a real SQLite file (WAL, synchronous NORMAL) in a temporary folder, logging off unless a level is given;
 * or, when BENCH_DATABASE_URL names a PostgreSQL database, on that database with the default pool
 * and the change listener wired as src/main.ts wires it (bench/postgres.ts).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CatalogData } from "../../src/domain/catalog.js";
import { service } from "../build.js";

const { buildApp, serviceLogger } = await service<typeof import("../../src/app.js")>("app.js");
const { Catalog } = await service<typeof import("../../src/domain/catalog.js")>("domain/catalog.js");
const { Upstreams } = await service<typeof import("../../src/gateway/upstream.js")>("gateway/upstream.js");
const { serviceDepsFor } =
  await service<typeof import("../../src/services/context.js")>("services/context.js");
const { openDatabase } = await service<typeof import("../../src/storage/open.js")>("storage/open.js");
const { DEFAULT_POSTGRES_OPTIONS } =
  await service<typeof import("../../src/storage/ports.js")>("storage/ports.js");

export async function bootService(
  catalog: CatalogData,
  providerKeys: Record<string, string>,
  /** The log level, as LOG_LEVEL sets it; JSON lines on stdout as `guardrails serve` writes them. Off when unset. */
  logLevel?: string,
) {
  const postgresUrl = process.env.BENCH_DATABASE_URL;
  const dir = postgresUrl ? undefined : mkdtempSync(join(tmpdir(), "guardrails-bench-"));
  const database = await openDatabase(dir ? `sqlite:${join(dir, "guardrails.db")}` : (postgresUrl ?? ""), {
    sqliteSynchronous: "normal",
    postgres: DEFAULT_POSTGRES_OPTIONS,
    // As `guardrails serve` opens it: on SQLite, the file's one server.
    server: true,
  });
  const upstreams = new Upstreams(catalog.providers, providerKeys);
  const deps = {
    ...serviceDepsFor(database, new Catalog(catalog)),
    ping: database.ping,
    regionBaseUrls: {
      global: "http://localhost/api/v1",
      europe: "http://eu.localhost/api/v1",
      us: "http://us.localhost/api/v1",
    },
    trustForwardedHost: false,
    upstreams,
  };
  const app = await buildApp(deps, logLevel ? { logger: serviceLogger(logLevel) } : {});
  const listener = await database.listenForChanges?.({
    onChange: (notice) => deps.changes.bump(notice),
    onState: (listening) => deps.changes.setTrusted(listening),
    onError: () => undefined,
  });
  return {
    app,
    deps,
    async close() {
      await app.close();
      await listener?.close();
      await upstreams.close();
      await database.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
