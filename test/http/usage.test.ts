import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { clientFor } from "../helpers/server.js";
import { ask, chat, type GatewayBench, guardKey, orgWithKey, startGatewayBench } from "./gateway-support.js";

/** Sonnet at 3 and 15 micro-dollars a token: the scripted 1,000 and 100 tokens cost $0.0045. */
const EACH_USD = 0.0045;

describe("GET /api/v1/usage (docs/api.md#usage)", () => {
  let bench: GatewayBench;
  let clock = new Date("2026-11-22T12:00:00.000Z");
  let setup: Awaited<ReturnType<typeof orgWithKey>>;
  let guardrailId: string;
  before(async () => {
    bench = await startGatewayBench({ now: () => clock });
    setup = await orgWithKey(bench);
    guardrailId = await guardKey(setup.steps, setup.key, { limit_usd: 100, reset_interval: "monthly" });
    bench.script.next = () => ({ usage: { prompt_tokens: 1000, completion_tokens: 100 } });
    // Either side of UTC midnight on a Monday, and either side of the first of the month.
    for (const at of [
      "2026-11-22T23:59:59.999Z",
      "2026-11-23T00:00:00.000Z",
      "2026-11-30T23:59:59.999Z",
      "2026-12-01T00:00:00.000Z",
    ]) {
      clock = new Date(at);
      assert.equal((await chat(bench.server, setup.key.secret, ask("hi"))).status, 200);
    }
    bench.script.next = undefined;
  });
  after(async () => {
    await bench.close();
  });
  const usage = (query: string, key = setup.org.key) =>
    clientFor(bench.server, key).get(`/api/v1/usage?${query}`);

  it("grouped by day, a range counts the UTC days from its first to its last, both included: edges at midnight, Monday and the first of the month", async () => {
    const week = await usage("from=2026-11-23&to=2026-11-30");
    assert.equal(week.status, 200, JSON.stringify(week.body));
    assert.deepEqual(
      week.body.data.map((r: { date: string; requests: number; spend_usd: number }) => [
        r.date,
        r.requests,
        r.spend_usd,
      ]),
      [
        ["2026-11-23", 1, EACH_USD],
        ["2026-11-30", 1, EACH_USD],
      ],
    );
    const all = await usage("from=2026-11-22&to=2026-12-01");
    assert.deepEqual(
      all.body.data.map((r: { date: string }) => r.date),
      ["2026-11-22", "2026-11-23", "2026-11-30", "2026-12-01"],
    );
    const december = await usage("from=2026-12-01&to=2026-12-31");
    assert.equal(december.body.total_count, 1);
  });

  it("grouped by key and model, and by guardrail; tokens and spend summed, bring-your-own-key apart", async () => {
    const res = await usage("from=2026-11-01&to=2026-12-31&group_by=key,model");
    assert.deepEqual(res.body.data, [
      {
        key_hash: setup.key.hash,
        // The ledger records the canonical slug.
        model: "anthropic/claude-4.5-sonnet-20250929",
        requests: 4,
        prompt_tokens: 4000,
        completion_tokens: 400,
        spend_usd: 4 * EACH_USD,
        byok_requests: 0,
        byok_spend_usd: 0,
      },
    ]);
    const byGuardrail = await usage("from=2026-11-01&to=2026-12-31&group_by=guardrail");
    assert.deepEqual(
      byGuardrail.body.data.map((r: { guardrail_id: string; requests: number }) => [
        r.guardrail_id,
        r.requests,
      ]),
      [[guardrailId, 4]],
    );
  });

  it("pages through the groups: offset and limit, total_count the number of groups", async () => {
    const res = await usage("from=2026-11-01&to=2026-12-31&group_by=day&offset=1&limit=2");
    assert.equal(res.body.total_count, 4);
    assert.deepEqual(
      res.body.data.map((r: { date: string }) => r.date),
      ["2026-11-23", "2026-11-30"],
    );
  });

  it("another organization sees none of it, even filtering by this organization's key, guardrail or model", async () => {
    const other = await bench.server.newOrg();
    for (const filter of [
      `key_hash=${setup.key.hash}`,
      `guardrail_id=${guardrailId}`,
      "model=anthropic/claude-4.5-sonnet-20250929",
      "group_by=key",
    ]) {
      const res = await usage(`from=2026-11-01&to=2026-12-31&${filter}`, other.key);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { data: [], total_count: 0 }, filter);
    }
  });

  it("bad parameters are 400 in the error envelope and name the parameter", async () => {
    for (const [query, path] of [
      ["from=2026-02-30&to=2026-03-01", "/from"],
      ["from=2026-03-02&to=2026-03-01", "/to"],
      ["from=2025-01-01&to=2026-03-01", "/to"],
      ["from=2026-03-01&to=2026-03-02&group_by=colour", "/group_by"],
      ["from=2026-03-01&to=2026-03-02&group_by=day,day", "/group_by"],
      ["to=2026-03-02", "/from"],
      ["from=2026-03-01&to=2026-03-02&limit=0", "/limit"],
    ] as const) {
      const res = await usage(query);
      assert.equal(res.status, 400, query);
      assert.equal(res.body.error.message, "Invalid request parameters");
      assert.ok(
        res.body.error.metadata.issues.some((i: { path: string }) => i.path === path),
        `${query}: ${JSON.stringify(res.body.error.metadata.issues)}`,
      );
    }
  });

  it("an inference key is refused (403)", async () => {
    const res = await usage("from=2026-11-01&to=2026-12-31", setup.key.secret);
    assert.equal(res.status, 403);
  });
});
