import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Ajv } from "ajv";
import addFormats from "ajv-formats";
import { call, clientFor, startTestServer, type TestServer } from "../helpers/server.js";
import { FAMILIES, GPT5, GUARDRAIL_FIELDS } from "./guardrail-support.js";

/**
 * The OpenAPI document is generated from the same schemas that validate requests (CONTRIBUTING.md#schemas-are-the-types), so it must describe the create and update bodies exactly and the responses the server really sends.
 */

type Schema = Record<string, unknown> & { properties?: Record<string, unknown>; required?: string[] };
// biome-ignore lint/suspicious/noExplicitAny: an OpenAPI document is arbitrary JSON walked by the tests.
type Doc = any;

/** Follows local "$ref"s ("#/components/schemas/...") until a schema without one. */
function resolve(doc: Doc, schema: Schema): Schema {
  let current = schema;
  while (typeof current.$ref === "string") {
    const pointer = (current.$ref as string).replace(/^#\//, "").split("/");
    current = pointer.reduce(
      (node, token) => node[token.replaceAll("~1", "/").replaceAll("~0", "~")],
      doc,
    ) as Schema;
    assert.ok(current, `unresolved $ref ${schema.$ref}`);
  }
  return current;
}

const CREATE_PROPERTIES = [
  "name",
  "description",
  "allowed_data_regions",
  "allowed_models",
  "allowed_providers",
  "ignored_models",
  "ignored_providers",
  "content_filter_builtins",
  "content_filters",
  "enable_free_model_publication",
  "enable_free_model_training",
  "enable_paid_model_training",
  "enforce_zdr",
  ...FAMILIES.map((f) => `enforce_zdr_${f}`),
  "include_byok_in_budgets",
  "limit_usd",
  "reset_interval",
  "alert_thresholds",
];

describe("GET /api/v1/openapi.json describes the guardrail API (docs/behaviour.md#guardrail-create; docs/behaviour.md#guardrail-fields; docs/behaviour.md#partial-update)", () => {
  let server: TestServer;
  let doc: Doc;
  before(async () => {
    server = await startTestServer();
    const res = await call(server, "GET", "/api/v1/openapi.json");
    assert.equal(res.status, 200);
    doc = res.body;
  });
  after(async () => {
    await server.close();
  });

  const bodySchema = (path: string, method: string): Schema =>
    resolve(doc, doc.paths[path][method].requestBody.content["application/json"].schema);
  const responseSchema = (path: string, method: string, status: string): Schema =>
    resolve(doc, doc.paths[path][method].responses[status].content["application/json"].schema);

  /** A validator for one documented schema, with the document's components reachable. */
  function validatorFor(pointer: string) {
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats.default(ajv, ["uuid", "date-time"]);
    ajv.addSchema({ ...doc, $id: "openapi" });
    return ajv.getSchema(`openapi#${pointer}`) ?? assert.fail(`no schema at ${pointer}`);
  }

  it('is OpenAPI "3.1.0" with POST and GET /api/v1/guardrails and GET, PATCH, DELETE /api/v1/guardrails/{id}', () => {
    assert.equal(doc.openapi, "3.1.0");
    assert.ok(doc.paths["/api/v1/guardrails"].post);
    assert.ok(doc.paths["/api/v1/guardrails"].get);
    for (const method of ["get", "patch", "delete"])
      assert.ok(doc.paths["/api/v1/guardrails/{id}"][method], method);
  });

  it("the create body is a closed object: only name required, every property the field rules name, enforce_zdr_<family> for each family (docs/behaviour.md#guardrail-create; docs/behaviour.md#zdr-flags)", () => {
    const schema = bodySchema("/api/v1/guardrails", "post");
    assert.equal(schema.type, "object");
    assert.equal(schema.additionalProperties, false);
    assert.deepEqual(schema.required, ["name"]);
    assert.deepEqual(
      Object.keys(schema.properties ?? {}).sort(),
      [...CREATE_PROPERTIES, "workspace_id"].sort(),
    );
  });

  it("the update body is a closed object with no required property and no workspace_id (docs/behaviour.md#not-updatable)", () => {
    const schema = bodySchema("/api/v1/guardrails/{id}", "patch");
    assert.equal(schema.type, "object");
    assert.equal(schema.additionalProperties, false);
    assert.ok(schema.required === undefined || schema.required.length === 0, JSON.stringify(schema.required));
    assert.deepEqual(Object.keys(schema.properties ?? {}).sort(), [...CREATE_PROPERTIES].sort());
  });

  it("create answers 201 {data: Guardrail} with every Guardrail field required, and documents 400, 401, 403 (docs/behaviour.md#guardrail-create)", () => {
    const responses = doc.paths["/api/v1/guardrails"].post.responses;
    assert.ok(responses["201"], "201");
    assert.equal(responses["200"], undefined, "no 200: the SDK accepts only 201");
    for (const status of ["400", "401", "403", "500"]) assert.ok(responses[status], status);
    const envelope = responseSchema("/api/v1/guardrails", "post", "201");
    assert.deepEqual(envelope.required, ["data"]);
    const guardrail = resolve(doc, (envelope.properties as Record<string, Schema>).data as Schema);
    assert.deepEqual(Object.keys(guardrail.properties ?? {}).sort(), GUARDRAIL_FIELDS);
    assert.deepEqual([...(guardrail.required ?? [])].sort(), GUARDRAIL_FIELDS);
    const error = responseSchema("/api/v1/guardrails", "post", "400");
    assert.deepEqual(error.required, ["error"]);
  });

  it("every filter item, in the create and update bodies and in the Guardrail returned, documents apply_to with its three values and what each means (docs/behaviour.md#apply-to)", () => {
    /** The item schema of a list property that may be null (anyOf on input, a type list on output). */
    const itemsOf = (list: Schema): Schema => {
      const branches = [list, ...((list.anyOf as Schema[] | undefined) ?? [])].map((b) => resolve(doc, b));
      const withItems = branches.find((b) => b.items);
      assert.ok(withItems, JSON.stringify(list));
      return resolve(doc, withItems.items as Schema);
    };
    const guardrail = resolve(
      doc,
      (responseSchema("/api/v1/guardrails", "post", "201").properties as Record<string, Schema>)
        .data as Schema,
    );
    const owners: [string, Schema][] = [
      ["create body", bodySchema("/api/v1/guardrails", "post")],
      ["update body", bodySchema("/api/v1/guardrails/{id}", "patch")],
      ["Guardrail", guardrail],
    ];
    for (const [where, owner] of owners)
      for (const list of ["content_filter_builtins", "content_filters"]) {
        const item = itemsOf((owner.properties as Record<string, Schema>)[list] as Schema);
        const applyTo = resolve(doc, (item.properties as Record<string, Schema>).apply_to as Schema);
        assert.ok(applyTo, `${where} ${list} has no apply_to`);
        assert.deepEqual(applyTo.enum, ["request", "response", "both"], `${where} ${list}`);
        assert.match(
          String(applyTo.description),
          /request.*response \(the model's answers\).*both/,
          `${where} ${list}`,
        );
        assert.ok(!(item.required ?? []).includes("apply_to"), `${where} ${list}: apply_to is optional`);
      }
    const currentKey = resolve(
      doc,
      doc.paths["/api/v1/key"].get.responses["200"].content["application/json"].schema,
    );
    const policy = resolve(
      doc,
      ((currentKey.properties as Record<string, Schema>).data as Schema).properties
        ?.effective_policy as Schema,
    );
    assert.match(String(policy.description), /apply_to "response"/);
  });

  it("a real 201 and a real 400 of POST /api/v1/guardrails validate against the documented schemas", async () => {
    const org = await server.newOrg();
    const api = clientFor(server, org.key);
    const base = "/paths/~1api~1v1~1guardrails/post/responses";
    const created = await api.post("/api/v1/guardrails", {
      name: "documented",
      description: "d",
      allowed_models: [GPT5.slug],
      allowed_data_regions: ["europe"],
      content_filter_builtins: [{ slug: "regex-prompt-injection", action: "block" }],
      content_filters: [{ pattern: "secret", action: "redact" }],
      enforce_zdr_anthropic: true,
      limit_usd: 1.5,
      reset_interval: "monthly",
    });
    assert.equal(created.status, 201);
    const ok = validatorFor(`${base}/201/content/application~1json/schema`);
    assert.ok(ok(created.body), JSON.stringify(ok.errors));
    // The validator really checks the Guardrail it reaches through $ref.
    assert.equal(ok({ data: { ...created.body.data, limit_usd: "1.5" } }), false);
    const minimal = await api.post("/api/v1/guardrails", { name: "minimal" });
    assert.ok(ok(minimal.body), JSON.stringify(ok.errors));
    // Answer filters (docs/behaviour.md#apply-to) are returned as documented too.
    const answers = await api.post("/api/v1/guardrails", {
      name: "answers",
      content_filter_builtins: [
        { slug: "email", action: "redact" },
        { slug: "email", action: "block", apply_to: "response" },
      ],
      content_filters: [{ pattern: "secret", action: "redact", apply_to: "both" }],
    });
    assert.equal(answers.status, 201, JSON.stringify(answers.body));
    assert.equal(answers.body.data.content_filters[0].apply_to, "both");
    assert.ok(ok(answers.body), JSON.stringify(ok.errors));
    assert.equal(
      ok({
        data: {
          ...answers.body.data,
          content_filters: [{ pattern: "s", action: "redact", label: null, apply_to: "answers" }],
        },
      }),
      false,
    );

    const invalid = await api.post("/api/v1/guardrails", { name: "x", limit_usd: 1 });
    assert.equal(invalid.status, 400);
    const bad = validatorFor(`${base}/400/content/application~1json/schema`);
    assert.ok(bad(invalid.body), JSON.stringify(bad.errors));
  });
});
