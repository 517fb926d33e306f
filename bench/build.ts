/**
 * Which build of the service the benches run. By default its compiled build (dist/), what
 * `npm start` and the `guardrails` command run, recompiled first when a source changed since
 * (scripts/build-if-stale.mjs). BENCH_BUILD=src loads the TypeScript sources through tsx instead,
 * as the tests do; tsx's transform adds work no deployment pays (a call naming every function and
 * closure as it is made), so a figure measured that way is not the service's.
 */
import { execFileSync } from "node:child_process";
import { dirname, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

export const BUILD: "dist" | "src" = process.env.BENCH_BUILD === "src" ? "src" : "dist";

/** Compiles the service when its build is older than its sources (a no-op for BENCH_BUILD=src). */
export function ensureBuilt(): void {
  if (BUILD === "dist")
    execFileSync(process.execPath, [resolve(ROOT, "scripts", "build-if-stale.mjs")], { stdio: "inherit" });
}

/**
 * A module of the service from the chosen build, typed as its source: `path` is relative to src/
 * and ends in .js. Every module of one process must come through here, so that no class exists twice.
 */
export function service<T>(path: string): Promise<T> {
  return import(pathToFileURL(resolve(ROOT, BUILD, path)).href) as Promise<T>;
}
