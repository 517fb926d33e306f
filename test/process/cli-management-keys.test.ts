import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, it } from "node:test";
import { api, runCli, serverOnFreshDatabase } from "./child.js";

/**
 * Management keys on the command line, beside a running server on the same SQLite file
 * (docs/behaviour.md#management-key-revocation, docs/behaviour.md#management-key-rotation): listed,
 * revoked, rotated; the server refuses a revoked key within its change poll.
 */
describe("management keys on the command line (docs/behaviour.md#management-key-rotation)", () => {
  const bench = serverOnFreshDatabase("guardrails-cli-mgmt-");
  const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

  async function json(args: string[]) {
    const out = await runCli([...args, "--json"], bench.env);
    assert.equal(out.code, 0, out.stderr);
    return JSON.parse(out.stdout);
  }
  const status = async (key: string) =>
    (await api(bench.server.origin, "GET", "/api/v1/guardrails", key)).status;
  /** Polls the running server (bounded) until the key gets `want`; the server sees the file's changes within a second. */
  async function until(key: string, want: number): Promise<number> {
    let got = 0;
    for (let i = 0; i < 100 && got !== want; i++) {
      got = await status(key);
      if (got !== want) await new Promise((r) => setTimeout(r, 100));
    }
    return got;
  }

  it("the only management key is refused by keys revoke (exit 1, the API's 409 body) and keeps working; rotate replaces it and the old one stops on the running server, also after a restart's bootstrap (docs/behaviour.md#management-key-rotation)", {
    timeout: 600_000,
  }, async () => {
    // The first start made the organization with its initial key (whose secret nobody saw, as
    // GUARDRAILS_MANAGEMENT_KEY was set) and registered the configured key beside it.
    const listed = await json(["keys", "list", "--management"]);
    assert.equal(listed.total_count, 2);
    assert.equal(JSON.stringify(listed).includes(bench.mgmt), false, "no secret listed");
    const fromApi = await api(bench.server.origin, "GET", "/api/v1/management-keys", bench.mgmt);
    assert.deepEqual(
      listed.data,
      fromApi.body.data.map((k: Record<string, unknown>) => ({ ...k, current: false })),
    );
    const initial = listed.data.find((k: { hash: string }) => k.hash !== sha256(bench.mgmt));
    assert.equal(initial.name, "Initial management key");
    assert.equal((await json(["keys", "revoke", initial.hash])).deleted, true);

    const refused = await runCli(["keys", "revoke", sha256(bench.mgmt), "--json"], bench.env);
    assert.equal(refused.code, 1);
    assert.equal(refused.stdout, "");
    const body = JSON.parse(refused.stderr);
    assert.equal(body.error.code, 409);
    assert.equal(body.error.metadata.reason, "last_management_key");
    const plain = await runCli(["keys", "revoke", sha256(bench.mgmt)], bench.env);
    assert.equal(plain.code, 1);
    assert.match(plain.stderr, /last_management_key; .*keys rotate <hash>/);
    assert.equal(await status(bench.mgmt), 200);

    const rotated = await runCli(["keys", "rotate", sha256(bench.mgmt)], bench.env);
    assert.equal(rotated.code, 0, rotated.stderr);
    const secret = rotated.stdout.trim();
    assert.match(secret, /^sk-gr-mgmt-\S+$/);
    assert.match(rotated.stderr, new RegExp(`replaces:\\s+${sha256(bench.mgmt)}`));
    assert.match(rotated.stderr, /shown only now/);
    assert.equal(await until(bench.mgmt, 401), 401, "the old key stops on the running server");
    assert.equal(await status(secret), 200);

    // The next command bootstraps with the same GUARDRAILS_MANAGEMENT_KEY: it stays revoked.
    const after = await json(["keys", "list", "--management"]);
    assert.deepEqual(
      after.data.map((k: { hash: string }) => k.hash),
      [sha256(secret)],
    );
    assert.equal(after.data[0].name, "GUARDRAILS_MANAGEMENT_KEY", "the new key keeps the old one's name");
    assert.equal(await status(bench.mgmt), 401);

    const log = await api(
      bench.server.origin,
      "GET",
      "/api/v1/audit-log?resource_type=management_key",
      secret,
    );
    assert.deepEqual(
      log.body.data.map((e: { action: string; resource_id: string }) => [e.action, e.resource_id]).sort(),
      [
        ["management_key.rotate", sha256(secret)],
        ["management_key.revoke", initial.hash],
        ["management_key.revoke", sha256(bench.mgmt)],
      ].sort(),
    );
    assert.equal(JSON.stringify(log.body).includes(secret), false, "no secret in the audit log");
    bench.mgmt = secret;
  });

  it("keys create --management, then keys revoke of the other: the revoked key is refused by the running server, the new one works (docs/behaviour.md#management-key-rotation)", {
    timeout: 600_000,
  }, async () => {
    const made = await json(["keys", "create", "--management", "--name", "ops"]);
    assert.equal(made.data.kind, "management");
    assert.equal(await status(made.key), 200);
    // Cached by the server before the revocation.
    assert.equal(await status(bench.mgmt), 200);
    const revoked = await json(["keys", "revoke", sha256(bench.mgmt)]);
    assert.equal(revoked.deleted, true);
    assert.equal(revoked.data.hash, sha256(bench.mgmt));
    assert.equal(JSON.stringify(revoked).includes(bench.mgmt), false);
    assert.equal(await until(bench.mgmt, 401), 401);
    assert.equal(await status(made.key), 200);
    const table = await runCli(["keys", "list", "--management"], bench.env);
    assert.equal(table.code, 0);
    const lines = table.stdout.trim().split("\n");
    assert.match(lines[0] as string, /^HASH\s+LABEL\s+NAME\s+CREATED$/);
    assert.equal(lines.length, 2);
    assert.ok((lines[1] as string).startsWith(made.data.hash));
    // rotate is for management keys only: any other hash is 404.
    const wrong = await runCli(["keys", "rotate", "0".repeat(64), "--json"], bench.env);
    assert.equal(wrong.code, 1);
    assert.equal(JSON.parse(wrong.stderr).error.code, 404);
    bench.mgmt = made.key;
  });
});
