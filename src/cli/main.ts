#!/usr/bin/env node
import { parseArgs } from "node:util";
import { loadConfig } from "../config.js";
import { Catalog } from "../domain/catalog.js";
import { AppError } from "../domain/errors.js";
import { presentGuardrail } from "../domain/guardrail.js";
import { inTransaction, type Principal, type ServiceDeps, serviceDepsFor } from "../services/context.js";
import { listWorkspaceGuardrails } from "../services/guardrails.js";
import {
  createInferenceKey,
  getKey,
  listKeys,
  presentKey,
  presentKeys,
  readKeySpend,
  removeKey,
} from "../services/keys.js";
import {
  issueManagementKey,
  listManagementKeys,
  presentManagementKey,
  revokeManagementKey,
  rotateManagementKey,
} from "../services/management-keys.js";
import { bootstrap, createOrganization } from "../services/organizations.js";
import { listOrganizationWorkspaces, presentWorkspace } from "../services/workspaces.js";
import { openDatabase } from "../storage/open.js";
import {
  describeError,
  errorBody,
  fields,
  type Out,
  printJson,
  processOut,
  table,
  UsageError,
} from "./output.js";

const USAGE = `Usage: guardrails <command> [--json]

Commands:
  serve                                   start the service (the default)
  upstream [--port 8091] [--latency-ms N] run the bundled echo model provider on its own
  keys create [--workspace <id>] [--member <user_id>] [--name N]
                                          an inference key (default workspace unless named)
  keys create --management [--name N]     another management key of the default organization
  keys list [--workspace <id>]            inference keys
  keys list --management                  management keys that still work (never their secrets)
  keys show <hash>                        one inference key
  keys revoke <hash>                      an inference or management key; it stops working at once
                                          (not the organization's last management key: rotate it)
  keys rotate <hash>                      replace a management key by a new one of the same name
  guardrails list [--workspace <id>]      guardrails, of every workspace unless one is named
  workspaces list                         workspaces
  organizations create --name <name>      a new organization and its first management key

Every command acts on the database of DATABASE_URL (default ./data/guardrails.db), in the default
organization. Results go to stdout, notes and errors to stderr. --json prints the result as the
HTTP API shapes it ({"data": ...}); errors then come as {"error": {...}} on stderr. A new key's
secret is printed alone (captured by $(...)), once; only its hash is stored. Exit codes: 0 done,
1 failed, 2 misused. Configuration: docs/configuration.md.`;

/** The command line acts as a management key of the default organization would. */
const CLI_KEY = "cli";

interface Session {
  deps: ServiceDeps;
  principal: Principal;
}

async function withServices<T>(fn: (session: Session) => Promise<T>): Promise<T> {
  const config = loadConfig(process.env);
  const database = await openDatabase(config.databaseUrl, {
    sqliteSynchronous: config.sqliteSynchronous,
    postgres: config.postgres,
  });
  try {
    const deps = serviceDepsFor(database, new Catalog(config.catalog));
    const boot = await database.withStartupLock(() => bootstrap(deps, config.managementKey));
    if (boot.createdSecret) {
      // A command run before the first start made the database: the server will not show this key.
      process.stderr.write(
        `A management key was created for the default organization; it is shown only now:\n  ${boot.createdSecret}\n`,
      );
    }
    const principal: Principal = {
      organizationId: boot.organization.id,
      keyHash: CLI_KEY,
      kind: "management",
      workspaceId: null,
    };
    return await fn({ deps, principal });
  } finally {
    await database.close();
  }
}

type Options = NonNullable<Parameters<typeof parseArgs>[0]>["options"];

/** parseArgs with --json everywhere, its failures turned into usage errors. */
function parse(args: string[], options: Options, positionals = 0) {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args, options: { ...options, json: { type: "boolean" } }, allowPositionals: true });
  } catch (err) {
    throw new UsageError([{ path: "", message: err instanceof Error ? err.message : String(err) }]);
  }
  if (parsed.positionals.length !== positionals) {
    throw new UsageError([
      {
        path: "",
        message: `expected ${positionals} argument(s), got: ${parsed.positionals.join(" ") || "none"}`,
      },
    ]);
  }
  const values = parsed.values as Record<string, string | boolean | undefined>;
  return { values, positionals: parsed.positionals, json: values.json === true };
}

function text(values: Record<string, string | boolean | undefined>, name: string): string | undefined {
  const value = values[name];
  return typeof value === "string" ? value : undefined;
}

