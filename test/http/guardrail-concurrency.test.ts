import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type ApiResponse, clientFor, startTestServer, type TestServer } from "../helpers/server.js";
import { createGuardrail, getGuardrail } from "./guardrail-support.js";

const CONFLICT = "Resource conflict. Please try again later.";

describe("entity tags and concurrent updates (docs/behaviour.md#concurrency)", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });

  function assertConflict(res: ApiResponse): void {
    assert.equal(res.status, 409, JSON.stringify(res.body));
    assert.equal(res.body.error.code, 409);
    assert.equal(res.body.error.message, CONFLICT);
  }

  it("GET and PATCH return an ETag; it changes after every update and GET then shows the PATCH's tag (docs/behaviour.md#concurrency)", async () => {
    const org = await server.newOrg();
    const api = clientFor(server, org.key);
    const created = await createGuardrail(server, org.key, { name: "tags" });
    const path = `/api/v1/guardrails/${created.body.data.id}`;
    const seen = new Set<string>();
    let tag = (await api.get(path)).headers.get("etag");
    assert.ok(tag, "GET returns an ETag");
    assert.equal(tag, created.headers.get("etag"));
    seen.add(tag);
    for (let i = 0; i < 3; i++) {
      const patched = await api.patch(path, { description: `v${i}` });
      assert.equal(patched.status, 200);
      const next = patched.headers.get("etag");
      assert.ok(next, "PATCH returns an ETag");
      assert.ok(!seen.has(next), `the tag changes after update ${i}`);
      seen.add(next);
      const got = await api.get(path);
      assert.equal(got.headers.get("etag"), next);
      tag = next;
    }
  });

  it('If-Match with the current tag is 200; a stale tag is 409 "Resource conflict. Please try again later." and changes nothing (docs/behaviour.md#concurrency)', async () => {
    const org = await server.newOrg();
    const api = clientFor(server, org.key);
    const created = await createGuardrail(server, org.key, { name: "if-match" });
    const path = `/api/v1/guardrails/${created.body.data.id}`;
    const original = created.headers.get("etag") ?? "";
    const first = await api.patch(path, { name: "first" }, { headers: { "if-match": original } });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const stale = await api.patch(path, { name: "second" }, { headers: { "if-match": original } });
    assertConflict(stale);
    assert.deepEqual(await getGuardrail(server, org.key, created.body.data.id), first.body.data);
    const wrong = await api.patch(path, { name: "third" }, { headers: { "if-match": '"no-such-tag"' } });
    assertConflict(wrong);
    const current = first.headers.get("etag") ?? "";
    const second = await api.patch(path, { name: "second" }, { headers: { "if-match": current } });
    assert.equal(second.status, 200);
    assert.equal(second.body.data.name, "second");
  });

  it("If-Match: * updates an existing guardrail (docs/behaviour.md#concurrency; RFC 9110 If-Match)", async () => {
    const org = await server.newOrg();
    const api = clientFor(server, org.key);
    const created = await createGuardrail(server, org.key, { name: "star" });
    const res = await api.patch(
      `/api/v1/guardrails/${created.body.data.id}`,
      { name: "starred" },
      { headers: { "if-match": "*" } },
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.data.name, "starred");
  });

  it("If-Match on an unknown or another organization's guardrail is 404, not 409 (docs/behaviour.md#organizations; docs/behaviour.md#concurrency)", async () => {
    const org = await server.newOrg();
    const other = await server.newOrg();
    const theirs = await createGuardrail(server, other.key, { name: "theirs" });
    const api = clientFor(server, org.key);
    for (const id of [theirs.body.data.id, "0c6f3f3e-5b1a-4c1e-9e2b-1f2a3b4c5d6e"]) {
      for (const tag of [theirs.headers.get("etag") ?? "", "*"]) {
        const res = await api.patch(
          `/api/v1/guardrails/${id}`,
          { name: "x" },
          { headers: { "if-match": tag } },
        );
        assert.equal(res.status, 404, `${id} ${tag}`);
        assert.equal(res.body.error.message, "Resource not found");
      }
    }
    assert.deepEqual(await getGuardrail(server, other.key, theirs.body.data.id), theirs.body.data);
  });

  it("20 concurrent PATCHes with the same If-Match: exactly one 200, the rest 409, and the winner's change is what stays (docs/behaviour.md#concurrency)", async () => {
    const org = await server.newOrg();
    const api = clientFor(server, org.key);
    const created = await createGuardrail(server, org.key, {
      name: "race",
      limit_usd: 1,
      reset_interval: "daily",
    });
    const id = created.body.data.id;
    const tag = created.headers.get("etag") ?? "";
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        api.patch(
          `/api/v1/guardrails/${id}`,
          { name: `writer ${i}`, description: `by ${i}`, limit_usd: i + 1 },
          { headers: { "if-match": tag } },
        ),
      ),
    );
    const winners = results.filter((r) => r.status === 200);
    const losers = results.filter((r) => r.status !== 200);
    assert.equal(winners.length, 1, results.map((r) => r.status).join(","));
    for (const loser of losers) assertConflict(loser);
    const winner = winners[0] as ApiResponse;
    const final = await api.get(`/api/v1/guardrails/${id}`);
    assert.deepEqual(final.body.data, winner.body.data);
    assert.equal(final.headers.get("etag"), winner.headers.get("etag"));
    const n = Number(String(winner.body.data.name).slice("writer ".length));
    assert.equal(final.body.data.description, `by ${n}`);
    assert.equal(final.body.data.limit_usd, n + 1);
  });

  it("concurrent PATCHes without If-Match, each changing another property: every 200's change survives, the rest are 409 (docs/behaviour.md#concurrency)", async () => {
    const org = await server.newOrg();
    const api = clientFor(server, org.key);
    const created = await createGuardrail(server, org.key, { name: "free-for-all" });
    const id = created.body.data.id;
    const changes: Record<string, unknown>[] = [
      { description: "changed" },
      { allowed_data_regions: ["europe"] },
      { allowed_providers: ["openai"] },
      { ignored_providers: ["groq"] },
      { enable_free_model_publication: true },
      { enable_free_model_training: false },
      { enable_paid_model_training: false },
      { include_byok_in_budgets: true },
      { enforce_zdr_anthropic: true },
      { enforce_zdr_openai: true },
      { enforce_zdr_google: true },
      { enforce_zdr_xai: true },
      { enforce_zdr_other: true },
      { limit_usd: 3, reset_interval: "weekly" },
    ];
    const results = await Promise.all(changes.map((body) => api.patch(`/api/v1/guardrails/${id}`, body)));
    const final = (await api.get(`/api/v1/guardrails/${id}`)).body.data;
    let succeeded = 0;
    results.forEach((res, i) => {
      const change = changes[i] as Record<string, unknown>;
      if (res.status !== 200) {
        assertConflict(res);
        return;
      }
      succeeded++;
      for (const [field, value] of Object.entries(change)) {
        assert.deepEqual(final[field], value, `the 200 for ${JSON.stringify(change)} was lost`);
      }
    });
    assert.ok(succeeded >= 1);
    const tags = results.filter((r) => r.status === 200).map((r) => r.headers.get("etag"));
    assert.equal(new Set(tags).size, succeeded, "every successful update made its own version");
  });
});
