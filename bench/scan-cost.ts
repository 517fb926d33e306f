/**
 * Benchmark behind the pattern limits (docs/api.md#pattern-limits) and the worker threshold
 * (docs/gateway.md#large-scans): how long RE2 takes over 1 MiB of adversarial text for patterns at
 * the accepted cost bound, whether pattern sets at their bound compile and keep up, and how long the
 * event loop scans a request just under the worker threshold. Prints; asserts nothing. Takes about
 * a minute.
 */
import RE2 from "re2";
import type { ChatText } from "../src/domain/chat-texts.js";
import { BUILTIN_SLUGS, MAX_GUARDRAIL_PATTERN_COST } from "../src/domain/content-filters.js";
import { compileFilters, SET_MAX_COST, scanTexts } from "../src/domain/content-scan.js";
import { DETECTORS } from "../src/domain/detectors/index.js";
import { patternCost } from "../src/domain/pattern-cost.js";
import { DEFAULT_SCAN_SETTINGS } from "../src/gateway/scan-request.js";

const MiB = 1 << 20;
let seed = 42;
const random = () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed >> 8;
};
/** Random text over an alphabet: the text that makes a counted class's DFA states explode. */
const randomText = (alphabet: string, n: number) =>
  Array.from({ length: n }, () => alphabet[random() % alphabet.length]).join("");

function ms(fn: () => unknown): number {
  const start = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

function scan(patterns: string[], text: string, builtins = false): number {
  const filters = compileFilters(
    {
      content_filter_builtins: builtins
        ? BUILTIN_SLUGS.map((slug) => ({ slug, action: "flag" as const }))
        : [],
      content_filters: patterns.map((pattern) => ({ pattern, action: "flag", label: null })),
    },
    DETECTORS,
  );
  const texts = [{ text, role: "user", json: false }] as unknown as ChatText[];
  return ms(() => scanTexts(filters, texts));
}

const line = (label: string, cost: number | string, took: number, per?: number) =>
  console.log(
    `${label.padEnd(58)} ${String(cost).padStart(6)} ${took.toFixed(0).padStart(8)} ms${per === undefined ? "" : `  ${per.toFixed(1).padStart(5)} ns/position/byte`}`,
  );

const ab = randomText("ab", MiB);
/** For a literal of one letter: runs just short of it, so every prefix of it stays alive. */
const oneLetter = `${"a".repeat(MAX_GUARDRAIL_PATTERN_COST - 1)}b`
  .repeat(Math.ceil(MiB / MAX_GUARDRAIL_PATTERN_COST))
  .slice(0, MiB);

console.log(
  `\n1. One pattern at the guardrail bound (${MAX_GUARDRAIL_PATTERN_COST}), 1 MiB of adversarial text`,
);
console.log(`${"pattern".padEnd(58)} ${"cost".padStart(6)} ${"time".padStart(11)}`);
const n = MAX_GUARDRAIL_PATTERN_COST - 2;
for (const [pattern, text] of [
  [`a[ab]{${n}}c`, ab],
  [`a.{${n}}c`, ab],
  [`a\\S{${n}}c`, ab],
  [`a\\w{${n}}c`, ab],
  [`a\\pL{${Math.floor(n / 10)}}c`, ab],
  ["a".repeat(MAX_GUARDRAIL_PATTERN_COST), oneLetter],
] as const) {
  const cost = patternCost(pattern);
  const took = scan([pattern], text);
  line(
    pattern.length > 40 ? `${pattern.slice(0, 12)}… (${pattern.length} chars)` : pattern,
    cost,
    took,
    (took * 1e6) / (cost * MiB),
  );
}

console.log(
  `\n2. Patterns tested together in an RE2 set: up to ${SET_MAX_COST} per set, 1 MiB of random a/b`,
);
for (const total of [128, SET_MAX_COST, 400, 500]) {
  const each = Math.floor(total / 2) - 2;
  const patterns = [`a[ab]{${each}}c`, `b[ab]{${each}}d`];
  const cost = patterns.reduce((s, p) => s + patternCost(p), 0);
  const set = new RE2.Set(patterns, "u");
  const bytes = Buffer.from(ab);
  line(
    `set of two: ${patterns.join(" ")}`,
    cost,
    ms(() => set.match(bytes)),
  );
}

console.log(`\n3. The heaviest sets accepted (${SET_MAX_COST} cost: Unicode classes count 10) compile`);
for (const cls of ["\\pL", "(?i)[\\pL\\pN\\pP\\pS\\pM]", "[^\\pL]", "[\\p{Lu}\\p{Ll}]"]) {
  // Each pattern costs 11 (the class and a digit): as many as fit in one set.
  const patterns = Array.from({ length: Math.floor(SET_MAX_COST / 11) }, (_, i) => `${cls}${i % 10}`);
  let result = "compiles";
  const took = ms(() => {
    try {
      new RE2.Set(patterns, "u");
    } catch (err) {
      result = (err as Error).message;
    }
  });
  line(
    `${patterns.length} × ${cls}: ${result}`,
    patterns.reduce((s, p) => s + patternCost(p), 0),
    took,
  );
}

console.log("\n4. The worst a request's scan holds the event loop, just under the worker threshold");
const chars = DEFAULT_SCAN_SETTINGS.workerChars;
const worst = [0, 1, 2].map((g) => `${"abc"[g]}[ab]{${n}}c`);
const under = Math.floor((chars * 16) / (16 + 3 * MAX_GUARDRAIL_PATTERN_COST)) - 1;
line(
  `three guardrails at the bound, ${under} characters`,
  3 * patternCost(worst[0] as string),
  scan(worst, ab.slice(0, under), true),
);
line(
  `the nine builtins, ${chars - 1} characters of prose-like text`,
  0,
  scan([], randomText("abc de.@1", chars - 1), true),
);
