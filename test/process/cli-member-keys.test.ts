import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, it } from "node:test";
import { api, runCli, serverOnFreshDatabase } from "./child.js";

describe("keys create --workspace <id> --member <user_id> (docs/behaviour.md#member-keys)", () => {
  const bench = serverOnFreshDatabase("guardrails-cli-member-");

  async function workspaces(): Promise<{ home: string; other: string }> {
    const list = await api(bench.server.origin, "GET", "/api/v1/workspaces", bench.mgmt);
    const home = list.body.data.find((w: { is_default: boolean }) => w.is_default)?.id;
    const made = await api(bench.server.origin, "POST", "/api/v1/workspaces", bench.mgmt, {
      name: `w-${Math.random()}`,
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    return { home, other: made.body.data.id };
  }

  const keyCount = async () =>
    (await api(bench.server.origin, "GET", "/api/v1/keys?limit=100", bench.mgmt)).body.total_count;

  it("prints an inference key owned by the member; its member guardrail applies (docs/behaviour.md#member-keys; docs/behaviour.md#layers)", {
    timeout: 30_000,
  }, async () => {
    const { other } = await workspaces();
    const member = await api(bench.server.origin, "POST", "/api/v1/members", bench.mgmt, {
      user_id: "cli-owner",
      workspace_ids: [other],
    });
    assert.equal(member.status, 201, JSON.stringify(member.body));
    const g = await api(bench.server.origin, "POST", "/api/v1/guardrails", bench.mgmt, {
      name: "m",
      workspace_id: other,
    });
    const assigned = await api(
      bench.server.origin,
      "POST",
      `/api/v1/guardrails/${g.body.data.id}/assignments/members`,
      bench.mgmt,
      {
        member_user_ids: ["cli-owner"],
      },
    );
    assert.deepEqual(assigned.body, { assigned_count: 1 });

    const out = await runCli(
      ["keys", "create", "--workspace", other, "--member", "cli-owner", "--name", "owned"],
      bench.env,
    );
    assert.equal(out.code, 0, out.stderr);
    const secret = out.stdout.trim();
    assert.doesNotMatch(secret, /\s/);
    const hash = createHash("sha256").update(secret).digest("hex");
    const record = await api(bench.server.origin, "GET", `/api/v1/keys/${hash}`, bench.mgmt);
    assert.equal(record.status, 200);
    assert.equal(record.body.data.member_user_id, "cli-owner");
    assert.equal(record.body.data.workspace_id, other);
    const current = await api(bench.server.origin, "GET", "/api/v1/key", secret);
    assert.equal(current.status, 200, JSON.stringify(current.body));
    assert.equal(current.body.data.member_user_id, "cli-owner");
    assert.deepEqual(
      current.body.data.guardrails.map((x: { layer: string; id: string }) => [x.layer, x.id]),
      [["member", g.body.data.id]],
    );
  });

  it("an unknown member, or a member outside the workspace, fails without printing or storing a key (docs/behaviour.md#member-keys)", {
    timeout: 30_000,
  }, async () => {
    const { home, other } = await workspaces();
    const member = await api(bench.server.origin, "POST", "/api/v1/members", bench.mgmt, {
      user_id: "home-only",
    });
    assert.equal(member.status, 201, JSON.stringify(member.body));
    const before = await keyCount();
    for (const args of [
      ["--workspace", home, "--member", "nobody"],
      ["--workspace", other, "--member", "home-only"],
    ]) {
      const out = await runCli(["keys", "create", ...args], bench.env);
      assert.notEqual(out.code, 0, args.join(" "));
      assert.equal(out.stdout, "");
      assert.match(out.stderr, /member_user_id/);
    }
    assert.equal(await keyCount(), before);
  });
});
