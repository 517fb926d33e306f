import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before } from "node:test";
import { DEFAULT_CONFIG_FILE, loadCatalogFile } from "../../src/config.js";
import type { Api, CatalogData } from "../../src/domain/catalog.js";
import { type GatewayBench, type Received, startGatewayBench } from "../http/gateway-support.js";

/**
 * What the agent tests share (docs/gateway.md#claude-code, docs/gateway.md#codex-cli): finding the
 * agent's launcher or the reason to skip, a catalog of providers that each speak one API, the
 * service started around a suite, and the agent run as a child process in a throwaway folder.
 */

/** An agent's launcher, or the message its tests are skipped with when the package is not installed. */
export interface AgentLauncher {
  launcher: string | undefined;
  skip: string | false;
}

/**
 * Where an agent's launcher is: the file `variable` names when set, else what `fromPackage` finds in
 * the package resolved from the repository.
 */
export function findAgent(options: {
  /** The npm package, as the skip message tells to install it. */
  pkg: string;
  /** The environment variable that may name the launcher (as .ci/run sets it). */
  variable: string;
  /** The launcher's name, for the skip message. */
  command: string;
  /** The launcher inside the installed package, or undefined; throws when the package does not resolve. */
  fromPackage: (require: NodeJS.Require) => string | undefined;
}): AgentLauncher {
  const launcher = locate(options.variable, options.fromPackage);
  return {
    launcher,
    skip: launcher
      ? false
      : `${options.pkg} is not installed: \`npm install --no-save ${options.pkg}\` (or set ${options.variable} to its ${options.command} launcher) to run this test`,
  };
}

function locate(
  variable: string,
  fromPackage: (require: NodeJS.Require) => string | undefined,
): string | undefined {
  const named = process.env[variable];
  if (named) return existsSync(named) ? realpathSync(named) : undefined;
  try {
    return fromPackage(createRequire(import.meta.url));
  } catch {
    return undefined;
  }
}

/** One model an agent test asks for, served only by one provider that speaks only `api`. */
export interface AgentModel {
  slug: string;
  provider: string;
  api: Api;
}

/**
 * The shipped catalog's ZDR families with only the given models, each behind its own provider.
 * The agents send tens of KB of system prompt and tool definitions with every turn, hence the
 * large context.
 */
export function agentCatalog(served: AgentModel[], maxOutputTokens: number): CatalogData {
  const shipped = loadCatalogFile(DEFAULT_CONFIG_FILE);
  return {
    zdr_families: shipped.zdr_families,
    providers: served.map(({ provider, api }) => ({
      id: provider,
      name: `${api} provider`,
      // Replaced by the bench's local upstream.
      base_url: "http://127.0.0.1:1/v1",
      api_key_env: `${provider.toUpperCase().replace("-", "_")}_API_KEY`,
      byok: false,
      timeout_ms: 60_000,
      apis: [api],
    })),
    models: served.map(({ slug, provider }) => ({
      slug,
      canonical_slug: slug,
      name: `Model ${slug}`,
      author: "acme",
      context_length: 400_000,
      max_output_tokens: maxOutputTokens,
      pricing: { prompt_usd_per_million_tokens: 0.1, completion_usd_per_million_tokens: 0.2 },
      endpoints: [
        {
          provider,
          region: "global" as const,
          zdr: true,
          trains_on_data: false,
          publishes_prompts: false,
          free: false,
          byok: false,
        },
      ],
    })),
  };
}

/** A gateway bench started before the suite's tests and closed after them (call inside `describe`). */
export function suiteBench(options: Parameters<typeof startGatewayBench>[0] = {}): {
  readonly bench: GatewayBench;
} {
  let bench: GatewayBench | undefined;
  before(async () => {
    bench = await startGatewayBench(options);
  });
  after(async () => {
    await bench?.close();
  });
  return {
    get bench() {
      assert.ok(bench, "the bench is started before the tests");
      return bench;
    },
  };
}

/** The one request that reached the provider since `before` (the count of requests then). */
export function onlyRequestSince(bench: GatewayBench, before: number, report: string): Received {
  const reached = bench.received.slice(before);
  assert.equal(reached.length, 1, report);
  const sent = reached[0];
  assert.ok(sent);
  return sent;
}

/** Nothing on the agent's PATH but node and the system's own folders. */
export const AGENT_PATH = `${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`;

/** Runs `use` with a fresh folder under the system's temporary one, removed after, whatever happens. */
export async function inTempFolder<T>(prefix: string, use: (root: string) => Promise<T>): Promise<T> {
  const root = mkdtempSync(join(tmpdir(), prefix));
  try {
    return await use(root);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

export interface ChildRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A guard against an agent that never ends; not a measurement. */
const AGENT_KILL_AFTER_MS = 120_000;

/** Runs the command to its end (killed after a long guard), its output gathered. */
export async function runChild(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<ChildRun> {
  const child = spawn(command, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (c: string) => {
    stdout += c;
  });
  child.stderr.setEncoding("utf8").on("data", (c: string) => {
    stderr += c;
  });
  const guard = setTimeout(() => child.kill("SIGKILL"), AGENT_KILL_AFTER_MS);
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (c) => resolve(c));
  }).finally(() => clearTimeout(guard));
  return { code, stdout, stderr };
}

/** A run's exit and output, for an assertion's message. */
export const reportOf = (run: ChildRun): string =>
  `exit ${run.code}\nstdout:\n${run.stdout}\nstderr:\n${run.stderr}`;
