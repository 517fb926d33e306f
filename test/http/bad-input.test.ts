import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  type ApiResponse,
  call,
  clientFor,
  type RequestOptions,
  startTestServer,
  type TestOrg,
  type TestServer,
} from "../helpers/server.js";

const MESSAGES: Record<number, string> = {
  400: "Invalid request parameters",
  404: "Resource not found",
  405: "Method not allowed",
  413: "Request body too large",
  415: "Unsupported media type: send application/json",
};

const JSON_TYPE = { "content-type": "application/json" };
const DEPTH = 100_000;
const nestedArrays = `${"[".repeat(DEPTH)}${"]".repeat(DEPTH)}`;
const nestedObjects = `${'{"a":'.repeat(DEPTH)}1${"}".repeat(DEPTH)}`;

interface BadInput {
  name: string;
  status: number;
  /** For a 400: a path that metadata.issues must name. */
  issuePath?: string;
  request: RequestOptions;
}

/** Requests a body parser must refuse; each is sent to POST and to PATCH. */
const BAD_BODIES: BadInput[] = [
  {
    name: "malformed JSON",
    status: 400,
    issuePath: "",
    request: { rawBody: '{"name": "x",', headers: JSON_TYPE },
  },
  {
    name: "a JSON body that is only whitespace",
    status: 400,
    request: { rawBody: "   ", headers: JSON_TYPE },
  },
  { name: "no body with a JSON content type", status: 400, request: { headers: JSON_TYPE } },
  { name: "no body and no content type", status: 400, request: {} },
  {
    name: "text/plain",
    status: 415,
    request: { rawBody: '{"name":"x"}', headers: { "content-type": "text/plain" } },
  },
  {
    name: "form-urlencoded",
    status: 415,
    request: { rawBody: "name=x", headers: { "content-type": "application/x-www-form-urlencoded" } },
  },
  {
    name: "a body of 2 MiB (over the 1 MiB limit)",
    status: 413,
    request: { rawBody: `{"name":"x","description":"${"a".repeat(2 * 1024 * 1024)}"}`, headers: JSON_TYPE },
  },
  {
    name: "100000 nested arrays as a property value",
    status: 400,
    issuePath: `/allowed_models${"/0".repeat(127)}`,
    request: { rawBody: `{"name":"x","allowed_models":${nestedArrays}}`, headers: JSON_TYPE },
  },
  {
    name: "100000 nested objects as a property value",
    status: 400,
    issuePath: `/description${"/a".repeat(127)}`,
    request: { rawBody: `{"name":"x","description":${nestedObjects}}`, headers: JSON_TYPE },
  },
  {
    name: "100000 nested arrays as the whole body",
    status: 400,
    request: { rawBody: nestedArrays, headers: JSON_TYPE },
  },
  {
    name: "allowed_models with 100000 items",
    status: 400,
    issuePath: "/allowed_models",
    request: { body: { name: "x", allowed_models: Array.from({ length: 100_000 }, () => "m") } },
  },
  {
    name: "allowed_models with 100000 invalid items",
    status: 400,
    request: { body: { name: "x", allowed_models: Array.from({ length: 100_000 }, () => 1) } },
  },
  {
    name: "invalid UTF-8 bytes in a string",
    status: 400,
    issuePath: "",
    request: {
      rawBody: Buffer.concat([
        Buffer.from('{"name":"bad '),
        Buffer.from([0xff, 0xfe, 0xc3]),
        Buffer.from('"}'),
      ]),
      headers: JSON_TYPE,
    },
  },
  {
    name: "a NUL character (U+0000) in the name",
    status: 400,
    issuePath: "/name",
    request: { body: { name: "before\u0000after" } },
  },
  {
    name: "a NUL character (U+0000) in a custom filter's label",
    status: 400,
    issuePath: "/content_filters/0/label",
    request: { body: { name: "x", content_filters: [{ pattern: "a", action: "flag", label: "l\u0000" }] } },
  },
  {
    name: 'a "__proto__" key',
    status: 400,
    issuePath: "",
    request: { rawBody: '{"name":"x","__proto__":{"limit_usd":1}}', headers: JSON_TYPE },
  },
  {
    name: 'a nested "__proto__" key',
    status: 400,
    request: {
      rawBody: '{"name":"x","content_filters":[{"pattern":"a","action":"flag","__proto__":{"x":1}}]}',
      headers: JSON_TYPE,
    },
  },
  {
    name: '{"constructor":{"prototype":{}}}',
    status: 400,
    issuePath: "",
    request: { rawBody: '{"name":"x","constructor":{"prototype":{}}}', headers: JSON_TYPE },
  },
  {
    name: 'a "__proto__" key written with \\u escapes',
    status: 400,
    issuePath: "",
    request: { rawBody: '{"name":"x","\\u005f_pr\\u006fto__":{"limit_usd":1}}', headers: JSON_TYPE },
  },
  {
    name: 'a "constructor" key written with \\u escapes, holding "prototype"',
    status: 400,
    issuePath: "",
    request: { rawBody: '{"name":"x","\\u0063onstructor":{"prototype":{}}}', headers: JSON_TYPE },
  },
];