/** Reads every page of a list, so a person sees all of it. */
async function all<T>(
  read: (page: { offset: number; limit: number }) => Promise<{ items: T[]; total: number }>,
) {
  const items: T[] = [];
  for (;;) {
    const page = await read({ offset: items.length, limit: 100 });
    items.push(...page.items);
    if (page.items.length === 0 || items.length >= page.total) return items;
  }
}

/** A created secret: alone on stdout, what it belongs to on stderr (or all of it as JSON). */
function printCreated(out: Out, json: boolean, data: Record<string, unknown>, secret: string): void {
  if (json) {
    printJson(out, { data, key: secret });
    return;
  }
  out.stdout(`${secret}\n`);
  out.stderr(`${fields(data)}The key above is shown only now; only its hash is stored.\n`);
}

async function keys(sub: string | undefined, args: string[], out: Out): Promise<void> {
  if (sub === "create") {
    const { values, json } = parse(args, {
      management: { type: "boolean" },
      workspace: { type: "string" },
      member: { type: "string" },
      name: { type: "string" },
    });
    const workspace = text(values, "workspace");
    const member = text(values, "member");
    if (values.management === true && (workspace !== undefined || member !== undefined)) {
      throw new UsageError([
        { path: "--management", message: "a management key has no --workspace or --member" },
      ]);
    }
    const created = await withServices(({ deps, principal }) => {
      if (values.management === true) {
        return issueManagementKey(deps, principal, text(values, "name") ?? "CLI management key");
      }
      const input = {
        name: text(values, "name") ?? "CLI inference key",
        ...(workspace !== undefined ? { workspace_id: workspace } : {}),
        ...(member !== undefined ? { member_user_id: member } : {}),
      };
      return inTransaction(deps, (tx) => createInferenceKey(deps, tx, principal, input));
    });
    const data = { ...presentKey(created.record), kind: created.record.kind };
    return printCreated(out, json, data, created.secret);
  }
  if (sub === "list") {
    const { values, json } = parse(args, { workspace: { type: "string" }, management: { type: "boolean" } });
    const workspaceId = text(values, "workspace");
    if (values.management === true) {
      if (workspaceId !== undefined) {
        throw new UsageError([{ path: "--management", message: "management keys have no --workspace" }]);
      }
      const data = await withServices(async ({ deps, principal }) =>
        (await all((page) => listManagementKeys(deps, principal, page))).map((k) =>
          presentManagementKey(k, principal.keyHash),
        ),
      );
      if (json) return printJson(out, { data, total_count: data.length });
      out.stdout(
        table(data, [
          { key: "hash", title: "HASH" },
          { key: "label", title: "LABEL" },
          { key: "name", title: "NAME" },
          { key: "created_at", title: "CREATED" },
        ]),
      );
      return;
    }
    const data = await withServices(async ({ deps, principal }) =>
      presentKeys(
        deps,
        await all((page) =>
          listKeys(deps, principal, {
            ...page,
            includeDisabled: true,
            ...(workspaceId ? { workspaceId } : {}),
          }),
        ),
      ),
    );
    if (json) return printJson(out, { data, total_count: data.length });
    out.stdout(
      table(data, [
        { key: "hash", title: "HASH" },
        { key: "label", title: "LABEL" },
        { key: "name", title: "NAME" },
        { key: "workspace_id", title: "WORKSPACE" },
        { key: "member_user_id", title: "MEMBER" },
        { key: "disabled", title: "DISABLED" },
        { key: "created_at", title: "CREATED" },
      ]),
    );
    return;
  }
  if (sub === "rotate") {
    const { positionals, json } = parse(args, {}, 1);
    const hash = positionals[0] as string;
    const rotated = await withServices(({ deps, principal }) =>
      rotateManagementKey(deps, principal, hash).catch((err: unknown) => {
        if (err instanceof AppError && err.code === "not_found") {
          throw new AppError("not_found", { reason: "no active management key has this hash", hash });
        }
        throw err;
      }),
    );
    const data = { ...presentManagementKey(rotated.created.record), replaces: rotated.revoked.hash };
    printCreated(out, json, data, rotated.created.secret);
    if (!json) out.stderr("The old key no longer authenticates, and its console sessions have ended.\n");
    return;
  }
  if (sub === "show" || sub === "revoke") {
    const { positionals, json } = parse(args, {}, 1);
    const hash = positionals[0] as string;
    const data = await withServices(async ({ deps, principal }) => {
      if (sub === "revoke") {
        const management = await revokeManagementKeyIfOne(deps, principal, hash);
        if (management) return management;
      }
      try {
        const key = await getKey(deps, principal, hash);
        const record = presentKey(key, await readKeySpend(deps, key));
        if (sub === "revoke") await removeKey(deps, principal, hash);
        return record;
      } catch (err) {
        if (err instanceof AppError && err.code === "not_found") {
          const kind = sub === "revoke" ? "key" : "inference key";
          throw new AppError("not_found", { reason: `no ${kind} has this hash`, hash });
        }
        throw err;
      }
    });
    const result = sub === "revoke" ? { data, deleted: true } : { data };
    if (json) return printJson(out, result);
    out.stdout(fields(data));
    if (sub === "revoke") out.stderr("Revoked: the key no longer authenticates.\n");
    return;
  }
  throw new UsageError(
    [{ path: "", message: `keys ${sub ?? ""}: expected create, list, show, revoke or rotate` }],
    USAGE,
  );
}

