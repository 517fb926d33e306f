#!/usr/bin/env node
import { parseArgs } from "node:util";
import { loadConfig } from "../config.js";
import { Catalog } from "../domain/catalog.js";
import { AppError, type Issue } from "../domain/errors.js";
import { startLocalUpstream } from "../local-upstream/server.js";
import { startServer } from "../main.js";
import { inTransaction, type ServiceDeps, serviceDepsFor } from "../services/context.js";
import { createInferenceKey, createManagementKey } from "../services/keys.js";
import { bootstrap, createOrganization } from "../services/organizations.js";
import { openDatabase } from "../storage/database.js";

const USAGE = `Usage: guardrails <command>

Commands:
  serve                                   start the service (the default)
  keys create --management [--name N]     create a management key of the default organization
  keys create --workspace <id> [--member <user_id>] [--name N]
                                          create an inference key in a workspace, owned by a member
  organizations create --name <name>      create an organization; prints its first management key
  upstream [--port 8091] [--latency-ms N] run the bundled local model provider (an echo model),
                                          so governed requests work end to end with no account

Configuration comes from the environment (see docs/configuration.md): DATABASE_URL, PORT, HOST, ...
Secrets are printed once and stored only as hashes.`;

async function withServices<T>(fn: (deps: ServiceDeps, organizationId: string) => Promise<T>): Promise<T> {
  const config = loadConfig(process.env);
  const database = await openDatabase(config.databaseUrl, {
    sqliteSynchronous: config.sqliteSynchronous,
    postgres: config.postgres,
  });
  try {
    const deps = serviceDepsFor(database, new Catalog(config.catalog));
    const boot = await database.withStartupLock(() => bootstrap(deps, config.managementKey));
    return await fn(deps, boot.organization.id);
  } finally {
    await database.close();
  }
}

async function serve(): Promise<void> {
  const server = await startServer(loadConfig(process.env));
  const shutdown = (signal: string) => {
    server.app.log.info({ signal }, "shutting down: finishing requests in flight");
    server.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error("guardrails: shutdown failed:", err instanceof Error ? err.message : err);
        process.exit(1);
      },
    );
  };
  process.once("SIGTERM", () => shutdown("SIGTERM"));
  process.once("SIGINT", () => shutdown("SIGINT"));
}

async function keysCreate(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      management: { type: "boolean" },
      workspace: { type: "string" },
      member: { type: "string" },
      name: { type: "string" },
    },
  });
  if ((values.management === true) === (values.workspace !== undefined)) {
    throw new Error("keys create needs exactly one of --management or --workspace <id>");
  }
  const secret = await withServices(async (deps, organizationId) => {
    if (values.management) {
      return (await createManagementKey(deps, deps.db, organizationId, values.name ?? "CLI management key"))
        .secret;
    }
    const principal = { organizationId, keyHash: "cli", kind: "management" as const, workspaceId: null };
    const input = {
      name: values.name ?? "CLI inference key",
      workspace_id: values.workspace as string,
      ...(values.member !== undefined ? { member_user_id: values.member } : {}),
    };
    return (await inTransaction(deps, (tx) => createInferenceKey(deps, tx, principal, input))).secret;
  });
  console.log(secret);
}

async function organizationsCreate(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { name: { type: "string" } } });
  if (!values.name) throw new Error("organizations create needs --name <name>");
  const made = await withServices((deps) => createOrganization(deps, values.name as string));
  console.log(
    JSON.stringify({
      organization_id: made.organization.id,
      default_workspace_id: made.workspace.id,
      management_key: made.key.secret,
    }),
  );
}

async function upstream(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { port: { type: "string" }, host: { type: "string" }, "latency-ms": { type: "string" } },
  });
  const port = Number(values.port ?? 8091);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error("--port must be a port number");
  const latencyMs = Number(values["latency-ms"] ?? 0);
  if (!Number.isInteger(latencyMs) || latencyMs < 0) throw new Error("--latency-ms must be a whole number");
  const local = await startLocalUpstream({ port, host: values.host ?? "127.0.0.1", latencyMs });
  console.log(`guardrails: local upstream (echo model) at ${local.url}`);
  const stop = () => local.close().then(() => process.exit(0));
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}

async function run(argv: string[]): Promise<void> {
  const [command = "serve", sub, ...rest] = argv;
  if (command === "serve") return serve();
  if (command === "upstream") return upstream(sub === undefined ? rest : [sub, ...rest]);
  if (command === "keys" && sub === "create") return keysCreate(rest);
  if (command === "organizations" && sub === "create") return organizationsCreate(rest);
  if (command === "help" || command === "--help" || command === "-h") {
    console.log(USAGE);
    return;
  }
  console.error(USAGE);
  process.exitCode = 2;
}

function describeError(err: unknown): string {
  if (err instanceof AppError) {
    const issues = (err.metadata?.issues as Issue[] | undefined) ?? [];
    return [err.message, ...issues.map((i) => `${i.path.replace(/^\//, "") || "input"}: ${i.message}`)].join(
      "; ",
    );
  }
  return err instanceof Error ? err.message : String(err);
}

run(process.argv.slice(2)).catch((err: unknown) => {
  // Known failures (bad configuration, bad arguments) are reported in one line, without a stack.
  console.error(`guardrails: ${describeError(err)}`);
  process.exit(1);
});
