import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, it } from "node:test";
import { api, runCli, serverOnFreshDatabase } from "./child.js";

describe("the command line against a running server on the same database", () => {
  const bench = serverOnFreshDatabase("guardrails-cli-");

  async function defaultWorkspaceId(): Promise<string> {
    const list = await api(
      bench.server.origin,
      "GET",
      "/api/v1/workspaces",
      bench.env.GUARDRAILS_MANAGEMENT_KEY as string,
    );
    const ws = list.body.data.find((w: { is_default: boolean }) => w.is_default);
    assert.ok(ws, "a default workspace");
    return ws.id;
  }

  it("keys create --management prints a key that works as a management key on the server", {
    timeout: 30_000,
  }, async () => {
    // Without GUARDRAILS_MANAGEMENT_KEY: the CLI needs only the database.
    const out = await runCli(["keys", "create", "--management", "--name", "ops"], {
      DATABASE_URL: bench.env.DATABASE_URL as string,
    });
    assert.equal(out.code, 0, out.stderr);
    const lines = out.stdout.trim().split("\n");
    assert.equal(lines.length, 1, out.stdout);
    const key = lines[0] as string;
    assert.ok(key.length >= 32, key);
    const res = await api(bench.server.origin, "POST", "/api/v1/guardrails", key, {
      name: "made with a CLI key",
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const again = await runCli(["keys", "create", "--management"], {
      DATABASE_URL: bench.env.DATABASE_URL as string,
    });
    assert.notEqual(again.stdout.trim(), key, "each key is new");
  });

  it("keys create --workspace <default workspace id> prints an inference key of that workspace", {
    timeout: 30_000,
  }, async () => {
    const workspaceId = await defaultWorkspaceId();
    const out = await runCli(["keys", "create", "--workspace", workspaceId, "--name", "app"], bench.env);
    assert.equal(out.code, 0, out.stderr);
    const key = out.stdout.trim();
    assert.doesNotMatch(key, /\s/);
    const hash = createHash("sha256").update(key).digest("hex");
    const record = await api(
      bench.server.origin,
      "GET",
      `/api/v1/keys/${hash}`,
      bench.env.GUARDRAILS_MANAGEMENT_KEY as string,
    );
    assert.equal(record.status, 200);
    assert.equal(record.body.data.workspace_id, workspaceId);
    assert.equal(record.body.data.name, "app");
    // An inference key: valid (not 401) but refused on management routes (docs/behaviour.md#key-kinds).
    const refused = await api(bench.server.origin, "GET", "/api/v1/guardrails", key);
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.message, "Only management keys can perform this operation");
  });

  it("keys create with both --management and --workspace is a misuse (exit 2) and prints no key (README.md#command-line)", {
    timeout: 30_000,
  }, async () => {
    const workspaceId = await defaultWorkspaceId();
    const out = await runCli(["keys", "create", "--management", "--workspace", workspaceId], bench.env);
    assert.equal(out.code, 2);
    assert.equal(out.stdout, "");
    assert.match(out.stderr, /--management/);
  });

  it("keys create --workspace with an unknown workspace fails and creates nothing", {
    timeout: 30_000,
  }, async () => {
    const before = await api(
      bench.server.origin,
      "GET",
      "/api/v1/keys?limit=100",
      bench.env.GUARDRAILS_MANAGEMENT_KEY as string,
    );
    const out = await runCli(
      ["keys", "create", "--workspace", "00000000-0000-4000-8000-000000000000"],
      bench.env,
    );
    assert.notEqual(out.code, 0);
    assert.equal(out.stdout, "");
    const after = await api(
      bench.server.origin,
      "GET",
      "/api/v1/keys?limit=100",
      bench.env.GUARDRAILS_MANAGEMENT_KEY as string,
    );
    assert.deepEqual(after.body, before.body);
  });
});
