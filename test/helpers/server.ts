import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import { buildApp, serviceLogger } from "../../src/app.js";
import { DEFAULT_CONFIG_FILE, loadCatalogFile } from "../../src/config.js";
import type { OutputAllowance } from "../../src/domain/budget-admission.js";
import { Catalog, type CatalogData } from "../../src/domain/catalog.js";
import type { AlertSettings } from "../../src/gateway/budget-alerts.js";
import type { ScanSettings } from "../../src/gateway/scan-request.js";
import { Upstreams } from "../../src/gateway/upstream.js";
import { type ServiceDeps, serviceDepsFor } from "../../src/services/context.js";
import { createOrganization } from "../../src/services/organizations.js";
import { openDatabase } from "../../src/storage/open.js";
import { type DatabaseHandle, DEFAULT_POSTGRES_OPTIONS } from "../../src/storage/ports.js";
import { createScratchDatabase, dropScratchDatabase } from "./embedded-postgres.js";

/**
 * The process warnings (a listener leak's MaxListenersExceededWarning, a deprecation, ...) emitted
 * while this file's test servers ran: the service prints none (docs/behaviour.md#keep-alive-connections),
 * so each server's close fails the file once one was.
 */
const processWarnings: string[] = [];
process.on("warning", (warning) => {
  processWarnings.push(`${warning.name}: ${warning.message}`);
});

export interface TestOrg {
  organizationId: string;
  workspaceId: string;
  /** A management key secret of this organization. */
  key: string;
}

export interface TestServer {
  /** Origin, e.g. http://127.0.0.1:40123 */
  origin: string;
  /** origin + /api/v1 */
  baseUrl: string;
  app: FastifyInstance;
  deps: ServiceDeps;
  database: DatabaseHandle;
  /** The database's address (`sqlite:<file>` or `postgres://…`). */
  databaseUrl: string;
  /** Every test makes its own organization (CONTRIBUTING.md#tests). */
  newOrg(): Promise<TestOrg>;
  close(): Promise<void>;
}

export interface TestServerOptions {
  catalog?: CatalogData;
  configFile?: string;
  now?: () => Date;
  bodyLimit?: number;
  trustForwardedHost?: boolean;
  /** Regions come from listeners of their own (listenForRegion), not from Host. */
  regionByListener?: boolean;
  /** "full" also turns on group commit (src/storage/sqlite/group-commit.ts). */
  sqliteSynchronous?: "normal" | "full";
  /** Base URL that replaces every provider's, so the gateway talks to a local upstream. */
  upstreamUrl?: string;
  /** API keys by provider id; providers that need one and are not listed are unavailable. */
  providerKeys?: Record<string, string>;
  /** Receives the service's log lines (JSON, level info), as an operator's collector would. */
  logLines?: string[];
  /** Large content scans: worker threshold, time budget, workers (defaults otherwise). */
  scan?: ScanSettings;
  /** Output reserved under a budget for a request without max_tokens (defaults otherwise). */
  output?: OutputAllowance;
  /** How long a budget hold outlasts its provider's time-out (a minute otherwise). */
  holdMarginMs?: number;
  /** Serve this database (from freshDatabase) instead of a new one; close() then leaves it open. */
  database?: { database: DatabaseHandle; url: string };
  /** Budget alerts' webhook and delivery (no webhook otherwise). */
  alerts?: AlertSettings;
  /** The built browser console to serve at / (scripts/build-console.ts). */
  consoleDir?: string;
  /** How long a request may take to arrive (docs/gateway.md#receive-timeout; 30 s otherwise). */
  requestTimeoutMs?: number;
}

/** Region addresses of test servers: three host names, all on the loopback address. */
export const TEST_REGION_BASE_URLS = {
  global: "http://global.test/api/v1",
  europe: "http://eu.test/api/v1",
  us: "http://us.test/api/v1",
};

/**
 * The PostgreSQL server the suite runs on, when it runs on one (`npm run test:postgres` sets it, or
 * point it at an existing server): each test server then gets a database of its own there.
 */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || undefined;

/** Which database this run of the suite is on, for test names and for the few SQLite-only checks. */
export const TEST_DATABASE_KIND: "sqlite" | "postgres" = TEST_DATABASE_URL ? "postgres" : "sqlite";

/** A fresh database for one test server: a SQLite file in a temporary folder, or a scratch PostgreSQL database. */
export async function freshDatabase(
  options: { sqliteSynchronous?: "normal" | "full" } = {},
): Promise<{ database: DatabaseHandle; url: string; remove(): Promise<void> }> {
  if (TEST_DATABASE_URL) {
    const serverUrl = TEST_DATABASE_URL;
    const url = await createScratchDatabase(serverUrl);
    const database = await openDatabase(url, {
      sqliteSynchronous: "normal",
      postgres: { ...DEFAULT_POSTGRES_OPTIONS, poolMax: 5 },
    });
    return { database, url, remove: () => dropScratchDatabase(serverUrl, url) };
  }
  const dir = mkdtempSync(join(tmpdir(), "guardrails-test-"));
  const url = `sqlite:${join(dir, "guardrails.db")}`;
  const database = await openDatabase(url, { sqliteSynchronous: options.sqliteSynchronous ?? "normal" });
  return { database, url, remove: async () => rmSync(dir, { recursive: true, force: true }) };
}

