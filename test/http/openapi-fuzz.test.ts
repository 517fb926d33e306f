import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Ajv, type ValidateFunction } from "ajv";
import addFormats from "ajv-formats";
import fc from "fast-check";
import { DEFAULT_CONFIG_FILE, loadCatalogFile } from "../../src/config.js";
import { type ApiResponse, call, TEST_DATABASE_KIND, type TestOrg } from "../helpers/server.js";
import { type GatewayBench, startGatewayBench } from "./gateway-support.js";
import { orgSteps } from "./org-support.js";

/**
 * Schema-driven fuzzing of every operation the running server's OpenAPI document lists: requests
 * generated from the document's own JSON schemas, valid and with one violation each. Checked: no
 * 5xx (other than the gateway's provider answers, none here), every status documented for the
 * operation and every JSON body valid against the documented schema, and every invalid request a
 * 4xx in the error envelope that changes nothing stored (the audit log, which records every change,
 * does not grow). Generic over the document, so a route added later is fuzzed without listing it.
 *
 * FUZZ_RUNS (examples per operation and kind, default 4) and FUZZ_SEED (default 20240611) set the
 * run; `npm run test:fuzz` runs it with many more examples.
 */

const RUNS = Number(process.env.FUZZ_RUNS ?? 4);
const SEED = Number(process.env.FUZZ_SEED ?? 20240611);

// biome-ignore lint/suspicious/noExplicitAny: JSON schemas and the OpenAPI document are arbitrary JSON.
type Json = any;

