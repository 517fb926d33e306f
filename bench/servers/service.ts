/**
 * The service under test, booted as test/helpers/server.ts does: the real app on a real SQLite file
 * (WAL, synchronous NORMAL) in a temporary folder, request logging off, on a loopback port.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildApp } from "../../src/app.js";
import { DEFAULT_CONFIG_FILE, loadCatalogFile } from "../../src/config.js";
import { Catalog } from "../../src/domain/catalog.js";
import { Upstreams } from "../../src/gateway/upstream.js";
import { createServiceDeps } from "../../src/services/context.js";
import { createOrganization } from "../../src/services/organizations.js";
import { openDatabase } from "../../src/storage/database.js";
import { serveChild } from "../shared.js";

const dir = mkdtempSync(join(tmpdir(), "guardrails-bench-"));
const database = await openDatabase(`sqlite:${join(dir, "guardrails.db")}`, { sqliteSynchronous: "normal" });
const catalog = loadCatalogFile(DEFAULT_CONFIG_FILE);
const deps = {
  ...createServiceDeps({
    db: database.db,
    transact: database.transact,
    catalog: new Catalog(catalog),
  }),
  ping: database.ping,
  regionBaseUrls: {
    global: "http://localhost/api/v1",
    europe: "http://eu.localhost/api/v1",
    us: "http://us.localhost/api/v1",
  },
  trustForwardedHost: false,
  upstreams: new Upstreams(catalog.providers, {}),
};
const app = await buildApp(deps);
const org = await createOrganization(deps, "bench organization");
const origin = await app.listen({ port: 0, host: "127.0.0.1" });

serveChild({ type: "ready", origin, key: org.key.secret }, async () => {
  await app.close();
  await database.close();
  rmSync(dir, { recursive: true, force: true });
});