/** Boots the real app on a fresh database (see freshDatabase), listening on a loopback port. */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const fresh = options.database
    ? { ...options.database, remove: async () => {}, keepOpen: true }
    : {
        ...(await freshDatabase(
          options.sqliteSynchronous ? { sqliteSynchronous: options.sqliteSynchronous } : {},
        )),
        keepOpen: false,
      };
  const database = fresh.database;
  const loaded = options.catalog ?? loadCatalogFile(options.configFile ?? DEFAULT_CONFIG_FILE);
  const upstreamUrl = options.upstreamUrl;
  const catalogData: CatalogData = upstreamUrl
    ? { ...loaded, providers: loaded.providers.map((p) => ({ ...p, base_url: upstreamUrl })) }
    : loaded;
  const upstreams = new Upstreams(catalogData.providers, options.providerKeys ?? {});
  const deps = {
    ...serviceDepsFor(database, new Catalog(catalogData), options.now),
    ping: database.ping,
    regionBaseUrls: TEST_REGION_BASE_URLS,
    trustForwardedHost: options.trustForwardedHost ?? false,
    ...(options.regionByListener ? { regionByListener: true } : {}),
    upstreams,
  };
  const lines = options.logLines;
  const app = await buildApp(deps, {
    ...(options.bodyLimit !== undefined ? { bodyLimit: options.bodyLimit } : {}),
    ...(options.scan ? { scan: options.scan } : {}),
    ...(options.output ? { output: options.output } : {}),
    ...(options.holdMarginMs !== undefined ? { holdMarginMs: options.holdMarginMs } : {}),
    ...(options.alerts ? { alerts: options.alerts } : {}),
    ...(options.consoleDir ? { consoleDir: options.consoleDir } : {}),
    ...(options.requestTimeoutMs !== undefined ? { requestTimeoutMs: options.requestTimeoutMs } : {}),
    ...(lines ? { logger: serviceLogger("info", { write: (line: string) => void lines.push(line) }) } : {}),
  });
  const origin = await app.listen({ port: 0, host: "127.0.0.1" });
  return {
    origin,
    baseUrl: `${origin}/api/v1`,
    app,
    deps,
    database,
    databaseUrl: fresh.url,
    async newOrg() {
      const made = await createOrganization(deps, `org-${Math.random().toString(36).slice(2)}`);
      return { organizationId: made.organization.id, workspaceId: made.workspace.id, key: made.key.secret };
    },
    async close() {
      await app.close();
      await upstreams.close();
      if (!fresh.keepOpen) {
        await database.close();
        await fresh.remove();
      }
      // Every test file runs in a process of its own: a warning any of its servers caused fails it.
      if (processWarnings.length > 0)
        throw new Error(
          `process warnings while serving (docs/behaviour.md#keep-alive-connections): ${processWarnings.join("; ")}`,
        );
    },
  };
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON bodies and assert on them.
  body: any;
}

export interface RequestOptions {
  key?: string | null;
  body?: unknown;
  /** Sent as is, instead of JSON of `body`. */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
}

/** One HTTP request through the real server; the body is parsed as JSON when there is one. */
export async function call(
  server: TestServer,
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  let body: string | Blob | undefined;
  if (options.rawBody !== undefined) {
    body =
      typeof options.rawBody === "string" ? options.rawBody : new Blob([new Uint8Array(options.rawBody)]);
  } else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["content-type"] ??= "application/json";
  }
  const res = await fetch(`${server.origin}${path}`, {
    method,
    headers,
    ...(body !== undefined ? { body } : {}),
  });
  const text = await res.text();
  let parsed: unknown = text;
  if ((res.headers.get("content-type") ?? "").includes("json") && text.length > 0) parsed = JSON.parse(text);
  return { status: res.status, headers: res.headers, body: parsed };
}

/** A client bound to one key. */
export function clientFor(server: TestServer, key: string | null) {
  return {
    get: (path: string, o: RequestOptions = {}) => call(server, "GET", path, { key, ...o }),
    post: (path: string, body?: unknown, o: RequestOptions = {}) =>
      call(server, "POST", path, { key, body, ...o }),
    patch: (path: string, body?: unknown, o: RequestOptions = {}) =>
      call(server, "PATCH", path, { key, body, ...o }),
    put: (path: string, body?: unknown, o: RequestOptions = {}) =>
      call(server, "PUT", path, { key, body, ...o }),
    delete: (path: string, o: RequestOptions = {}) => call(server, "DELETE", path, { key, ...o }),
  };
}

/**
 * Another instance of the service on `first`'s database, as a second process behind a balancer
 * would be. With `listenForChanges`, other instances' commits reach this one's caches as main.ts
 * wires it (a notice on PostgreSQL, SQLite's data_version otherwise).
 */
export async function secondInstance(
  first: TestServer,
  options: { listenForChanges?: boolean } = {},
): Promise<TestServer> {
  const database = await openDatabase(first.databaseUrl, {
    sqliteSynchronous: "normal",
    postgres: { ...DEFAULT_POSTGRES_OPTIONS, poolMax: 2 },
  });
  const upstreams = new Upstreams([], {});
  const deps = {
    ...serviceDepsFor(database, first.deps.catalog),
    ping: database.ping,
    regionBaseUrls: TEST_REGION_BASE_URLS,
    trustForwardedHost: false,
    upstreams,
  };
  const app: FastifyInstance = await buildApp(deps);
  const listener = options.listenForChanges
    ? await database.listenForChanges?.({
        onChange: (notice) => deps.changes.bump(notice),
        onState: (listening) => deps.changes.setTrusted(listening),
        onError: () => {},
      })
    : undefined;
  const origin = await app.listen({ port: 0, host: "127.0.0.1" });
  return {
    origin,
    baseUrl: `${origin}/api/v1`,
    app,
    deps,
    database,
    databaseUrl: first.databaseUrl,
    newOrg: () => first.newOrg(),
    async close() {
      await listener?.close();
      await app.close();
      await upstreams.close();
      await database.close();
    },
  };
}
