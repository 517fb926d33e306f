import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import "../helpers/property-seed.js";
import { clientFor, startTestServer, type TestServer } from "../helpers/server.js";
import {
  applyBody,
  type Body,
  corruptionsArb,
  initialState,
  pointerKeyArb,
  validCreateBody,
  validUpdateBody,
} from "./guardrail-arbitraries.js";
import { ISO_UTC } from "./guardrail-support.js";

/** The fields the model does not predict: they are checked on their own. */
function withoutMeta(data: Body): Body {
  const { id: _id, workspace_id: _ws, created_at: _c, updated_at: _u, ...rest } = data;
  return rest;
}

const step = fc.oneof(
  { weight: 1, arbitrary: validCreateBody().map((body) => ({ kind: "create" as const, body })) },
  {
    weight: 3,
    arbitrary: fc
      .tuple(fc.nat(), validUpdateBody())
      .map(([target, body]) => ({ kind: "update" as const, target, body })),
  },
);

describe("guardrail properties: random valid and invalid bodies through HTTP", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });

  it("after any sequence of valid creates and updates, GET and the list return exactly the last 2xx data, as the field rules predict (docs/behaviour.md#guardrail-create; docs/behaviour.md#guardrail-fields; docs/behaviour.md#content-filters)", async () => {
    await fc.assert(
      fc.asyncProperty(
        validCreateBody(),
        fc.array(step, { minLength: 0, maxLength: 7 }),
        async (first, rest) => {
          const org = await server.newOrg();
          const api = clientFor(server, org.key);
          /** id → the last 2xx data, and the model's prediction of its fields. */
          const last = new Map<string, Body>();
          const model = new Map<string, Body>();
          const order: string[] = [];
          for (const s of [{ kind: "create" as const, body: first }, ...rest]) {
            let id: string;
            let data: Body;
            if (s.kind === "create") {
              const res = await api.post("/api/v1/guardrails", s.body);
              assert.equal(res.status, 201, JSON.stringify({ body: s.body, res: res.body }));
              data = res.body.data;
              id = data.id as string;
              assert.equal(data.workspace_id, org.workspaceId);
              assert.equal(data.updated_at, null);
              assert.match(String(data.created_at), ISO_UTC);
              model.set(id, applyBody(initialState(s.body.name as string), s.body));
              order.push(id);
            } else {
              id = order[s.target % order.length] as string;
              const res = await api.patch(`/api/v1/guardrails/${id}`, s.body);
              assert.equal(res.status, 200, JSON.stringify({ body: s.body, res: res.body }));
              data = res.body.data;
              const before = last.get(id) as Body;
              assert.equal(data.id, id);
              assert.equal(data.created_at, before.created_at);
              assert.match(String(data.updated_at), ISO_UTC);
              model.set(id, applyBody(model.get(id) as Body, s.body));
            }
            assert.deepEqual(withoutMeta(data), model.get(id), JSON.stringify(s.body));
            last.set(id, data);

            // GET of every guardrail, the one touched and the others, returns its last 2xx data.
            for (const [gid, expected] of last) {
              const got = await api.get(`/api/v1/guardrails/${gid}`);
              assert.equal(got.status, 200);
              assert.deepEqual(got.body.data, expected);
            }
            const list = await api.get("/api/v1/guardrails?limit=100");
            assert.equal(list.status, 200);
            assert.equal(list.body.total_count, last.size);
            assert.deepEqual(new Map(list.body.data.map((g: Body) => [g.id, g])), last);
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it("an invalid body is 400 'Invalid request parameters' naming each offending path, as PATCH and as POST, and changes nothing (docs/behaviour.md#refusals-change-nothing; docs/behaviour.md#guardrail-fields; docs/behaviour.md#content-filters)", async () => {
    await fc.assert(
      fc.asyncProperty(
        validCreateBody({ budget: false }),
        validUpdateBody({ budget: false }),
        corruptionsArb,
        async (base, valid, corruptions) => {
          const org = await server.newOrg();
          const api = clientFor(server, org.key);
          const created = await api.post("/api/v1/guardrails", base);
          assert.equal(created.status, 201, JSON.stringify(created.body));
          const id = created.body.data.id as string;
          const stored = await api.get(`/api/v1/guardrails/${id}`);
          const listBefore = await api.get("/api/v1/guardrails?limit=100");
          assert.equal(listBefore.body.total_count, 1);

          const body: Body = { ...valid };
          for (const c of corruptions) Object.assign(body, c.patch);
          // The schema is checked first; the catalog and cross-field rules only once the shape is right.
          const schemaFailures = corruptions.filter((c) => c.phase === "schema");
          const expected = schemaFailures.length > 0 ? schemaFailures : corruptions;
          const regex =
            schemaFailures.length === 0 ? corruptions.find((c) => c.regexIndex !== undefined) : undefined;

          const check = (res: { status: number; body: Body & { error?: Body } }, what: string) => {
            const context = `${what} ${JSON.stringify(body).slice(0, 2000)} => ${JSON.stringify(res.body).slice(0, 2000)}`;
            assert.equal(res.status, 400, context);
            const error = res.body.error as { code: number; message: string; metadata: Body };
            assert.deepEqual(Object.keys(res.body), ["error"], context);
            assert.equal(error.code, 400, context);
            assert.equal(error.message, "Invalid request parameters", context);
            const issues = error.metadata.issues as { path: string; message: string }[];
            assert.ok(Array.isArray(issues) && issues.length > 0, context);
            for (const issue of issues) {
              assert.equal(typeof issue.path, "string", context);
              assert.equal(typeof issue.message, "string", context);
            }
            for (const c of expected) {
              for (const p of c.paths) {
                assert.ok(
                  issues.some((i) => i.path === p || i.path.startsWith(`${p}/`)),
                  `issues should name ${p}: ${context}`,
                );
              }
            }
            if (regex) {
              assert.equal(error.metadata.reason, "invalid_regex_pattern", context);
              assert.equal(error.metadata.filter_index, regex.regexIndex, context);
            }
          };

          check(await api.patch(`/api/v1/guardrails/${id}`, body), "PATCH");
          const after = await api.get(`/api/v1/guardrails/${id}`);
          assert.deepEqual(after.body, stored.body);
          assert.equal(after.headers.get("etag"), stored.headers.get("etag"));

          const createBody = "name" in body ? body : { name: "valid name", ...body };
          check(await api.post("/api/v1/guardrails", createBody), "POST");
          const listAfter = await api.get("/api/v1/guardrails?limit=100");
          assert.deepEqual(listAfter.body, listBefore.body);
        },
      ),
      { numRuns: 60 },
    );
  });

  it("the issue path of an unknown property is a JSON Pointer: '~' is written '~0' and '/' is written '~1' (docs/behaviour.md#invalid-request; RFC 6901)", async () => {
    const org = await server.newOrg();
    const api = clientFor(server, org.key);
    const created = await api.post("/api/v1/guardrails", { name: "g" });
    const id = created.body.data.id as string;
    const stored = await api.get(`/api/v1/guardrails/${id}`);
    await fc.assert(
      fc.asyncProperty(pointerKeyArb, async (key) => {
        const token = key.replaceAll("~", "~0").replaceAll("/", "~1");
        for (const res of [
          await api.patch(`/api/v1/guardrails/${id}`, { [key]: 1 }),
          await api.post("/api/v1/guardrails", { name: "g2", [key]: 1 }),
        ]) {
          assert.equal(res.status, 400);
          assert.deepEqual(res.body.error.metadata.issues, [
            { path: `/${token}`, message: "is not a known property" },
          ]);
        }
      }),
      { numRuns: 20, examples: [["allowed/models"], ["a~b"]] },
    );
    assert.deepEqual((await api.get(`/api/v1/guardrails/${id}`)).body, stored.body);
    assert.equal((await api.get("/api/v1/guardrails")).body.total_count, 1);
  });
});
