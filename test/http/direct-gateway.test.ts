import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer, request, type Server } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { DirectGateway } from "../../src/http/direct-gateway.js";
import { clientFor, startTestServer, type TestServer } from "../helpers/server.js";
import {
  ask,
  events,
  type GatewayBench,
  guardKey,
  LLAMA,
  orgWithKey,
  post,
  type RawResponse,
  startGatewayBench,
} from "./gateway-support.js";
import { orgSteps } from "./org-support.js";

/**
 * The chat completions route is served straight from Node's server when it can be, and by the app
 * otherwise (docs/gateway.md#request-handling); a client must not be able to tell which. Each case
 * sends the same request twice: as `application/vnd.example+json`, which only the app reads, and as
 * `application/json` with the same (by then known) key, which the direct path takes. Which of the
 * two took it is read from DirectGateway's own answer, so a case that never reached the direct path
 * fails instead of comparing the app with itself.
 */

const taken: boolean[] = [];
const take = DirectGateway.prototype.take;
DirectGateway.prototype.take = function (this: DirectGateway, ...args: Parameters<typeof take>) {
  const result = take.apply(this, args);
  taken.push(result);
  return result;
};

const CHAT = "/api/v1/chat/completions";
const APP_ONLY_TYPE = "application/vnd.example+json";

/**
 * The headers a client reads, without the ones that differ on every answer (date, request id) and
 * the connection's: the app closes a connection after a body it could not parse, the direct path,
 * having read the whole declared body, keeps it open.
 */
function headersOf(r: RawResponse): Record<string, unknown> {
  const { date: _date, "x-request-id": id, connection: _c, "keep-alive": _k, ...rest } = r.headers;
  assert.match(String(id), /^[0-9a-f-]{36}$/);
  return rest;
}

/** A body without what is made per request (the answer's id and time, and the request id in it). */
function bodyOf(r: RawResponse, requestId: string): unknown {
  return JSON.parse(
    r.text
      .replaceAll(requestId, "<request id>")
      .replace(/"created":\d+/g, '"created":0')
      .replace(/chatcmpl-local-\w+/g, "<upstream id>"),
  );
}

