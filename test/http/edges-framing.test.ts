import assert from "node:assert/strict";
import { connect } from "node:net";
import { after, before, describe, it } from "node:test";
import { startTestServer, type TestOrg, type TestServer } from "../helpers/server.js";
import { parseWireResponses, type WireResponse } from "./gateway-support.js";

/**
 * What arrives below the routes: broken HTTP framing, oversized headers, and bodies over the limit
 * sent by clients that write everything before they read. Every answer is our error envelope.
 */

interface RawAnswer {
  /** Every response on the connection, in order. */
  responses: WireResponse[];
  /** The socket error, when the connection broke instead of closing. */
  error?: string;
}

/**
 * Sends raw bytes and reads what comes back until the server closes. With `writeFirst`, nothing is
 * read until every byte was handed to the kernel, as Python's http.client and Node's fetch do.
 */
function rawExchange(server: TestServer, bytes: Buffer, writeFirst = false): Promise<RawAnswer> {
  const { port } = new URL(server.origin);
  return new Promise((resolve) => {
    const socket = connect(Number(port), "127.0.0.1");
    const chunks: Buffer[] = [];
    let error: string | undefined;
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", (e: NodeJS.ErrnoException) => {
      error = e.code ?? e.message;
    });
    socket.on("close", () =>
      resolve({ responses: parseWireResponses(Buffer.concat(chunks)), ...(error ? { error } : {}) }),
    );
    if (writeFirst) socket.pause();
    socket.write(bytes, () => {
      socket.resume();
      socket.end();
    });
  });
}

function assertEnvelope(response: RawAnswer["responses"][number], status: number, message: string): void {
  assert.equal(response.status, status, response.body);
  assert.match(response.headers["content-type"] ?? "", /^application\/json/);
  assert.equal(response.headers["x-content-type-options"], "nosniff");
  const body = JSON.parse(response.body);
  assert.equal(body.error.code, status);
  assert.equal(body.error.message, message);
}

describe("framing errors, header limits and early answers (docs/api.md#limits)", () => {
  let server: TestServer;
  let org: TestOrg;
  before(async () => {
    server = await startTestServer();
    org = await server.newOrg();
  });
  after(async () => {
    await server.close();
  });

  it("a Content-Length shorter than the body: every answer on the connection is the error envelope", async () => {
    const body = '{"name":"framing"}';
    const head = `POST /api/v1/guardrails HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${org.key}\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\n`;
    const answer = await rawExchange(server, Buffer.from(head + body));
    // The stray bytes fail to parse while the first request is still being handled, so the
    // connection may close before the first answer: what arrives must be our envelope.
    assert.ok(answer.responses.length >= 1, JSON.stringify(answer));
    for (const response of answer.responses) assertEnvelope(response, 400, "Invalid request parameters");
  });

  it("a 20 KB header is a 431 in the error envelope", async () => {
    const head = `GET /api/v1/guardrails HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`;
    const answer = await rawExchange(server, Buffer.from(head));
    assert.equal(answer.responses.length, 1, JSON.stringify(answer));
    assertEnvelope(
      answer.responses[0] as RawAnswer["responses"][number],
      431,
      "Request header fields too large",
    );
  });

  it("a request line that is not HTTP is a 400 in the error envelope", async () => {
    const answer = await rawExchange(server, Buffer.from("HELLO\r\n\r\n"));
    assertEnvelope(answer.responses[0] as RawAnswer["responses"][number], 400, "Invalid request parameters");
  });

  it("a client that writes a 16 MiB body before reading gets the 413, not a reset", async () => {
    const size = 16 * 1024 * 1024;
    const head = `POST /api/v1/guardrails HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${org.key}\r\nContent-Type: application/json\r\nContent-Length: ${size}\r\n\r\n`;
    for (let i = 0; i < 3; i++) {
      const answer = await rawExchange(
        server,
        Buffer.concat([Buffer.from(head), Buffer.alloc(size, 0x61)]),
        true,
      );
      assert.equal(answer.error, undefined, `try ${i}: ${answer.error}`);
      assertEnvelope(answer.responses[0] as RawAnswer["responses"][number], 413, "Request body too large");
    }
  });

  it("a client that writes its body before reading gets the 401 of a wrong key, not a reset", async () => {
    const size = 4 * 1024 * 1024;
    const head = `POST /api/v1/guardrails HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer wrong\r\nContent-Type: application/json\r\nContent-Length: ${size}\r\n\r\n`;
    const answer = await rawExchange(
      server,
      Buffer.concat([Buffer.from(head), Buffer.alloc(size, 0x61)]),
      true,
    );
    assert.equal(answer.error, undefined, answer.error);
    assertEnvelope(answer.responses[0] as RawAnswer["responses"][number], 401, "Invalid API key");
  });
});
