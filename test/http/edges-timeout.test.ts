import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { loadConfig } from "../../src/config.js";
import { DirectGateway } from "../../src/http/direct-gateway.js";
import { listenForRegion } from "../../src/http/region-listeners.js";
import { startTestServer, type TestOrg, type TestServer } from "../helpers/server.js";
import { ask, chat, events, LLAMA, parseWireResponses, type WireResponse } from "./gateway-support.js";
import { type MadeKey, orgSteps } from "./org-support.js";

/**
 * Requests that arrive slowly end in a 408 and a closed connection, on every path and whatever the
 * key; answers that take long do not (docs/gateway.md#receive-timeout). The server's limit is short
 * here, and every case waits for the server to close the connection: a case that the limit does not
 * reach is ended by the test's own much longer guard and fails on `closedByServer`.
 */

// Long enough that a busy test machine still reads an ordinary request within it.
const LIMIT_MS = 1500;
/** Far longer than the limit and its check interval: only a connection the server never closes meets it. */
const GUARD_MS = 8 * LIMIT_MS;

/** Counts which requests DirectGateway served, without changing what it does. */
const taken: boolean[] = [];
const take = DirectGateway.prototype.take;
DirectGateway.prototype.take = function (this: DirectGateway, ...args: Parameters<typeof take>) {
  const result = take.apply(this, args);
  taken.push(result);
  return result;
};

/** Writes `bytes`, then stays silent and reads until the connection closes. */
function silentAfter(
  port: number,
  bytes: string,
): Promise<{ responses: WireResponse[]; closedByServer: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    let closedByServer = true;
    const guard = setTimeout(() => {
      closedByServer = false;
      socket.destroy();
    }, GUARD_MS);
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", () => {});
    socket.on("close", () => {
      clearTimeout(guard);
      resolve({ responses: parseWireResponses(Buffer.concat(chunks)), closedByServer });
    });
    if (bytes !== "") socket.write(bytes);
  });
}

/** The head of a POST whose body declares 200 bytes, and the first 20 of them. */
function partialPost(path: string, authorization: string | undefined): string {
  const auth = authorization ? `Authorization: Bearer ${authorization}\r\n` : "";
  return (
    `POST ${path} HTTP/1.1\r\nHost: localhost\r\n${auth}Content-Type: application/json\r\n` +
    `Content-Length: 200\r\n\r\n{"model":"x","messag`
  );
}

function assertTimedOut(answer: { responses: WireResponse[]; closedByServer: boolean }): void {
  assert.equal(answer.closedByServer, true, "the server left the connection open");
  assert.equal(answer.responses.length, 1, JSON.stringify(answer.responses));
  const [response] = answer.responses as [WireResponse];
  assert.equal(response.status, 408);
  assert.equal(response.headers.connection, "close");
  assert.deepEqual(JSON.parse(response.body), { error: { code: 408, message: "Request timeout" } });
}

/**
 * A provider whose answer takes several times the receive limit: a stream of ten chunks a fifth
 * of the limit apart (`stream`), or a whole answer sent after twice the limit (`slowJson`). In
 * `breakJson` it answers 200 with a body that declares more bytes than it sends, then drops the
 * connection.
 */
