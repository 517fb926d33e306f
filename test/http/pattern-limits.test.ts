import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { clientFor } from "../helpers/server.js";
import {
  ask,
  chat,
  type GatewayBench,
  guardKey,
  orgWithKey,
  SONNET,
  startGatewayBench,
} from "./gateway-support.js";

/** The tester's pattern: three counted classes of 999, cost 3,003. */
const TRIPLE = "(?:q[ab]{999}c|r[ab]{999}d|s[ab]{999}e)";

describe("custom pattern limits: bounded at write time, and nothing accepted fails later (docs/api.md#pattern-limits)", () => {
  let bench: GatewayBench;
  before(async () => {
    bench = await startGatewayBench();
  });
  after(async () => {
    await bench.close();
  });

  const filters = (patterns: string[], action = "flag") => patterns.map((pattern) => ({ pattern, action }));

  it("27 patterns of three counted classes of 999 are a 400 invalid_regex_pattern naming the limit, the cost and the filter; nothing is stored (docs/api.md#pattern-limits)", async () => {
    const { org, steps } = await orgWithKey(bench);
    const api = clientFor(bench.server, org.key);
    const g = await steps.guardrail({ name: "kept", content_filters: filters(["kept"]) });
    const listBefore = (await api.get("/api/v1/guardrails")).body;
    const body = { content_filters: filters(Array.from({ length: 27 }, () => TRIPLE)) };
    for (const res of [
      await api.post("/api/v1/guardrails", { name: "costly", ...body }),
      await api.patch(`/api/v1/guardrails/${g.id}`, body),
    ]) {
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.equal(res.body.error.message, "Invalid request parameters");
      const m = res.body.error.metadata;
      assert.equal(m.reason, "invalid_regex_pattern");
      assert.equal(m.limit, "pattern_cost");
      assert.equal(m.filter_index, 0);
      assert.equal(m.cost, 3003);
      assert.equal(m.max_cost, 300);
      assert.equal(m.issues[0].path, "/content_filters/0/pattern");
    }
    assert.deepEqual((await api.get("/api/v1/guardrails")).body, listBefore);
  });

  it("a[ab]{999}c with two small patterns is refused at write time, before any request can scan it (docs/api.md#pattern-limits)", async () => {
    const { org } = await orgWithKey(bench);
    const res = await clientFor(bench.server, org.key).post("/api/v1/guardrails", {
      name: "stall",
      content_filters: filters(["small", "a[ab]{999}c", "tiny"]),
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.metadata.limit, "pattern_cost");
    assert.equal(res.body.error.metadata.filter_index, 1);
    assert.equal(res.body.error.metadata.cost, 1001);
  });

  it("a pattern of exactly the maximum cost is accepted; one more position is refused (docs/api.md#pattern-limits)", async () => {
    const { org } = await orgWithKey(bench);
    const api = clientFor(bench.server, org.key);
    const ok = await api.post("/api/v1/guardrails", {
      name: "edge",
      content_filters: filters(["a[ab]{298}c"]),
    });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    const over = await api.post("/api/v1/guardrails", {
      name: "over",
      content_filters: filters(["a[ab]{299}c"]),
    });
    assert.equal(over.status, 400);
    assert.equal(over.body.error.metadata.cost, 301);
  });

  it("the guardrail's patterns together may cost at most the maximum: the filter that passes it is named (docs/api.md#pattern-limits)", async () => {
    const { org } = await orgWithKey(bench);
    const res = await clientFor(bench.server, org.key).post("/api/v1/guardrails", {
      name: "sum",
      content_filters: filters(["x[ab]{148}y", "ok", "x[ab]{148}z"]),
    });
    assert.equal(res.status, 400);
    const m = res.body.error.metadata;
    assert.equal(m.limit, "guardrail_cost");
    assert.equal(m.filter_index, 2);
    assert.equal(m.cost, 150 + 2 + 150);
    assert.equal(m.max_cost, 300);
  });

  it("three guardrails at the maximum on one key (workspace default, member, key) serve requests, and a pattern in two of them keeps its strictest action (docs/api.md#pattern-limits)", async () => {
    const { org, steps } = await orgWithKey(bench);
    await steps.member("ada");
    const key = await steps.key({ member_user_id: "ada" });
    const shared = "secret-[0-9]{4}";
    // Each guardrail near 300: counted classes, heavy Unicode classes and the shared pattern.
    const workspace = (await steps.api.get(`/api/v1/workspaces/${org.workspaceId}`)).body.data;
    await steps.patchGuardrail(workspace.default_guardrail_id, {
      content_filters: [
        { pattern: "w[ab]{120}w", action: "flag" },
        { pattern: "\\pL{12}-w", action: "flag" },
        { pattern: shared, action: "redact", label: "[S]" },
      ],
    });
    const member = await steps.guardrail({
      content_filters: [
        { pattern: "m[ab]{140}m", action: "flag" },
        { pattern: "(?i)[\\pL\\pN]{10}-m", action: "flag" },
        { pattern: shared, action: "block" },
      ],
    });
    await steps.assignMembers(member.id, ["ada"]);
    await guardKey(steps, key, {
      content_filters: [
        { pattern: "k[ab]{280}k", action: "flag" },
        { pattern: shared, action: "flag" },
      ],
    });
    const served = await chat(bench.server, key.secret, ask("nothing to see here"));
    assert.equal(served.status, 200, JSON.stringify(served.body));
    const blocked = await chat(bench.server, key.secret, ask("the code is secret-1234"));
    assert.equal(blocked.status, 403);
    assert.equal(blocked.body.error.metadata.reason, "content_filter");
    assert.deepEqual(blocked.body.error.metadata.filter, { type: "custom", pattern: shared });
    assert.deepEqual(blocked.body.error.metadata.guardrail_ids, [member.id]);
  });

  describe("guardrails stored before these checks", () => {
    /** Writes content filters past the API's checks, as a database from before them holds. */
    async function storeRaw(id: string, patterns: string[]) {
      await bench.server.database.db
        .updateTable("guardrails")
        .set({
          content_filters: JSON.stringify(
            patterns.map((pattern) => ({ pattern, action: "flag", label: null })),
          ),
        })
        .where("id", "=", id)
        .execute();
    }

    it("a stored guardrail far over the cost limit still serves: no set is built that could fail (docs/api.md#pattern-limits)", async () => {
      const { steps, key } = await orgWithKey(bench);
      const id = await guardKey(steps, key, { content_filters: filters(["placeholder"]) });
      await storeRaw(id, [
        ...Array.from({ length: 27 }, (_, i) => `${TRIPLE}${i}`),
        ...Array.from({ length: 30 }, (_, i) => `\\pL{20}${i}`),
      ]);
      const res = await chat(bench.server, key.secret, ask("a short prompt"));
      assert.equal(res.status, 200, JSON.stringify(res.body));
    });

    it("a stored pattern that does not compile refuses the request with a 403 naming it, never a 500, and forwards nothing (docs/gateway.md#large-scans)", async () => {
      const { org, steps, key } = await orgWithKey(bench);
      const id = await guardKey(steps, key, { content_filters: filters(["placeholder"]) });
      await storeRaw(id, ["fine", "(?<=api_)key"]);
      const before = bench.received.length;
      const res = await chat(bench.server, key.secret, ask("hello"));
      assert.equal(res.status, 403, JSON.stringify(res.body));
      const m = res.body.error.metadata;
      assert.equal(m.reason, "content_filter_unavailable");
      assert.deepEqual(m.filter, { type: "custom", pattern: "(?<=api_)key" });
      assert.deepEqual(m.guardrail_ids, [id]);
      assert.equal(typeof m.pattern_error, "string");
      const dry = await clientFor(bench.server, org.key).post("/api/v1/guardrails/evaluate", {
        key_hash: key.hash,
        model: SONNET,
        messages: [{ role: "user", content: "hello" }],
      });
      assert.equal(dry.status, 403);
      assert.equal(dry.body.error.metadata.reason, "content_filter_unavailable");
      assert.equal(bench.received.length, before);
    });
  });
});
