import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, posix } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

/**
 * Code and test names cite the rules they keep by anchors of the repository's own documents
 * (CONTRIBUTING.md#citing-rules). A renamed heading or a mistyped anchor would leave a citation that
 * leads nowhere, so every cited anchor is checked here, and citations of documents outside the
 * repository are refused.
 */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** The anchor GitHub gives a heading: lower case, punctuation dropped, each space a hyphen. */
export function headingSlug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** Every anchor a Markdown file offers: explicit ids and heading slugs (repeats numbered as GitHub does). */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    if (fenced) continue;
    for (const m of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1] as string);
    const heading = line.match(/^#{1,6}\s+(.*)$/);
    if (heading) {
      const slug = headingSlug(heading[1] as string);
      const n = seen.get(slug) ?? 0;
      anchors.add(n === 0 ? slug : `${slug}-${n}`);
      seen.set(slug, n + 1);
    }
  }
  return anchors;
}

interface Citation {
  from: string;
  line: number;
  doc: string;
  anchor: string;
}

/** Citations as code and tests write them: a document's path from the root, `#`, the anchor. */
export function citationsIn(text: string, from: string): Citation[] {
  const out: Citation[] = [];
  text.split("\n").forEach((line, i) => {
    for (const m of line.matchAll(/\b((?:docs\/[\w-]+|bench\/README|CONTRIBUTING|README)\.md)#([\w-]+)/g)) {
      out.push({ from, line: i + 1, doc: m[1] as string, anchor: m[2] as string });
    }
  });
  return out;
}

/** Relative links with an anchor in Markdown: `[text](gateway.md#budgets)`, resolved from the file. */
function markdownLinksIn(text: string, from: string): Citation[] {
  const out: Citation[] = [];
  text.split("\n").forEach((line, i) => {
    for (const m of line.matchAll(/\]\(([^)\s#]*\.md)?#([^)\s]+)\)/g)) {
      const target = m[1] ? posix.normalize(posix.join(posix.dirname(from), m[1])) : from;
      out.push({ from, line: i + 1, doc: target, anchor: m[2] as string });
    }
  });
  return out;
}

function broken(citations: Citation[]): string[] {
  const cache = new Map<string, Set<string> | undefined>();
  const problems: string[] = [];
  for (const c of citations) {
    if (!cache.has(c.doc)) {
      const path = join(ROOT, c.doc);
      cache.set(c.doc, existsSync(path) ? anchorsOf(readFileSync(path, "utf8")) : undefined);
    }
    const anchors = cache.get(c.doc);
    if (!anchors) problems.push(`${c.from}:${c.line}: ${c.doc} does not exist`);
    else if (!anchors.has(c.anchor))
      problems.push(`${c.from}:${c.line}: ${c.doc} has no anchor #${c.anchor}`);
  }
  return problems;
}

function sourceFiles(dir: string, acc: string[] = []): string[] {
  for (const name of readdirSync(join(ROOT, dir))) {
    const path = posix.join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) sourceFiles(path, acc);
    else if (/\.(ts|tsx|mjs|js)$/.test(name)) acc.push(path);
  }
  return acc;
}

const CODE = [...sourceFiles("src"), ...sourceFiles("test")];
const DOCS = [
  ...readdirSync(join(ROOT, "docs")).map((f) => `docs/${f}`),
  "README.md",
  "CONTRIBUTING.md",
  "bench/README.md",
].filter((f) => f.endsWith(".md") && existsSync(join(ROOT, f)));

// Written in pieces so that this file does not match the search it runs.
const OUTSIDE = [
  new RegExp(`decisions ${"\u00a7"}`),
  new RegExp(`\\b[Ii]ssue${" "}[0-9]`),
  new RegExp(`conventions,? habit${" "}[0-9]`),
];

describe("citations lead to the repository's own documents (CONTRIBUTING.md#citing-rules)", () => {
  it("headings get GitHub's anchors: punctuation dropped, spaces to hyphens, repeats numbered", () => {
    assert.equal(headingSlug("Audit log: `GET /api/v1/audit-log`"), "audit-log-get-apiv1audit-log");
    assert.equal(
      headingSlug("`bench/usage.ts` — the usage report on a million requests"),
      "benchusagets--the-usage-report-on-a-million-requests",
    );
    const anchors = anchorsOf(
      '# A\n## Budgets\n```\n# not a heading\n```\n### Budgets\n<a id="x-y"></a>text',
    );
    assert.deepEqual([...anchors].sort(), ["a", "budgets", "budgets-1", "x-y"]);
  });

  it("a citation of a missing anchor or a missing file is reported", () => {
    // Joined at run time, so that the search over this file does not find them.
    const text = [
      "// see docs/behaviour.md",
      "no-such-rule and docs/nowhere.md",
      "x and docs/behaviour.md",
      "budgets",
    ];
    const cited = citationsIn(text.join("#"), "src/example.ts");
    assert.deepEqual(broken(cited), [
      "src/example.ts:1: docs/behaviour.md has no anchor #no-such-rule",
      "src/example.ts:1: docs/nowhere.md does not exist",
    ]);
  });

  it("every docs/<file>.md#anchor cited in src and test exists in that file", () => {
    const cited = CODE.flatMap((f) => citationsIn(readFileSync(join(ROOT, f), "utf8"), f));
    // So that the check cannot pass by finding nothing.
    assert.ok(cited.length > 100, `only ${cited.length} citations found`);
    assert.deepEqual(broken(cited), []);
  });

  it("every anchored link between the Markdown documents exists", () => {
    const linked = DOCS.flatMap((f) => {
      const text = readFileSync(join(ROOT, f), "utf8");
      return [...markdownLinksIn(text, f), ...citationsIn(text, f)];
    });
    assert.ok(linked.length > 20, `only ${linked.length} links found`);
    assert.deepEqual(broken(linked), []);
  });

  it("no code or test cites a document outside the repository", () => {
    const found: string[] = [];
    for (const f of CODE) {
      readFileSync(join(ROOT, f), "utf8")
        .split("\n")
        .forEach((line, i) => {
          if (OUTSIDE.some((re) => re.test(line))) found.push(`${f}:${i + 1}: ${line.trim().slice(0, 120)}`);
        });
    }
    assert.deepEqual(found, []);
  });
});
