import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { KyselyPlugin } from "kysely";
import { newId } from "../../src/domain/ids.js";
import { readMembersSpend } from "../../src/services/read-subject-spend.js";
import { presentServedKeys } from "../../src/services/served-keys.js";
import { listInferenceKeys } from "../../src/storage/key-repo.js";
import { listMembers } from "../../src/storage/member-repo.js";
import { startTestServer, TEST_DATABASE_KIND, type TestOrg, type TestServer } from "../helpers/server.js";
import { ledger } from "../storage/spend-fixtures.js";
import { type MadeKey, orgSteps } from "./org-support.js";

/** Counts the statements run through a Kysely instance (every one passes transformResult). */
function queryCounter(): { plugin: KyselyPlugin; count: () => number } {
  let n = 0;
  return {
    plugin: {
      transformQuery: (args) => args.node,
      transformResult: async (args) => {
        n++;
        return args.result;
      },
    },
    count: () => n,
  };
}

describe(`a page of keys on ${TEST_DATABASE_KIND} (docs/api.md#key-lists)`, () => {
  let server: TestServer;
  let org: TestOrg;
  let steps: ReturnType<typeof orgSteps>;
  const keys: MadeKey[] = [];

  before(async () => {
    server = await startTestServer();
    org = await server.newOrg();
    steps = orgSteps(server, org);
    // Keys that differ in every layer the list reads: a member's key with the member's guardrail,
    // keys with a guardrail of their own (two different ones), keys with none, a key in another
    // workspace with its own budget; and spend recorded on some of them.
    const second = await steps.workspace("second");
    await steps.member("user-a");
    const memberGuardrail = await steps.guardrail({ name: "member", limit_usd: 7, reset_interval: "weekly" });
    await steps.assignMembers(memberGuardrail.id, ["user-a"]);
    const daily = await steps.guardrail({ name: "daily", limit_usd: 5, reset_interval: "daily" });
    const monthly = await steps.guardrail({ name: "monthly", limit_usd: 50, reset_interval: "monthly" });
    assert.equal(
      (await steps.api.put(`/api/v1/workspaces/${org.workspaceId}/budgets/daily`, { limit_usd: 20 })).status,
      200,
    );
    assert.equal(
      (await steps.api.put(`/api/v1/workspaces/${second.id}/budgets/lifetime`, { limit_usd: 3 })).status,
      200,
    );
    for (let i = 0; i < 12; i++) keys.push(await steps.key({ name: `key ${i}` }));
    keys.push(await steps.key({ name: "member key", member_user_id: "user-a" }));
    keys.push(await steps.key({ name: "second workspace key", workspace_id: second.id }));
    // Guardrails belong to the default workspace: the second workspace's key (the last) takes none.
    const assignable = keys.slice(0, -1);
    await steps.assignKeys(
      daily.id,
      assignable.filter((_, i) => i % 3 === 0).map((k) => k.hash),
    );
    await steps.assignKeys(
      monthly.id,
      assignable.filter((_, i) => i % 3 === 1).map((k) => k.hash),
    );
    // Settled spend of different amounts on every other key, as the gateway records it.
    const now = new Date().toISOString();
    for (const [i, k] of keys.entries()) {
      if (i % 2 === 1) continue;
      await server.deps.spend.settle(
        null,
        0,
        ledger(newId(), 10_000 * (i + 1), {
          organization_id: org.organizationId,
          key_hash: k.hash,
          workspace_id: org.workspaceId,
          byok: i % 4 === 0 ? 1 : 0,
          created_at: now,
        }),
        [],
      );
    }
  });
  after(async () => server?.close());

  it("the list shows each key exactly as GET /keys/{hash} does: its own usage, budgets and limits (docs/api.md#key-lists)", async () => {
    const page = await steps.list("/api/v1/keys");
    assert.equal(page.data.length, keys.length);
    const spent = page.data.filter((k) => Number(k.usage) + Number(k.byok_usage) > 0);
    assert.ok(spent.length >= 5, "the page holds keys with spend recorded");
    const budgets = new Set(page.data.map((k) => JSON.stringify(k.budgets)));
    assert.ok(budgets.size >= 4, `the keys differ in their budgets (${budgets.size} kinds)`);
    for (const listed of page.data) {
      const one = await steps.api.get(`/api/v1/keys/${listed.hash}`);
      assert.equal(one.status, 200);
      assert.deepEqual(listed, one.body.data, `key ${listed.name}`);
    }
  });

  it("a page is read in the same number of queries whatever the number of keys on it (docs/api.md#key-lists)", async () => {
    const all = (await listInferenceKeys(server.deps.db, org.organizationId, { offset: 0, limit: 100 }))
      .items;
    const queriesFor = async (some: typeof all) => {
      const counter = queryCounter();
      const deps = { ...server.deps, db: server.deps.db.withPlugin(counter.plugin) };
      const served = await presentServedKeys(deps, some);
      assert.equal(served.length, some.length);
      return counter.count();
    };
    // Two keys that between them need every kind of read: a member's key and one of no member.
    const member = all.filter((k) => k.member_user_id !== null);
    const other = all.filter((k) => k.member_user_id === null).slice(0, 1);
    assert.equal(member.length + other.length, 2);
    const few = await queriesFor([...member, ...other]);
    const many = await queriesFor(all);
    assert.ok(few > 0, "the counter sees the queries");
    assert.equal(many, few, `${all.length} keys took ${many} queries, 2 keys ${few}`);
  });
});