describe("the chat completions route answers alike from the app and from Node's server (docs/gateway.md#request-handling)", () => {
  let bench: GatewayBench;
  const logLines: string[] = [];
  let key: string;
  before(async () => {
    bench = await startGatewayBench({ logLines });
    const made = await orgWithKey(bench);
    key = made.key.secret;
    await guardKey(made.steps, made.key, {
      content_filter_builtins: [{ slug: "email", action: "block" }],
      content_filters: [{ pattern: "secret-\\d+", action: "redact", label: "[CODE]" }],
    });
  });
  after(async () => bench.close());

  /** The log line of the answer with this request id, without what differs per request. */
  function logOf(requestId: string): Record<string, unknown> {
    const line = logLines.map((l) => JSON.parse(l)).find((l) => l.reqId === requestId && l.res);
    assert.ok(line, `a log line for ${requestId}`);
    const { time: _t, reqId: _r, responseTime, req, ...rest } = line;
    assert.equal(typeof responseTime, "number");
    return { ...rest, req: { ...req, remotePort: typeof req.remotePort } };
  }

  async function both(body: unknown): Promise<{ app: RawResponse; direct: RawResponse }> {
    taken.length = 0;
    const app = await post(bench.server, CHAT, key, body, undefined, APP_ONLY_TYPE);
    const direct = await post(bench.server, CHAT, key, body);
    assert.deepEqual(taken, [false, true], "the first went to the app, the second was served directly");
    return { app, direct };
  }

  async function assertAlike(body: unknown, status: number): Promise<RawResponse> {
    const { app, direct } = await both(body);
    assert.equal(app.status, status, app.text);
    assert.equal(direct.status, status);
    assert.deepEqual(headersOf(direct), headersOf(app));
    const appId = String(app.headers["x-request-id"]);
    const directId = String(direct.headers["x-request-id"]);
    assert.deepEqual(bodyOf(direct, directId), bodyOf(app, appId));
    // Log lines are written when the answer completes: wait for both.
    for (let i = 0; i < 50 && !logLines.some((l) => l.includes(directId) && l.includes('"res"')); i++)
      await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(logOf(directId), logOf(appId));
    return direct;
  }

  test("an allowed request: the upstream's answer, with the same headers and log line", async () => {
    const direct = await assertAlike(ask("hello there"), 200);
    assert.equal(direct.headers["content-type"], "application/json; charset=utf-8");
  });

  test("a redacted request forwards the same redacted text both ways", async () => {
    const before = bench.received.length;
    await assertAlike(ask("my code is secret-123"), 200);
    const forwarded = bench.received.slice(before).map((r) => r.body.messages[0].content);
    assert.deepEqual(forwarded, ["my code is [CODE]", "my code is [CODE]"]);
  });

  test("a refusal by a content filter: 403 with the rule's body", async () => {
    const direct = await assertAlike(ask("write to me at someone@example.com"), 403);
    assert.equal(direct.body.error.metadata.reason, "content_filter");
  });

  test("an unknown model: 404", async () => {
    await assertAlike(ask("hi", "nobody/no-model"), 404);
  });

  test("a body that breaks the schema: 400 with the same issues", async () => {
    const direct = await assertAlike({ model: 5, messages: "not a list" }, 400);
    assert.ok(direct.body.error.metadata.issues.length >= 2);
  });

  test("text that is not JSON: 400", async () => {
    await assertAlike('{"model": "x", "messages": [', 400);
  });

  test("a poisoning key: 400", async () => {
    await assertAlike('{"model": "x", "messages": [], "__proto__": {"a": 1}}', 400);
  });

  test("an upstream failure: the same 502", async () => {
    bench.script.next = () => ({ status: 500, body: { error: { message: "boom" } } });
    try {
      const direct = await assertAlike(ask("hi"), 502);
      assert.equal(direct.body.error.metadata.upstream_status, 500);
    } finally {
      bench.script.next = undefined;
    }
  });

  test("a streamed answer: the same events, then [DONE]", async () => {
    const { app, direct } = await both({ ...ask("stream me"), stream: true });
    assert.equal(direct.status, 200);
    assert.deepEqual(headersOf(direct), headersOf(app));
    const strip = (r: RawResponse) =>
      events(r.text).data.map((e) => ({ ...(e as object), id: undefined, created: undefined }));
    assert.deepEqual(strip(direct), strip(app));
    assert.equal(events(direct.text).done, true);
  });
});

describe("what the direct path leaves to the app (docs/gateway.md#request-handling)", () => {
  let bench: GatewayBench;
  let key: string;
  before(async () => {
    bench = await startGatewayBench();
    key = (await orgWithKey(bench)).key.secret;
  });
  after(async () => bench.close());

  test("a key the service has not met yet is authenticated by the app, then served directly", async () => {
    taken.length = 0;
    const first = await post(bench.server, CHAT, key, ask("one"));
    const second = await post(bench.server, CHAT, key, ask("two"));
    assert.deepEqual([first.status, second.status], [200, 200]);
    assert.deepEqual(taken, [false, true]);
  });

  test("no key, an unknown key and a management key are answered by the app's authentication", async () => {
    const org = await bench.server.newOrg();
    taken.length = 0;
    const unknown = await post(bench.server, CHAT, "sk-not-a-key", ask("hi"));
    const management = await post(bench.server, CHAT, org.key, ask("hi"));
    assert.deepEqual([unknown.status, management.status], [401, 403]);
    assert.deepEqual(taken, [false, false]);
  });

  test("a body longer than the limit is left to the app, which answers 413", async () => {
    taken.length = 0;
    const big = await post(bench.server, CHAT, key, ask("x".repeat(1024 * 1024 + 10)));
    assert.equal(big.status, 413);
    assert.deepEqual(taken, [false]);
  });

  test("a client that leaves before its body is complete gets nothing, and the server goes on", async () => {
    taken.length = 0;
    const { port } = new URL(bench.server.origin);
    const socket = connect(Number(port), "127.0.0.1");
    await once(socket, "connect");
    socket.write(
      `POST ${CHAT} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"model":',
    );
    await sleep(20);
    socket.destroy();
    await sleep(20);
    const next = await post(bench.server, CHAT, key, ask("still here"));
    assert.equal(next.status, 200);
    assert.deepEqual(taken, [true, true]);
  });

  test("a compressed body is left to the app, which answers 415", async () => {
    taken.length = 0;
    const { port } = new URL(bench.server.origin);
    const answer = await fetch(`http://127.0.0.1:${port}${CHAT}`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": "application/json",
        "content-encoding": "gzip",
      },
      body: JSON.stringify(ask("hi")),
    });
    assert.equal(answer.status, 415);
    assert.deepEqual(taken, [false]);
  });
});

