import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import {
  api,
  type Child,
  freePort,
  ROOT,
  randomManagementKey,
  spawnCli,
  startServerProcess,
  waitFor,
} from "./child.js";

/**
 * The README's end-to-end request (docs/gateway.md#providers): `guardrails upstream` and `guardrails serve`
 * as real processes, a governed request through the local provider with no outside account.
 */
describe("a governed request end to end, as the README shows it (docs/gateway.md#what-happens-to-a-request)", () => {
  const children: Child[] = [];
  const dir = mkdtempSync(join(tmpdir(), "guardrails-walkthrough-"));
  after(() => {
    for (const child of children) child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });

  it("the local upstream answers through the gateway, redacted, and names the providers that lack a key", async () => {
    const upstreamPort = await freePort();
    const upstream = spawnCli(["upstream", "--port", String(upstreamPort)], {});
    children.push(upstream);
    await waitFor("the upstream's address", () =>
      upstream.stdout().includes("local upstream") ? true : undefined,
    );
    // The default catalog, with the local provider on the port this test got.
    const catalog = JSON.parse(readFileSync(join(ROOT, "config", "default.json"), "utf8"));
    for (const p of catalog.providers)
      if (p.id === "local") p.base_url = `http://127.0.0.1:${upstreamPort}/v1`;
    const configFile = join(dir, "catalog.json");
    writeFileSync(configFile, JSON.stringify(catalog));
    const key = randomManagementKey();
    const server = await startServerProcess({
      DATABASE_URL: `sqlite:${join(dir, "g.db")}`,
      GUARDRAILS_MANAGEMENT_KEY: key,
      GUARDRAILS_CONFIG: configFile,
      ANTHROPIC_API_KEY: undefined,
    });
    children.push(server);
    assert.match(
      server.stderr(),
      /providers without an API key are unavailable: .*anthropic \(ANTHROPIC_API_KEY\)/,
    );

    const made = await api(server.origin, "POST", "/api/v1/keys", key, { name: "demo" });
    assert.equal(made.status, 201);
    const guardrail = await api(server.origin, "POST", "/api/v1/guardrails", key, {
      name: "no addresses upstream",
      content_filter_builtins: [{ slug: "email", action: "redact" }],
    });
    await api(server.origin, "POST", `/api/v1/guardrails/${guardrail.body.data.id}/assignments/keys`, key, {
      key_hashes: [made.body.data.hash],
    });
    const chat = await api(server.origin, "POST", "/api/v1/chat/completions", made.body.key, {
      model: "meta-llama/llama-3.1-8b-instruct",
      messages: [{ role: "user", content: "Hello, I am at jane@example.com" }],
    });
    assert.equal(chat.status, 200, JSON.stringify(chat.body));
    assert.equal(chat.body.choices[0].message.content, "Echo: Hello, I am at [EMAIL]");

    upstream.kill("SIGTERM");
    assert.equal(await upstream.exited(), 0);
  });
});
