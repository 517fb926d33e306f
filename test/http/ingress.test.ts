import assert from "node:assert/strict";
import { request } from "node:http";
import { after, before, describe, it } from "node:test";
import { startTestServer, type TestServer } from "../helpers/server.js";

/** GET a path with a chosen Host header (fetch does not let a caller set Host). */
function getWithHost(
  server: TestServer,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: unknown }> {
  const { port } = new URL(server.origin);
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, headers }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        text += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("ingress region (docs/behaviour.md#ingress-region)", () => {
  let server: TestServer;
  let trusting: TestServer;
  before(async () => {
    server = await startTestServer();
    trusting = await startTestServer({ trustForwardedHost: true });
  });
  after(async () => {
    await server.close();
    await trusting.close();
  });

  it("a request's region is the one whose base URL host equals the Host header (docs/behaviour.md#ingress-region)", async () => {
    for (const [host, region] of [
      ["global.test", "global"],
      ["eu.test", "europe"],
      ["us.test", "us"],
      ["EU.TEST", "europe"],
      ["eu.test:80", "europe"],
    ]) {
      const res = await getWithHost(server, "/healthz", { host: host as string });
      assert.deepEqual(res.body, { status: "ok", ingress_region: region }, host);
    }
  });

  it("a host that matches no region address counts as global (docs/behaviour.md#ingress-region)", async () => {
    for (const host of ["elsewhere.example", "eu.test:8443", "127.0.0.1"]) {
      const res = await getWithHost(server, "/healthz", { host });
      assert.deepEqual(res.body, { status: "ok", ingress_region: "global" }, host);
    }
  });

  it("X-Forwarded-Host is ignored unless the operator trusts it (docs/behaviour.md#ingress-region)", async () => {
    const ignored = await getWithHost(server, "/healthz", {
      host: "global.test",
      "x-forwarded-host": "eu.test",
    });
    assert.deepEqual(ignored.body, { status: "ok", ingress_region: "global" });
    const trusted = await getWithHost(trusting, "/healthz", {
      host: "global.test",
      "x-forwarded-host": "us.test, proxy.internal",
    });
    assert.deepEqual(trusted.body, { status: "ok", ingress_region: "us" });
  });

  it("every endpoint lives under /api/v1: the same path without the prefix is 404 (docs/behaviour.md#addresses)", async () => {
    const org = await server.newOrg();
    const res = await fetch(`${server.origin}/guardrails`, {
      headers: { authorization: `Bearer ${org.key}` },
    });
    assert.equal(res.status, 404);
    assert.deepEqual(await res.json(), {
      error: {
        code: 404,
        message: "Resource not found",
        metadata: { reason: "no_such_route", method: "GET", path: "/guardrails", api_reference: "/docs" },
      },
    });
  });
});
