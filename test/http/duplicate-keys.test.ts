import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { clientFor, TEST_DATABASE_KIND, type TestOrg } from "../helpers/server.js";
import { type GatewayBench, guardKey, LLAMA, startGatewayBench } from "./gateway-support.js";
import { type MadeKey, orgSteps } from "./org-support.js";

/**
 * A body whose object repeats a key is refused on every route (docs/behaviour.md#duplicate-keys):
 * the service's parser keeps the last copy and would scan it, while the client's own text, which is
 * forwarded when nothing is redacted, still holds the first. Each case below hides an address in
 * the copy the scan would not see, under an email `block` filter: the provider must never get it.
 */

const EMAIL = "jane.doe@example.com";
const MESSAGE = "the property appears more than once in its object; send each property once";

/** Bodies with a repeated key at each level, as raw text, and the pointer of the repeated member. */
const CASES: { label: string; raw: string; path: string }[] = [
  {
    label: "top level (messages twice)",
    raw: `{"model":"${LLAMA}","messages":[{"role":"user","content":"mail ${EMAIL}"}],"messages":[{"role":"user","content":"safe"}]}`,
    path: "/messages",
  },
  {
    label: "top level (model twice)",
    raw: `{"model":"${LLAMA}","messages":[{"role":"user","content":"hi"}],"model":"${LLAMA}"}`,
    path: "/model",
  },
  {
    label: "message content",
    raw: `{"model":"${LLAMA}","messages":[{"role":"user","content":"mail ${EMAIL}","content":"safe"}]}`,
    path: "/messages/0/content",
  },
  {
    label: "message content, the second key escaped",
    raw: `{"model":"${LLAMA}","messages":[{"role":"user","content":"mail ${EMAIL}","\\u0063ontent":"safe"}]}`,
    path: "/messages/0/content",
  },
  {
    label: "content part text",
    raw: `{"model":"${LLAMA}","messages":[{"role":"user","content":[{"type":"text","text":"mail ${EMAIL}","text":"safe"}]}]}`,
    path: "/messages/0/content/0/text",
  },
  {
    label: "tools (a description twice)",
    raw: `{"model":"${LLAMA}","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","description":"write to ${EMAIL}","description":"safe"}}]}`,
    path: "/tools/0/function/description",
  },
  {
    label: "a schema's properties, many keys before the repeat",
    raw: `{"model":"${LLAMA}","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{${Array.from({ length: 12 }, (_, i) => `"p${i}":{"type":"string"}`).join(",")},"p3":{"type":"string","description":"${EMAIL}"}}}}}]}`,
    path: "/tools/0/function/parameters/properties/p3",
  },
];

describe(`a JSON body that repeats a key is a 400 on every route, on ${TEST_DATABASE_KIND} (docs/behaviour.md#duplicate-keys)`, () => {
  let bench: GatewayBench;
  let org: TestOrg;
  let key: MadeKey;
  before(async () => {
    bench = await startGatewayBench();
    org = await bench.server.newOrg();
    const steps = orgSteps(bench.server, org);
    key = await steps.key();
    await guardKey(steps, key, { content_filter_builtins: [{ slug: "email", action: "block" }] });
  });
  after(async () => {
    await bench.close();
  });

  function assertRefused(res: { status: number; body: unknown }, path: string, label: string): void {
    const body = res.body as { error: { code: number; message: string; metadata: { issues: unknown[] } } };
    assert.equal(res.status, 400, `${label}: ${JSON.stringify(res.body)}`);
    assert.equal(body.error.code, 400);
    assert.equal(body.error.message, "Invalid request parameters");
    assert.deepEqual(body.error.metadata.issues[0], { path, message: MESSAGE }, label);
    assert.equal(JSON.stringify(res.body).includes("jane.doe"), false, `${label}: the value is not echoed`);
  }

  for (const { label, raw, path } of CASES) {
    it(`chat completions, ${label}: 400 naming ${path}; nothing reaches the provider`, async () => {
      const before = bench.received.length;
      // The common content type is served by the direct path, a vendor JSON type by the framework's.
      for (const type of ["application/json", "application/vnd.test+json"]) {
        const res = await clientFor(bench.server, key.secret).post("/api/v1/chat/completions", undefined, {
          rawBody: raw,
          headers: { "content-type": type },
        });
        assertRefused(res, path, `${label} as ${type}`);
      }
      assert.equal(bench.received.length, before);
    });
  }

  it("the dry run refuses the same bodies the same way", async () => {
    for (const { label, raw, path } of CASES) {
      const res = await clientFor(bench.server, org.key).post("/api/v1/guardrails/evaluate", undefined, {
        rawBody: `{"key_hash":"${key.hash}",${raw.slice(1)}`,
        headers: { "content-type": "application/json" },
      });
      assertRefused(res, path, label);
    }
  });

  it("a management body that repeats a key is refused and stores nothing", async () => {
    const api = clientFor(bench.server, org.key);
    const count = async () => (await api.get("/api/v1/guardrails")).body.total_count as number;
    const before = await count();
    const res = await api.post("/api/v1/guardrails", undefined, {
      rawBody: `{"name":"first","limit_usd":5,"name":"second"}`,
      headers: { "content-type": "application/json" },
    });
    assertRefused(res, "/name", "guardrail create");
    const nested = await api.post("/api/v1/guardrails", undefined, {
      rawBody: `{"name":"g","content_filters":[{"pattern":"a+","action":"block","pattern":"b+"}]}`,
      headers: { "content-type": "application/json" },
    });
    assertRefused(nested, "/content_filters/0/pattern", "nested filter");
    assert.equal(await count(), before);
  });

  it("the same name in different objects, or a repeated key inside a string, is not a repeat", async () => {
    const before = bench.received.length;
    const raw = `{"model":"${LLAMA}","messages":[{"role":"user","content":"{\\"content\\":1,\\"content\\":2}"},{"role":"assistant","content":"ok"}],"metadata":{"role":"x","content":{"role":"y"}}}`;
    const res = await clientFor(bench.server, key.secret).post("/api/v1/chat/completions", undefined, {
      rawBody: raw,
      headers: { "content-type": "application/json" },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(bench.received.length, before + 1);
  });
});
