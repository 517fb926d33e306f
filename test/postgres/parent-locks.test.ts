import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { newId } from "../../src/domain/ids.js";
import { clientFor, startTestServer, TEST_DATABASE_KIND, type TestServer } from "../helpers/server.js";

/**
 * On PostgreSQL transactions run side by side, so a write that puts something under a parent (a
 * membership in a workspace, an assignment to a guardrail or of a key, a key for a member) could
 * read the parent, and commit after the parent's deletion had deleted everything under it: a member
 * of a deleted workspace, an assignment of a deleted guardrail or key, a key of a deleted member.
 * Deletions lock their row first, and those writes lock the parents they read until they commit
 * (src/storage/row-lock.ts). Each test holds a deletion's first step open from another connection,
 * sends the write, checks that it waits, finishes the deletion, and checks what the write answered
 * and that it left nothing behind.
 */
describe("no write leaves a row under a parent deleted at the same time (docs/deployment.md#transactions-and-durability)", () => {
  let server: TestServer;
  let deleter: pg.Client;
  let api: ReturnType<typeof clientFor>;

  before(async () => {
    assert.equal(TEST_DATABASE_KIND, "postgres", "run with npm run test:postgres");
    server = await startTestServer();
    deleter = new pg.Client({ connectionString: server.databaseUrl });
    await deleter.connect();
    api = clientFor(server, (await server.newOrg()).key);
  });
  after(async () => {
    await deleter.end().catch(() => undefined);
    await server.close();
  });

  /** The first step of a deletion: the row locked, as the service's deletion locks it, until `finish`. */
  const deletionUnderWay = async (table: string, column: string, value: string) => {
    await deleter.query("begin");
    await deleter.query(`select 1 from ${table} where ${column} = $1 for update`, [value]);
  };
  /** The rest of the deletion: the statements given (what the service deletes), then the commit. */
  const finish = async (...statements: [string, string][]) => {
    for (const [text, value] of statements) await deleter.query(text, [value]);
    await deleter.query("commit");
  };
  const waiting = <T>(p: Promise<T>) =>
    Promise.race([p.then(() => "answered"), new Promise((r) => setTimeout(() => r("waiting"), 300))]);
  const count = async (text: string, value: string) =>
    Number((await deleter.query<{ n: string }>(`select count(*) as n from ${text}`, [value])).rows[0]?.n);

  const workspace = async () => {
    const res = await api.post("/api/v1/workspaces", { name: `w ${newId()}` });
    assert.equal(res.status, 201);
    return res.body.data.id as string;
  };
  const guardrailIn = async (ws: string) => {
    const res = await api.post("/api/v1/guardrails", { name: `g ${newId()}`, workspace_id: ws });
    assert.equal(res.status, 201);
    return res.body.data.id as string;
  };
  const member = async (ws: string) => {
    const userId = `u-${newId()}`;
    assert.equal((await api.post("/api/v1/members", { user_id: userId, workspace_ids: [ws] })).status, 201);
    return userId;
  };

  it("a member created or moved into a workspace being deleted waits, then is refused with 400: no membership of a deleted workspace", async () => {
    const moved = await member(await workspace());
    for (const send of [
      (ws: string) => api.post("/api/v1/members", { user_id: `late-${newId()}`, workspace_ids: [ws] }),
      (ws: string) => api.patch(`/api/v1/members/${moved}`, { workspace_ids: [ws] }),
    ]) {
      const ws = await workspace();
      await deletionUnderWay("workspaces", "id", ws);
      const answer = send(ws);
      assert.equal(await waiting(answer), "waiting", "the write waits for the deletion");
      await finish(
        ["delete from member_workspaces where workspace_id = $1", ws],
        ["delete from guardrails where workspace_id = $1", ws],
        ["delete from workspaces where id = $1", ws],
      );
      const res = await answer;
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.equal(res.body.error.metadata.issues[0].path, "/workspace_ids/0");
      assert.equal(await count("member_workspaces where workspace_id = $1", ws), 0);
    }
  });

  it("an assignment to a guardrail being deleted, alone or with its workspace, waits, then is 404: no assignment of a deleted guardrail", async () => {
    for (const deleting of ["guardrail", "workspace"] as const) {
      for (const to of ["keys", "members"] as const) {
        const ws = await workspace();
        const id = await guardrailIn(ws);
        const key = await api.post("/api/v1/keys", { name: "k", workspace_id: ws });
        const body =
          to === "keys" ? { key_hashes: [key.body.data.hash] } : { member_user_ids: [await member(ws)] };
        if (deleting === "guardrail") await deletionUnderWay("guardrails", "id", id);
        else await deletionUnderWay("workspaces", "id", ws);
        const answer = api.post(`/api/v1/guardrails/${id}/assignments/${to}`, body);
        assert.equal(
          await waiting(answer),
          "waiting",
          `assigning ${to} waits for the ${deleting}'s deletion`,
        );
        if (deleting === "guardrail") await finish(["delete from guardrails where id = $1", id]);
        else
          await finish(
            ["delete from guardrails where workspace_id = $1", ws],
            ["delete from keys where workspace_id = $1", ws],
            ["delete from member_workspaces where workspace_id = $1", ws],
            ["delete from workspaces where id = $1", ws],
          );
        const res = await answer;
        assert.equal(res.status, 404, JSON.stringify(res.body));
        assert.equal(await count("key_assignments where guardrail_id = $1", id), 0);
        assert.equal(await count("member_assignments where guardrail_id = $1", id), 0);
      }
    }
  });

  it("assigning a key being deleted waits, then skips it as unknown: no assignment of a deleted key", async () => {
    const ws = await workspace();
    const id = await guardrailIn(ws);
    const hash = (await api.post("/api/v1/keys", { name: "doomed", workspace_id: ws })).body.data
      .hash as string;
    await deletionUnderWay("keys", "hash", hash);
    const answer = api.post(`/api/v1/guardrails/${id}/assignments/keys`, { key_hashes: [hash] });
    assert.equal(await waiting(answer), "waiting");
    await finish(["delete from keys where hash = $1", hash]);
    const res = await answer;
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body, { assigned_count: 0 });
    assert.equal(await count("key_assignments where key_hash = $1", hash), 0);
  });

  it("removing a member while an assignment of one of its keys is under way waits for it, then deletes that assignment with the key", async () => {
    const ws = await workspace();
    const id = await guardrailIn(ws);
    const userId = await member(ws);
    const key = await api.post("/api/v1/keys", { name: "owned", workspace_id: ws, member_user_id: userId });
    const hash = key.body.data.hash as string;
    // An assignment under way, as the service makes it: its rows locked (key share), its row written.
    await deleter.query("begin");
    await deleter.query("select 1 from workspaces where id = $1 for key share", [ws]);
    await deleter.query("select 1 from guardrails where id = $1 for key share", [id]);
    await deleter.query("select 1 from keys where hash = $1 for key share", [hash]);
    await deleter.query(
      `insert into key_assignments (id, organization_id, key_hash, guardrail_id, assigned_by, created_at)
       select $1, organization_id, hash, $2, 'test', $3 from keys where hash = $4`,
      [newId(), id, new Date().toISOString(), hash],
    );
    const removal = api.delete(`/api/v1/members/${userId}`);
    assert.equal(await waiting(removal), "waiting", "the removal waits for the assignment");
    await deleter.query("commit");
    assert.equal((await removal).status, 200);
    assert.equal(await count("keys where hash = $1", hash), 0);
    assert.equal(
      await count("key_assignments where key_hash = $1", hash),
      0,
      "no assignment of a deleted key",
    );
  });

  it("a key made for a member being removed waits, then is refused with 400: no key of a removed member", async () => {
    const ws = await workspace();
    const userId = await member(ws);
    await deletionUnderWay("members", "user_id", userId);
    const answer = api.post("/api/v1/keys", { name: "late", workspace_id: ws, member_user_id: userId });
    assert.equal(await waiting(answer), "waiting");
    await finish(
      ["delete from member_workspaces where user_id = $1", userId],
      ["delete from members where user_id = $1", userId],
    );
    const res = await answer;
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.equal(await count("keys where member_user_id = $1", userId), 0);
  });
});
