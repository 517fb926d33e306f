/**
 * Builds the browser console (console/) into dist/console: one minified script and the chunks it
 * loads on demand, one stylesheet and the page, all served by the service itself
 * (src/http/console.ts). `npm run build` runs it; tests call buildConsole() into a temporary folder.
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

export interface BuiltConsole {
  dir: string;
  /** Bytes of each file as shipped (before any compression on the wire). */
  sizes: Record<string, number>;
}

export async function buildConsole(outDir: string = join(ROOT, "dist", "console")): Promise<BuiltConsole> {
  mkdirSync(outDir, { recursive: true });
  // Stale chunks of an earlier build would still be served: start from an empty folder of scripts.
  for (const name of readdirSync(outDir)) if (name.endsWith(".js")) rmSync(join(outDir, name));
  await build({
    entryPoints: { console: join(ROOT, "console", "src", "main.tsx") },
    outdir: outDir,
    // The chart library is loaded only by the page that draws charts (a chunk of its own).
    splitting: true,
    chunkNames: "chunk-[hash]",
    bundle: true,
    minify: true,
    format: "esm",
    target: ["es2020"],
    jsx: "automatic",
    jsxImportSource: "preact",
    legalComments: "none",
    logLevel: "warning",
  });
  copyFileSync(join(ROOT, "console", "index.html"), join(outDir, "index.html"));
  // One stylesheet: the chart library's rules, then ours (which may override them).
  const chartCss = readFileSync(join(ROOT, "node_modules", "uplot", "dist", "uPlot.min.css"), "utf8");
  const ownCss = readFileSync(join(ROOT, "console", "console.css"), "utf8");
  writeFileSync(join(outDir, "console.css"), `${chartCss}\n${ownCss}`);
  const sizes: Record<string, number> = {};
  for (const name of readdirSync(outDir).sort()) sizes[name] = statSync(join(outDir, name)).size;
  return { dir: outDir, sizes };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { dir, sizes } = await buildConsole();
  const listed = Object.entries(sizes).map(([name, bytes]) => `${name} ${bytes} B`);
  console.log(`console built in ${dir}: ${listed.join(", ")}`);
}