async function slowProvider(): Promise<{ url: string; mode: { next: string }; close(): Promise<void> }> {
  const mode = { next: "stream" };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on("end", () => {
      const chosen = mode.next;
      if (chosen === "breakJson") {
        res.writeHead(200, { "content-type": "application/json", "content-length": "500" });
        res.write('{"id":"x","object":"chat.completion","choices":[{"index":0,"message":');
        setTimeout(() => res.socket?.destroy(), 20);
        return;
      }
      if (chosen === "slowJson") {
        setTimeout(() => {
          const text = JSON.stringify({
            id: "x",
            object: "chat.completion",
            created: 1,
            model: "m",
            choices: [{ index: 0, message: { role: "assistant", content: "late" }, finish_reason: "stop" }],
            usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
          });
          res.writeHead(200, {
            "content-type": "application/json",
            "content-length": Buffer.byteLength(text),
          });
          res.end(text);
        }, 2 * LIMIT_MS);
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      let sent = 0;
      const timer = setInterval(() => {
        sent += 1;
        res.write(
          `data: ${JSON.stringify({ id: "x", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content: `w${sent} ` }, finish_reason: null }] })}\n\n`,
        );
        if (sent === 10) {
          clearInterval(timer);
          res.end(
            `data: ${JSON.stringify({ id: "x", object: "chat.completion.chunk", created: 1, model: "m", choices: [], usage: { prompt_tokens: 3, completion_tokens: 10, total_tokens: 13 } })}\n\ndata: [DONE]\n\n`,
          );
        }
      }, LIMIT_MS / 5);
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    mode,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe("requests that arrive slowly end in a 408 (docs/gateway.md#receive-timeout)", () => {
  let server: TestServer;
  let provider: Awaited<ReturnType<typeof slowProvider>>;
  let org: TestOrg;
  let key: MadeKey;
  let port: number;
  const logLines: string[] = [];
  /** The log lines written since `from`, parsed. */
  const loggedSince = (from: number) => logLines.slice(from).map((l) => JSON.parse(l));
  before(async () => {
    provider = await slowProvider();
    server = await startTestServer({ requestTimeoutMs: LIMIT_MS, upstreamUrl: provider.url, logLines });
    port = Number(new URL(server.origin).port);
    org = await server.newOrg();
    key = await orgSteps(server, org).key();
  });
  after(async () => {
    await server.close();
    await provider.close();
  });

  it("a partial body with a valid inference key, on the chat path served directly: 408, then closed", async () => {
    // A key's first request is served by the app; from then on the direct path takes it.
    provider.mode.next = "slowJson";
    assert.equal((await chat(server, key.secret, ask("warm up", LLAMA))).status, 200);
    taken.length = 0;
    const from = logLines.length;
    const answer = await silentAfter(port, partialPost("/api/v1/chat/completions", key.secret));
    assert.deepEqual(taken, [true], "the direct path took the request");
    assertTimedOut(answer);
    // Its log line says what the client got, as the app's lines do.
    // The line is written when the server's side of the socket has closed, which the client may see first.
    for (let i = 0; i < 200 && !loggedSince(from).some((l) => l.msg === "request completed"); i++)
      await sleep(10);
    const lines = loggedSince(from);
    const line = lines.find((l) => l.req?.url === "/api/v1/chat/completions");
    assert.equal(line?.msg, "request completed", JSON.stringify(lines));
    assert.equal(line?.res.statusCode, 408);
    assert.equal(lines.filter((l) => l.msg === "request timed out while arriving").length, 1);
  });

  it("a partial body with a management key on a management route: 408, then closed", async () => {
    assertTimedOut(await silentAfter(port, partialPost("/api/v1/guardrails", org.key)));
  });

  it("a partial body with an inference key the app serves (first use, chunked body): 408, then closed", async () => {
    const fresh = await orgSteps(server, org).key();
    const chunked =
      `POST /api/v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key.secret}\r\n` +
      `Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"mod\r\n`;
    const answers = await Promise.all([
      silentAfter(port, partialPost("/api/v1/chat/completions", fresh.secret)),
      silentAfter(port, chunked),
    ]);
    for (const answer of answers) assertTimedOut(answer);
  });

  it("headers that never end, with or without a key, and a connection that sends nothing: 408, then closed", async () => {
    const answers = await Promise.all([
      silentAfter(port, "GET /api/v1/guardrails HTTP/1.1\r\nHost: localhost\r\n"),
      silentAfter(
        port,
        `POST /api/v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key.secret}\r\n`,
      ),
      silentAfter(port, ""),
    ]);
    for (const answer of answers) assertTimedOut(answer);
  });

  it("a partial body without a key: its early 401 is its only answer, then the connection closes", async () => {
    const paths = ["/api/v1/guardrails", "/api/v1/chat/completions"];
    const answers = await Promise.all(paths.map((path) => silentAfter(port, partialPost(path, undefined))));
    for (const answer of answers) {
      assert.equal(answer.closedByServer, true, "the server left the connection open");
      assert.deepEqual(
        answer.responses.map((r) => r.status),
        [401],
        "no second answer after the early one",
      );
      assert.equal(JSON.parse(answer.responses[0]?.body ?? "").error.code, 401);
    }
  });

  it("on a region listener too: a partial body is a 408, then closed", async () => {
    const listener = await listenForRegion(server.app, "europe", { host: "127.0.0.1", port: 0 });
    try {
      const from = logLines.length;
      const regionPort = Number(new URL(listener.address).port);
      const answers = await Promise.all([
        silentAfter(regionPort, partialPost("/api/v1/guardrails", org.key)),
        silentAfter(regionPort, partialPost("/api/v1/chat/completions", key.secret)),
      ]);
      for (const answer of answers) assertTimedOut(answer);
      // The listener's time-outs are logged by the app, as the main listener's are.
      const timedOut = loggedSince(from).filter((l) => l.msg === "request timed out while arriving");
      assert.equal(timedOut.length, 2);
    } finally {
      await listener.close();
    }
  });

  it("a streamed answer that lasts several times the limit arrives whole", async () => {
    provider.mode.next = "stream";
    const res = await chat(server, key.secret, { ...ask("stream", LLAMA), stream: true });
    assert.equal(res.status, 200);
    const { data, done } = events(res.text);
    assert.equal(done, true);
    const texts = (data as { choices?: { delta?: { content?: string } }[]; error?: unknown }[]).map((d) => {
      assert.equal(d.error, undefined, JSON.stringify(d));
      return d.choices?.[0]?.delta?.content ?? "";
    });
    assert.equal(texts.join(""), "w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 ");
  });

  it("an answer that takes twice the limit to come, and the next request on the kept-alive connection, are both served", async () => {
    provider.mode.next = "slowJson";
    const socket: Socket = connect(port, "127.0.0.1");
    await once(socket, "connect");
    const chunks: Buffer[] = [];
    socket.on("data", (c: Buffer) => chunks.push(c));
    const body = JSON.stringify(ask("slow", LLAMA));
    const request =
      `POST /api/v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key.secret}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const answered = async (count: number) => {
      while (parseWireResponses(Buffer.concat(chunks)).filter((r) => r.body !== "").length < count) {
        if (socket.destroyed) break;
        await sleep(20);
      }
      return parseWireResponses(Buffer.concat(chunks));
    };
    socket.write(request);
    const first = await answered(1);
    assert.equal(first[0]?.status, 200, first[0]?.body);
    assert.equal(JSON.parse(first[0]?.body ?? "").choices[0].message.content, "late");
    // Idle between requests for longer than the limit: the keep-alive time-out governs, not this one.
    await sleep(2 * LIMIT_MS);
    assert.equal(socket.destroyed, false, "an idle kept-alive connection was closed");
    socket.write("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n");
    const both = await answered(2);
    assert.deepEqual(
      both.map((r) => r.status),
      [200, 200],
    );
    socket.destroy();
  });

  it("a non-streamed answer broken off part-way is a 502 upstream_stream_broken, not upstream_connect (docs/gateway.md#upstream-stream-broken)", async () => {
    provider.mode.next = "breakJson";
    const res = await chat(server, key.secret, ask("break", LLAMA));
    assert.equal(res.status, 502, res.text);
    assert.equal(res.body.error.message, "Upstream provider error");
    assert.equal(res.body.error.metadata.reason, "upstream_stream_broken");
    assert.equal(res.body.error.metadata.provider, "local");
    assert.match(res.body.error.metadata.detail, /cut off/);
  });
});

describe("GUARDRAILS_REQUEST_TIMEOUT_MS (docs/gateway.md#receive-timeout)", () => {
  it("is 30 s unless set, takes whole milliseconds from 1000 to 600000, and stops the start otherwise", () => {
    assert.equal(loadConfig({}).requestTimeoutMs, 30_000);
    assert.equal(loadConfig({ GUARDRAILS_REQUEST_TIMEOUT_MS: "2500" }).requestTimeoutMs, 2500);
    for (const bad of ["0", "999", "600001", "1.5", "soon"]) {
      assert.throws(
        () => loadConfig({ GUARDRAILS_REQUEST_TIMEOUT_MS: bad }),
        /GUARDRAILS_REQUEST_TIMEOUT_MS must be a whole number from 1000 to 600000/,
      );
    }
  });
});
