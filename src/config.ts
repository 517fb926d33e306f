import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv } from "ajv";
import Type, { type Static } from "typebox";
import { DEFAULT_OUTPUT_ALLOWANCE, type OutputAllowance } from "./domain/budget-admission.js";
import {
  APIS,
  type CatalogData,
  checkCatalog,
  PROVIDER_AUTHS,
  REGIONS,
  type Region,
} from "./domain/catalog.js";
import { type AlertSettings, DEFAULT_ALERT_SETTINGS } from "./gateway/budget-alerts.js";
import {
  DEFAULT_ORG_QUEUED_CHARS,
  DEFAULT_SCAN_SETTINGS,
  defaultOrgWorkers,
  type ScanSettings,
} from "./gateway/scan-request.js";
import { DEFAULT_REQUEST_TIMEOUT_MS } from "./http/receive-timeout.js";
import { DEFAULT_POSTGRES_OPTIONS, type PostgresOptions } from "./storage/ports.js";

/**
 * Every environment variable the service reads, parsed and checked once (CONTRIBUTING.md#configuration). Each is
 * documented in docs/configuration.md; nothing else reads process.env.
 */
export interface Config {
  port: number;
  host: string;
  databaseUrl: string;
  /** A management key secret to accept (stored only as its hash). */
  managementKey: string | undefined;
  /**
   * Where a request's region comes from (docs/behaviour.md#ingress-region): the listener it connected
   * to (the default: a client cannot choose it), or its Host header (behind a proxy the operator controls).
   */
  regionFrom: RegionSource;
  /** Base URL of each region address; read only when regions come from the Host (docs/behaviour.md#ingress-region). */
  regionBaseUrls: Record<Region, string>;
  /** Trust X-Forwarded-Host for the ingress region by host, and the console's forwarded origin (only behind a proxy you control). */
  trustForwardedHost: boolean;
  /** With regions by listener, where each regional listener binds (global is PORT); empty otherwise. */
  regionListeners: Partial<Record<"europe" | "us", { host: string; port: number }>>;
  configFile: string;
  catalog: CatalogData;
  logLevel: string;
  /** `auto`: human lines on a terminal, JSON lines otherwise. */
  logFormat: "auto" | "pretty" | "json";
  sqliteSynchronous: "normal" | "full";
  /** Connection pool and time-outs, used when DATABASE_URL is a PostgreSQL address. */
  postgres: PostgresOptions;
  /** Largest accepted request body, in bytes. */
  bodyLimit: number;
  /** How long a request's headers and body may take to arrive (docs/gateway.md#receive-timeout). */
  requestTimeoutMs: number;
  /** Failed authentications a client address may make per minute before 429s. */
  authFailuresPerMinute: number;
  /** Where large content scans run and how long they may take (docs/gateway.md#large-scans). */
  scan: ScanSettings;
  /** Output reserved under a budget for a request without max_tokens, and the least answer (docs/gateway.md#budgets). */
  output: OutputAllowance;
  /** Where budget alerts are posted and how delivery retries (docs/configuration.md). */
  alerts: AlertSettings;
  /** Each provider's API key, read from the variable its catalog entry names (absent: unavailable). */
  providerKeys: Record<string, string | undefined>;
  /**
   * Serve the catalog's `local` provider (the echo model) inside this process on a loopback port,
   * instead of at the catalog's base_url, so a first run needs nothing else started.
   */
  echoProvider: boolean;
}

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const DEFAULT_CONFIG_FILE = resolve(ROOT, "config", "default.json");

const EndpointSchema = Type.Object(
  {
    provider: Type.String({ minLength: 1 }),
    region: Type.Union(REGIONS.map((r) => Type.Literal(r))),
    zdr: Type.Boolean(),
    trains_on_data: Type.Boolean(),
    publishes_prompts: Type.Boolean(),
    free: Type.Boolean(),
    byok: Type.Boolean(),
    model_id: Type.Optional(Type.String({ minLength: 1 })),
  },
  { additionalProperties: false },
);

