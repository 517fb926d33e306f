import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { describe, it } from "node:test";
import { ROOT } from "./child.js";

/**
 * The README's first command after `npm start` is `npx guardrails ...`. npx installs this folder
 * into its cache to link the package's own bin and runs the package's `prepare` there, which used
 * to be the whole build: the first call was silent for half a minute and rewrote dist/ under the
 * running server. Now `prepare` builds only what is stale, and nothing at all under npx.
 */

/** Every file of dist/ with its modification time. */
function mtimes(dir: string): Map<string, number> {
  const found = new Map<string, number>();
  const walk = (path: string) => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const full = join(path, entry.name);
      if (entry.isDirectory()) walk(full);
      else found.set(relative(dir, full), statSync(full).mtimeMs);
    }
  };
  walk(dir);
  return found;
}

describe("the first `npx guardrails` of a checkout answers without building (README.md#quick-start)", () => {
  it("`npx guardrails --help` with an empty npx cache prints the usage and leaves every file of dist/ untouched", {
    timeout: 600_000,
  }, (t) => {
    // What `npm ci` leaves: a built checkout (a no-op when it is already built).
    const built = spawnSync(process.execPath, ["scripts/build-if-stale.mjs"], {
      cwd: ROOT,
      encoding: "utf8",
    });
    assert.equal(built.status, 0, built.stderr);
    const dist = join(ROOT, "dist");
    const before = mtimes(dist);
    assert.ok(before.has(join("cli", "main.js")) && before.has(join("console", "index.html")));
    // An npm cache of its own: the first call's install into the npx cache happens here, every run.
    const cache = mkdtempSync(join(tmpdir(), "guardrails-npx-"));
    try {
      const started = process.hrtime.bigint();
      const run = spawnSync("npx", ["guardrails", "--help"], {
        cwd: ROOT,
        encoding: "utf8",
        env: { ...process.env, npm_config_cache: cache, npm_config_update_notifier: "false" },
      });
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      t.diagnostic(`npx guardrails --help, first call: ${seconds.toFixed(1)} s`);
      assert.equal(run.status, 0, run.stderr);
      assert.match(run.stdout, /^Usage: guardrails <command>/);
      assert.doesNotMatch(run.stderr, /compiling/);
      assert.deepEqual(mtimes(dist), before, "dist/ is as the build left it");
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
  });
});
