import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer, type Server, type ServerResponse } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { DEFAULT_CONFIG_FILE, loadCatalogFile } from "../../src/config.js";
import { releaseExpired } from "../../src/services/release-expired-reservations.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { chat, events, LLAMA } from "./gateway-support.js";
import { orgSteps } from "./org-support.js";

/**
 * A provider's stream reaches the gateway in reads that split anywhere, through the middle of a
 * character too; the relay must hand the client the text the provider sent.
 */

const TEXT = "héllo €uro 🎉 ok";

/** An upstream that streams TEXT with every multi-byte character split between two writes. */
async function splittingUpstream(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", async () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      const event = (content: string) =>
        `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: LLAMA, choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\r\n\r\n`;
      const bytes = Buffer.from(`${event(TEXT)}${event(" again €")}data: [DONE]\r\n\r\n`);
      // Cut inside the first bytes of "é", "€" and the emoji, and between a CR and its LF.
      const cuts = [bytes.indexOf(0xc3) + 1, bytes.indexOf(0xe2) + 2, bytes.indexOf(0xf0) + 3];
      cuts.push(bytes.indexOf("\r\n") + 1);
      cuts.sort((a, b) => a - b);
      let from = 0;
      for (const cut of [...cuts, bytes.length]) {
        res.write(bytes.subarray(from, cut));
        from = cut;
        // Separate writes with a pause, so the gateway reads them apart.
        await sleep(15);
      }
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, server };
}

describe("a streamed answer keeps characters split between reads (docs/gateway.md#what-happens-to-a-request)", () => {
  let server: TestServer;
  let upstream: Server;
  before(async () => {
    const up = await splittingUpstream();
    upstream = up.server;
    server = await startTestServer({ upstreamUrl: up.url, providerKeys: { local: "k" } });
  });
  after(async () => {
    await server.close();
    upstream.close();
  });

  it("relays multi-byte characters whole when the provider's bytes split inside them", async () => {
    const org = await server.newOrg();
    const key = await orgSteps(server, org).key();
    const res = await chat(server, key.secret, {
      model: LLAMA,
      stream: true,
      messages: [{ role: "user", content: "hi" }],
    });
    assert.equal(res.status, 200, res.text);
    assert.ok(!res.text.includes("\ufffd"), res.text);
    const { data, done } = events(res.text);
    const text = data
      .map((d) => (d as { choices?: { delta?: { content?: string } }[] }).choices?.[0]?.delta?.content ?? "")
      .join("");
    assert.equal(text, `${TEXT} again €`);
    assert.ok(done);
  });
});

/** One event of a chat stream, with every field the OpenAI chat API defines (nothing to fill in). */
const chunkEvent = (content: string) =>
  `data: ${JSON.stringify({ id: "c2", object: "chat.completion.chunk", created: 1, model: LLAMA, choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;

/**
 * The streamed answer's body as the gateway framed it: the data of each HTTP/1.1 chunk it wrote,
 * read from a raw socket (a client library would merge what arrives together).
 */
async function chunksOf(
  origin: string,
  secret: string,
  body: unknown,
  /** Before reading the answer (the client takes nothing until it resolves). */
  hold?: () => Promise<void>,
): Promise<string[]> {
  const { hostname, port } = new URL(origin);
  const payload = JSON.stringify(body);
  const socket = connect(Number(port), hostname);
  socket.pause();
  socket.write(
    `POST /api/v1/chat/completions HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: Bearer ${secret}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(payload)}\r\nConnection: close\r\n\r\n${payload}`,
  );
  await hold?.();
  const parts: Buffer[] = [];
  for await (const part of socket) parts.push(part as Buffer);
  const raw = Buffer.concat(parts);
  const head = raw.indexOf("\r\n\r\n");
  assert.match(raw.subarray(0, head).toString(), /^HTTP\/1\.1 200 [\s\S]*transfer-encoding: chunked/i);
  const chunks: string[] = [];
  // Each chunk: its size in hex, CRLF, that many bytes, CRLF; a chunk of size 0 ends the body.
  for (let at = head + 4; ; ) {
    const line = raw.indexOf("\r\n", at);
    const size = Number.parseInt(raw.subarray(at, line).toString(), 16);
    if (size === 0) break;
    chunks.push(raw.subarray(line + 2, line + 2 + size).toString("utf8"));
    at = line + 2 + size + 2;
  }
  return chunks;
}

/**
 * A provider whose every answer is the event stream `stream` writes, and a gateway in front of it
 * (with the providers' `timeout_ms` and the holds' margin given), started before the enclosing
 * describe block's tests and closed after them.
 */
function streamingProvider(
  stream: (res: ServerResponse) => Promise<void>,
  options: { timeoutMs?: number; holdMarginMs?: number } = {},
): { readonly server: TestServer } {
  let server: TestServer | undefined;
  let upstream: Server | undefined;
  before(async () => {
    const provider = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        void stream(res).then(() => {
          if (!res.writableEnded) res.end();
        });
      });
    });
    upstream = provider;
    await new Promise<void>((resolve) => provider.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(provider.address() as AddressInfo).port}/v1`;
    const base = loadCatalogFile(DEFAULT_CONFIG_FILE);
    const { timeoutMs, holdMarginMs } = options;
    server = await startTestServer({
      ...(timeoutMs === undefined
        ? {}
        : { catalog: { ...base, providers: base.providers.map((p) => ({ ...p, timeout_ms: timeoutMs })) } }),
      ...(holdMarginMs === undefined ? {} : { holdMarginMs }),
      upstreamUrl: url,
      providerKeys: { local: "k" },
    });
  });
  after(async () => {
    await server?.close();
    upstream?.close();
  });
  return {
    get server() {
      if (!server) throw new Error("the gateway starts in the describe block's before hook");
      return server;
    },
  };
}

