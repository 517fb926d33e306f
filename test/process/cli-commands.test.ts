import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, it } from "node:test";
import { api, runCli, serverOnFreshDatabase } from "./child.js";

/**
 * Every command of the command line, with and without --json, and its errors (README.md#command-line):
 * results on stdout, notes and errors on stderr, the HTTP API's shapes with --json, exit codes 0/1/2.
 */
describe("the command line's commands and output convention (README.md#command-line)", () => {
  const bench = serverOnFreshDatabase("guardrails-cli-commands-");

  async function json(args: string[]) {
    const out = await runCli([...args, "--json"], bench.env);
    assert.equal(out.code, 0, out.stderr);
    assert.equal(out.stdout.trim().split("\n").length, 1, "one line of JSON");
    return JSON.parse(out.stdout);
  }

  it("keys create --json returns the API's created-key shape; the secret's SHA-256 is the hash", {
    timeout: 60_000,
  }, async () => {
    const made = await json(["keys", "create", "--name", "scripted"]);
    assert.equal(made.data.name, "scripted");
    assert.equal(made.data.kind, "inference");
    assert.equal(made.data.hash, createHash("sha256").update(made.key).digest("hex"));
    const record = await api(bench.server.origin, "GET", `/api/v1/keys/${made.data.hash}`, bench.mgmt);
    assert.equal(record.status, 200);
    const management = await json(["keys", "create", "--management"]);
    assert.equal(management.data.kind, "management");
    assert.equal((await api(bench.server.origin, "GET", "/api/v1/workspaces", management.key)).status, 200);
  });

  it("keys create without --json prints the secret alone on stdout and its record on stderr", {
    timeout: 60_000,
  }, async () => {
    const out = await runCli(["keys", "create", "--name", "by hand"], bench.env);
    assert.equal(out.code, 0, out.stderr);
    const secret = out.stdout.trim();
    assert.doesNotMatch(secret, /\s/);
    const hash = createHash("sha256").update(secret).digest("hex");
    assert.match(out.stderr, new RegExp(`hash:\\s+${hash}`));
    assert.match(out.stderr, /shown only now/);
  });

  it("keys list and keys show agree with the API, as a table, as fields and as JSON", {
    timeout: 60_000,
  }, async () => {
    const made = await json(["keys", "create", "--name", "listed"]);
    const fromApi = await api(bench.server.origin, "GET", "/api/v1/keys?limit=100", bench.mgmt);
    const listed = await json(["keys", "list"]);
    assert.deepEqual(listed, fromApi.body);
    const table = await runCli(["keys", "list"], bench.env);
    assert.equal(table.code, 0);
    const lines = table.stdout.trim().split("\n");
    assert.match(lines[0] as string, /^HASH\s+LABEL\s+NAME\s+WORKSPACE\s+MEMBER\s+DISABLED\s+CREATED$/);
    assert.equal(lines.length, 1 + fromApi.body.total_count);
    assert.ok(lines.some((l) => l.startsWith(made.data.hash) && l.includes("listed")));

    const shown = await json(["keys", "show", made.data.hash]);
    const one = await api(bench.server.origin, "GET", `/api/v1/keys/${made.data.hash}`, bench.mgmt);
    assert.deepEqual(shown, one.body);
    const fields = await runCli(["keys", "show", made.data.hash], bench.env);
    assert.match(fields.stdout, new RegExp(`^hash:\\s+${made.data.hash}$`, "m"));
    assert.match(fields.stdout, /^name:\s+listed$/m);
  });

  it("keys revoke deletes the key, and the running server refuses it from then on", {
    timeout: 60_000,
  }, async () => {
    const made = await json(["keys", "create", "--name", "doomed"]);
    const ask = () =>
      api(bench.server.origin, "POST", "/api/v1/chat/completions", made.key, {
        model: "meta-llama/llama-3.1-8b-instruct",
        messages: [{ role: "user", content: "hi" }],
      });
    // Answered, so the server has this key in its cache before the revocation.
    assert.equal((await ask()).status, 200);
    const revoked = await json(["keys", "revoke", made.data.hash]);
    assert.equal(revoked.deleted, true);
    assert.equal(revoked.data.hash, made.data.hash);
    assert.equal(
      (await api(bench.server.origin, "GET", `/api/v1/keys/${made.data.hash}`, bench.mgmt)).status,
      404,
    );
    let status = 0;
    for (let i = 0; i < 100 && status !== 401; i++) {
      status = (await ask()).status;
      if (status !== 401) await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(status, 401, "the revoked key no longer authenticates on the running server");
  });

  it("an unknown hash is exit 1 with the API's 404 body under --json, and a line naming it without", {
    timeout: 60_000,
  }, async () => {
    const unknown = "0".repeat(64);
    for (const command of ["show", "revoke"]) {
      const out = await runCli(["keys", command, unknown, "--json"], bench.env);
      assert.equal(out.code, 1);
      assert.equal(out.stdout, "");
      const body = JSON.parse(out.stderr);
      assert.equal(body.error.code, 404);
      assert.equal(body.error.message, "Resource not found");
      assert.equal(body.error.metadata.hash, unknown);
      const plain = await runCli(["keys", command, unknown], bench.env);
      assert.equal(plain.code, 1);
      assert.equal(plain.stdout, "");
      // revoke takes a management key's hash too (docs/behaviour.md#management-key-revocation).
      const kind = command === "revoke" ? "key" : "inference key";
      assert.equal(plain.stderr, `guardrails: Resource not found; no ${kind} has this hash\n`);
    }
  });

  it("workspaces list and guardrails list match the API, as tables and as JSON", {
    timeout: 60_000,
  }, async () => {
    const ws = await api(bench.server.origin, "POST", "/api/v1/workspaces", bench.mgmt, { name: "Team B" });
    assert.equal(ws.status, 201);
    const a = await api(bench.server.origin, "POST", "/api/v1/guardrails", bench.mgmt, {
      name: "redacts mail",
      content_filter_builtins: [{ slug: "email", action: "redact" }],
    });
    const b = await api(bench.server.origin, "POST", "/api/v1/guardrails", bench.mgmt, {
      name: "EU budget",
      workspace_id: ws.body.data.id,
      allowed_data_regions: ["europe"],
      limit_usd: 5,
      reset_interval: "weekly",
    });
    assert.equal(b.status, 201, JSON.stringify(b.body));

    const spaces = await json(["workspaces", "list"]);
    assert.deepEqual(
      spaces,
      (await api(bench.server.origin, "GET", "/api/v1/workspaces?limit=100", bench.mgmt)).body,
    );
    const spaceTable = await runCli(["workspaces", "list"], bench.env);
    assert.match(spaceTable.stdout, /^ID\s+NAME\s+DEFAULT\s+CREATED\n/);
    assert.match(spaceTable.stdout, /Team B\s+false/);

    const every = await json(["guardrails", "list"]);
    assert.deepEqual(
      every.data.map((g: { id: string }) => g.id).sort(),
      [a.body.data.id, b.body.data.id].sort(),
    );
    assert.deepEqual(
      every.data.find((g: { id: string }) => g.id === b.body.data.id),
      b.body.data,
    );
    const onlyB = await json(["guardrails", "list", "--workspace", ws.body.data.id]);
    assert.deepEqual(onlyB, { data: [b.body.data], total_count: 1 });
    const table = await runCli(["guardrails", "list"], bench.env);
    assert.match(table.stdout, /^ID\s+WORKSPACE\s+NAME\s+BUDGET\s+REGIONS\s+FILTERS\n/);
    assert.match(table.stdout, /Default\s+redacts mail\s+-\s+-\s+email:redact/);
    assert.match(table.stdout, /Team B\s+EU budget\s+\$5 weekly\s+europe/);
  });

  it("guardrails list marks the filters that read answers apart from those that read requests (docs/behaviour.md#apply-to)", {
    timeout: 60_000,
  }, async () => {
    const made = await api(bench.server.origin, "POST", "/api/v1/guardrails", bench.mgmt, {
      name: "reads answers",
      content_filter_builtins: [
        { slug: "email", action: "redact" },
        { slug: "email", action: "block", apply_to: "response" },
        { slug: "ssn", action: "flag", apply_to: "both" },
        { slug: "phone", action: "flag", apply_to: "request" },
      ],
      content_filters: [
        { pattern: "a+", action: "redact" },
        { pattern: "b+", action: "block", apply_to: "response" },
        { pattern: "c+", action: "block", apply_to: "response" },
      ],
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const table = await runCli(["guardrails", "list"], bench.env);
    assert.equal(table.code, 0, table.stderr);
    const line = table.stdout.split("\n").find((l) => l.includes("reads answers"));
    assert.ok(line, table.stdout);
    assert.match(
      line,
      /email:redact,email:block \(answers\),ssn:flag \(requests and answers\),phone:flag,1 custom,2 custom \(answers\)$/,
    );
    // --json is the API's shape, apply_to as stored.
    const listed = await json(["guardrails", "list"]);
    const g = listed.data.find((x: { id: string }) => x.id === made.body.data.id);
    assert.deepEqual(g, made.body.data);
  });

  it("organizations create --json returns the new organization and a key that manages only it", {
    timeout: 60_000,
  }, async () => {
    const made = await json(["organizations", "create", "--name", "Acme"]);
    assert.equal(made.data.name, "Acme");
    const spaces = await api(bench.server.origin, "GET", "/api/v1/workspaces", made.key);
    assert.equal(spaces.status, 200);
    assert.deepEqual(
      spaces.body.data.map((w: { id: string }) => w.id),
      [made.data.default_workspace_id],
    );
  });

  it("misuse is exit 2 with the 400 body under --json, and nothing is written", {
    timeout: 60_000,
  }, async () => {
    const before = await api(bench.server.origin, "GET", "/api/v1/keys?limit=100", bench.mgmt);
    for (const args of [
      ["keys", "list", "--bogus"],
      ["keys", "show"],
      ["keys", "frobnicate"],
      ["keys", "create", "--management", "--member", "u1"],
      ["organizations", "create"],
      ["nonsense"],
    ]) {
      const out = await runCli([...args, "--json"], bench.env);
      assert.equal(out.code, 2, args.join(" "));
      assert.equal(out.stdout, "", args.join(" "));
      const body = JSON.parse(out.stderr);
      assert.equal(body.error.code, 400);
      assert.equal(body.error.message, "Invalid request parameters");
      assert.ok(body.error.metadata.issues.length > 0);
    }
    const after = await api(bench.server.origin, "GET", "/api/v1/keys?limit=100", bench.mgmt);
    assert.deepEqual(after.body, before.body);
  });

  it("a 400 of the services' own checks (unknown workspace or member) is exit 2, as README.md#command-line says, and writes nothing", {
    // Three processes, each started through tsx: on a loaded two-core machine one takes 15 s.
    timeout: 180_000,
  }, async () => {
    const before = await api(bench.server.origin, "GET", "/api/v1/keys?limit=100", bench.mgmt);
    const unknownWorkspace = ["keys", "create", "--workspace", "00000000-0000-4000-8000-000000000000"];
    for (const args of [
      [...unknownWorkspace, "--json"],
      ["keys", "create", "--member", "nobody-here", "--json"],
    ]) {
      const out = await runCli(args, bench.env);
      assert.equal(out.code, 2, `${args.join(" ")}: ${out.stderr}`);
      assert.equal(out.stdout, "");
      const body = JSON.parse(out.stderr);
      assert.equal(body.error.code, 400, out.stderr);
      assert.ok(body.error.metadata.issues.length > 0);
    }
    const plain = await runCli(unknownWorkspace, bench.env);
    assert.equal(plain.code, 2, plain.stderr);
    assert.match(plain.stderr, /^guardrails: Invalid request parameters; workspace_id: no such workspace\n$/);
    const after = await api(bench.server.origin, "GET", "/api/v1/keys?limit=100", bench.mgmt);
    assert.deepEqual(after.body, before.body);
  });
});
