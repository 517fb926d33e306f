// `npm start` compiles only when a source changed since the last build, so a restart starts at once
// instead of spending seconds in the compiler. The newest input is compared with the build's entry
// point and the browser console's page, the first and the last thing a build writes, so a build
// that stopped half-way is done again; the browser console is rebuilt with it.
//
// It is also the package's `prepare` script, which `npm ci` runs (a fresh clone comes out built).
// `npx guardrails` runs it too: npx installs this very folder into its cache to link the package's
// own bin, and runs `prepare` there. The command line must answer at once and never rewrite dist/
// under a running server, so under npx (npm's `exec` command) nothing is built (README.md#quick-start).
import { execFileSync } from "node:child_process";
import { chmodSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));

function newest(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs;
  for (const entry of readdirSync(path)) latest = Math.max(latest, newest(join(path, entry)));
  return latest;
}

function builtAt() {
  try {
    return Math.min(
      statSync(join(root, "dist", "cli", "main.js")).mtimeMs,
      statSync(join(root, "dist", "console", "index.html")).mtimeMs,
    );
  } catch {
    return -1;
  }
}

if (process.env.npm_command === "exec") process.exit(0);

const inputs = [
  "src",
  "console",
  "scripts/build-console.ts",
  "tsconfig.json",
  "tsconfig.build.json",
  "package-lock.json",
].map((p) => join(root, p));
if (Math.max(...inputs.map(newest)) > builtAt()) {
  process.stderr.write("guardrails: compiling (sources changed since the last build)\n");
  execFileSync(
    process.execPath,
    [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.build.json"],
    {
      cwd: root,
      stdio: "inherit",
    },
  );
  // The migrations' SQL scripts, which tsc does not copy (scripts/copy-sql.mjs).
  execFileSync(process.execPath, [join(root, "scripts", "copy-sql.mjs")], { cwd: root, stdio: "inherit" });
  // `npx guardrails` runs the entry itself: tsc writes it without the executable bit.
  chmodSync(join(root, "dist", "cli", "main.js"), 0o755);
  // The browser console, as `npm run build` writes it (scripts/build-console.ts).
  execFileSync(process.execPath, ["--import", "tsx", join(root, "scripts", "build-console.ts")], {
    cwd: root,
    stdio: "inherit",
  });
}
