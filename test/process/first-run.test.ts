import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { api, type Child, freePort, ROOT, randomManagementKey, startServerProcess } from "./child.js";

const LLAMA = "meta-llama/llama-3.1-8b-instruct";

/** The echo provider on a first run, and what the service says when a provider cannot be reached. */
describe("a first run with nothing to edit (docs/configuration.md#the-echo-provider)", () => {
  const children: Child[] = [];
  const dir = mkdtempSync(join(tmpdir(), "guardrails-first-run-"));
  after(() => {
    for (const child of children) child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });

  async function start(name: string, env: Record<string, string | undefined>) {
    const key = randomManagementKey();
    const server = await startServerProcess({
      DATABASE_URL: `sqlite:${join(dir, `${name}.db`)}`,
      GUARDRAILS_MANAGEMENT_KEY: key,
      ...env,
    });
    children.push(server);
    const made = await api(server.origin, "POST", "/api/v1/keys", key, { name: "demo" });
    assert.equal(made.status, 201);
    const ask = () =>
      api(server.origin, "POST", "/api/v1/chat/completions", made.body.key, {
        model: LLAMA,
        messages: [{ role: "user", content: "ping" }],
      });
    return { server, ask };
  }

  it("the shipped catalog without provider keys serves the echo provider in-process: a request is answered with nothing else started", {
    timeout: 60_000,
  }, async () => {
    const { server, ask } = await start("default", {
      OPENAI_API_KEY: undefined,
      ANTHROPIC_API_KEY: undefined,
    });
    assert.match(
      server.stderr(),
      /echo provider \(local\) is served in-process at http:\/\/127\.0\.0\.1:\d+\/v1/,
    );
    const res = await ask();
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.choices[0].message.content, "Echo: ping");
  });

  it("a real provider's key turns the in-process echo off; the banner says where it is expected instead", {
    timeout: 60_000,
  }, async () => {
    const { server } = await start("with-key", { OPENAI_API_KEY: "sk-test-not-real" });
    assert.match(server.stderr(), /echo provider \(local\) is expected at http:\/\/127\.0\.0\.1:8091\/v1/);
    assert.doesNotMatch(server.stderr(), /served in-process/);
  });

  it("nothing listening at a provider's address is a 502 upstream_connect naming the address and the next step (docs/gateway.md)", {
    timeout: 60_000,
  }, async () => {
    // A catalog of one's own (echo off by default) whose local provider points at a closed port.
    const closed = await freePort();
    const catalog = JSON.parse(readFileSync(join(ROOT, "config", "default.json"), "utf8"));
    for (const p of catalog.providers) if (p.id === "local") p.base_url = `http://127.0.0.1:${closed}/v1`;
    const configFile = join(dir, "catalog.json");
    writeFileSync(configFile, JSON.stringify(catalog));
    const { ask } = await start("closed", { GUARDRAILS_CONFIG: configFile });
    const res = await ask();
    assert.equal(res.status, 502);
    assert.equal(res.body.error.message, "Upstream provider error");
    assert.equal(res.body.error.metadata.reason, "upstream_connect");
    assert.equal(res.body.error.metadata.provider, "local");
    assert.equal(res.body.error.metadata.address, `http://127.0.0.1:${closed}/v1`);
    assert.match(res.body.error.metadata.hint, new RegExp(`npx guardrails upstream --port ${closed}`));
    assert.match(res.body.error.metadata.hint, /GUARDRAILS_ECHO_PROVIDER=on/);
  });

  it("GUARDRAILS_ECHO_PROVIDER=on serves the echo in-process even with a catalog of one's own", {
    timeout: 60_000,
  }, async () => {
    const configFile = join(dir, "catalog.json");
    const { ask } = await start("forced", { GUARDRAILS_CONFIG: configFile, GUARDRAILS_ECHO_PROVIDER: "on" });
    assert.equal((await ask()).status, 200);
  });
});
