/**
 * The service as the bench server children boot it, the way test/helpers/server.ts does: the real
 * app on a real SQLite file (WAL, synchronous NORMAL) in a temporary folder, request logging off.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildApp } from "../../src/app.js";
import { Catalog, type CatalogData } from "../../src/domain/catalog.js";
import { Upstreams } from "../../src/gateway/upstream.js";
import { serviceDepsFor } from "../../src/services/context.js";
import { openDatabase } from "../../src/storage/database.js";

export async function bootService(catalog: CatalogData, providerKeys: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), "guardrails-bench-"));
  const database = await openDatabase(`sqlite:${join(dir, "guardrails.db")}`, {
    sqliteSynchronous: "normal",
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
  const app = await buildApp(deps);
  return {
    app,
    deps,
    async close() {
      await app.close();
      await upstreams.close();
      await database.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