const CatalogSchema = Type.Object({
  zdr_families: Type.Array(
    Type.Object({
      id: Type.String({ pattern: "^[a-z][a-z0-9_]*$" }),
      name: Type.String(),
      authors: Type.Array(Type.String()),
      formerly: Type.Optional(Type.Array(Type.String({ pattern: "^[a-z][a-z0-9_]*$" }))),
    }),
    { minItems: 1 },
  ),
  providers: Type.Array(
    Type.Object({
      id: Type.String({ minLength: 1 }),
      name: Type.String(),
      base_url: Type.String(),
      api_key_env: Type.Union([Type.String({ pattern: "^[A-Za-z_][A-Za-z0-9_]*$" }), Type.Null()]),
      byok: Type.Boolean(),
      timeout_ms: Type.Integer({ minimum: 1 }),
      apis: Type.Optional(
        Type.Array(Type.Union(APIS.map((a) => Type.Literal(a))), { minItems: 1, uniqueItems: true }),
      ),
      auth: Type.Optional(Type.Union(PROVIDER_AUTHS.map((a) => Type.Literal(a)))),
    }),
  ),
  models: Type.Array(
    Type.Object({
      slug: Type.String({ minLength: 1 }),
      canonical_slug: Type.String({ minLength: 1 }),
      name: Type.String(),
      author: Type.String({ minLength: 1 }),
      context_length: Type.Integer({ minimum: 1 }),
      // 0 only for an embedding model (checkCatalog): it answers with no output tokens.
      max_output_tokens: Type.Integer({ minimum: 0 }),
      api: Type.Optional(Type.Union(APIS.map((a) => Type.Literal(a)))),
      aliases: Type.Optional(
        Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { maxItems: 64, uniqueItems: true }),
      ),
      pricing: Type.Object({
        prompt_usd_per_million_tokens: Type.Number({ minimum: 0 }),
        completion_usd_per_million_tokens: Type.Number({ minimum: 0 }),
        cache_write_usd_per_million_tokens: Type.Optional(Type.Number({ minimum: 0 })),
        cache_read_usd_per_million_tokens: Type.Optional(Type.Number({ minimum: 0 })),
      }),
      endpoints: Type.Array(EndpointSchema),
    }),
  ),
});

type CatalogFile = Static<typeof CatalogSchema>;

export function loadCatalogFile(path: string): CatalogData {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new Error(
      `GUARDRAILS_CONFIG: cannot read ${path}: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  const validate = new Ajv({ allErrors: true, strict: false }).compile<CatalogFile>(CatalogSchema);
  if (!validate(parsed)) {
    const first = (validate.errors ?? [])
      .slice(0, 5)
      .map((e) => `${e.instancePath || "/"} ${e.message ?? ""}`);
    throw new Error(`GUARDRAILS_CONFIG: ${path} is not a valid configuration: ${first.join("; ")}`);
  }
  const data = parsed as CatalogData;
  const problems = checkCatalog(data);
  if (problems.length > 0) throw new Error(`GUARDRAILS_CONFIG: ${path}: ${problems.slice(0, 5).join("; ")}`);
  return data;
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be a whole number from ${min} to ${max}, not '${raw}'`);
  }
  return value;
}

function url(env: NodeJS.ProcessEnv, name: string, fallback: string): string {
  const raw = env[name] || fallback;
  try {
    const parsed = new URL(raw);
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new Error("not http(s)");
  } catch {
    throw new Error(`${name} must be an http(s) URL, not '${raw}'`);
  }
  return raw.replace(/\/+$/, "");
}

/** `port` or `host:port` (`[v6]:port`); a bare port listens on HOST. */
function listenAddress(
  env: NodeJS.ProcessEnv,
  name: string,
  host: string,
): { host: string; port: number } | undefined {
  const raw = env[name];
  if (raw === undefined || raw === "") return undefined;
  const match = /^(?:(\[[^\]]+\]|[^:]+):)?(\d{1,5})$/.exec(raw.trim());
  const port = Number(match?.[2]);
  if (!match || port < 1 || port > 65535)
    throw new Error(`${name} must be a port or host:port, not '${raw}'`);
  return { host: match[1]?.replace(/^\[|\]$/g, "") ?? host, port };
}

export type RegionSource = "listener" | "host";

const REGION_BASE_URL_VARIABLES = [
  "GUARDRAILS_BASE_URL",
  "GUARDRAILS_EUROPE_BASE_URL",
  "GUARDRAILS_US_BASE_URL",
] as const;

/**
 * How regions are told apart (docs/behaviour.md#ingress-region). By listener (the default), Europe
 * and US listen on the two ports after PORT unless GUARDRAILS_*_LISTEN says otherwise. A variable
 * of the other mode stops the start instead of being ignored: a deployment that relied on Host-based
 * regions would otherwise see its regional traffic arrive as global, where no region narrows the endpoints.
 */
