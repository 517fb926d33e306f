import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { Ajv, type ErrorObject } from "ajv";
import addFormats from "ajv-formats";
import { type Issue, placeIssue, placeIssues } from "../../console/src/guardrail-issues.js";
import { DEFAULT_CONFIG_FILE, loadCatalogFile } from "../../src/config.js";
import { Catalog } from "../../src/domain/catalog.js";
import { AppError } from "../../src/domain/errors.js";
import { applyGuardrailBody, defaultPolicy, type GuardrailBody } from "../../src/domain/guardrail.js";
import { issuesFromValidation } from "../../src/http/errors.js";
import { guardrailSchemas } from "../../src/http/schemas/guardrail.js";

/**
 * The guardrail form's one table from the API's issue paths to its fields
 * (docs/behaviour.md#console-field-errors), checked against every path the guardrail schema and the
 * service's own checks can produce, and against the words the real validator and service use.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const FORM_SOURCE = readFileSync(join(ROOT, "console", "src", "guardrails.tsx"), "utf8");
const catalog = new Catalog(loadCatalogFile(DEFAULT_CONFIG_FILE));
const families = catalog.familyIds();
const schemas = guardrailSchemas(families);

/** A property name no schema has: where the validator reports an unknown property. */
const UNKNOWN = "not_a_setting";

interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  additionalProperties?: boolean;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
}

/** Every JSON pointer a value in this schema can be reported at (lists by their first index). */
function pathsOf(schema: JsonSchema, at: string, out: Set<string>): Set<string> {
  out.add(at);
  for (const branch of schema.anyOf ?? []) pathsOf(branch, at, out);
  if (schema.items) pathsOf(schema.items, `${at}/0`, out);
  for (const [name, property] of Object.entries(schema.properties ?? {}))
    pathsOf(property, `${at}/${name}`, out);
  if (schema.properties && schema.additionalProperties === false) out.add(`${at}/${UNKNOWN}`);
  return out;
}

const schemaPaths = [
  ...pathsOf(schemas.CreateGuardrailBody as unknown as JsonSchema, "", new Set()),
  ...pathsOf(schemas.UpdateGuardrailBody as unknown as JsonSchema, "", new Set()),
].filter((p, i, all) => all.indexOf(p) === i);

/**
 * Paths that no control of the form holds, shown at the top: the body itself, a property the form
 * never sends, and the workspace, which the form takes from the page it was opened from.
 */
const AT_THE_TOP = new Set(["", `/${UNKNOWN}`, "/workspace_id"]);

/** A control id the form renders: literally, or from a template with the index as `${i}`. */
function rendersField(id: string): boolean {
  const template = id.replace(/-\d+$/, ["-$", "{i}"].join(""));
  return (
    FORM_SOURCE.includes(`id="${id}"`) ||
    FORM_SOURCE.includes(`id={\`${template}\`}`) ||
    // Ids given through a table of the form (the model and provider lists, the permissions).
    new RegExp(`(key|\\[)\\s*:?\\s*"${id}"`).test(FORM_SOURCE)
  );
}

/** The validator's and the service's wording, which the form must never show as is. */
const RAW = /must NOT|must be [a-z]+$|is not a known property|\/\d+\/|invalid regex pattern|'[^']*'/i;

function serviceIssues(body: GuardrailBody, options: { isCreate: boolean; fixedName?: string }): Issue[] {
  try {
    applyGuardrailBody(defaultPolicy("g", families), body, catalog, options);
  } catch (e) {
    assert.ok(e instanceof AppError, String(e));
    return (e.metadata?.issues ?? []) as Issue[];
  }
  assert.fail(`no issue for ${JSON.stringify(body)}`);
}

