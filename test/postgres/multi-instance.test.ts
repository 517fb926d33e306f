import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { type LocalUpstream, startLocalUpstream } from "../../src/local-upstream/server.js";
import { LISTENER_APPLICATION_NAME, PROBE_DEADLINE_MS } from "../../src/storage/postgres/listener.js";
import { createScratchDatabase, dropScratchDatabase } from "../helpers/embedded-postgres.js";
import { TEST_DATABASE_URL } from "../helpers/server.js";
import {
  type Child,
  failedStart,
  ROOT,
  randomManagementKey,
  type ServerChild,
  startServerProcess,
  WAIT_MS,
} from "../process/child.js";

/**
 * Several instances of the service on one PostgreSQL database (docs/deployment.md#the-shape-of-it): real `guardrails serve`
 * processes, each with its own caches and connection pool, sharing one scratch database. The local
 * upstream (a party outside the project) runs in this process and answers every chat with a fixed
 * usage, so each request costs the same.
 */

const LLAMA = "meta-llama/llama-3.1-8b-instruct";
const CONFLICT = "Resource conflict. Please try again later.";
/** How soon a change made through one instance must govern requests on every other (docs/deployment.md#what-each-instance-caches). */
const PROPAGATION_MS = 1000;

interface Answer {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON bodies and assert on them.
  body: any;
}

