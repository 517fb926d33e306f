// `npm run lint` fails when the modules of src/ import each other in a circle. A circle means no
// file of it can be read (or changed) without the others, and it is how the layers start to run
// back up. Type-only imports count too: a reader follows them just the same.
// Usage: node scripts/check-import-cycles.mjs [dir]   (default: src)
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const root = resolve(fileURLToPath(new URL("..", import.meta.url)));
const dir = resolve(root, process.argv[2] ?? "src");

function sources(path) {
  if (statSync(path).isDirectory()) return readdirSync(path).flatMap((entry) => sources(join(path, entry)));
  return /\.tsx?$/.test(path) && !path.endsWith(".d.ts") ? [path] : [];
}

/** The files of `dir` that `file` imports (relative specifiers only; packages cannot close a circle). */
function importsOf(file, known) {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
  const found = [];
  for (const { fileName } of importedFiles) {
    if (!fileName.startsWith(".")) continue;
    const base = resolve(dirname(file), fileName);
    const candidates = [
      base.replace(/\.js$/, ".ts"),
      base.replace(/\.js$/, ".tsx"),
      base,
      `${base}.ts`,
      join(base, "index.ts"),
    ];
    const target = candidates.find((c) => known.has(c));
    if (target) found.push(target);
  }
  return found;
}

const files = sources(dir);
const known = new Set(files);
const graph = new Map(files.map((f) => [f, importsOf(f, known)]));

// Tarjan's strongly connected components: every component of more than one file (or a file that
// imports itself) is a circle.
let index = 0;
const stack = [];
const onStack = new Set();
const indices = new Map();
const lowlinks = new Map();
const circles = [];
function visit(file) {
  indices.set(file, index);
  lowlinks.set(file, index);
  index++;
  stack.push(file);
  onStack.add(file);
  for (const next of graph.get(file) ?? []) {
    if (!indices.has(next)) {
      visit(next);
      lowlinks.set(file, Math.min(lowlinks.get(file), lowlinks.get(next)));
    } else if (onStack.has(next)) {
      lowlinks.set(file, Math.min(lowlinks.get(file), indices.get(next)));
    }
  }
  if (lowlinks.get(file) !== indices.get(file)) return;
  const component = [];
  let member;
  do {
    member = stack.pop();
    onStack.delete(member);
    component.push(member);
  } while (member !== file);
  if (component.length > 1 || (graph.get(file) ?? []).includes(file)) circles.push(component);
}
for (const file of files) if (!indices.has(file)) visit(file);

if (circles.length > 0) {
  for (const circle of circles) {
    const names = circle.map((f) => relative(root, f)).sort();
    process.stderr.write(`import cycle among ${names.length} files:\n  ${names.join("\n  ")}\n`);
  }
  process.stderr.write(
    `${circles.length} import cycle(s) in ${relative(root, dir)}: move what both sides need into a module both import\n`,
  );
  process.exit(1);
}
process.stdout.write(`no import cycle among ${files.length} files of ${relative(root, dir)}\n`);
