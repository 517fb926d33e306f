import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import {
  api,
  type Child,
  failedStart,
  randomManagementKey,
  type ServerChild,
  startServerProcess,
  waitFor,
  withTimeout,
} from "./child.js";

const SHOWN_ONCE = /shown only now:\r?\n\s*(\S+)/;

describe("the service as a process: durability, restarts, keys at start-up, shutdown", () => {
  const children: Child[] = [];
  const dirs: string[] = [];
  after(() => {
    for (const child of children) child.kill("SIGKILL");
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  function freshDatabase(): string {
    const dir = mkdtempSync(join(tmpdir(), "guardrails-process-"));
    dirs.push(dir);
    return `sqlite:${join(dir, "g.db")}`;
  }

  async function start(env: Record<string, string | undefined>): Promise<ServerChild> {
    const child = await startServerProcess(env);
    children.push(child);
    return child;
  }

  async function killHard(child: Child): Promise<void> {
    child.kill("SIGKILL");
    assert.equal(await child.exited(), "SIGKILL");
  }

  it("every create and update that was answered survives kill -9 right after the response (docs/deployment.md#transactions-and-durability)", {
    timeout: 180_000,
  }, async () => {
    const env = { DATABASE_URL: freshDatabase(), GUARDRAILS_MANAGEMENT_KEY: randomManagementKey() };
    const key = env.GUARDRAILS_MANAGEMENT_KEY;
    const answered = new Map<string, unknown>();
    const CYCLES = 10;
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      const server = await start(env);
      for (const [id, data] of answered) {
        const got = await api(server.origin, "GET", `/api/v1/guardrails/${id}`, key);
        assert.deepEqual(got.body, { data }, `cycle ${cycle}: ${id}`);
      }
      // Two guardrails per cycle, each created then updated; the kill follows the last answer at once.
      for (let i = 0; i < 2; i++) {
        const created = await api(server.origin, "POST", "/api/v1/guardrails", key, {
          name: `durable ${cycle}.${i}`,
          allowed_data_regions: ["europe"],
        });
        assert.equal(created.status, 201, JSON.stringify(created.body));
        answered.set(created.body.data.id, created.body.data);
        const patched = await api(server.origin, "PATCH", `/api/v1/guardrails/${created.body.data.id}`, key, {
          description: `updated in cycle ${cycle}`,
          limit_usd: 12.345678,
          reset_interval: "daily",
          content_filter_builtins: [{ slug: "email", action: "redact" }],
        });
        assert.equal(patched.status, 200, JSON.stringify(patched.body));
        answered.set(created.body.data.id, patched.body.data);
      }
      await killHard(server);
    }
    const server = await start(env);
    assert.equal(answered.size, 2 * CYCLES);
    for (const [id, data] of answered) {
      const got = await api(server.origin, "GET", `/api/v1/guardrails/${id}`, key);
      assert.deepEqual(got.body, { data }, id);
    }
    const list = await api(server.origin, "GET", "/api/v1/guardrails?limit=100", key);
    assert.equal(list.body.total_count, 2 * CYCLES);
    await killHard(server);
  });

  it("concurrent creates answered just before kill -9 all survive (docs/deployment.md#transactions-and-durability)", {
    timeout: 60_000,
  }, async () => {
    const env = { DATABASE_URL: freshDatabase(), GUARDRAILS_MANAGEMENT_KEY: randomManagementKey() };
    const key = env.GUARDRAILS_MANAGEMENT_KEY;
    const first = await start(env);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        api(first.origin, "POST", "/api/v1/workspaces", key, { name: `ws ${i}` }).then((ws) =>
          api(first.origin, "POST", "/api/v1/keys", key, { name: `k ${i}`, workspace_id: ws.body.data.id }),
        ),
      ),
    );
    await killHard(first);
    const second = await start(env);
    for (const created of results) {
      assert.equal(created.status, 201);
      const got = await api(second.origin, "GET", `/api/v1/keys/${created.body.data.hash}`, key);
      assert.deepEqual(got.body, { data: created.body.data });
      // The inference key still authenticates (403 on a management route, not 401).
      assert.equal((await api(second.origin, "GET", "/api/v1/keys", created.body.key)).status, 403);
    }
    assert.equal((await api(second.origin, "GET", "/api/v1/workspaces?limit=100", key)).body.total_count, 21);
    await killHard(second);
  });

  it("GUARDRAILS_MANAGEMENT_KEY is a management key, no other key is printed, and a restart keeps the data", {
    timeout: 60_000,
  }, async () => {
    const env = { DATABASE_URL: freshDatabase(), GUARDRAILS_MANAGEMENT_KEY: randomManagementKey() };
    const key = env.GUARDRAILS_MANAGEMENT_KEY;
    const first = await start(env);
    const created = await api(first.origin, "POST", "/api/v1/guardrails", key, { name: "kept" });
    assert.equal(created.status, 201);
    first.kill("SIGTERM");
    assert.equal(await first.exited(), 0);
    assert.doesNotMatch(first.stderr(), /shown only now/);
    assert.ok(!`${first.stdout()}${first.stderr()}`.includes(key), "the configured key is never printed");

    const second = await start(env);
    const got = await api(second.origin, "GET", `/api/v1/guardrails/${created.body.data.id}`, key);
    assert.deepEqual(got.body, created.body);
    await killHard(second);
  });

  it("without GUARDRAILS_MANAGEMENT_KEY the first start prints a working management key once; a restart prints none", {
    timeout: 60_000,
  }, async () => {
    const env = { DATABASE_URL: freshDatabase() };
    const first = await start(env);
    first.kill("SIGTERM");
    assert.equal(await first.exited(), 0);
    // The banner is on stderr, apart from the log on stdout (docs/configuration.md#logs).
    const printed = SHOWN_ONCE.exec(first.stderr())?.[1];
    assert.ok(printed, `a key after "shown only now": ${first.stderr()}`);
    assert.ok(!first.stdout().includes(printed), "the key is not in the log");

    const second = await start(env);
    const list = await api(second.origin, "GET", "/api/v1/workspaces", printed);
    assert.equal(list.status, 200);
    assert.equal(list.body.data[0].is_default, true);
    second.kill("SIGTERM");
    assert.equal(await second.exited(), 0);
    assert.doesNotMatch(second.stderr(), /shown only now/);
    assert.match(second.stderr(), /listening on/);
  });

  it("SIGTERM while a request is in flight: the request completes and the process exits 0", {
    timeout: 60_000,
  }, async () => {
    const env = { DATABASE_URL: freshDatabase(), GUARDRAILS_MANAGEMENT_KEY: randomManagementKey() };
    const key = env.GUARDRAILS_MANAGEMENT_KEY;
    const server = await start(env);
    const body = JSON.stringify({ name: "in flight", description: "sent across a shutdown" });
    // Expect: 100-continue lets us know the server has read the headers: the request is in flight.
    const req = request({
      host: "127.0.0.1",
      port: server.port,
      method: "POST",
      path: "/api/v1/guardrails",
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": "application/json",
        "content-length": Buffer.byteLength(body),
        expect: "100-continue",
      },
    });
    const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
      req.on("response", (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => {
          text += c;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on("error", reject);
    });
    await withTimeout(new Promise<void>((resolve) => req.once("continue", () => resolve())), "100 Continue");
    req.write(body.slice(0, 10));
    server.kill("SIGTERM");
    // The shutdown has begun once new connections are refused.
    await waitFor(
      "the server to stop accepting connections",
      () =>
        new Promise<true | undefined>((resolve) => {
          const socket = connect(server.port, "127.0.0.1");
          socket.once("connect", () => {
            socket.destroy();
            resolve(undefined);
          });
          socket.once("error", () => resolve(true));
        }),
    );
    req.end(body.slice(10));
    const res = await withTimeout(response, "the in-flight response");
    assert.equal(res.status, 201, res.text);
    const data = JSON.parse(res.text).data;
    assert.equal(data.name, "in flight");
    assert.equal(await server.exited(), 0);

    const again = await start(env);
    const got = await api(again.origin, "GET", `/api/v1/guardrails/${data.id}`, key);
    assert.deepEqual(got.body, { data });
    await killHard(again);
  });

  it("DATABASE_URL naming a PostgreSQL server that is not there fails at start with a clear message (docs/deployment.md#starting-up)", {
    timeout: 30_000,
  }, async () => {
    for (const url of [
      "postgres://user:secret@127.0.0.1:1/guardrails",
      "postgresql://user:secret@127.0.0.1:1/guardrails",
    ]) {
      const child = await failedStart({ DATABASE_URL: url, LOG_LEVEL: "silent" });
      assert.match(
        child.stderr(),
        /DATABASE_URL: nothing accepts connections at 127\.0\.0\.1:1 \(connection refused\)/,
      );
      assert.ok(!child.stderr().includes("secret"), "the password is not echoed");
      assert.ok(!/\n\s+at /.test(child.stderr()), "no stack trace");
    }
  });
});