function assertErrorBody(res: ApiResponse, status: number, label: string, issuePath?: string): void {
  assert.equal(res.status, status, `${label}: ${JSON.stringify(res.body).slice(0, 300)}`);
  assert.match(res.headers.get("content-type") ?? "", /^application\/json/, label);
  assert.equal(res.body.error.code, status, label);
  assert.equal(res.body.error.message, MESSAGES[status], label);
  assert.deepEqual(Object.keys(res.body).sort(), ["error"], label);
  if (status === 400) {
    const issues = res.body.error.metadata?.issues;
    assert.ok(Array.isArray(issues) && issues.length > 0, `${label}: metadata.issues`);
    if (issuePath !== undefined) {
      const paths = issues.map((i: { path: string }) => i.path);
      assert.ok(paths.includes(issuePath), `${label}: ${JSON.stringify(paths)}`);
    }
  }
}

describe("bad input is refused with the error body, stores nothing, and the server keeps serving (docs/behaviour.md#refusals-change-nothing)", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });

  async function listed(org: TestOrg) {
    const res = await clientFor(server, org.key).get("/api/v1/guardrails?limit=100");
    assert.equal(res.status, 200);
    return res.body;
  }

  for (const bad of BAD_BODIES) {
    it(`POST /api/v1/guardrails with ${bad.name} is ${bad.status}; nothing is stored (docs/behaviour.md#refusals-change-nothing)`, async () => {
      const org = await server.newOrg();
      const api = clientFor(server, org.key);
      await api.post("/api/v1/guardrails", { name: "existing" });
      const before = await listed(org);
      const res = await call(server, "POST", "/api/v1/guardrails", { key: org.key, ...bad.request });
      assertErrorBody(res, bad.status, bad.name, bad.issuePath);
      assert.deepEqual(await listed(org), before);
      const ok = await api.post("/api/v1/guardrails", { name: "after" });
      assert.equal(ok.status, 201);
    });

    it(`PATCH /api/v1/guardrails/{id} with ${bad.name} is ${bad.status}; the guardrail is unchanged (docs/behaviour.md#refusals-change-nothing; docs/behaviour.md#partial-update)`, async () => {
      const org = await server.newOrg();
      const api = clientFor(server, org.key);
      const created = await api.post("/api/v1/guardrails", { name: "existing", description: "keep" });
      const path = `/api/v1/guardrails/${created.body.data.id}`;
      const res = await call(server, "PATCH", path, { key: org.key, ...bad.request });
      assertErrorBody(res, bad.status, bad.name, bad.issuePath);
      assert.deepEqual((await api.get(path)).body, { data: created.body.data });
      const ok = await api.patch(path, { description: "changed" });
      assert.equal(ok.status, 200);
      assert.equal(ok.body.data.description, "changed");
    });
  }

  it('POST /api/v1/workspaces and /api/v1/keys refuse a "__proto__" key and malformed JSON too (docs/behaviour.md#invalid-request)', async () => {
    const org = await server.newOrg();
    const api = clientFor(server, org.key);
    for (const path of ["/api/v1/workspaces", "/api/v1/keys"]) {
      const before = (await api.get(path)).body;
      for (const rawBody of ['{"name":"x","__proto__":{"is_default":true}}', '{"name":', "[]", '"name"']) {
        const res = await call(server, "POST", path, { key: org.key, rawBody, headers: JSON_TYPE });
        assertErrorBody(res, 400, `${path} ${rawBody}`);
      }
      const res = await call(server, "POST", path, {
        key: org.key,
        rawBody: "name=x",
        headers: { "content-type": "text/plain" },
      });
      assertErrorBody(res, 415, path);
      assert.deepEqual((await api.get(path)).body, before);
    }
  });

  it('an unknown route is 404 "Resource not found" naming the method and path, with or without a key (docs/behaviour.md#error-messages; docs/behaviour.md#unknown-routes)', async () => {
    const org = await server.newOrg();
    for (const [method, path] of [
      ["GET", "/api/v1/nope"],
      ["POST", "/api/v1/guardrail"],
      ["GET", "/nope"],
      ["GET", "/api/v2/guardrails"],
      ["DELETE", "/api/v1/guardrails/a/b/c"],
    ] as const) {
      for (const key of [org.key, null]) {
        const res = await call(server, method, path, { key });
        assert.equal(res.status, 404, `${method} ${path}`);
        assert.deepEqual(res.body, {
          error: {
            code: 404,
            message: "Resource not found",
            metadata: { reason: "no_such_route", method, path, api_reference: "/docs" },
          },
        });
      }
    }
    // A file the console's route does not have is a missing resource of a route that exists: bare.
    assert.deepEqual((await call(server, "GET", "/console/missing.js")).body, {
      error: { code: 404, message: "Resource not found" },
    });
  });

  it("a path with broken percent-encoding is 404 with the error body, not the framework's (docs/behaviour.md#error-messages)", async () => {
    const org = await server.newOrg();
    for (const path of ["/api/v1/guardrails/%zz", "/api/v1/workspaces/%E0%A4%A", "/%zz"]) {
      const res = await call(server, "GET", path, { key: org.key });
      assert.equal(res.status, 404, `${path}: ${JSON.stringify(res.body)}`);
      assert.deepEqual(res.body, { error: { code: 404, message: "Resource not found" } });
    }
    assert.equal((await call(server, "GET", "/healthz")).status, 200);
  });

  it("a known path with a wrong method is 405 with an Allow header (docs/behaviour.md#error-messages)", async () => {
    const org = await server.newOrg();
    const api = clientFor(server, org.key);
    const before = await listed(org);
    const id = "00000000-0000-4000-8000-000000000000";
    const cases: [string, string, string][] = [
      ["PUT", "/api/v1/guardrails", "GET, POST"],
      ["DELETE", "/api/v1/guardrails", "GET, POST"],
      ["PUT", `/api/v1/guardrails/${id}`, "DELETE, GET, PATCH"],
      ["POST", `/api/v1/guardrails/${id}`, "DELETE, GET, PATCH"],
      ["PATCH", "/api/v1/workspaces", "GET, POST"],
      ["PUT", "/api/v1/keys", "GET, POST"],
    ];
    for (const [method, path, allow] of cases) {
      const res = await call(server, method, path, { key: org.key, body: { name: "x" } });
      assertErrorBody(res, 405, `${method} ${path}`);
      assert.equal(res.headers.get("allow"), allow, `${method} ${path}`);
    }
    assert.deepEqual(await listed(org), before);
    assert.equal((await api.post("/api/v1/guardrails", { name: "after" })).status, 201);
  });

  it("a non-UUID guardrail, workspace or key id in the path is 404, whatever its length (docs/behaviour.md#organizations; docs/behaviour.md#update-not-found)", async () => {
    const org = await server.newOrg();
    const api = clientFor(server, org.key);
    for (const id of ["abc", "1", "%20", "y".repeat(101), "z".repeat(500)]) {
      const cases: [string, string, unknown?][] = [
        ["GET", `/api/v1/guardrails/${id}`],
        ["PATCH", `/api/v1/guardrails/${id}`, { name: "n" }],
        ["DELETE", `/api/v1/guardrails/${id}`],
        ["GET", `/api/v1/workspaces/${id}`],
        ["DELETE", `/api/v1/workspaces/${id}`],
        ["GET", `/api/v1/keys/${id}`],
        ["DELETE", `/api/v1/keys/${id}`],
      ];
      for (const [method, path, body] of cases) {
        const res = await call(server, method, path, { key: org.key, body });
        assert.equal(res.status, 404, `${method} ${path.slice(0, 60)}: ${JSON.stringify(res.body)}`);
        assert.deepEqual(res.body, { error: { code: 404, message: "Resource not found" } });
      }
    }
    assert.equal((await api.get("/api/v1/workspaces")).body.total_count, 1);
  });
});