function regionSettings(
  env: NodeJS.ProcessEnv,
  port: number,
  host: string,
): Pick<Config, "regionFrom" | "regionBaseUrls" | "regionListeners"> {
  const regionFrom = choice(env, "GUARDRAILS_REGION_FROM", ["listener", "host"], "listener");
  const shown = port === 0 ? 8080 : port;
  if (regionFrom === "listener") {
    for (const name of REGION_BASE_URL_VARIABLES) {
      if (env[name])
        throw new Error(
          `${name} is read only with GUARDRAILS_REGION_FROM=host; by default each region is the listener a connection arrives on (GUARDRAILS_EUROPE_LISTEN, GUARDRAILS_US_LISTEN)`,
        );
    }
  } else {
    for (const name of ["GUARDRAILS_EUROPE_LISTEN", "GUARDRAILS_US_LISTEN"]) {
      if (env[name])
        throw new Error(`${name} is read only with GUARDRAILS_REGION_FROM=listener (the default)`);
    }
  }
  const regionListeners: Config["regionListeners"] = {};
  if (regionFrom === "listener") {
    const taken = new Map<string, string>([[`${host}:${port}`, "PORT"]]);
    for (const [region, name, offset] of [
      ["europe", "GUARDRAILS_EUROPE_LISTEN", 1],
      ["us", "GUARDRAILS_US_LISTEN", 2],
    ] as const) {
      const at = listenAddress(env, name, host) ?? { host, port: port === 0 ? 0 : port + offset };
      if (at.port > 65535)
        throw new Error(
          `${name} must be set: PORT ${port} leaves no port ${port + offset} for the ${region} listener`,
        );
      const key = `${at.host}:${at.port}`;
      const other = taken.get(key);
      if (at.port !== 0 && other !== undefined)
        throw new Error(`${name} must differ from ${other}: both are ${key}`);
      taken.set(key, name);
      regionListeners[region] = at;
    }
  }
  return {
    regionFrom,
    regionBaseUrls: {
      global: url(env, "GUARDRAILS_BASE_URL", `http://localhost:${shown}/api/v1`),
      europe: url(env, "GUARDRAILS_EUROPE_BASE_URL", `http://eu.localhost:${shown}/api/v1`),
      us: url(env, "GUARDRAILS_US_BASE_URL", `http://us.localhost:${shown}/api/v1`),
    },
    regionListeners,
  };
}

function choice<T extends string>(
  env: NodeJS.ProcessEnv,
  name: string,
  options: readonly T[],
  fallback: T,
): T {
  const raw = (env[name] ?? "").toLowerCase();
  if (raw === "") return fallback;
  if (!(options as readonly string[]).includes(raw))
    throw new Error(`${name} must be one of ${options.join(", ")}`);
  return raw as T;
}

/** The budget alerts' webhook: a URL and its signing secret, both or neither. */
function alertSettings(env: NodeJS.ProcessEnv): AlertSettings {
  const webhookUrl = env.GUARDRAILS_ALERT_WEBHOOK_URL || undefined;
  const secret = env.GUARDRAILS_ALERT_WEBHOOK_SECRET || undefined;
  if (webhookUrl !== undefined) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(webhookUrl);
    } catch {
      parsed = undefined;
    }
    if (!parsed || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) {
      throw new Error("GUARDRAILS_ALERT_WEBHOOK_URL must be an http or https URL");
    }
    if (secret === undefined || secret.length < 16) {
      throw new Error(
        "GUARDRAILS_ALERT_WEBHOOK_SECRET (at least 16 characters) is required with GUARDRAILS_ALERT_WEBHOOK_URL",
      );
    }
  }
  return {
    ...DEFAULT_ALERT_SETTINGS,
    webhookUrl,
    secret,
    maxAttempts: integer(env, "GUARDRAILS_ALERT_WEBHOOK_ATTEMPTS", DEFAULT_ALERT_SETTINGS.maxAttempts, 1, 20),
  };
}

/** Each organization's share of the scan workers (docs/gateway.md#fair-share). */
function scanShares(
  env: NodeJS.ProcessEnv,
  workers: number,
): Pick<ScanSettings, "orgWorkers" | "orgQueuedChars"> {
  return {
    orgWorkers: integer(env, "GUARDRAILS_SCAN_ORG_WORKERS", defaultOrgWorkers(workers), 1, workers),
    orgQueuedChars: integer(
      env,
      "GUARDRAILS_SCAN_ORG_QUEUED_CHARS",
      DEFAULT_ORG_QUEUED_CHARS,
      1,
      1024 * 1024 * 1024,
    ),
  };
}