describe("the guardrail form places every API issue beside a field, in plain words (docs/behaviour.md#console-field-errors)", () => {
  it("the schema's paths are many: the walk really reads the TypeBox schema", () => {
    for (const p of ["/name", "/limit_usd", "/content_filters/0/pattern", "/alert_thresholds/0"])
      assert.ok(schemaPaths.includes(p), p);
    for (const f of families) assert.ok(schemaPaths.includes(`/enforce_zdr_${f}`), f);
    assert.ok(schemaPaths.length > 40, `${schemaPaths.length} paths`);
  });

  it("every path the guardrail schema can report lands on a field the form renders (docs/behaviour.md#console-field-errors)", () => {
    for (const path of schemaPaths) {
      const placed = placeIssue({ path, message: "must be string" });
      if (AT_THE_TOP.has(path) || (path.endsWith(`/${UNKNOWN}`) && path.split("/").length === 2)) {
        assert.equal(placed.field, undefined, path);
        continue;
      }
      assert.ok(placed.field, `${path} has no field`);
      assert.ok(
        rendersField(placed.field),
        `${path} maps to ${placed.field}, which the form does not render`,
      );
      assert.equal(placed.group, path.split("/")[1], path);
    }
  });

  it("an issue lands on the control that holds its value, not only on its section (docs/behaviour.md#console-field-errors)", () => {
    const expected: Record<string, string> = {
      "/content_filters/3/pattern": "pattern-3",
      "/content_filters/0/action": "pattern-action-0",
      "/content_filters/1/label": "pattern-label-1",
      "/limit_usd": "limit_usd",
      "/reset_interval": "reset_interval",
      "/alert_thresholds/2": "alert_thresholds",
      "/allowed_models/7": "allowed_models",
      "/ignored_providers/0": "ignored_providers",
      "/enable_paid_model_training": "enable_paid_model_training",
      "/include_byok_in_budgets": "include_byok_in_budgets",
    };
    for (const [path, field] of Object.entries(expected))
      assert.equal(placeIssue({ path, message: "must be string" }).field, field, path);
  });

  it("every issue the service's own checks raise lands on a field, in a sentence for people (docs/behaviour.md#console-field-errors)", () => {
    const cases: [GuardrailBody, { isCreate: boolean; fixedName?: string }][] = [
      [{ name: "renamed" }, { isCreate: false, fixedName: "fixed" }],
      [{ name: "g", allowed_models: ["nobody/nothing"], ignored_models: ["x/y"] }, { isCreate: true }],
      [{ name: "g", allowed_providers: ["nowhere"], ignored_providers: ["nope"] }, { isCreate: true }],
      [
        {
          name: "g",
          content_filter_builtins: [
            { slug: "email", action: "block", scan_scope: "user_only" },
            { slug: "email", action: "flag" },
          ],
        },
        { isCreate: true },
      ],
      [
        {
          name: "g",
          content_filters: [
            { pattern: "(?<=a)b", action: "block" },
            { pattern: "a{400}", action: "block" },
            { pattern: "b{200}", action: "block" },
            { pattern: "c{200}", action: "block" },
          ],
        },
        { isCreate: true },
      ],
      [{ name: "g", limit_usd: 2_000_000_000, reset_interval: "daily" }, { isCreate: true }],
      [{ name: "g", limit_usd: 0.0000001, reset_interval: "daily" }, { isCreate: true }],
      [{ name: "g", limit_usd: 5 }, { isCreate: true }],
      [{ name: "g", reset_interval: "weekly" }, { isCreate: true }],
      [{ name: "g", reset_interval: "weekly" }, { isCreate: false }],
      [{ name: "g", limit_usd: null, reset_interval: "weekly" }, { isCreate: true }],
      // A slug once per direction, and the scan scope only on a filter that reads requests
      // (docs/behaviour.md#apply-to).
      [
        {
          name: "g",
          content_filter_builtins: [
            { slug: "email", action: "block", apply_to: "response" },
            { slug: "email", action: "flag", apply_to: "both" },
            { slug: "phone", action: "block" },
            { slug: "phone", action: "flag", apply_to: "request" },
            {
              slug: "regex-prompt-injection",
              action: "block",
              apply_to: "response",
              scan_scope: "user_only",
            },
          ],
        },
        { isCreate: true },
      ],
    ];
    const seen = new Set<string>();
    for (const [body, options] of cases) {
      for (const issue of serviceIssues(body, options)) {
        seen.add(issue.message.replace(/'.*'|\d+|: .*/g, ""));
        const placed = placeIssue(issue);
        assert.ok(placed.field, `${issue.path} (${issue.message}) has no field`);
        assert.ok(rendersField(placed.field), `${issue.path} maps to ${placed.field}`);
        assert.doesNotMatch(placed.text, RAW, `${issue.path}: ${issue.message} → ${placed.text}`);
        assert.match(placed.text, /^[A-Z“].*[.]$/s, placed.text);
      }
    }
    // Each place the service reports an issue is reached above: a new one must be added here too.
    const sites =
      ["guardrail.ts", "content-filters.ts"]
        .map((f) => readFileSync(join(ROOT, "src", "domain", f), "utf8"))
        .join("\n")
        .split("issues.push(").length - 1;
    assert.equal(sites, 10, "the service reports issues from a new place: add a case for it here");
    assert.ok(seen.size >= 12, [...seen].join(" | "));
  });

  it("a filter's apply_to issues read as sentences: the direction a slug is taken twice for, the scan scope of an answer filter, an unknown value beside its control (docs/behaviour.md#apply-to)", () => {
    const issues = serviceIssues(
      {
        name: "g",
        content_filter_builtins: [
          { slug: "email", action: "block", apply_to: "response" },
          { slug: "email", action: "flag", apply_to: "both" },
          { slug: "phone", action: "block" },
          { slug: "phone", action: "flag", apply_to: "request" },
          { slug: "ssn", action: "block" },
          { slug: "ssn", action: "flag" },
          { slug: "regex-prompt-injection", action: "block", apply_to: "response", scan_scope: "user_only" },
        ],
      },
      { isCreate: true },
    );
    assert.deepEqual(
      issues.map((i) => [i.path, placeIssue(i).field, placeIssue(i).text]),
      [
        [
          "/content_filter_builtins/1/slug",
          "content_filter_builtins",
          "The email filter is chosen more than once for answers.",
        ],
        [
          "/content_filter_builtins/3/slug",
          "content_filter_builtins",
          "The phone filter is chosen more than once for requests.",
        ],
        [
          "/content_filter_builtins/5/slug",
          "content_filter_builtins",
          "The ssn filter is chosen more than once.",
        ],
        [
          "/content_filter_builtins/6/scan_scope",
          "content_filter_builtins",
          "The choice of messages scanned applies only to a filter on requests.",
        ],
      ],
    );
    const enumMessage = "must be one of: request, response, both";
    assert.deepEqual(placeIssue({ path: "/content_filters/2/apply_to", message: enumMessage }), {
      field: "pattern-apply-to-2",
      group: "content_filters",
      text: "Pattern 3 reads requests, answers, or both: choose one of them.",
    });
    assert.deepEqual(placeIssue({ path: "/content_filter_builtins/0/apply_to", message: enumMessage }), {
      field: "content_filter_builtins",
      group: "content_filter_builtins",
      text: "Builtin filter 1 reads requests, answers, or both: choose one of them.",
    });
    assert.ok(rendersField("pattern-apply-to-2"));
  });

  it("the brief's own examples read as sentences: a name, an RE2 pattern, a budget without its interval", () => {
    const placed = placeIssues([
      { path: "/name", message: "must NOT have fewer than 1 characters" },
      { path: "/content_filters/0/pattern", message: "invalid regex pattern: invalid perl operator: (?<=" },
      { path: "/reset_interval", message: "is required when limit_usd is set" },
      { path: "/not_a_setting", message: "is not a known property" },
    ]);
    assert.deepEqual(
      placed.fields.name?.map((p) => p.text),
      ["Give the guardrail a name."],
    );
    assert.deepEqual(
      placed.fields["pattern-0"]?.map((p) => p.text),
      [
        "This pattern is not valid RE2: invalid perl operator “(?<=”. RE2 has no lookahead, lookbehind or backreferences.",
      ],
    );
    assert.deepEqual(
      placed.fields.reset_interval?.map((p) => p.text),
      ["Choose how often the budget resets, or clear the limit."],
    );
    assert.deepEqual(
      placed.other.map((p) => p.text),
      ["The service does not know the setting “not_a_setting”."],
    );
  });

  it("what the real validator says about a bad body lands beside each field, without its wording (docs/behaviour.md#console-field-errors)", () => {
    const ajv = new Ajv({ allErrors: true, strict: false, coerceTypes: false, useDefaults: false });
    addFormats.default(ajv, ["uuid", "date-time"]);
    const validate = ajv.compile(schemas.CreateGuardrailBody);
    const bodies: Record<string, unknown>[] = [
      { name: "" },
      { name: "x".repeat(201), description: "d".repeat(1001) },
      { name: "g", limit_usd: "12,50", reset_interval: "hourly" },
      { name: "g", limit_usd: -1, alert_thresholds: [0, 101, 2.5, "x"] },
      { name: "g", alert_thresholds: Array.from({ length: 20 }, (_, i) => i + 1) },
      { name: "g", content_filters: [{ pattern: "", action: "erase", label: "l".repeat(101) }] },
      { name: "g", content_filters: [] },
      { name: "g", allowed_data_regions: ["mars"], allowed_models: [""], allowed_providers: [] },
      { name: "g", content_filter_builtins: [{ slug: "dna", action: "flag", scan_scope: "some" }] },
      {
        name: "g",
        content_filter_builtins: [{ slug: "email", action: "flag", apply_to: "answers" }],
        content_filters: [{ pattern: "x", action: "block", apply_to: 1 }],
      },
      { name: "g", enable_free_model_training: "yes", [`enforce_zdr_${families[0]}`]: 1 },
      { name: "g", workspace_id: "not-a-uuid" },
    ];
    let placedBesideFields = 0;
    for (const body of bodies) {
      assert.equal(validate(body), false, JSON.stringify(body));
      const issues = issuesFromValidation(validate.errors as ErrorObject[], "body", false);
      assert.ok(issues.length > 0);
      for (const issue of issues) {
        const placed = placeIssue(issue);
        assert.doesNotMatch(placed.text, RAW, `${issue.path}: ${issue.message} → ${placed.text}`);
        assert.match(placed.text, /^[A-Z“].*[.]$/s, placed.text);
        if (issue.path === "/workspace_id") assert.equal(placed.field, undefined);
        else {
          assert.ok(placed.field && rendersField(placed.field), `${issue.path} → ${placed.field}`);
          placedBesideFields++;
        }
      }
    }
    assert.ok(placedBesideFields >= 15, `${placedBesideFields}`);
  });
});
