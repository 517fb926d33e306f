import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type ApiResponse, clientFor, TEST_DATABASE_KIND, type TestOrg } from "../helpers/server.js";
import { type GatewayBench, LLAMA, startGatewayBench } from "./gateway-support.js";
import { orgSteps } from "./org-support.js";

/**
 * Bodies that are valid JSON but hostile: nesting deep enough to overflow a recursive walk, and
 * strings that cannot be stored as sent. Each is a 400 in the error envelope and stores nothing.
 */

const JSON_TYPE = { "content-type": "application/json" };
const nested = (depth: number, leaf: string) => `${"[".repeat(depth)}${leaf}${"]".repeat(depth)}`;

function assertInvalid(res: ApiResponse, path: string, label: string): void {
  assert.equal(res.status, 400, `${label}: ${JSON.stringify(res.body).slice(0, 300)}`);
  assert.equal(res.body.error.code, 400);
  assert.equal(res.body.error.message, "Invalid request parameters");
  assert.ok(
    res.body.error.metadata.issues.some((i: { path: string }) => i.path === path),
    `${label}: ${JSON.stringify(res.body.error.metadata)}`,
  );
}

describe(`hostile JSON bodies on ${TEST_DATABASE_KIND} (docs/api.md#limits)`, () => {
  let bench: GatewayBench;
  let org: TestOrg;
  before(async () => {
    bench = await startGatewayBench();
    org = await bench.server.newOrg();
  });
  after(async () => {
    await bench.close();
  });
  const api = () => clientFor(bench.server, org.key);
  const guardrailCount = async () => (await api().get("/api/v1/guardrails")).body.total_count as number;

  it("a management body nested 5000 deep around an escaped NUL is a 400 naming the depth limit, and stores nothing", async () => {
    const before = await guardrailCount();
    const res = await api().post("/api/v1/guardrails", undefined, {
      rawBody: `{"name":"x","description":${nested(5000, '"\\u0000"')}}`,
      headers: JSON_TYPE,
    });
    assertInvalid(res, `/description${"/0".repeat(127)}`, "deep NUL");
    assert.equal(res.body.error.metadata.limit, "nesting_depth");
    assert.equal(res.body.error.metadata.max_depth, 128);
    assert.equal(await guardrailCount(), before);
  });

  it("nesting up to 128 levels is read (and then judged by the schema), 129 is over the depth limit", async () => {
    // 127 arrays inside the top-level object: 128 levels.
    const atLimit = await api().post("/api/v1/guardrails", undefined, {
      rawBody: `{"name":"x","allowed_models":${nested(127, '"m"')}}`,
      headers: JSON_TYPE,
    });
    assertInvalid(atLimit, "/allowed_models/0", "at the limit");
    assert.equal(atLimit.body.error.metadata.limit, undefined);
    const over = await api().post("/api/v1/guardrails", undefined, {
      rawBody: `{"name":"x","allowed_models":${nested(128, '"m"')}}`,
      headers: JSON_TYPE,
    });
    assertInvalid(over, `/allowed_models${"/0".repeat(127)}`, "over the limit");
    assert.equal(over.body.error.metadata.limit, "nesting_depth");
  });

  it("brackets inside strings do not count toward the depth", async () => {
    const res = await api().post("/api/v1/guardrails", {
      description: `${"[{".repeat(100)}\\"`,
      name: "brackets",
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
  });

  it("a string that ends in an escaped backslash ends there: the nesting after it still counts (docs/api.md#limits)", async () => {
    // The raw string is `"[[\\"`: brackets, one escaped backslash, and the quote that closes it.
    const res = await api().post("/api/v1/guardrails", undefined, {
      rawBody: `{"description":"[[\\\\","name":"x","allowed_models":${nested(128, '"m"')}}`,
      headers: JSON_TYPE,
    });
    assertInvalid(res, `/allowed_models${"/0".repeat(127)}`, "after an escaped backslash");
    assert.equal(res.body.error.metadata.limit, "nesting_depth");
  });

  it("a chat pass-through field nested 5000 deep is a 400 and reaches no provider", async () => {
    const key = await orgSteps(bench.server, org).key();
    const sent = bench.received.length;
    const res = await clientFor(bench.server, key.secret).post("/api/v1/chat/completions", undefined, {
      rawBody: `{"model":"${LLAMA}","messages":[{"role":"user","content":"hi"}],"metadata":{"x":${nested(5000, "1")}}}`,
      headers: JSON_TYPE,
    });
    assertInvalid(res, `/metadata/x${"/0".repeat(126)}`, "deep chat field");
    assert.equal(res.body.error.metadata.limit, "nesting_depth");
    assert.equal(bench.received.length, sent);
  });

  for (const [label, raw, path] of [
    ["a lone high surrogate in the name", '{"name":"x\\ud800y"}', "/name"],
    ["a lone low surrogate in the name", '{"name":"x\\udc00y"}', "/name"],
    ["a reversed pair in a description", '{"name":"x","description":"\\udc00\\ud800"}', "/description"],
    [
      "a lone surrogate in a custom filter's label",
      '{"name":"x","content_filters":[{"pattern":"a","action":"flag","label":"\\uD83D"}]}',
      "/content_filters/0/label",
    ],
    ["a lone surrogate in a property name", '{"name":"x","\\ud800":1}', "/\ud800"],
  ] as const) {
    it(`${label} is a 400 naming where, and stores nothing`, async () => {
      const before = await guardrailCount();
      const res = await api().post("/api/v1/guardrails", undefined, { rawBody: raw, headers: JSON_TYPE });
      assertInvalid(res, path, label);
      assert.equal(await guardrailCount(), before);
    });
  }

  it("a lone surrogate in a member's name or a workspace name is refused the same way", async () => {
    const member = await api().post("/api/v1/members", undefined, {
      rawBody: '{"user_id":"u-1","name":"a\\ud800"}',
      headers: JSON_TYPE,
    });
    assertInvalid(member, "/name", "member");
    const workspace = await api().post("/api/v1/workspaces", undefined, {
      rawBody: '{"name":"w\\udfff"}',
      headers: JSON_TYPE,
    });
    assertInvalid(workspace, "/name", "workspace");
  });

  it("characters outside the BMP, escaped as surrogate pairs or sent raw, are stored and read back exactly", async () => {
    const name = "party 🎉 \u{1F600} 𝄞";
    const created = await api().post("/api/v1/guardrails", undefined, {
      rawBody: '{"name":"party \\ud83c\\udf89 \\uD83D\\uDE00 𝄞"}',
      headers: JSON_TYPE,
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.data.name, name);
    const read = await api().get(`/api/v1/guardrails/${created.body.data.id}`);
    assert.equal(read.body.data.name, name);
  });
});