/** An upstream that sends one event of a stream, then holds it open; it records when a request's connection closes. */
async function holdingUpstream(): Promise<{ url: string; server: Server; closed: number[] }> {
  const closed: number[] = [];
  let count = 0;
  const server = createServer((req, res) => {
    const n = count++;
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(
        `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: LLAMA, choices: [{ index: 0, delta: { content: "partial answer" }, finish_reason: null }] })}\n\n`,
      );
      res.on("close", () => closed.push(n));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, server, closed };
}

/** Sends a streamed request, reads its first event, then drops the connection. */
function streamThenHangUp(server: TestServer, key: string, contentType: string): Promise<void> {
  const { port } = new URL(server.origin);
  const payload = JSON.stringify({ model: LLAMA, stream: true, messages: [{ role: "user", content: "hi" }] });
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path: CHAT,
        method: "POST",
        headers: {
          authorization: `Bearer ${key}`,
          "content-type": contentType,
          "content-length": Buffer.byteLength(payload),
        },
      },
      (res) => {
        res.once("data", () => {
          req.destroy();
          resolve();
        });
      },
    );
    req.on("error", () => {});
    req.on("close", () => resolve());
    req.once("timeout", reject);
    req.end(payload);
  });
}

describe("a client that leaves a stream (docs/gateway.md#request-handling)", () => {
  let server: TestServer;
  let upstream: Awaited<ReturnType<typeof holdingUpstream>>;
  before(async () => {
    upstream = await holdingUpstream();
    server = await startTestServer({ upstreamUrl: upstream.url, providerKeys: { local: "k" } });
  });
  after(async () => {
    await server.close();
    upstream.server.close();
  });

  test("stops the provider's stream and is still charged for it, served by the app or directly", async () => {
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const key = await steps.key();
    taken.length = 0;
    await streamThenHangUp(server, key.secret, APP_ONLY_TYPE);
    await streamThenHangUp(server, key.secret, "application/json");
    assert.deepEqual(taken, [false, true]);
    // Each provider connection closes once the gateway stops reading it.
    for (let i = 0; i < 200 && upstream.closed.length < 2; i++) await sleep(10);
    assert.deepEqual([...upstream.closed].sort(), [0, 1]);
    // Both are settled: what the provider produced before the client left is charged.
    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
    let requests = 0;
    for (let i = 0; i < 200 && requests < 2; i++) {
      const usage = await clientFor(server, org.key).get(
        `/api/v1/usage?group_by=key&from=${day(-1)}&to=${day(1)}`,
      );
      requests = (usage.body.data as { requests: number }[]).reduce((sum, row) => sum + row.requests, 0);
      if (requests < 2) await sleep(10);
    }
    assert.equal(requests, 2);
  });
});