/**
 * `keys revoke` on a management key of the organization (docs/behaviour.md#management-key-revocation):
 * its presented record once revoked, or undefined when the hash names no active management key.
 */
async function revokeManagementKeyIfOne(deps: ServiceDeps, principal: Principal, hash: string) {
  try {
    return presentManagementKey(await revokeManagementKey(deps, principal, hash));
  } catch (err) {
    if (err instanceof AppError && err.code === "not_found") return undefined;
    throw err;
  }
}

async function guardrails(sub: string | undefined, args: string[], out: Out): Promise<void> {
  if (sub !== "list") throw new UsageError([{ path: "", message: "guardrails: expected list" }], USAGE);
  const { values, json } = parse(args, { workspace: { type: "string" } });
  const named = text(values, "workspace");
  const { data, workspaces } = await withServices(async ({ deps, principal }) => {
    const spaces = await all((page) => listOrganizationWorkspaces(deps, principal, page));
    const ids = named !== undefined ? [named] : spaces.map((w) => w.id);
    const families = deps.catalog.familyIds();
    const data: Record<string, unknown>[] = [];
    for (const id of ids) {
      const items = await all((page) =>
        listWorkspaceGuardrails(deps, principal, { ...page, workspace_id: id }),
      );
      data.push(...items.map((g) => presentGuardrail(g, families)));
    }
    return { data, workspaces: new Map(spaces.map((w) => [w.id, w.name])) };
  });
  if (json) return printJson(out, { data, total_count: data.length });
  const rows = data.map((g) => ({
    ...g,
    workspace: workspaces.get(g.workspace_id as string) ?? g.workspace_id,
    budget: g.limit_usd === null ? null : `$${g.limit_usd} ${g.reset_interval ?? "total"}`,
    filters: filtersSummary(
      g.content_filter_builtins as FilterSummaryItem[] | null,
      g.content_filters as FilterSummaryItem[] | null,
    ),
  }));
  out.stdout(
    table(rows, [
      { key: "id", title: "ID" },
      { key: "workspace", title: "WORKSPACE" },
      { key: "name", title: "NAME" },
      { key: "budget", title: "BUDGET" },
      { key: "allowed_data_regions", title: "REGIONS" },
      { key: "filters", title: "FILTERS" },
    ]),
  );
}

interface FilterSummaryItem {
  slug?: string;
  action: string;
  apply_to?: string;
}

/** Said after a filter that reads answers (docs/behaviour.md#apply-to); nothing for requests only. */
const READS: Record<string, string> = { response: " (answers)", both: " (requests and answers)" };

/**
 * A guardrail's filters in a table cell: each builtin as `slug:action`, marked when it reads answers
 * (`email:block (answers)`), and the custom patterns counted per direction.
 */
function filtersSummary(
  builtins: readonly FilterSummaryItem[] | null,
  custom: readonly FilterSummaryItem[] | null,
): string[] {
  const counts = new Map<string, number>();
  for (const f of custom ?? []) {
    const reads = READS[f.apply_to ?? ""] ?? "";
    counts.set(reads, (counts.get(reads) ?? 0) + 1);
  }
  return [
    ...(builtins ?? []).map((f) => `${f.slug}:${f.action}${READS[f.apply_to ?? ""] ?? ""}`),
    ...[...counts].map(([reads, n]) => `${n} custom${reads}`),
  ];
}

