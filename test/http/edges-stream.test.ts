import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
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
