/**
 * The service with its gateway, booted as test/helpers/server.ts does (real app, real SQLite file,
 * request logging off), every provider pointed at the upstream named by BENCH_UPSTREAM_URL. The
 * inference key it hands out is governed by a key guardrail with a daily budget (so every request
 * reserves and settles) and two content filters.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildApp } from "../../src/app.js";
import { DEFAULT_CONFIG_FILE, loadCatalogFile } from "../../src/config.js";
import { Catalog } from "../../src/domain/catalog.js";
import { Upstreams } from "../../src/gateway/upstream.js";
import { assignKeys } from "../../src/services/assignments.js";
import { createServiceDeps, inTransaction, type Principal } from "../../src/services/context.js";
import { createGuardrail } from "../../src/services/guardrails.js";
import { createInferenceKey } from "../../src/services/keys.js";
import { createOrganization } from "../../src/services/organizations.js";
import { openDatabase } from "../../src/storage/database.js";
import { serveChild } from "../shared.js";

const upstreamUrl = process.env.BENCH_UPSTREAM_URL;
if (!upstreamUrl) throw new Error("BENCH_UPSTREAM_URL is required");
const dir = mkdtempSync(join(tmpdir(), "guardrails-bench-gateway-"));
const database = await openDatabase(`sqlite:${join(dir, "guardrails.db")}`, { sqliteSynchronous: "normal" });
const loaded = loadCatalogFile(DEFAULT_CONFIG_FILE);
const catalog = { ...loaded, providers: loaded.providers.map((p) => ({ ...p, base_url: upstreamUrl })) };
const upstreams = new Upstreams(
  catalog.providers,
  Object.fromEntries(catalog.providers.map((p) => [p.id, "bench"])),
);
const deps = {
  ...createServiceDeps({ db: database.db, transact: database.transact, catalog: new Catalog(catalog) }),
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
const org = await createOrganization(deps, "bench organization");
const principal: Principal = {
  organizationId: org.organization.id,
  keyHash: org.key.record.hash,
  kind: "management",
  workspaceId: null,
};
const key = await inTransaction(deps, (tx) => createInferenceKey(deps, tx, principal, { name: "bench" }));
const guardrail = await inTransaction(deps, (tx) =>
  createGuardrail(deps, tx, principal, {
    name: "bench key guardrail",
    limit_usd: 1_000_000,
    reset_interval: "daily",
    content_filter_builtins: [
      { slug: "email", action: "redact" },
      { slug: "regex-prompt-injection", action: "block" },
    ],
  }),
);
await assignKeys(deps, principal, guardrail.id, [key.record.hash]);
const origin = await app.listen({ port: 0, host: "127.0.0.1" });

serveChild({ type: "ready", origin, key: key.secret }, async () => {
  await app.close();
  await upstreams.close();
  await database.close();
  rmSync(dir, { recursive: true, force: true });
});
