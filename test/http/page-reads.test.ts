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

/** Records spend as the gateway settles it, for a key (and its member, if any). */
async function recordSpend(
  server: TestServer,
  org: TestOrg,
  spend: { key_hash: string; member_user_id?: string; cost_micros: number; byok: boolean },
): Promise<void> {
  await server.deps.spend.settle(
    null,
    0,
    ledger(newId(), spend.cost_micros, {
      organization_id: org.organizationId,
      key_hash: spend.key_hash,
      workspace_id: org.workspaceId,
      member_user_id: spend.member_user_id ?? null,
      byok: spend.byok ? 1 : 0,
      created_at: new Date().toISOString(),
    }),
    [],
  );
}

/**
 * The whole list at `path` against each object read alone at `path/<id>`: equal, on a page that
 * holds at least `spending` objects with spend and `kinds` different budget lists.
 */
async function assertListedAsAlone(
  steps: ReturnType<typeof orgSteps>,
  path: string,
  idOf: (item: Record<string, unknown>) => string,
  expected: { count: number; spending: number; kinds: number },
): Promise<void> {
  const page = await steps.list(path);
  assert.equal(page.data.length, expected.count);
  const spent = page.data.filter((o) => Number(o.usage) + Number(o.byok_usage) > 0);
  assert.ok(spent.length >= expected.spending, `the page holds ${spent.length} objects with spend`);
  const budgets = new Set(page.data.map((o) => JSON.stringify(o.budgets)));
  assert.ok(budgets.size >= expected.kinds, `the objects differ in their budgets (${budgets.size} kinds)`);
  for (const listed of page.data) {
    const one = await steps.api.get(`${path}/${idOf(listed)}`);
    assert.equal(one.status, 200);
    assert.deepEqual(listed, one.body.data, idOf(listed));
  }
}

/** The queries `read` runs for a few items and for all: equal, and more than none. */
async function assertQueriesConstant<T>(
  server: TestServer,
  read: (deps: TestServer["deps"], items: readonly T[]) => Promise<unknown[]>,
  few: readonly T[],
  all: readonly T[],
): Promise<void> {
  const queriesFor = async (items: readonly T[]) => {
    const counter = queryCounter();
    const deps = { ...server.deps, db: server.deps.db.withPlugin(counter.plugin) };
    assert.equal((await read(deps, items)).length, items.length);
    return counter.count();
  };
  const forFew = await queriesFor(few);
  const forAll = await queriesFor(all);
  assert.ok(forFew > 0, "the counter sees the queries");
  assert.equal(forAll, forFew, `${all.length} items took ${forAll} queries, ${few.length} took ${forFew}`);
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
    for (const [i, k] of keys.entries())
      if (i % 2 === 0)
        await recordSpend(server, org, {
          key_hash: k.hash,
          cost_micros: 10_000 * (i + 1),
          byok: i % 4 === 0,
        });
  });
  after(async () => server?.close());

  it("the list shows each key exactly as GET /keys/{hash} does: its own usage, budgets and limits (docs/api.md#key-lists)", async () => {
    await assertListedAsAlone(steps, "/api/v1/keys", (k) => String(k.hash), {
      count: keys.length,
      spending: 5,
      kinds: 4,
    });
  });

  it("a page is read in the same number of queries whatever the number of keys on it (docs/api.md#key-lists)", async () => {
    const all = (await listInferenceKeys(server.deps.db, org.organizationId, { offset: 0, limit: 100 }))
      .items;
    // Two keys that between them need every kind of read: a member's key and one of no member.
    const member = all.filter((k) => k.member_user_id !== null);
    const other = all.filter((k) => k.member_user_id === null).slice(0, 1);
    assert.equal(member.length + other.length, 2);
    await assertQueriesConstant(server, presentServedKeys, [...member, ...other], all);
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
    for (const [i, user_id] of users.entries())
      if (i % 3 !== 2)
        await recordSpend(server, org, {
          key_hash: `key-of-${user_id}`,
          member_user_id: user_id,
          cost_micros: 20_000 * (i + 1),
          byok: i % 4 === 1,
        });
  });
  after(async () => server?.close());

  it("the list shows each member exactly as GET /members/{user_id} does: its own usage and budgets (docs/api.md#member-lists)", async () => {
    await assertListedAsAlone(steps, "/api/v1/members", (m) => String(m.user_id), {
      count: users.length,
      spending: 4,
      kinds: 5,
    });
  });

  it("a page is read in the same number of queries whatever the number of members on it (docs/api.md#member-lists)", async () => {
    const all = (await listMembers(server.deps.db, org.organizationId, { offset: 0, limit: 100 })).items;
    assert.equal(all.length, users.length);
    // Two members that between them need every kind of read: both have budgets.
    const few = all.filter((m) => m.user_id === "ann" || m.user_id === "bob");
    await assertQueriesConstant(server, readMembersSpend, few, all);
  });
});