/** The document's schema at a local $ref, followed until it is not one. */
function deref(doc: Json, schema: Json): Json {
  let current = schema;
  for (let hops = 0; current && typeof current.$ref === "string" && hops < 20; hops++) {
    current = (current.$ref as string)
      .replace(/^#\//, "")
      .split("/")
      .reduce((node: Json, token: string) => node?.[token.replaceAll("~1", "/").replaceAll("~0", "~")], doc);
  }
  return current ?? {};
}

const SAMPLE_STRINGS = ["a", "x y", "é€🎉", "sk-gr-v1-x", "../..", "%00", "null", "0"];

/**
 * Body properties whose values the service looks up, and the pool of known values to draw them from
 * (`list`: an array of them). Schema-valid strings alone are unknown models, providers, workspaces
 * and members, which the service refuses before any write, so the write path went unfuzzed.
 */
const PROPERTY_POOLS: Record<string, { pool: string; list?: boolean }> = {
  allowed_models: { pool: "model", list: true },
  ignored_models: { pool: "model", list: true },
  allowed_providers: { pool: "provider", list: true },
  ignored_providers: { pool: "provider", list: true },
  workspace_id: { pool: "workspace" },
  member_user_id: { pool: "user_id" },
  creator_user_id: { pool: "user_id" },
};

/** A fast-check arbitrary of values valid against a JSON schema (the subset TypeBox writes). */
function arbitraryOf(
  doc: Json,
  raw: Json,
  pools: Record<string, string[]>,
  depth = 0,
  known = false,
): fc.Arbitrary<unknown> {
  const schema = deref(doc, raw);
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  const branches = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(branches))
    return fc.oneof(...branches.map((b: Json) => arbitraryOf(doc, b, pools, depth, known)));
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case "null":
      return fc.constant(null);
    case "boolean":
      return fc.boolean();
    case "integer":
      return fc.integer({
        min: schema.minimum ?? -1000,
        max: Math.min(schema.maximum ?? 1_000_000, 2 ** 31),
      });
    case "number":
      return fc.double({
        min: schema.minimum ?? -1000,
        max: schema.maximum ?? 1_000_000,
        noNaN: true,
        noDefaultInfinity: true,
      });
    case "string": {
      if (schema.format === "uuid") return fc.oneof(fc.uuid(), fc.constantFrom(...(pools.uuid ?? [])));
      if (schema.format === "date-time") return fc.date({ noInvalidDate: true }).map((d) => d.toISOString());
      const min = schema.minLength ?? 0;
      const max = Math.max(min, Math.min(schema.maxLength ?? 40, 40));
      const text = fc.oneof(
        fc.string({ minLength: min, maxLength: max, unit: "grapheme" }),
        fc.constantFrom(...SAMPLE_STRINGS.filter((s) => s.length >= min && s.length <= max)),
      );
      if (!schema.pattern) return text;
      // Strings drawn from the pattern itself: filtering random text by it may never find one.
      let matching: fc.Arbitrary<string>;
      try {
        matching = fc.stringMatching(new RegExp(schema.pattern, "u"), { size: "xsmall" });
      } catch {
        return text;
      }
      return matching.filter(
        (s) => s.length >= min && (schema.maxLength === undefined || s.length <= schema.maxLength),
      );
    }
    case "array": {
      const max = Math.min(schema.maxItems ?? 3, 3, depth > 3 ? 0 : 3);
      return fc.array(arbitraryOf(doc, schema.items ?? {}, pools, depth + 1, known), {
        minLength: Math.min(schema.minItems ?? 0, max),
        maxLength: Math.max(max, schema.minItems ?? 0),
      });
    }
    case "object": {
      const properties: Record<string, Json> = schema.properties ?? {};
      const required: string[] = schema.required ?? [];
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [name, sub] of Object.entries(properties)) {
        const generated = arbitraryOf(doc, sub, pools, depth + 1, known);
        const lookup = PROPERTY_POOLS[name];
        const pool = lookup ? pools[lookup.pool] : undefined;
        if (!pool || pool.length === 0) {
          record[name] = generated;
          continue;
        }
        // A value the service knows (a real model, provider, workspace or member), so that valid
        // requests reach past the lookups to the write: always with `known`, else half the time.
        const fromPool = lookup?.list
          ? fc.subarray(pool, { minLength: 1, maxLength: Math.min(3, pool.length) })
          : fc.constantFrom(...pool);
        record[name] = known ? fromPool : fc.oneof(generated, fromPool);
      }
      return fc.record(record, { requiredKeys: required.filter((r) => r in properties) });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** One violation of a valid body: a wrong type, an unknown property, or a required one missing. */
function violate(doc: Json, raw: Json, value: Json, pick: number): { body: Json; what: string } {
  const schema = deref(doc, raw);
  if (schema.type !== "object" || value === null || typeof value !== "object" || Array.isArray(value))
    return { body: [value], what: "a body of the wrong type" };
  const required: string[] = schema.required ?? [];
  const names = Object.keys(schema.properties ?? {});
  const kind = pick % 3;
  if (kind === 0 && required.length > 0) {
    const { [required[pick % required.length] as string]: _dropped, ...rest } = value;
    return { body: rest, what: `without required ${required[pick % required.length]}` };
  }
  if (kind === 1 && names.length > 0) {
    const name = names[pick % names.length] as string;
    const sub = deref(doc, schema.properties[name]);
    // A value of a type the property never accepts: an object where none is allowed, else a string.
    const accepts = JSON.stringify(sub);
    const wrong = accepts.includes('"object"') || Object.keys(sub).length === 0 ? undefined : { not: "this" };
    if (wrong !== undefined) return { body: { ...value, [name]: wrong }, what: `${name} of the wrong type` };
  }
  if (schema.additionalProperties === false) {
    return { body: { ...value, "x-not-a-property": 1 }, what: "an unknown property" };
  }
  return { body: [value], what: "a body of the wrong type" };
}

interface Operation {
  method: string;
  path: string;
  op: Json;
}

describe(`schema-driven fuzzing of every documented operation on ${TEST_DATABASE_KIND} (docs/api.md#errors)`, () => {
  let bench: GatewayBench;
  let org: TestOrg;
  let inferenceKey: string;
  let doc: Json;
  let ajv: Ajv;
  const pools: Record<string, string[]> = {};
  const failures: string[] = [];
  let requestCount = 0;
  /** How often each operation answered each status, printed with FUZZ_REPORT=1. */
  const seen = new Map<string, number>();
  before(async () => {
    bench = await startGatewayBench();
    org = await bench.server.newOrg();
    const steps = orgSteps(bench.server, org);
    // The key that calls inference routes is not in the pools, so a fuzzed DELETE cannot remove it.
    inferenceKey = (await steps.key()).secret;
    const key = await steps.key();
    const guardrail = await steps.guardrail({ name: "fuzz" });
    const workspace = await steps.workspace("fuzz");
    await steps.member("fuzz-member");
    pools.uuid = [guardrail.id, workspace.id, org.workspaceId];
    pools.id = [guardrail.id, workspace.id];
    pools.hash = [key.hash];
    pools.user_id = ["fuzz-member"];
    pools.workspace = [workspace.id, org.workspaceId];
    const catalog = loadCatalogFile(DEFAULT_CONFIG_FILE);
    pools.model = catalog.models.slice(0, 4).map((m) => m.slug);
    pools.provider = catalog.providers.slice(0, 4).map((p) => p.id);
    pools.author = ["meta-llama", "anthropic"];
    pools.name = ["llama-3.1-8b-instruct", "claude-sonnet-4.5"];
    const res = await call(bench.server, "GET", "/api/v1/openapi.json");
    assert.equal(res.status, 200);
    doc = res.body;
    ajv = new Ajv({ strict: false, allErrors: false, validateFormats: true });
    addFormats.default(ajv);
    ajv.addSchema({ ...doc, $id: "openapi.json" });
  });
  after(async () => {
    if (process.env.FUZZ_REPORT) for (const [k, n] of [...seen].sort()) console.log(`${k}: ${n}`);
    await bench.close();
  });

  const operations = (): Operation[] =>
    Object.entries<Json>(doc.paths).flatMap(([path, item]) =>
      Object.entries<Json>(item)
        .filter(([method]) => ["get", "post", "patch", "put", "delete"].includes(method))
        .map(([method, op]) => ({ method, path, op })),
    );

  const auditCount = async (): Promise<number> =>
    (await call(bench.server, "GET", "/api/v1/audit-log?limit=1", { key: org.key })).body.total_count;

  function validatorAt(pointer: string): ValidateFunction {
    return ajv.getSchema(`openapi.json#${pointer}`) ?? assert.fail(`no schema at ${pointer}`);
  }

  /** The checks every answer gets: no 5xx, a documented status, a body valid against its schema. */
  function checkAnswer(o: Operation, res: ApiResponse, label: string): void {
    seen.set(
      `${o.method} ${o.path} ${res.status}`,
      (seen.get(`${o.method} ${o.path} ${res.status}`) ?? 0) + 1,
    );
    const where = `${o.method.toUpperCase()} ${o.path} ${label} → ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`;
    if (res.status >= 500) failures.push(`5xx: ${where}`);
    const documented = o.op.responses?.[String(res.status)];
    if (!documented) {
      failures.push(`undocumented status: ${where}`);
      return;
    }
    const type = (res.headers.get("content-type") ?? "").split(";")[0] as string;
    if (!documented.content?.[type]) {
      if (res.status !== 204) failures.push(`undocumented content type ${type}: ${where}`);
      return;
    }
    if (type !== "application/json") return;
    const pointer = `/paths/${o.path.replaceAll("~", "~0").replaceAll("/", "~1")}/${o.method}/responses/${res.status}/content/application~1json/schema`;
    const validate = validatorAt(pointer);
    if (!validate(res.body))
      failures.push(`body not as documented (${ajv.errorsText(validate.errors)}): ${where}`);
    // The Messages routes answer in Anthropic's envelope (docs/gateway.md#messages-errors).
    const envelope = o.path.startsWith("/api/v1/messages")
      ? res.body?.type === "error" &&
        typeof res.body?.error?.type === "string" &&
        typeof res.body?.error?.message === "string"
      : res.body?.error?.code === res.status && typeof res.body?.error?.message === "string";
    if (res.status >= 400 && !envelope) failures.push(`not the error envelope: ${where}`);
  }

  /** A concrete path: each path parameter from the seeded resources, or generated. */
  function pathFor(o: Operation, pick: number, generated: Record<string, unknown>): string {
    return o.path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
      const pool = pools[name] ?? [];
      const value = pick % 2 === 0 && pool.length > 0 ? pool[pick % pool.length] : generated[name];
      return encodeURIComponent(String(value ?? "x"));
    });
  }

  function generated(o: Operation, runs: number, seed: number) {
    const params: Json[] = o.op.parameters ?? [];
    const record: Record<string, fc.Arbitrary<unknown>> = {};
    const required: string[] = [];
    for (const p of params) {
      record[`${p.in}:${p.name}`] = arbitraryOf(doc, p.schema ?? {}, pools);
      if (p.required) required.push(`${p.in}:${p.name}`);
    }
    const bodySchema = o.op.requestBody?.content?.["application/json"]?.schema;
    if (bodySchema) {
      // Every other body draws looked-up properties from the known values only.
      record.body = fc.oneof(
        arbitraryOf(doc, bodySchema, pools),
        arbitraryOf(doc, bodySchema, pools, 0, true),
      );
      required.push("body");
    }
    return {
      bodySchema,
      samples: fc.sample(fc.record(record, { requiredKeys: required }), { seed, numRuns: runs }) as Record<
        string,
        unknown
      >[],
    };
  }

  function requestOf(o: Operation, sample: Record<string, unknown>, pick: number) {
    const byIn = (where: string) =>
      Object.fromEntries(
        Object.entries(sample)
          .filter(([k]) => k.startsWith(`${where}:`))
          .map(([k, v]) => [k.slice(where.length + 1), v]),
      );
    const query = new URLSearchParams(
      Object.entries(byIn("query")).map(([k, v]) => [k, String(v)] as [string, string]),
    ).toString();
    const headers = Object.fromEntries(
      Object.entries(byIn("header"))
        .filter(([, v]) => typeof v === "string" && /^[\x21-\x7e]+$/.test(v))
        // The same seed draws the same keys for every operation: a key reused with another body is
        // rightly refused, so each request's key is made its own.
        .map(([k, v]) => [k, k === "idempotency-key" ? `${String(v)}-${++requestCount}` : String(v)]),
    );
    return { path: `${pathFor(o, pick, byIn("path"))}${query ? `?${query}` : ""}`, headers };
  }

  /** The key the operation wants: a management key, or the inference key where it says so. */
  async function keyFor(o: Operation): Promise<string | null> {
    if (Array.isArray(o.op.security) && o.op.security.length === 0) return null;
    const probe = await call(bench.server, o.method.toUpperCase(), o.path.replace(/\{[^}]+\}/g, "x"), {
      key: org.key,
      ...(o.op.requestBody ? { body: {} } : {}),
    });
    return probe.status === 403 && /inference keys/.test(probe.body?.error?.message ?? "")
      ? inferenceKey
      : org.key;
  }

  /** Create operations (POST without a path parameter) that answered 2xx to a valid body. */
  const created = new Set<string>();

  it(`valid requests (${RUNS} per operation, seed ${SEED}) answer only documented statuses with documented bodies, never 5xx`, async () => {
    for (const o of operations()) {
      const key = await keyFor(o);
      const { samples } = generated(o, RUNS, SEED);
      for (const [i, sample] of samples.entries()) {
        const { path, headers } = requestOf(o, sample, i);
        const res = await call(bench.server, o.method.toUpperCase(), path, {
          key,
          headers,
          ...(sample.body !== undefined ? { body: sample.body } : {}),
        });
        checkAnswer(o, res, `valid #${i} ${JSON.stringify(sample).slice(0, 200)}`);
        if (o.method === "post" && !o.path.includes("{") && res.status < 300) created.add(o.path);
      }
    }
    assert.deepEqual(failures.splice(0), []);
    // Valid bodies must also be written, not only refused by the lookups: some creates succeed.
    // (A key's body names a workspace and members, which only the pools of known values supply.)
    assert.ok(
      created.has("/api/v1/keys") && created.size >= 2,
      `creates that succeeded: ${[...created].join(", ") || "none"}`,
    );
  });

  it(`invalid requests (one violation each) are a 4xx in the error envelope and change nothing stored`, async () => {
    for (const o of operations()) {
      const key = await keyFor(o);
      const { samples, bodySchema } = generated(o, RUNS, SEED + 1);
      for (const [i, sample] of samples.entries()) {
        const { path, headers } = requestOf(o, sample, i);
        const invalid: { path: string; body?: unknown; what: string }[] = [];
        if (bodySchema && sample.body !== undefined) {
          const { body, what } = violate(doc, bodySchema, sample.body, i);
          invalid.push({ path, body, what });
        }
        const query: Json[] = (o.op.parameters ?? []).filter((p: Json) => p.in === "query");
        if (query.length > 0) {
          const name = query[i % query.length].name;
          const schema = deref(doc, query[i % query.length].schema ?? {});
          const bad = schema.type === "integer" || schema.type === "number" ? "not-a-number" : undefined;
          if (bad !== undefined)
            invalid.push({ path: `${path.split("?")[0]}?${name}=${bad}`, what: `${name}=${bad}` });
        }
        for (const request of invalid) {
          const before = await auditCount();
          const res = await call(bench.server, o.method.toUpperCase(), request.path, {
            key,
            headers,
            ...(request.body !== undefined ? { body: request.body } : {}),
          });
          const label = `invalid #${i} (${request.what})`;
          checkAnswer(o, res, label);
          if (res.status < 400 || res.status >= 500)
            failures.push(`${o.method.toUpperCase()} ${o.path} ${label}: answered ${res.status}`);
          if ((await auditCount()) !== before)
            failures.push(`${o.method.toUpperCase()} ${o.path} ${label}: something was stored`);
        }
      }
    }
    assert.deepEqual(failures.splice(0), []);
  });
});