describe(`a page of members on ${TEST_DATABASE_KIND} (docs/api.md#member-lists)`, () => {
  let server: TestServer;
  let org: TestOrg;
  let steps: ReturnType<typeof orgSteps>;
  const users = ["ann", "bob", "cat", "dan", "eve", "fay", "gus", "hal"];

  before(async () => {
    server = await startTestServer();
    org = await server.newOrg();
    steps = orgSteps(server, org);
    // Members that differ in every layer the list reads: guardrails of their own in one or two
    // workspaces (of different limits), none, a workspace default with a budget in the second
    // workspace only; and spend recorded on some of them.
    const second = await steps.workspace("second");
    await steps.patchGuardrail(second.default_guardrail_id, { limit_usd: 9, reset_interval: "monthly" });
    for (const [i, user_id] of users.entries())
      await steps.member(user_id, i % 2 === 0 ? { workspace_ids: [org.workspaceId, second.id] } : {});
    const small = await steps.guardrail({ name: "small", limit_usd: 2, reset_interval: "daily" });
    const large = await steps.guardrail({ name: "large", limit_usd: 40, reset_interval: "weekly" });
    const there = await steps.guardrail({
      name: "second",
      workspace_id: second.id,
      limit_usd: 4,
      reset_interval: "daily",
    });
    await steps.assignMembers(small.id, ["ann", "cat"]);
    await steps.assignMembers(large.id, ["bob"]);
    await steps.assignMembers(there.id, ["ann", "eve"]);
    const now = new Date().toISOString();
    for (const [i, user_id] of users.entries()) {
      if (i % 3 === 2) continue;
      await server.deps.spend.settle(
        null,
        0,
        ledger(newId(), 20_000 * (i + 1), {
          organization_id: org.organizationId,
          key_hash: `key-of-${user_id}`,
          workspace_id: org.workspaceId,
          member_user_id: user_id,
          byok: i % 4 === 1 ? 1 : 0,
          created_at: now,
        }),
        [],
      );
    }
  });
  after(async () => server?.close());

  it("the list shows each member exactly as GET /members/{user_id} does: its own usage and budgets (docs/api.md#member-lists)", async () => {
    const page = await steps.list("/api/v1/members");
    assert.equal(page.data.length, users.length);
    const spent = page.data.filter((m) => Number(m.usage) + Number(m.byok_usage) > 0);
    assert.ok(spent.length >= 4, "the page holds members with spend recorded");
    const budgets = new Set(page.data.map((m) => JSON.stringify(m.budgets)));
    assert.ok(budgets.size >= 5, `the members differ in their budgets (${budgets.size} kinds)`);
    for (const listed of page.data) {
      const one = await steps.api.get(`/api/v1/members/${listed.user_id}`);
      assert.equal(one.status, 200);
      assert.deepEqual(listed, one.body.data, `member ${listed.user_id}`);
    }
  });

  it("a page is read in the same number of queries whatever the number of members on it (docs/api.md#member-lists)", async () => {
    const all = (await listMembers(server.deps.db, org.organizationId, { offset: 0, limit: 100 })).items;
    assert.equal(all.length, users.length);
    const queriesFor = async (some: typeof all) => {
      const counter = queryCounter();
      const deps = { ...server.deps, db: server.deps.db.withPlugin(counter.plugin) };
      const spends = await readMembersSpend(deps, some);
      assert.equal(spends.length, some.length);
      return counter.count();
    };
    // Two members that between them need every kind of read: both have budgets.
    const few = await queriesFor(all.filter((m) => m.user_id === "ann" || m.user_id === "bob"));
    const many = await queriesFor(all);
    assert.ok(few > 0, "the counter sees the queries");
    assert.equal(many, few, `${all.length} members took ${many} queries, 2 members ${few}`);
  });
});