/** Reads the configuration from an environment (process.env in main.ts, a literal object in tests). */
export function loadConfig(env: NodeJS.ProcessEnv): Config {
  const port = integer(env, "PORT", 8080, 0, 65535);
  const configFile = resolve(env.GUARDRAILS_CONFIG || DEFAULT_CONFIG_FILE);
  const managementKey = env.GUARDRAILS_MANAGEMENT_KEY || undefined;
  if (managementKey !== undefined && (managementKey.length < 20 || /\s/.test(managementKey))) {
    throw new Error("GUARDRAILS_MANAGEMENT_KEY must be at least 20 characters without spaces");
  }
  const catalog = loadCatalogFile(configFile);
  const providerKeys = Object.fromEntries(
    catalog.providers.map((p) => [
      p.id,
      p.api_key_env === null ? undefined : env[p.api_key_env] || undefined,
    ]),
  );
  // The shipped catalog with no provider key set is a first run or a demo: the echo provider is all
  // there is to answer. A catalog of one's own, or a real provider's key, means real traffic.
  const realProviders =
    configFile !== DEFAULT_CONFIG_FILE || Object.values(providerKeys).some((k) => k !== undefined);
  return {
    port,
    host: env.HOST || "127.0.0.1",
    databaseUrl: env.DATABASE_URL || "./data/guardrails.db",
    managementKey,
    ...regionSettings(env, port, env.HOST || "127.0.0.1"),
    trustForwardedHost: choice(env, "GUARDRAILS_TRUST_FORWARDED_HOST", ["true", "false"], "false") === "true",
    configFile,
    catalog,
    logLevel: choice(
      env,
      "LOG_LEVEL",
      ["fatal", "error", "warn", "info", "debug", "trace", "silent"],
      "info",
    ),
    logFormat: choice(env, "LOG_FORMAT", ["auto", "pretty", "json"], "auto"),
    sqliteSynchronous: choice(env, "GUARDRAILS_SQLITE_SYNCHRONOUS", ["normal", "full"], "normal"),
    postgres: {
      poolMax: integer(env, "GUARDRAILS_PG_POOL_MAX", DEFAULT_POSTGRES_OPTIONS.poolMax, 1, 1000),
      connectTimeoutMs: integer(
        env,
        "GUARDRAILS_PG_CONNECT_TIMEOUT_MS",
        DEFAULT_POSTGRES_OPTIONS.connectTimeoutMs,
        100,
        600_000,
      ),
      statementTimeoutMs: integer(
        env,
        "GUARDRAILS_PG_STATEMENT_TIMEOUT_MS",
        DEFAULT_POSTGRES_OPTIONS.statementTimeoutMs,
        100,
        3_600_000,
      ),
    },
    bodyLimit: integer(env, "GUARDRAILS_BODY_LIMIT", 1024 * 1024, 1024, 64 * 1024 * 1024),
    requestTimeoutMs: integer(
      env,
      "GUARDRAILS_REQUEST_TIMEOUT_MS",
      DEFAULT_REQUEST_TIMEOUT_MS,
      1000,
      600_000,
    ),
    authFailuresPerMinute: integer(env, "GUARDRAILS_AUTH_FAILURES_PER_MINUTE", 100, 1, 1_000_000),
    scan: {
      timeoutMs: integer(env, "GUARDRAILS_SCAN_TIMEOUT_MS", DEFAULT_SCAN_SETTINGS.timeoutMs, 1, 600_000),
      workerChars: integer(
        env,
        "GUARDRAILS_SCAN_WORKER_CHARS",
        DEFAULT_SCAN_SETTINGS.workerChars,
        0,
        64 * 1024 * 1024,
      ),
      workers: integer(env, "GUARDRAILS_SCAN_WORKERS", DEFAULT_SCAN_SETTINGS.workers, 1, 64),
      ...scanShares(env, integer(env, "GUARDRAILS_SCAN_WORKERS", DEFAULT_SCAN_SETTINGS.workers, 1, 64)),
    },
    output: {
      defaultTokens: integer(
        env,
        "GUARDRAILS_DEFAULT_OUTPUT_TOKENS",
        DEFAULT_OUTPUT_ALLOWANCE.defaultTokens,
        1,
        10_000_000,
      ),
      minimalTokens: integer(
        env,
        "GUARDRAILS_MIN_OUTPUT_TOKENS",
        DEFAULT_OUTPUT_ALLOWANCE.minimalTokens,
        1,
        10_000_000,
      ),
    },
    alerts: alertSettings(env),
    providerKeys,
    echoProvider:
      choice(env, "GUARDRAILS_ECHO_PROVIDER", ["on", "off"], realProviders ? "off" : "on") === "on",
  };
}