async function send(
  origin: string,
  method: string,
  path: string,
  key: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const res = await fetch(`${origin}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
      ...headers,
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    signal: AbortSignal.timeout(WAIT_MS),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

/** A 409 with the error body (docs/behaviour.md#concurrency); metadata.reason says which conflict it was. */
function assertConflict(res: Answer): void {
  assert.equal(res.status, 409, JSON.stringify(res.body));
  assert.equal(res.body.error.code, 409);
  assert.equal(res.body.error.message, CONFLICT);
}

function expect(res: Answer, status: number): Answer {
  assert.equal(res.status, status, JSON.stringify(res.body));
  return res;
}

/** Polls `check` every 20 ms until it holds; the time it took, or a failure after `ms`. */
async function within(ms: number, what: string, check: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check()) return Date.now() - started;
    if (Date.now() - started > ms) assert.fail(`${what}: not seen within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

interface PgProxy {
  port: number;
  /** Notifications dropped so far (with dropNotices). */
  dropped(): number;
  /** Silences every open change-listener connection: nothing passes either way, nothing is closed. */
  silenceListeners(): number;
  /** Open change-listener connections that are not silenced. */
  listening(): number;
  close(): Promise<void>;
}

/**
 * A TCP proxy in front of PostgreSQL. With dropNotices it passes everything except notifications
 * (server messages of type 'A'), as a pooler in transaction mode in effect does: LISTEN succeeds, no
 * notice ever arrives. Server-to-client traffic is a stream of messages [type byte][int32 length][body].
 * It can also silence the change listener's connections (found by the application_name in their
 * startup packet) the way a network partition does: open, but carrying nothing.
 */
async function pgProxy(target: URL, options: { dropNotices?: boolean } = {}): Promise<PgProxy> {
  let dropped = 0;
  const sockets = new Set<net.Socket>();
  const listeners = new Set<{ silenced: boolean; open: boolean }>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    const link = { silenced: false, open: true };
    let first = true;
    client.on("data", (chunk: Buffer) => {
      if (first) {
        first = false;
        if (chunk.includes(LISTENER_APPLICATION_NAME)) listeners.add(link);
      }
      if (!link.silenced) upstream.write(chunk);
    });
    let pending = Buffer.alloc(0);
    upstream.on("data", (chunk: Buffer) => {
      if (link.silenced) return;
      if (!options.dropNotices) {
        client.write(chunk);
        return;
      }
      pending = Buffer.concat([pending, chunk]);
      const pass: Buffer[] = [];
      while (pending.length >= 5) {
        const size = 1 + pending.readInt32BE(1);
        if (pending.length < size) break;
        const message = pending.subarray(0, size);
        if (message[0] === 0x41) dropped++;
        else pass.push(message);
        pending = pending.subarray(size);
      }
      if (pass.length > 0) client.write(Buffer.concat(pass));
    });
    const end = () => {
      link.open = false;
      client.destroy();
      upstream.destroy();
    };
    client.on("close", end).on("error", end);
    upstream.on("close", end).on("error", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const open = () => [...listeners].filter((l) => l.open && !l.silenced);
  return {
    port: (server.address() as net.AddressInfo).port,
    dropped: () => dropped,
    silenceListeners() {
      const now = open();
      for (const l of now) l.silenced = true;
      return now.length;
    },
    listening: () => open().length,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe("several instances on one PostgreSQL database (docs/deployment.md#the-shape-of-it)", {
  skip: !TEST_DATABASE_URL,
}, () => {
  const serverUrl = TEST_DATABASE_URL ?? "";
  const dir = mkdtempSync(join(tmpdir(), "guardrails-multi-"));
  const key = randomManagementKey();
  const children: Child[] = [];
  let databaseUrl = "";
  let upstream: LocalUpstream;
  let env: Record<string, string>;
  let a: ServerChild;
  let b: ServerChild;
  let c: ServerChild;
  let admin: pg.Client;

  before(async () => {
    databaseUrl = await createScratchDatabase(serverUrl, "gr_multi");
    // Every chat costs the same: a fixed usage, after a pause long enough for requests to overlap.
    // A chat that says "slow" pauses long enough for a whole burst to arrive while it is in flight.
    upstream = await startLocalUpstream({
      script: (r) => ({
        delayMs: JSON.stringify(r.body.messages).includes("slow") ? 600 : 40,
        usage: { prompt_tokens: 10, completion_tokens: 300 },
      }),
    });
    const catalog = JSON.parse(readFileSync(join(ROOT, "config", "default.json"), "utf8"));
    for (const p of catalog.providers) if (p.id === "local") p.base_url = upstream.url;
    const configFile = join(dir, "catalog.json");
    writeFileSync(configFile, JSON.stringify(catalog));
    env = { DATABASE_URL: databaseUrl, GUARDRAILS_MANAGEMENT_KEY: key, GUARDRAILS_CONFIG: configFile };
    admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
  });

  after(async () => {
    for (const child of children) child.kill("SIGKILL");
    await admin?.end().catch(() => undefined);
    await upstream?.close();
    if (databaseUrl) await dropScratchDatabase(serverUrl, databaseUrl);
    rmSync(dir, { recursive: true, force: true });
  });

  async function instance(): Promise<ServerChild> {
    const child = await startServerProcess(env);
    children.push(child);
    return child;
  }

  const pick = (i: number) => [a, b, c][i % 3] as ServerChild;

  async function newGuardrail(on: ServerChild, body: Record<string, unknown> = {}) {
    return expect(await send(on.origin, "POST", "/api/v1/guardrails", key, { name: "g", ...body }), 201);
  }

  async function newKey(on: ServerChild, extra: Record<string, unknown> = {}) {
    const res = expect(await send(on.origin, "POST", "/api/v1/keys", key, { name: "k", ...extra }), 201);
    return { secret: res.body.key as string, hash: res.body.data.hash as string };
  }

  async function assign(on: ServerChild, guardrailId: string, keyHash: string) {
    const path = `/api/v1/guardrails/${guardrailId}/assignments/keys`;
    expect(await send(on.origin, "POST", path, key, { key_hashes: [keyHash] }), 200);
  }

  /** GET /api/v1/key through one instance, asserting 200. */
  async function current(on: ServerChild, secret: string) {
    return expect(await send(on.origin, "GET", "/api/v1/key", secret), 200).body.data;
  }

  it("three instances started at the same moment migrate once and bootstrap one organization (docs/deployment.md#starting-up)", async () => {
    [a, b, c] = await Promise.all([instance(), instance(), instance()]);
    const migrations = await admin.query<{ name: string; n: number }>(
      "select name, count(*)::int as n from kysely_migration group by name",
    );
    assert.ok(migrations.rows.length > 0, "the migrations ran");
    for (const row of migrations.rows) assert.equal(row.n, 1, `migration ${row.name} is recorded once`);
    const orgs = await admin.query<{ n: number }>("select count(*)::int as n from organizations");
    assert.equal(orgs.rows[0]?.n, 1, "one organization, not one per instance");
    for (const on of [a, b, c]) {
      expect(await send(on.origin, "GET", "/readyz", key), 200);
      expect(await send(on.origin, "GET", "/api/v1/guardrails", key), 200);
    }
  });

  it("concurrent PATCHes through three instances lose no change: each is 200 with its own version or 409 (docs/behaviour.md#concurrency)", async () => {
    const g = (await newGuardrail(a, { name: "contended" })).body.data;
    const path = `/api/v1/guardrails/${g.id}`;
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        send(pick(i).origin, "PATCH", path, key, { description: `writer ${i}` }),
      ),
    );
    const winners = results.filter((r) => r.status === 200);
    for (const r of results) if (r.status !== 200) assertConflict(r);
    assert.ok(winners.length >= 1, "some PATCH succeeds");
    const versions = winners.map((r) => Number(JSON.parse(r.headers.get("etag") ?? "")));
    assert.equal(new Set(versions).size, winners.length, "every 200 made its own version");
    // Every 200 is one committed update, each on the one before it: versions 2..n+1, one audit entry each.
    assert.deepEqual(
      [...versions].sort((x, y) => x - y),
      winners.map((_, i) => i + 2),
    );
    const final = expect(await send(c.origin, "GET", path, key), 200);
    const last = winners[versions.indexOf(Math.max(...versions))] as Answer;
    assert.equal(final.headers.get("etag"), last.headers.get("etag"));
    assert.deepEqual(final.body.data, last.body.data);
    const audit = expect(
      await send(b.origin, "GET", `/api/v1/audit-log?resource_id=${g.id}&limit=100`, key),
      200,
    );
    const updates = audit.body.data.filter((e: { action: string }) => e.action === "guardrail.update");
    assert.equal(updates.length, winners.length, "one audit entry per answered update, none for a 409");
  });

  it("If-Match works across instances: the tag from one is current on another, and a stale tag is 409 everywhere (docs/behaviour.md#concurrency)", async () => {
    const created = await newGuardrail(a, { name: "tagged" });
    const path = `/api/v1/guardrails/${created.body.data.id}`;
    const first = created.headers.get("etag") ?? "";
    const viaB = expect(
      await send(b.origin, "PATCH", path, key, { name: "via b" }, { "if-match": first }),
      200,
    );
    for (const on of [a, c]) {
      const stale = await send(on.origin, "PATCH", path, key, { name: "stale" }, { "if-match": first });
      assertConflict(stale);
    }
    const second = viaB.headers.get("etag") ?? "";
    const got = expect(await send(c.origin, "GET", path, key), 200);
    assert.equal(got.headers.get("etag"), second, "every instance reads the version another wrote");
    const viaC = expect(
      await send(c.origin, "PATCH", path, key, { name: "via c" }, { "if-match": second }),
      200,
    );
    assert.equal(viaC.body.data.name, "via c");
    assertConflict(await send(a.origin, "PATCH", path, key, { name: "late" }, { "if-match": second }));
    assert.equal(expect(await send(a.origin, "GET", path, key), 200).body.data.name, "via c");
  });

  it("one Idempotency-Key sent to three instances at once and retried creates exactly one guardrail (docs/behaviour.md#idempotency)", async () => {
    const name = `idempotent ${Date.now()}`;
    const headers = { "idempotency-key": `multi-${Date.now()}` };
    const body = { name, description: "once" };
    const answers = await Promise.all(
      [a, b, c, a, b, c].map((on) => send(on.origin, "POST", "/api/v1/guardrails", key, body, headers)),
    );
    for (const r of answers) expect(r, 201);
    const ids = new Set(answers.map((r) => r.body.data.id));
    assert.equal(ids.size, 1, "every answer names the same guardrail");
    const retried = expect(await send(b.origin, "POST", "/api/v1/guardrails", key, body, headers), 201);
    assert.deepEqual(retried.body, answers[0]?.body);
    const stored = await admin.query<{ n: number }>(
      "select count(*)::int as n from guardrails where name = $1",
      [name],
    );
    assert.equal(stored.rows[0]?.n, 1);
  });

  it("100 concurrent chats over two instances against one budget: spend passes the limit by at most one request's cost (docs/behaviour.md#budget-reservations)", async () => {
    // One request's cost, as the service charges it: a probe key with a roomy budget.
    const probe = await newKey(a);
    const roomy = await newGuardrail(a, { limit_usd: 100, reset_interval: "monthly" });
    await assign(a, roomy.body.data.id, probe.hash);
    const ask = { model: LLAMA, messages: [{ role: "user", content: "hi" }], max_tokens: 300 };
    expect(await send(a.origin, "POST", "/api/v1/chat/completions", probe.secret, ask), 200);
    const each = Math.round((await current(b, probe.secret)).budgets[0].spent_usd * 1e6);
    assert.ok(each > 0, "a chat costs something");

    const spender = await newKey(a);
    const limit = 20 * each + Math.floor(each / 2);
    const budget = await newGuardrail(a, { limit_usd: limit / 1e6, reset_interval: "monthly" });
    await assign(a, budget.body.data.id, spender.hash);
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        send((i % 2 ? a : b).origin, "POST", "/api/v1/chat/completions", spender.secret, ask),
      ),
    );
    const served = answers.filter((r) => r.status === 200).length;
    // Refused: 403 once settled spend leaves too little, 429 while requests in flight hold it.
    const refused = answers.filter((r) => r.status === 403 || r.status === 429).length;
    assert.equal(served + refused, 100, `only 200, 403 and 429: ${answers.map((r) => r.status)}`);
    const [state] = (await current(a, spender.secret)).budgets;
    const spent = Math.round(state.spent_usd * 1e6);
    assert.equal(spent, served * each, "every served request is charged exactly once");
    assert.ok(spent <= limit + each, `spent ${spent} passes the limit ${limit} by more than ${each}`);
    assert.ok(served < 100, "the budget refused the rest");
    assert.equal(state.reserved_usd, 0, "no reservation is left behind");
  });

  it("a $0.05 daily budget over two instances serves at least 95 of 100 concurrent requests without max_tokens; nothing stays reserved (docs/gateway.md#budgets)", async () => {
    const spender = await newKey(a);
    const limit = 50_000;
    const budget = await newGuardrail(a, { limit_usd: limit / 1e6, reset_interval: "daily" });
    await assign(a, budget.body.data.id, spender.hash);
    const ask = {
      model: "mistralai/mistral-small-3.2-24b-instruct",
      messages: [{ role: "user", content: "hi" }],
    };
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        send((i % 2 ? a : b).origin, "POST", "/api/v1/chat/completions", spender.secret, ask),
      ),
    );
    const served = answers.filter((r) => r.status === 200).length;
    assert.ok(served >= 95, `served ${served}: ${answers.map((r) => r.status)}`);
    // 10 prompt tokens at 0.06 and 300 completion tokens at 0.18, rounded up.
    const each = Math.ceil(10 * 0.06 + 300 * 0.18);
    const [state] = (await current(b, spender.secret)).budgets;
    const spent = Math.round(state.spent_usd * 1e6);
    assert.equal(spent, served * each, "every served request is charged exactly once");
    assert.ok(spent <= limit + each);
    assert.equal(state.reserved_usd, 0, "no reservation is left behind");
  });

  it("100 concurrent chats over two instances against a $0.05 daily key limit and a tight one: at least 95 served on the first, spend within one request's cost of each, nothing stays reserved (docs/gateway.md#budgets)", async () => {
    const ask = {
      model: "mistralai/mistral-small-3.2-24b-instruct",
      messages: [{ role: "user", content: "hi" }],
    };
    // 10 prompt tokens at 0.06 and 300 completion tokens at 0.18, rounded up.
    const each = Math.ceil(10 * 0.06 + 300 * 0.18);
    // The tight limit holds only three default allowances at once, so most of a burst is told to
    // retry (429) while those are in flight: what matters there is that spend stays within it.
    for (const [limit, atLeast] of [
      [50_000, 95],
      [20 * each + Math.floor(each / 2), 1],
    ] as const) {
      const spender = await newKey(a, { limit: limit / 1e6, limit_reset: "daily" });
      const answers = await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          send((i % 2 ? a : b).origin, "POST", "/api/v1/chat/completions", spender.secret, ask),
        ),
      );
      const served = answers.filter((r) => r.status === 200).length;
      const refused = answers.filter((r) => r.status === 403 || r.status === 429);
      assert.equal(served + refused.length, 100, `only 200, 403 and 429: ${answers.map((r) => r.status)}`);
      assert.ok(served >= atLeast, `served ${served} of 100 under ${limit}`);
      assert.ok(refused.every((r) => r.body.error.metadata.layer === "key_limit"));
      const [state] = (await current(b, spender.secret)).budgets;
      assert.equal(state.layer, "key_limit");
      const spent = Math.round(state.spent_usd * 1e6);
      assert.equal(spent, served * each, "every served request is charged exactly once");
      assert.ok(spent <= limit + each, `spent ${spent} passes ${limit} by more than ${each}`);
      assert.equal(state.reserved_usd, 0, "no reservation is left behind");
    }
  });

  it("100 concurrent chats from four keys over two instances against a workspace budget: spend within one request's cost, nothing stays reserved (docs/gateway.md#budgets)", async () => {
    const ask = {
      model: "mistralai/mistral-small-3.2-24b-instruct",
      messages: [{ role: "user", content: "hi" }],
    };
    const each = Math.ceil(10 * 0.06 + 300 * 0.18);
    const limit = 20 * each + Math.floor(each / 2);
    const ws = expect(await send(a.origin, "POST", "/api/v1/workspaces", key, { name: "budgeted" }), 201).body
      .data;
    const path = `/api/v1/workspaces/${ws.id}/budgets/weekly`;
    expect(await send(b.origin, "PUT", path, key, { limit_usd: limit / 1e6 }), 200);
    const keys: { secret: string; hash: string }[] = [];
    for (let i = 0; i < 4; i++) keys.push(await newKey(i % 2 ? a : b, { workspace_id: ws.id }));
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        send((i % 2 ? a : b).origin, "POST", "/api/v1/chat/completions", keys[i % 4]?.secret ?? "", ask),
      ),
    );
    const served = answers.filter((r) => r.status === 200).length;
    const refused = answers.filter((r) => r.status === 403 || r.status === 429);
    assert.equal(served + refused.length, 100, `only 200, 403 and 429: ${answers.map((r) => r.status)}`);
    assert.ok(served >= 1 && served < 100, `served ${served}`);
    assert.ok(refused.every((r) => r.body.error.metadata.layer === "workspace_budget"));
    const [state] = (await current(a, keys[3]?.secret ?? "")).budgets;
    assert.equal(state.layer, "workspace_budget");
    const spent = Math.round(state.spent_usd * 1e6);
    assert.equal(spent, served * each, "every served request is charged exactly once");
    assert.ok(spent <= limit + each, `spent ${spent} passes ${limit} by more than ${each}`);
    assert.equal(state.reserved_usd, 0, "no reservation is left behind");
  });

  it("a burst over two instances on a nearly spent budget: 429 budget_reserved while requests are in flight, 403 budget_exhausted once spend is settled at the limit (docs/gateway.md#budgets)", async () => {
    const probe = await newKey(a);
    const roomy = await newGuardrail(a, { limit_usd: 100, reset_interval: "monthly" });
    await assign(a, roomy.body.data.id, probe.hash);
    const ask = { model: LLAMA, messages: [{ role: "user", content: "slow" }], max_tokens: 300 };
    expect(await send(a.origin, "POST", "/api/v1/chat/completions", probe.secret, ask), 200);
    const each = Math.round((await current(b, probe.secret)).budgets[0].spent_usd * 1e6);
    // A 12-token prompt bound ("slow" and a message) and 300 tokens: two such reservations fill it.
    const reservation = Math.ceil(12 * 0.02 + 300 * 0.05);
    const spender = await newKey(a);
    const budget = await newGuardrail(a, { limit_usd: (2 * reservation) / 1e6, reset_interval: "daily" });
    await assign(a, budget.body.data.id, spender.hash);
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        send((i % 2 ? a : b).origin, "POST", "/api/v1/chat/completions", spender.secret, ask),
      ),
    );
    assert.deepEqual(answers.map((r) => r.status).sort(), [200, 200, 429, 429, 429, 429, 429, 429]);
    for (const held of answers.filter((r) => r.status === 429)) {
      assert.equal(held.headers.get("retry-after"), "1");
      assert.equal(held.body.error.metadata.reason, "budget_reserved");
      assert.equal(held.body.error.metadata.spend_usd, 0, "settled spend apart from reservations");
      assert.ok(held.body.error.metadata.reserved_usd > 0);
    }
    const settled = await send(b.origin, "POST", "/api/v1/chat/completions", spender.secret, ask);
    expect(settled, 403);
    assert.equal(settled.body.error.metadata.reason, "budget_exhausted");
    assert.equal(settled.body.error.metadata.spend_usd, (2 * each) / 1e6);
  });

  it(`a change to a guardrail, an assignment, a key or a member made on one instance governs requests on another within ${PROPAGATION_MS} ms (docs/deployment.md#what-each-instance-caches)`, async () => {
    const member = `member-${Date.now()}`;
    expect(await send(a.origin, "POST", "/api/v1/members", key, { user_id: member }), 201);
    const k = await newKey(a, { member_user_id: member });
    const g = (await newGuardrail(a, { allowed_data_regions: ["us"] })).body.data;
    await assign(a, g.id, k.hash);
    // B has the key's policy cached before each change.
    assert.deepEqual((await current(b, k.secret)).allowed_data_regions, ["us"]);

    expect(
      await send(a.origin, "PATCH", `/api/v1/guardrails/${g.id}`, key, { allowed_data_regions: ["europe"] }),
      200,
    );
    await within(PROPAGATION_MS, "a guardrail PATCH on A, read on B", async () => {
      const regions = (await current(b, k.secret)).allowed_data_regions;
      return JSON.stringify(regions) === '["europe"]';
    });

    const other = (await newGuardrail(c)).body.data;
    assert.equal((await current(b, k.secret)).guardrails.length, 1);
    expect(
      await send(c.origin, "POST", `/api/v1/guardrails/${other.id}/assignments/members`, key, {
        member_user_ids: [member],
      }),
      200,
    );
    await within(PROPAGATION_MS, "a member assignment on C, read on B", async () => {
      const layers = (await current(b, k.secret)).guardrails.map((l: { layer: string }) => l.layer);
      return layers.includes("member");
    });

    const reassigned = (await newGuardrail(a, { allowed_data_regions: ["global"] })).body.data;
    await assign(a, reassigned.id, k.hash);
    await within(PROPAGATION_MS, "a key assignment on A, read on B", async () => {
      const regions = (await current(b, k.secret)).allowed_data_regions;
      return JSON.stringify(regions) === '["global"]';
    });

    // Authentication is cached too: B has just served this key; deleting it on C revokes it on B.
    expect(await send(c.origin, "DELETE", `/api/v1/keys/${k.hash}`, key), 200);
    await within(PROPAGATION_MS, "a key deletion on C, on B's next request", async () => {
      const res = await send(b.origin, "GET", "/api/v1/key", k.secret);
      return res.status === 401;
    });
  });

  it("when an instance's notice connection is cut, it serves fresh policies and listens again (docs/deployment.md#what-each-instance-caches)", async () => {
    const k = await newKey(a);
    const g = (await newGuardrail(a, { allowed_data_regions: ["us"] })).body.data;
    await assign(a, g.id, k.hash);
    assert.deepEqual((await current(b, k.secret)).allowed_data_regions, ["us"]);
    const cut = await admin.query<{ ok: boolean }>(
      "select pg_terminate_backend(pid) as ok from pg_stat_activity where datname = current_database() and application_name = $1",
      [LISTENER_APPLICATION_NAME],
    );
    assert.equal(cut.rows.length, 3, "each instance has one listener connection");
    // While cut, nothing cached is trusted: a change is visible everywhere at once.
    expect(
      await send(a.origin, "PATCH", `/api/v1/guardrails/${g.id}`, key, { allowed_data_regions: ["europe"] }),
      200,
    );
    await within(PROPAGATION_MS, "a PATCH while the listeners reconnect", async () => {
      return JSON.stringify((await current(b, k.secret)).allowed_data_regions) === '["europe"]';
    });
    await within(WAIT_MS, "every instance listening again", async () => {
      const listening = await admin.query<{ n: number }>(
        "select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name = $1",
        [LISTENER_APPLICATION_NAME],
      );
      return listening.rows[0]?.n === 3;
    });
    assert.deepEqual((await current(b, k.secret)).allowed_data_regions, ["europe"]);
    expect(
      await send(a.origin, "PATCH", `/api/v1/guardrails/${g.id}`, key, { allowed_data_regions: ["global"] }),
      200,
    );
    await within(PROPAGATION_MS, "a PATCH after reconnecting", async () => {
      return JSON.stringify((await current(b, k.secret)).allowed_data_regions) === '["global"]';
    });
  });

  it("when an instance's notice connection goes silent without closing, it stops trusting its caches within the probe deadline (docs/deployment.md#what-each-instance-caches)", async () => {
    // A partition leaves the connection open but carrying nothing. An instance reaches PostgreSQL
    // through a proxy that silences its listener's connection. (Stopping the server process of the
    // listener with SIGSTOP instead can freeze every notifying commit: a stopped backend may hold
    // PostgreSQL's notify lock.)
    const proxy = await pgProxy(new URL(databaseUrl));
    const through = new URL(databaseUrl);
    through.host = `127.0.0.1:${proxy.port}`;
    const d = await startServerProcess({ ...env, DATABASE_URL: through.toString() });
    children.push(d);
    try {
      const k = await newKey(a);
      const g = (await newGuardrail(a, { allowed_data_regions: ["us"] })).body.data;
      await assign(a, g.id, k.hash);
      assert.deepEqual((await current(d, k.secret)).allowed_data_regions, ["us"]);
      assert.equal(proxy.silenceListeners(), 1, "the instance's one listener connection");
      expect(
        await send(a.origin, "PATCH", `/api/v1/guardrails/${g.id}`, key, {
          allowed_data_regions: ["europe"],
        }),
        200,
      );
      await within(PROBE_DEADLINE_MS + PROPAGATION_MS, "a PATCH while the listener is silent", async () => {
        return JSON.stringify((await current(d, k.secret)).allowed_data_regions) === '["europe"]';
      });
      await within(WAIT_MS, "the instance listening again on a new connection", async () => {
        return proxy.listening() === 1;
      });
      expect(
        await send(a.origin, "PATCH", `/api/v1/guardrails/${g.id}`, key, {
          allowed_data_regions: ["global"],
        }),
        200,
      );
      await within(PROPAGATION_MS, "a PATCH after listening again", async () => {
        return JSON.stringify((await current(d, k.secret)).allowed_data_regions) === '["global"]';
      });
    } finally {
      d.kill("SIGKILL");
      await d.exited();
      await proxy.close();
    }
  });

  it("an instance killed with SIGKILL under write load loses no answered write; the others keep serving (docs/deployment.md#transactions-and-durability)", async () => {
    const victim = await instance();
    const answered: string[] = [];
    const survivors: Answer[] = [];
    let killed = false;
    let lostOnVictim = 0;
    /** Writes through the victim until it dies; a request without an answer ends the loop. */
    const victimWriter = async () => {
      for (let i = 0; !killed; i++) {
        let res: Answer;
        try {
          res = await send(victim.origin, "POST", "/api/v1/guardrails", key, { name: `victim ${i}` });
        } catch {
          // The victim died with this request in flight: whether it was stored is not promised.
          lostOnVictim++;
          return;
        }
        answered.push(expect(res, 201).body.data.id);
      }
    };
    /** Writes through a survivor until 20 writes after the kill have been answered. */
    const survivorWriter = async (on: ServerChild) => {
      for (let afterKill = 0; afterKill < 20; ) {
        survivors.push(await send(on.origin, "POST", "/api/v1/guardrails", key, { name: "survivor" }));
        if (killed) afterKill++;
      }
    };
    const load = [
      ...Array.from({ length: 6 }, () => victimWriter()),
      ...[a, b, c].map((on) => survivorWriter(on)),
    ];
    await within(WAIT_MS, "the victim answering writes", async () => answered.length >= 30);
    victim.kill("SIGKILL");
    killed = true;
    assert.equal(await victim.exited(), "SIGKILL");
    await Promise.all(load);
    assert.ok(lostOnVictim <= 6, "at most the requests in flight went unanswered");
    for (const res of survivors) expect(res, 201);
    assert.ok(survivors.length >= 3 * 20, "the other instances kept answering writes");
    for (const id of answered) {
      const got = await send(pick(answered.indexOf(id)).origin, "GET", `/api/v1/guardrails/${id}`, key);
      assert.equal(got.status, 200, `answered 201 for ${id}, then not found`);
    }
    for (const on of [a, b, c]) expect(await send(on.origin, "GET", "/readyz", key), 200);
  });

  it("an instance with a pool of one connection starts beside the others and serves writes and chats at once (docs/deployment.md#connections)", async () => {
    // The start-up lock has a connection of its own, and no request holds one pooled connection
    // while waiting for another: with GUARDRAILS_PG_POOL_MAX=1 everything queues, nothing hangs.
    const small = await startServerProcess({ ...env, GUARDRAILS_PG_POOL_MAX: "1" });
    children.push(small);
    const spender = await newKey(small);
    const budget = await newGuardrail(small, { limit_usd: 100, reset_interval: "daily" });
    await assign(small, budget.body.data.id, spender.hash);
    const ask = { model: LLAMA, messages: [{ role: "user", content: "hi" }], max_tokens: 300 };
    const answers = await Promise.all([
      ...Array.from({ length: 10 }, () =>
        send(small.origin, "POST", "/api/v1/chat/completions", spender.secret, ask),
      ),
      ...Array.from({ length: 10 }, (_, i) =>
        send(small.origin, "PATCH", `/api/v1/guardrails/${budget.body.data.id}`, key, {
          description: `d${i}`,
        }),
      ),
    ]);
    for (const res of answers.slice(0, 10)) expect(res, 200);
    for (const res of answers.slice(10)) {
      // PATCHes racing each other without If-Match may meet a conflict (docs/behaviour.md#concurrency); none may hang.
      if (res.status !== 200) assertConflict(res);
    }
    small.kill("SIGKILL");
    await small.exited();
  });

  it("through an address that never delivers notices (a pooler in transaction mode) start-up fails with a message that says so (docs/deployment.md#connection-poolers)", async () => {
    const proxy = await pgProxy(new URL(databaseUrl), { dropNotices: true });
    try {
      const through = new URL(databaseUrl);
      through.host = `127.0.0.1:${proxy.port}`;
      const child = await failedStart({ ...env, DATABASE_URL: through.toString() });
      assert.match(
        child.stderr(),
        /DATABASE_URL: a notice sent on this connection did not come back within 1000 ms/,
      );
      assert.match(child.stderr(), /session mode \(not transaction mode\)/);
      assert.ok(proxy.dropped() > 0, "the proxy dropped the notice");
    } finally {
      await proxy.close();
    }
  });

  it("a wrong password in DATABASE_URL stops start-up with a message that names the user and not the password (docs/deployment.md#starting-up)", async () => {
    const wrong = new URL(databaseUrl);
    wrong.password = "not-the-password-x9";
    const child = await failedStart({ ...env, DATABASE_URL: wrong.toString() });
    assert.match(
      child.stderr(),
      /DATABASE_URL: PostgreSQL at 127\.0\.0\.1:\d+ refused user "postgres": wrong password/,
    );
    assert.ok(!child.stderr().includes("not-the-password-x9"), "the password is not echoed");
    assert.ok(!child.stdout().includes("not-the-password-x9"), "the password is not echoed");
  });
});