describe("a stream is relayed read by read (docs/gateway.md#streaming)", () => {
  /** What the upstream does with each request: set by the test that sends it. */
  let answer: (res: ServerResponse) => Promise<void>;
  const provider = streamingProvider((res) => answer(res));

  it("passes on the events of one read in one write, not a write per event", async () => {
    const words = Array.from({ length: 40 }, (_, i) => `word${i} `);
    answer = async (res) => {
      // All of them in one write: on loopback the gateway reads them at once.
      res.write(words.map(chunkEvent).join(""));
      res.write(
        `data: ${JSON.stringify({ id: "c2", object: "chat.completion.chunk", created: 1, model: LLAMA, choices: [], usage: { prompt_tokens: 3, completion_tokens: 40 } })}\n\ndata: [DONE]\n\n`,
      );
    };
    const key = await orgSteps(provider.server, await provider.server.newOrg()).key();
    const chunks = await chunksOf(provider.server.origin, key.secret, {
      model: LLAMA,
      stream: true,
      messages: [{ role: "user", content: "hi" }],
    });
    const { data, done } = events(chunks.join(""));
    assert.deepEqual(
      data.map((d) => (d as { choices: { delta: { content: string } }[] }).choices[0]?.delta.content),
      words,
    );
    assert.ok(done);
    const carrying = chunks.filter((c) => c.includes('"word'));
    assert.ok(carrying.length <= 4, `${words.length} events came in ${carrying.length} writes`);
  });

  it("passes an event on as soon as its read arrives, before the provider sends the next", async () => {
    let seen: () => void = () => {};
    const firstSeen = new Promise<void>((resolve) => {
      seen = resolve;
    });
    let order = "";
    answer = async (res) => {
      res.write(chunkEvent("first "));
      // The second event waits for the client to have the first; a relay that held events back
      // would see the wait time out.
      const waited = await Promise.race([firstSeen.then(() => "seen"), sleep(10_000).then(() => "timeout")]);
      order += waited;
      res.write(chunkEvent("second"));
      res.write("data: [DONE]\n\n");
    };
    const key = await orgSteps(provider.server, await provider.server.newOrg()).key();
    const res = await fetch(`${provider.server.baseUrl}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key.secret}`, "content-type": "application/json" },
      body: JSON.stringify({ model: LLAMA, stream: true, messages: [{ role: "user", content: "hi" }] }),
    });
    assert.equal(res.status, 200);
    let text = "";
    const decoder = new TextDecoder();
    for await (const piece of res.body as unknown as AsyncIterable<Uint8Array>) {
      text += decoder.decode(piece, { stream: true });
      if (text.includes("first ")) seen();
    }
    assert.equal(order, "seen");
    const { data, done } = events(text);
    assert.equal(data.length, 2);
    assert.ok(done);
  });
  it("reads the provider only as fast as the client takes the answer", async () => {
    const content = "a".repeat(256 * 1024);
    const count = 256; // 64 MiB: more than every buffer between the provider and a client that waits
    const upstreamState = { written: 0, finished: false };
    answer = async (res) => {
      for (let i = 0; i < count; i++) {
        if (!res.write(chunkEvent(content))) await once(res, "drain");
        upstreamState.written = i + 1;
      }
      res.write("data: [DONE]\n\n");
      upstreamState.finished = true;
    };
    const key = await orgSteps(provider.server, await provider.server.newOrg()).key();
    let stalled = false;
    let sentWhenStalled = 0;
    const chunks = await chunksOf(
      provider.server.origin,
      key.secret,
      { model: LLAMA, stream: true, messages: [{ role: "user", content: "hi" }] },
      async () => {
        // The client takes nothing until the provider stops getting its events through, or sends
        // them all (which a relay that buffers the answer lets it do).
        for (let still = 0, seen = -1; still < 20 && !upstreamState.finished; ) {
          await sleep(100);
          still = upstreamState.written === seen ? still + 1 : 0;
          seen = upstreamState.written;
        }
        stalled = !upstreamState.finished;
        sentWhenStalled = upstreamState.written;
      },
    );
    assert.ok(stalled, `the provider sent all ${count} events to a client that read none`);
    assert.ok(sentWhenStalled < count);
    // Once the client reads, the rest comes through.
    const { data, done } = events(chunks.join(""));
    assert.equal(data.length, count);
    assert.ok(done);
  });
});

