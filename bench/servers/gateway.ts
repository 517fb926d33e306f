/**
 * The service with its gateway (from the build ../build.ts names), booted by ./boot.ts, every provider pointed at the upstream named by
 * BENCH_UPSTREAM_URL. The inference key it hands out is governed, by BENCH_GATEWAY_POLICY:
 * - `full` (the default): a key guardrail with a daily budget (so every request reserves and
 *   settles), all nine builtin filters on block and the ten patterns of ../shared.ts on block;
 * - `none`: no guardrail at all (no budget, no filter), the request path's own cost;
 * - `answers`: a guardrail whose filters read only answers (docs/gateway.md#answer-streams): the
 *   value-shaped builtins, secrets and the ten patterns of ../shared.ts, all on redact;
 * - `email-answers`: a guardrail with one filter, `email` on redact for answers only.
 * Its ready message carries the window W of the answer filters it set up (0 for none), computed as
 * the gateway computes it (src/domain/answer-window.ts), for the bench's time-to-first-token bound.
 * With BENCH_GATEWAY_JOIN set it only boots: a second instance on the PostgreSQL database the first
 * one set up.
 */
import { service as load } from "../build.js";
import { BENCH_PATTERNS, managementPrincipal, serveChild } from "../shared.js";
import { bootService } from "./boot.js";

const { DEFAULT_CONFIG_FILE, loadCatalogFile } =
  await load<typeof import("../../src/config.js")>("config.js");
const { BUILTIN_SLUGS } =
  await load<typeof import("../../src/domain/content-filters.js")>("domain/content-filters.js");
const { assignKeys } =
  await load<typeof import("../../src/services/assignments.js")>("services/assignments.js");
const { inTransaction } = await load<typeof import("../../src/services/context.js")>("services/context.js");
const { createGuardrail } =
  await load<typeof import("../../src/services/guardrails.js")>("services/guardrails.js");
const { createInferenceKey } = await load<typeof import("../../src/services/keys.js")>("services/keys.js");
const { createOrganization } =
  await load<typeof import("../../src/services/organizations.js")>("services/organizations.js");
const { compileFilters } =
  await load<typeof import("../../src/domain/content-scan.js")>("domain/content-scan.js");
const { DETECTORS } =
  await load<typeof import("../../src/domain/detectors/index.js")>("domain/detectors/index.js");
const { answerWindow } =
  await load<typeof import("../../src/domain/answer-window.js")>("domain/answer-window.js");

const policy = process.env.BENCH_GATEWAY_POLICY ?? "full";
if (policy !== "full" && policy !== "none" && policy !== "answers" && policy !== "email-answers")
  throw new Error("BENCH_GATEWAY_POLICY must be full, none, answers or email-answers");
const upstreamUrl = process.env.BENCH_UPSTREAM_URL;
if (!upstreamUrl) throw new Error("BENCH_UPSTREAM_URL is required");
const loaded = loadCatalogFile(DEFAULT_CONFIG_FILE);
const catalog = { ...loaded, providers: loaded.providers.map((p) => ({ ...p, base_url: upstreamUrl })) };
// It logs as `guardrails serve` does by default (level info, JSON on stdout), so the bench measures
// what a deployment pays; the bench drops the lines (BENCH_LOG_LEVEL=silent turns them off).
const service = await bootService(
  catalog,
  Object.fromEntries(catalog.providers.map((p) => [p.id, "bench"])),
  process.env.BENCH_LOG_LEVEL ?? "info",
);
const { app, deps } = service;

/** The answer filters of the `answers` and `email-answers` policies, as the guardrail is created with them. */
function answerFilters() {
  const slugs =
    policy === "email-answers"
      ? (["email"] as const)
      : (["email", "phone", "ssn", "credit-card", "ip-address", "secrets"] as const);
  return {
    content_filter_builtins: slugs.map((slug) => ({
      slug,
      action: "redact" as const,
      apply_to: "response" as const,
    })),
    content_filters:
      policy === "email-answers"
        ? []
        : BENCH_PATTERNS.map((pattern) => ({
            pattern,
            action: "redact" as const,
            apply_to: "response" as const,
          })),
  };
}

/** Sets up an organization with one governed inference key; its secret. */
async function setUp(): Promise<string> {
  const org = await createOrganization(deps, "bench organization");
  const principal = managementPrincipal(org);
  const key = await inTransaction(deps, (tx) => createInferenceKey(deps, tx, principal, { name: "bench" }));
  if (policy === "none") return key.secret;
  if (policy === "answers" || policy === "email-answers") {
    const answers = await inTransaction(deps, (tx) =>
      createGuardrail(deps, tx, principal, { name: "bench answer filters", ...answerFilters() }),
    );
    await assignKeys(deps, principal, answers.id, [key.record.hash]);
    return key.secret;
  }
  const guardrail = await inTransaction(deps, (tx) =>
    createGuardrail(deps, tx, principal, {
      name: "bench key guardrail",
      limit_usd: 1_000_000,
      reset_interval: "daily",
      content_filter_builtins: BUILTIN_SLUGS.map((slug) => ({ slug, action: "block" as const })),
      content_filters: BENCH_PATTERNS.map((pattern) => ({ pattern, action: "block" as const })),
    }),
  );
  await assignKeys(deps, principal, guardrail.id, [key.record.hash]);
  return key.secret;
}

const secret = process.env.BENCH_GATEWAY_JOIN ? null : await setUp();
const origin = await app.listen({ port: 0, host: "127.0.0.1" });

/** The answer filters compiled as the gateway compiles a policy's (a label does not move the window). */
function windowFilters() {
  const { content_filter_builtins, content_filters } = answerFilters();
  return compileFilters(
    { content_filter_builtins, content_filters: content_filters.map((f) => ({ ...f, label: null })) },
    DETECTORS,
  );
}

// `full`'s filters read requests only (docs/behaviour.md#apply-to), and `none` has none: no window.
const window = policy === "answers" || policy === "email-answers" ? answerWindow(windowFilters()) : 0;

serveChild({ type: "ready", origin, key: secret, answerWindow: window }, () => service.close());
