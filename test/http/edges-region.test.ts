import assert from "node:assert/strict";
import { request } from "node:http";
import { after, before, describe, it } from "node:test";
import { listenForRegion, type RegionListener } from "../../src/http/region-listeners.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

/** GET /healthz at an origin with a chosen Host header; answers the region the service saw. */
function regionSeen(origin: string, host: string): Promise<string> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, path: "/healthz", headers: { host } }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        text += chunk;
      });
      res.on("end", () => resolve(JSON.parse(text).ingress_region));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("a region bound to its own listener (docs/configuration.md#region-addresses)", () => {
  let hostBased: TestServer;
  let server: TestServer;
  let europe: RegionListener;
  let us: RegionListener;
  before(async () => {
    hostBased = await startTestServer();
    server = await startTestServer({ regionByListener: true });
    europe = await listenForRegion(server.app, "europe", { host: "127.0.0.1", port: 0 });
    us = await listenForRegion(server.app, "us", { host: "127.0.0.1", port: 0 });
  });
  after(async () => {
    await europe.close();
    await us.close();
    await server.close();
    await hostBased.close();
  });

  it("by default the Host header chooses the region, which any client can forge", async () => {
    assert.equal(await regionSeen(hostBased.origin, "eu.test"), "europe");
  });

  it("with region listeners, the main listener is global whatever Host a client sends", async () => {
    for (const host of ["eu.test", "us.test", "global.test", "elsewhere"]) {
      assert.equal(await regionSeen(server.origin, host), "global", host);
    }
  });

  it("a request that connects to a region's listener arrives through that region, whatever its Host", async () => {
    for (const host of ["eu.test", "us.test", "global.test"]) {
      assert.equal(await regionSeen(europe.address, host), "europe", host);
      assert.equal(await regionSeen(us.address, host), "us", host);
    }
  });

  it("a region listener serves the same API, errors in the same envelope", async () => {
    const res = await fetch(`${europe.address}/api/v1/guardrails`);
    assert.equal(res.status, 401);
    assert.deepEqual(await res.json(), { error: { code: 401, message: "Missing Authentication header" } });
    assert.equal(res.headers.get("x-content-type-options"), "nosniff");
  });
});