async function workspaces(sub: string | undefined, args: string[], out: Out): Promise<void> {
  if (sub !== "list") throw new UsageError([{ path: "", message: "workspaces: expected list" }], USAGE);
  const { json } = parse(args, {});
  const items = await withServices(({ deps, principal }) =>
    all((page) => listOrganizationWorkspaces(deps, principal, page)),
  );
  const data = items.map(presentWorkspace);
  if (json) return printJson(out, { data, total_count: data.length });
  out.stdout(
    table(data, [
      { key: "id", title: "ID" },
      { key: "name", title: "NAME" },
      { key: "is_default", title: "DEFAULT" },
      { key: "created_at", title: "CREATED" },
    ]),
  );
}

async function organizations(sub: string | undefined, args: string[], out: Out): Promise<void> {
  if (sub !== "create")
    throw new UsageError([{ path: "", message: "organizations: expected create" }], USAGE);
  const { values, json } = parse(args, { name: { type: "string" } });
  const name = text(values, "name");
  if (!name) throw new UsageError([{ path: "--name", message: "organizations create needs --name <name>" }]);
  const made = await withServices(({ deps }) => createOrganization(deps, name, CLI_KEY));
  const data = {
    id: made.organization.id,
    name: made.organization.name,
    default_workspace_id: made.workspace.id,
    key_hash: made.key.record.hash,
  };
  printCreated(out, json, data, made.key.secret);
}

async function serve(args: string[]): Promise<void> {
  const { json } = parse(args, {});
  const env = json ? { ...process.env, LOG_FORMAT: "json" } : process.env;
  // The server (the HTTP framework, the detectors' word lists) is loaded only by the commands that
  // run it: every other command answers without its second or two of module loading.
  const { startServer } = await import("../main.js");
  const server = await startServer(loadConfig(env));
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

async function upstream(args: string[], out: Out): Promise<void> {
  const { values, json } = parse(args, {
    port: { type: "string" },
    host: { type: "string" },
    "latency-ms": { type: "string" },
  });
  const port = Number(text(values, "port") ?? 8091);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new UsageError([{ path: "--port", message: "must be a port number" }]);
  }
  const latencyMs = Number(text(values, "latency-ms") ?? 0);
  if (!Number.isInteger(latencyMs) || latencyMs < 0) {
    throw new UsageError([{ path: "--latency-ms", message: "must be a whole number" }]);
  }
  const { startLocalUpstream } = await import("../local-upstream/server.js");
  const local = await startLocalUpstream({ port, host: text(values, "host") ?? "127.0.0.1", latencyMs });
  if (json) printJson(out, { data: { url: local.url } });
  else out.stdout(`guardrails: local upstream (echo model) at ${local.url}\n`);
  const stop = () => local.close().then(() => process.exit(0));
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}

async function run(argv: string[], out: Out): Promise<void> {
  const [command = "serve", sub, ...rest] = argv;
  // Commands without a subcommand take the second word as their first argument.
  const whole = sub === undefined ? rest : [sub, ...rest];
  if (command === "serve" || command.startsWith("--")) return serve(command === "serve" ? whole : argv);
  if (command === "upstream") return upstream(whole, out);
  if (command === "keys") return keys(sub, rest, out);
  if (command === "guardrails") return guardrails(sub, rest, out);
  if (command === "workspaces") return workspaces(sub, rest, out);
  if (command === "organizations") return organizations(sub, rest, out);
  if (command === "help" || command === "-h") {
    out.stdout(`${USAGE}\n`);
    return;
  }
  throw new UsageError([{ path: "", message: `unknown command: ${command}` }], USAGE);
}

/**
 * The exit code of a failure (README.md#command-line): 2 for a misuse, which is what a 400 is
 * wherever it was found (the arguments, or the services' checks of the values they carry), and 1
 * for any other failure (an unknown hash, a conflict, a database that cannot be opened).
 */
function exitCode(err: unknown): number {
  if (err instanceof UsageError) return 2;
  return err instanceof AppError && err.status === 400 ? 2 : 1;
}

const argv = process.argv.slice(2);
if (argv.includes("--help") || argv.includes("-h")) {
  processOut.stdout(`${USAGE}\n`);
} else {
  run(argv, processOut).catch((err: unknown) => {
    // Known failures (bad configuration, bad arguments) are one line (or one JSON body), no stack.
    if (argv.includes("--json")) processOut.stderr(`${JSON.stringify(errorBody(err))}\n`);
    else {
      processOut.stderr(`guardrails: ${describeError(err)}\n`);
      if (err instanceof UsageError && err.usage) processOut.stderr(`\n${err.usage}\n`);
    }
    // Exit now: a start that failed half-way may hold handles (a worker, a timer) that would keep
    // the process alive. Writes to pipes and terminals are synchronous, so nothing is lost.
    process.exit(exitCode(err));
  });
}
