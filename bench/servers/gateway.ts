/**
 * The service with its gateway, booted by ./boot.ts, every provider pointed at the upstream named by
 * BENCH_UPSTREAM_URL. The inference key it hands out is governed by a key guardrail with a daily
 * budget (so every request reserves and settles) and two content filters. With BENCH_GATEWAY_JOIN
 * set it only boots: a second instance on the PostgreSQL database the first one set up.
 */
import { DEFAULT_CONFIG_FILE, loadCatalogFile } from "../../src/config.js";
import { assignKeys } from "../../src/services/assignments.js";
import { inTransaction } from "../../src/services/context.js";
import { createGuardrail } from "../../src/services/guardrails.js";
import { createInferenceKey } from "../../src/services/keys.js";
import { createOrganization } from "../../src/services/organizations.js";
import { managementPrincipal, serveChild } from "../shared.js";
import { bootService } from "./boot.js";

const upstreamUrl = process.env.BENCH_UPSTREAM_URL;
if (!upstreamUrl) throw new Error("BENCH_UPSTREAM_URL is required");
const loaded = loadCatalogFile(DEFAULT_CONFIG_FILE);
const catalog = { ...loaded, providers: loaded.providers.map((p) => ({ ...p, base_url: upstreamUrl })) };
const service = await bootService(catalog, Object.fromEntries(catalog.providers.map((p) => [p.id, "bench"])));
const { app, deps } = service;

/** Sets up an organization with one governed inference key; its secret. */
async function setUp(): Promise<string> {
  const org = await createOrganization(deps, "bench organization");
  const principal = managementPrincipal(org);
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
  return key.secret;
}

const secret = process.env.BENCH_GATEWAY_JOIN ? null : await setUp();
const origin = await app.listen({ port: 0, host: "127.0.0.1" });

serveChild({ type: "ready", origin, key: secret }, () => service.close());
