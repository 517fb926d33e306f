import assert from "node:assert/strict";
import { Agent, request } from "node:http";
import type { Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import { ask, type GatewayBench, orgWithKey, startGatewayBench } from "./gateway-support.js";

/**
 * One keep-alive connection carrying many requests, refused and served, by every door (the app's
 * routes and the chat completions route served from Node's server), must not leave anything behind
 * on the connection: Node says so with a MaxListenersExceededWarning after the eleventh listener.
 */
describe("a keep-alive connection carries any number of requests without a process warning (docs/behaviour.md#keep-alive-connections)", () => {
  let bench: GatewayBench;
  let managementKey: string;
  let inferenceKey: string;
  const warnings: Error[] = [];
  const onWarning = (warning: Error) => warnings.push(warning);
  before(async () => {
    bench = await startGatewayBench();
    const { org, key } = await orgWithKey(bench);
    managementKey = org.key;
    inferenceKey = key.secret;
    process.on("warning", onWarning);
  });
  after(async () => {
    process.off("warning", onWarning);
    await bench.close();
  });

  interface Sent {
    status: number;
    socket: Socket;
  }

  /**
   * One request on the agent's one connection. With `bodyAfterAnswer`, the body is written only once
   * the answer has come, so the server answers before it has read it (an early answer).
   */
  function send(
    agent: Agent,
    method: string,
    path: string,
    options: { key?: string; body?: string; bodyAfterAnswer?: boolean } = {},
  ): Promise<Sent> {
    const { port } = new URL(bench.server.origin);
    const headers: Record<string, string> = {};
    if (options.key) headers.authorization = `Bearer ${options.key}`;
    if (options.body !== undefined) {
      headers["content-type"] = "application/json";
      headers["content-length"] = String(Buffer.byteLength(options.body));
    }
    return new Promise((resolve, reject) => {
      const req = request({ agent, host: "127.0.0.1", port, method, path, headers }, (res) => {
        res.resume();
        if (options.bodyAfterAnswer) req.end(options.body);
        res.on("end", () => resolve({ status: res.statusCode ?? 0, socket: res.socket }));
      });
      req.on("error", reject);
      if (options.bodyAfterAnswer) req.flushHeaders();
      else req.end(options.body);
    });
  }

  it("25 requests of each kind, unauthenticated and authenticated, on one connection: no warning", async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const chat = JSON.stringify(ask("Hello"));
    const kinds: [string, (i: number) => Promise<Sent>, number][] = [
      ["GET without a key", () => send(agent, "GET", "/api/v1/guardrails"), 401],
      ["POST without a key", () => send(agent, "POST", "/api/v1/guardrails", { body: '{"name":"x"}' }), 401],
      [
        "POST with a wrong key, answered before its body is sent",
        (i) =>
          send(agent, "POST", "/api/v1/guardrails", {
            key: `sk-gr-mgmt-wrong-${i}`,
            body: JSON.stringify({ name: "x".repeat(1000) }),
            bodyAfterAnswer: true,
          }),
        401,
      ],
      ["chat without a key", () => send(agent, "POST", "/api/v1/chat/completions", { body: chat }), 401],
      ["an unknown route", () => send(agent, "GET", "/api/v1/nothing-here"), 404],
      [
        "GET with a management key",
        () => send(agent, "GET", "/api/v1/guardrails", { key: managementKey }),
        200,
      ],
      [
        "chat with an inference key",
        () => send(agent, "POST", "/api/v1/chat/completions", { key: inferenceKey, body: chat }),
        200,
      ],
    ];
    const sockets = new Set<Socket>();
    for (const [name, run, status] of kinds) {
      for (let i = 0; i < 25; i++) {
        const sent = await run(i);
        assert.equal(sent.status, status, `${name} #${i}`);
        sockets.add(sent.socket);
      }
    }
    agent.destroy();
    // Warnings are emitted on a later tick than the listener that causes them.
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(sockets.size, 1, "every request went over the one connection");
    assert.deepEqual(
      warnings.map((w) => `${w.name}: ${w.message}`),
      [],
    );
  });
});