describe("a client that takes nothing of a stream is cut off (docs/gateway.md#streaming)", () => {
  const state = { written: 0, stopped: false };
  const count = 256;
  const content = "a".repeat(256 * 1024);
  // The provider may stay silent for 1.5 s between chunks, and so may the client take nothing.
  const provider = streamingProvider(
    async (res) => {
      const stopped = once(res, "close").then(() => {
        state.stopped = state.written < count;
      });
      for (let i = 0; i < count && !res.destroyed; i++) {
        if (!res.write(chunkEvent(content))) await Promise.race([once(res, "drain"), stopped]);
        state.written = i + 1;
      }
      res.end("data: [DONE]\n\n");
    },
    { timeoutMs: 1_500 },
  );

  it("after the provider's timeout_ms of taking nothing: the provider's stream is stopped and the connection closed", async () => {
    const key = await orgSteps(provider.server, await provider.server.newOrg()).key();
    const { hostname, port } = new URL(provider.server.origin);
    const payload = JSON.stringify({
      model: LLAMA,
      stream: true,
      messages: [{ role: "user", content: "hi" }],
    });
    const socket = connect(Number(port), hostname);
    socket.pause();
    socket.write(
      `POST /api/v1/chat/completions HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: Bearer ${key.secret}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`,
    );
    // The client reads nothing; the gateway has 30 s to give up on it.
    for (let waited = 0; !state.stopped && waited < 30_000; waited += 100) await sleep(100);
    // Should it not have, the client leaves, so that the server can close after the failure.
    if (!state.stopped) socket.destroy();
    assert.ok(state.stopped, "the provider's stream went on for a client that took nothing");
    assert.ok(state.written < count);
    // What reached the client ends with the connection, without [DONE]: the answer is cut short.
    let received = "";
    socket.on("data", (part: Buffer) => {
      received += part.toString("latin1");
    });
    socket.on("error", () => {});
    socket.resume();
    await Promise.race([once(socket, "close"), sleep(30_000)]);
    assert.ok(socket.destroyed, "the gateway kept the connection open");
    assert.ok(!received.includes("data: [DONE]"));
  });
});

describe("a long stream keeps its budget hold (docs/behaviour.md#budget-reservations)", () => {
  // A hold of 400 + 200 ms: it would expire a third of the way through the stream.
  const provider = streamingProvider(
    async (res) => {
      // An event every 100 ms for 2 s: within the provider's time-out, past the first hold.
      for (let i = 0; i < 20 && !res.destroyed; i++) {
        res.write(chunkEvent(`part${i} `));
        await sleep(100);
      }
      res.end(
        `data: ${JSON.stringify({ id: "c2", object: "chat.completion.chunk", created: 1, model: LLAMA, choices: [], usage: { prompt_tokens: 5, completion_tokens: 20 } })}\n\ndata: [DONE]\n\n`,
      );
    },
    { timeoutMs: 400, holdMarginMs: 200 },
  );

  it("the expiry sweep finds nothing to give back while the stream runs, and the stream is settled", async () => {
    const server = provider.server;
    const org = await server.newOrg();
    const steps = orgSteps(server, org);
    const key = await steps.key();
    const guardrail = await steps.guardrail({ limit_usd: 100, reset_interval: "daily" });
    await steps.assignKeys(guardrail.id, [key.hash]);
    const answer = chat(server, key.secret, {
      model: LLAMA,
      stream: true,
      messages: [{ role: "user", content: "hi" }],
    });
    // Well past the first hold's expiry, while the stream still runs.
    await sleep(1_200);
    const swept = await releaseExpired(server.deps);
    const res = await answer;
    assert.equal(res.status, 200, res.text);
    assert.equal(swept, 0, "the sweep gave back the hold of a request still streaming");
    assert.ok(events(res.text).done);
  });
});
