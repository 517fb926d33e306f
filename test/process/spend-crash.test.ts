import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import SqliteDatabase from "better-sqlite3";
import {
  api,
  type Child,
  failedStart,
  ROOT,
  randomManagementKey,
  runCli,
  type ServerChild,
  startServerProcess,
  waitFor,
} from "./child.js";

/** Served by the `local` provider only, which needs no API key. */
const MODEL = "meta-llama/llama-3.1-8b-instruct";
/** Every answer reports this usage, so every answered request costs the same. */
const USAGE = { prompt_tokens: 50, completion_tokens: 1000 };
const LIMIT_USD = 0.01;

/**
 * Budget reservations on SQLite live in the server process's memory (docs/behaviour.md#budget-reservations):
 * a real server process on a real file, a real upstream that holds some answers, and kill -9 between
 * reserve and settle. After a restart on the same file nothing may be held, and every answered
 * request's cost (and nothing else) must be spent.
 */
describe("SQLite budget reservations across kill -9 (docs/behaviour.md#budget-reservations; docs/deployment.md)", () => {
  const children: Child[] = [];
  let dir: string;
  let env: Record<string, string | undefined>;
  let mgmt: string;
  let upstream: Server;
  /** Requests the upstream has received whose answer it holds back (never sent). */
  const holding: ServerResponse[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "guardrails-spend-crash-"));
    // A provider on a loopback port: a prompt with "hold" in it is never answered (the connection
    // stays open until the test ends); any other gets a chat completion reporting USAGE.
    upstream = createServer((req, res) => {
      let body = "";
      req.setEncoding("utf8").on("data", (chunk: string) => {
        body += chunk;
      });
      req.on("end", () => {
        if (body.includes("hold")) {
          holding.push(res);
          return;
        }
        res.writeHead(200, { "content-type": "application/json" }).end(
          JSON.stringify({
            id: "chatcmpl-crash-test",
            object: "chat.completion",
            created: Math.floor(Date.now() / 1000),
            model: MODEL,
            choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
            usage: { ...USAGE, total_tokens: USAGE.prompt_tokens + USAGE.completion_tokens },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    const { port } = upstream.address() as AddressInfo;
    const catalog = JSON.parse(readFileSync(join(ROOT, "config", "default.json"), "utf8"));
    for (const p of catalog.providers) if (p.id === "local") p.base_url = `http://127.0.0.1:${port}/v1`;
    const configFile = join(dir, "catalog.json");
    writeFileSync(configFile, JSON.stringify(catalog));
    mgmt = randomManagementKey();
    env = {
      DATABASE_URL: `sqlite:${join(dir, "g.db")}`,
      GUARDRAILS_MANAGEMENT_KEY: mgmt,
      GUARDRAILS_CONFIG: configFile,
      GUARDRAILS_ECHO_PROVIDER: "off",
    };
  });
  after(async () => {
    for (const child of children) child.kill("SIGKILL");
    upstream.closeAllConnections();
    await new Promise((resolve) => upstream.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  async function start(): Promise<ServerChild> {
    const child = await startServerProcess(env);
    children.push(child);
    return child;
  }

  const chat = (server: ServerChild, secret: string, content: string) =>
    api(server.origin, "POST", "/api/v1/chat/completions", secret, {
      model: MODEL,
      max_tokens: 2000,
      messages: [{ role: "user", content }],
    });

  /** The key's one budget as GET /api/v1/key shows it, in micro-dollars. */
  async function budget(server: ServerChild, secret: string) {
    const res = await api(server.origin, "GET", "/api/v1/key", secret);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const [b] = res.body.data.budgets;
    const micros = (usd: number) => Math.round(usd * 1e6);
    return {
      spent: micros(b.spent_usd),
      reserved: micros(b.reserved_usd),
      remaining: micros(b.remaining_usd),
      usage: micros(res.body.data.usage),
    };
  }

  it("a kill -9 while requests hold reservations leaves nothing held after a restart, and every answered request's cost spent, no more", {
    timeout: 240_000,
  }, async () => {
    const first = await start();
    const made = await api(first.origin, "POST", "/api/v1/keys", mgmt, { name: "budgeted" });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const secret: string = made.body.key;
    const guardrail = await api(first.origin, "POST", "/api/v1/guardrails", mgmt, {
      name: "daily budget",
      limit_usd: LIMIT_USD,
      reset_interval: "daily",
    });
    assert.equal(guardrail.status, 201, JSON.stringify(guardrail.body));
    const assigned = await api(
      first.origin,
      "POST",
      `/api/v1/guardrails/${guardrail.body.data.id}/assignments/keys`,
      mgmt,
      { key_hashes: [made.body.data.hash] },
    );
    assert.ok(assigned.status < 300, JSON.stringify(assigned.body));

    // One answered request gives the cost of each (all report the same usage).
    assert.equal((await chat(first, secret, "once")).status, 200);
    const one = (await budget(first, secret)).spent;
    assert.ok(one > 0, "an answered request costs something");

    // Requests whose answer the upstream holds: each is admitted and holds its reservation.
    const HELD = 6;
    const held = Array.from({ length: HELD }, (_, i) =>
      chat(first, secret, `hold ${i}`).catch(() => "killed"),
    );
    await waitFor("the held requests at the upstream", () => (holding.length >= HELD ? true : undefined));
    const during = await budget(first, secret);
    assert.ok(during.reserved > 0, "the requests in flight hold part of the budget");
    assert.equal(during.remaining, LIMIT_USD * 1e6 - during.spent - during.reserved);

    // Concurrent requests answered right before the kill, while the held ones still hold.
    const ANSWERED = 20;
    const answers = await Promise.all(
      Array.from({ length: ANSWERED }, (_, i) => chat(first, secret, `answered ${i}`)),
    );
    assert.deepEqual(
      answers.map((a) => a.status),
      Array(ANSWERED).fill(200),
    );
    first.kill("SIGKILL");
    assert.equal(await first.exited(), "SIGKILL");
    assert.deepEqual(await Promise.all(held), Array(HELD).fill("killed"));

    const second = await start();
    const after = await budget(second, secret);
    const spent = (1 + ANSWERED) * one;
    assert.deepEqual(after, {
      spent,
      reserved: 0,
      remaining: LIMIT_USD * 1e6 - spent,
      usage: spent,
    });
    // In the file itself: one ledger row per answered request, no reservation anywhere.
    const file = new SqliteDatabase(join(dir, "g.db"), { readonly: true });
    try {
      const count = (q: string) => (file.prepare(q).get() as { n: number }).n;
      assert.equal(count("select count(*) as n from spend_ledger"), 1 + ANSWERED);
      assert.equal(count("select count(*) as n from budget_reservations"), 0);
      assert.equal(count("select coalesce(sum(reserved_micros), 0) as n from budget_usage"), 0);
    } finally {
      file.close();
    }
    // And the whole remainder serves again: a request is admitted and settled as before.
    assert.equal((await chat(second, secret, "after the restart")).status, 200);
    assert.equal((await budget(second, secret)).spent, spent + one);
    second.kill("SIGKILL");
    assert.equal(await second.exited(), "SIGKILL");
  });

  it("a second server on the same SQLite file is refused with a clear message; the first keeps serving, and the command line works beside it", {
    timeout: 120_000,
  }, async () => {
    const first = await start();
    const refused = await failedStart({ ...env, LOG_LEVEL: "silent" });
    assert.match(
      refused.stderr(),
      /another guardrails server is running on .*g\.db; one server process per SQLite file/,
    );
    const listed = await api(first.origin, "GET", "/api/v1/workspaces", mgmt);
    assert.equal(listed.status, 200);
    const cli = await runCli(["workspaces", "list", "--json"], env as Record<string, string>);
    assert.equal(cli.code, 0, cli.stderr);
    assert.equal(JSON.parse(cli.stdout).data.length, listed.body.data.length);
    first.kill("SIGKILL");
    assert.equal(await first.exited(), "SIGKILL");
    // A killed server's lock dies with it: the next start needs nothing cleaned up.
    const next = await start();
    assert.equal((await api(next.origin, "GET", "/api/v1/workspaces", mgmt)).status, 200);
    next.kill("SIGTERM");
    assert.equal(await next.exited(), 0);
  });
});
