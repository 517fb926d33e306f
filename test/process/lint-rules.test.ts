import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { ROOT } from "./child.js";

/**
 * The layering rules `npm run lint` enforces (README.md#development), each shown failing on a
 * deliberate offence, so a rule that is dropped or mistyped in biome.json, or a cycle check that no
 * longer runs, fails here instead of going quiet.
 */

interface Run {
  code: number;
  output: string;
}

function run(command: string, args: string[], cwd: string): Promise<Run> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
      resolve({ code, output: `${stdout}${stderr}` });
    });
  });
}

/** Writes `files` (path → text) under `dir`. */
function write(dir: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}

const importing = (from: string) => `import { a } from "${from}";\n\nexport const b = a;\n`;

/** The diagnostics biome prints, one per file it names with the rule. */
function flagged(output: string): string[] {
  return [...output.matchAll(/^(\S+\.ts):\d+:\d+ lint\/style\/noRestrictedImports/gm)]
    .map((m) => m[1] as string)
    .sort();
}

describe("the layering rules fail npm run lint on a deliberate offence (README.md#development)", () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "guardrails-lint-"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("biome's noRestrictedImports refuses storage in routes and the gateway and anything outside the domain in it, and lets the allowed imports pass", async () => {
    const tree = join(dir, "biome");
    // The repository's own configuration over a tree of probes: the rule is what biome.json says.
    mkdirSync(tree, { recursive: true });
    copyFileSync(join(ROOT, "biome.json"), join(tree, "biome.json"));
    write(tree, {
      "src/http/routes/reads-storage.ts": importing("../../storage/key-repo.js"),
      "src/http/reads-storage-ports.ts": importing("../storage/ports.js"),
      "src/gateway/reads-storage.ts": importing("../storage/spend-repo.js"),
      "src/domain/reads-services.ts": importing("../services/context.js"),
      "src/domain/reads-the-disk.ts": importing("node:fs"),
      "src/domain/detectors/reads-http.ts": importing("../../http/errors.js"),
      "src/http/routes/reads-services.ts": importing("../../services/keys.js"),
      "src/gateway/reads-domain.ts": importing("../domain/policy.js"),
      "src/domain/reads-domain.ts": importing("./money.js"),
      "src/domain/detectors/reads-domain.ts": importing("../spans.js"),
      "src/services/reads-storage.ts": importing("../storage/key-repo.js"),
    });
    const biome = join(ROOT, "node_modules", ".bin", "biome");
    const result = await run(biome, ["lint", "--vcs-enabled=false", "--max-diagnostics=100", "src"], tree);
    assert.notEqual(result.code, 0, result.output);
    assert.deepEqual(flagged(result.output), [
      "src/domain/detectors/reads-http.ts",
      "src/domain/reads-services.ts",
      "src/domain/reads-the-disk.ts",
      "src/gateway/reads-storage.ts",
      "src/http/reads-storage-ports.ts",
      "src/http/routes/reads-storage.ts",
    ]);
  });

  it("the import cycle check fails on two modules that import each other, naming both, and passes on src", async () => {
    const tree = join(dir, "cycle");
    write(tree, {
      "a.ts": 'import type { B } from "./b.js";\nexport type A = { b?: B };\n',
      "b.ts": 'import type { A } from "./a.js";\nexport type B = { a?: A };\n',
      "c.ts": 'import type { A } from "./a.js";\nexport type C = A;\n',
    });
    const script = join(ROOT, "scripts", "check-import-cycles.mjs");
    const circle = await run(process.execPath, [script, tree], ROOT);
    assert.equal(circle.code, 1, circle.output);
    assert.match(circle.output, /import cycle among 2 files/);
    assert.match(circle.output, /a\.ts/);
    assert.match(circle.output, /b\.ts/);
    assert.doesNotMatch(circle.output, /c\.ts/);
    const src = await run(process.execPath, [script], ROOT);
    assert.equal(src.code, 0, src.output);
    assert.match(src.output, /no import cycle among \d+ files of src/);
  });

  it("npm run lint runs the cycle check after biome", async () => {
    const { default: manifest } = await import("../../package.json", { with: { type: "json" } });
    assert.match(manifest.scripts.lint, /biome check .*&& node scripts\/check-import-cycles\.mjs/);
  });
});
