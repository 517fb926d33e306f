import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { loadConfig } from "../../src/config.js";
import { type RunningServer, startServer } from "../../src/main.js";

const MANAGEMENT_KEY = "test-regions-management-key-0123456789";
const LLAMA = "meta-llama/llama-3.1-8b-instruct";
const EU_ONLY_REFUSAL =
  "Requests governed by this key's guardrails must arrive through an allowed region address (europe); this one arrived through global";

/** GET /healthz at an origin with chosen headers (fetch cannot set Host); answers the region seen. */
function regionSeen(origin: string, headers: Record<string, string> = {}): Promise<string> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, path: "/healthz", headers }, (res) => {
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

async function json(
  origin: string,
  path: string,
  key: string,
  body?: unknown,
): Promise<{ status: number; body: { [k: string]: unknown } }> {
  const res = await fetch(`${origin}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as { [k: string]: unknown } };
}

/** The environment of a fresh start: nothing set but where, and a known management key. */
function freshEnv(dir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PORT: "0",
    HOST: "127.0.0.1",
    DATABASE_URL: `sqlite:${join(dir, "g.db")}`,
    GUARDRAILS_MANAGEMENT_KEY: MANAGEMENT_KEY,
    LOG_LEVEL: "silent",
    LOG_FORMAT: "json",
    ...extra,
  };
}

describe("regions by listener, the shipped default (docs/behaviour.md#ingress-region)", () => {
  const dir = mkdtempSync(join(tmpdir(), "guardrails-regions-"));
  const banner: string[] = [];
  let server: RunningServer;
  let europe: string;
  let us: string;
  before(async () => {
    server = await startServer(loadConfig(freshEnv(dir)), (line) => banner.push(line));
    europe = server.regionAddresses.europe ?? "";
    us = server.regionAddresses.us ?? "";
  });
  after(async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("a fresh start listens for Europe and US on ports of their own and says where (docs/behaviour.md#ingress-region)", () => {
    assert.match(europe, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.match(us, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(new Set([server.address, europe, us]).size, 3, "three addresses");
    const text = banner.join("\n");
    assert.ok(text.includes(`region    global  ${server.address}/api/v1`), text);
    assert.ok(text.includes(`region    europe  ${europe}/api/v1`), text);
    assert.ok(text.includes(`region    us      ${us}/api/v1`), text);
  });

  it("a request to the Europe port is europe, to the US port us, to the main port global (docs/behaviour.md#ingress-region)", async () => {
    assert.equal(await regionSeen(server.address), "global");
    assert.equal(await regionSeen(europe), "europe");
    assert.equal(await regionSeen(us), "us");
  });

  it("a forged Host or X-Forwarded-Host on the main port does not make it europe (docs/behaviour.md#ingress-region)", async () => {
    const { host: europeHost } = new URL(europe);
    const forged: Record<string, string>[] = [
      { host: "eu.localhost" },
      { host: "eu.localhost:8080" },
      { host: europeHost },
      { host: "localhost", "x-forwarded-host": "eu.localhost" },
      { host: "localhost", "x-forwarded-host": europeHost },
    ];
    for (const headers of forged) {
      assert.equal(await regionSeen(server.address, headers), "global", JSON.stringify(headers));
    }
    // Nor does a Host naming another address move a request that arrived on the Europe port.
    assert.equal(await regionSeen(europe, { host: new URL(server.address).host }), "europe");
    assert.equal(await regionSeen(us, { host: "eu.localhost" }), "us");
  });

  it("an EU-only key: the same 403 on the main port; through the Europe port, with the openai SDK, it passes the region rule and meets only European endpoints (docs/behaviour.md#region-enforcement)", async () => {
    const made = await json(server.address, "/api/v1/keys", MANAGEMENT_KEY, { name: "eu" });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const secret = made.body.key as string;
    const hash = (made.body.data as { hash: string }).hash;
    const guardrail = await json(server.address, "/api/v1/guardrails", MANAGEMENT_KEY, {
      name: "EU only",
      allowed_data_regions: ["europe"],
    });
    assert.equal(guardrail.status, 201, JSON.stringify(guardrail.body));
    const id = (guardrail.body.data as { id: string }).id;
    const assigned = await json(server.address, `/api/v1/guardrails/${id}/assignments/keys`, MANAGEMENT_KEY, {
      key_hashes: [hash],
    });
    assert.equal(assigned.status, 200, JSON.stringify(assigned.body));

    const client = (origin: string) =>
      new OpenAI({ apiKey: secret, baseURL: `${origin}/api/v1`, maxRetries: 0 });
    const ask = async (origin: string) => {
      try {
        await client(origin).chat.completions.create({
          model: LLAMA,
          messages: [{ role: "user", content: "Hello" }],
        });
        return undefined;
      } catch (err) {
        assert.ok(err instanceof OpenAI.APIError, String(err));
        return {
          status: err.status,
          error: err.error as { message: string; metadata: Record<string, unknown> },
        };
      }
    };

    const global = await ask(server.address);
    assert.equal(global?.status, 403);
    assert.deepEqual(global?.error, {
      code: 403,
      message: EU_ONLY_REFUSAL,
      metadata: {
        reason: "region_not_allowed",
        ingress_region: "global",
        allowed_regions: ["europe"],
        guardrail_ids: [id],
      },
    });

    const inEurope = await ask(europe);
    assert.equal(inEurope?.status, 403);
    assert.equal(inEurope?.error.metadata.reason, "no_allowed_endpoint");
    const candidates = inEurope?.error.metadata.candidates as {
      provider: string;
      region: string;
      removed_by: { rule: string }[];
    }[];
    const local = candidates.find((c) => c.provider === "local");
    assert.deepEqual(
      local?.removed_by.map((r) => r.rule),
      ["outside_ingress_region"],
    );
    for (const c of candidates) {
      assert.ok(
        c.removed_by.some((r) => r.rule === "outside_ingress_region"),
        `${c.provider} in ${c.region} is outside Europe`,
      );
    }
  });
});

describe("how regions are configured (docs/configuration.md#region-addresses)", () => {
  const dir = mkdtempSync(join(tmpdir(), "guardrails-regions-config-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("by default Europe listens on PORT + 1 and US on PORT + 2, on HOST; the base URLs are not read", () => {
    const config = loadConfig({ PORT: "9100", HOST: "0.0.0.0" });
    assert.equal(config.regionFrom, "listener");
    assert.deepEqual(config.regionListeners, {
      europe: { host: "0.0.0.0", port: 9101 },
      us: { host: "0.0.0.0", port: 9102 },
    });
    const picked = loadConfig({
      PORT: "9100",
      GUARDRAILS_EUROPE_LISTEN: "10.0.0.5:9443",
      GUARDRAILS_US_LISTEN: "9300",
    });
    assert.deepEqual(picked.regionListeners, {
      europe: { host: "10.0.0.5", port: 9443 },
      us: { host: "127.0.0.1", port: 9300 },
    });
    assert.deepEqual(loadConfig({ PORT: "0" }).regionListeners, {
      europe: { host: "127.0.0.1", port: 0 },
      us: { host: "127.0.0.1", port: 0 },
    });
  });

  it("GUARDRAILS_REGION_FROM=host reads the Host against the base URLs and starts no region listener (docs/behaviour.md#region-from-host)", () => {
    const config = loadConfig({
      PORT: "9100",
      GUARDRAILS_REGION_FROM: "host",
      GUARDRAILS_EUROPE_BASE_URL: "https://eu.example.com/api/v1",
    });
    assert.equal(config.regionFrom, "host");
    assert.deepEqual(config.regionListeners, {});
    assert.equal(config.regionBaseUrls.europe, "https://eu.example.com/api/v1");
    assert.equal(config.regionBaseUrls.us, "http://us.localhost:9100/api/v1");
  });

  it("a variable of the other mode, a port past 65535 or two listeners on one address stop the start with a line naming the variable", () => {
    const refused: [NodeJS.ProcessEnv, RegExp][] = [
      [
        { GUARDRAILS_EUROPE_BASE_URL: "https://eu.example.com/api/v1" },
        /^GUARDRAILS_EUROPE_BASE_URL is read only with GUARDRAILS_REGION_FROM=host/,
      ],
      [
        { GUARDRAILS_BASE_URL: "https://gw.example.com/api/v1" },
        /^GUARDRAILS_BASE_URL is read only with GUARDRAILS_REGION_FROM=host/,
      ],
      [
        { GUARDRAILS_REGION_FROM: "host", GUARDRAILS_US_LISTEN: "9300" },
        /^GUARDRAILS_US_LISTEN is read only with GUARDRAILS_REGION_FROM=listener/,
      ],
      [{ GUARDRAILS_REGION_FROM: "proxy" }, /^GUARDRAILS_REGION_FROM must be one of listener, host/],
      [
        { PORT: "65534" },
        /^GUARDRAILS_US_LISTEN must be set: PORT 65534 leaves no port 65536 for the us listener/,
      ],
      [
        { PORT: "9100", GUARDRAILS_EUROPE_LISTEN: "9100" },
        /^GUARDRAILS_EUROPE_LISTEN must differ from PORT: both are 127\.0\.0\.1:9100/,
      ],
      [
        { PORT: "9100", GUARDRAILS_US_LISTEN: "9101" },
        /^GUARDRAILS_US_LISTEN must differ from GUARDRAILS_EUROPE_LISTEN/,
      ],
      [{ GUARDRAILS_EUROPE_LISTEN: "eu:99999" }, /^GUARDRAILS_EUROPE_LISTEN must be a port or host:port/],
    ];
    for (const [env, message] of refused) {
      assert.throws(() => loadConfig(env), { message }, JSON.stringify(env));
    }
  });

  it("a region port already in use stops the start with a line naming the variable, and leaves nothing open", async () => {
    const busy: Server = createServer();
    await new Promise<void>((resolve) => busy.listen(0, "127.0.0.1", resolve));
    const port = (busy.address() as { port: number }).port;
    const env = freshEnv(dir, { GUARDRAILS_EUROPE_LISTEN: String(port) });
    try {
      await assert.rejects(
        startServer(loadConfig(env), () => {}),
        new RegExp(
          `^Error: GUARDRAILS_EUROPE_LISTEN: the europe region cannot listen on 127\\.0\\.0\\.1:${port} \\(EADDRINUSE\\); set GUARDRAILS_EUROPE_LISTEN to a free port`,
        ),
      );
    } finally {
      await new Promise((resolve) => busy.close(resolve));
    }
    // The failed start released the database file's one-server lock: the same file serves again.
    const again = await startServer(loadConfig(env), () => {});
    try {
      assert.equal(await regionSeen(again.regionAddresses.europe ?? ""), "europe");
    } finally {
      await again.stop();
    }
  });

  it("trusting a proxy's forwarded headers (for the console) does not let X-Forwarded-Host choose a region by listener (docs/behaviour.md#ingress-region)", async () => {
    const trustDir = mkdtempSync(join(tmpdir(), "guardrails-regions-trust-"));
    const running = await startServer(
      loadConfig(freshEnv(trustDir, { GUARDRAILS_TRUST_FORWARDED_HOST: "true" })),
      () => {},
    );
    try {
      const europeHost = new URL(running.regionAddresses.europe ?? "").host;
      for (const forwarded of ["eu.localhost", "eu.localhost:8080", europeHost]) {
        const seen = await regionSeen(running.address, { host: "localhost", "x-forwarded-host": forwarded });
        assert.equal(seen, "global", forwarded);
      }
    } finally {
      await running.stop();
      rmSync(trustDir, { recursive: true, force: true });
    }
  });

  it("with Host-based regions, the Host the operator's proxy sets decides, and no region listener opens (docs/behaviour.md#region-from-host)", async () => {
    const hostDir = mkdtempSync(join(tmpdir(), "guardrails-regions-host-"));
    const running = await startServer(
      loadConfig(freshEnv(hostDir, { GUARDRAILS_REGION_FROM: "host" })),
      () => {},
    );
    try {
      assert.deepEqual(running.regionAddresses, {});
      assert.equal(await regionSeen(running.address, { host: "eu.localhost:8080" }), "europe");
      assert.equal(await regionSeen(running.address), "global");
    } finally {
      await running.stop();
      rmSync(hostDir, { recursive: true, force: true });
    }
  });
});
