import "../helpers/property-seed.js";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { logSafeUrl } from "../../src/http/log-safety.js";
import { call, startTestServer, type TestOrg, type TestServer } from "../helpers/server.js";
import { ask, chat, LLAMA } from "./gateway-support.js";
import { orgSteps, sha256 } from "./org-support.js";

/**
 * A secret is never written to the log, wherever in a URL a client puts it
 * (docs/behaviour.md#secrets-not-logged); ids, hashes and the words of paths are logged as they are.
 */

const ourKey = () => `sk-gr-v1-${randomBytes(32).toString("base64url")}`;
const UUID = "0f8fad5b-d9cb-469f-a165-70867728950e";
const HASH = sha256("a key");

describe("URLs fit for the log (docs/behaviour.md#secrets-not-logged)", () => {
  const secrets: [string, string][] = [
    ["this service's inference key", ourKey()],
    ["this service's management key", `sk-gr-mgmt-${randomBytes(32).toString("base64url")}`],
    ["an OpenAI-style key", `sk-proj-${randomBytes(24).toString("base64url")}`],
    ["a GitHub token", `ghp_${"aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"}`],
    ["an AWS key id", "AKIAQ7X2M4N6P8R3T5V9"],
    ["a JWT", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"],
    ["a random token without a prefix", "Xk3vQ9pLm2Zt7Rb4Nw8Yc1Hf6Jd5Gs0EaUo"],
  ];

  for (const [name, secret] of secrets) {
    it(`${name} in a path segment, a query name, and a paging or id query value is masked`, () => {
      const encoded = encodeURIComponent(secret);
      for (const url of [
        `/api/v1/guardrails/${encoded}`,
        `/api/v1/keys/${encoded}/assignments?limit=5`,
        `/api/v1/guardrails?${encoded}`,
        `/api/v1/guardrails?workspace_id=${encoded}&limit=5`,
        `/api/v1/usage?key_hash=${encoded}`,
        `/api/v1/guardrails?offset=${encoded}`,
        `/api/v1/guardrails?api_key=${encoded}`,
      ]) {
        const safe = logSafeUrl(url);
        assert.ok(!safe.includes(encoded) && !safe.includes(secret), `${url} → ${safe}`);
        assert.match(safe, /\[REDACTED\]/);
      }
    });
  }

  it("ids, hashes, model slugs and paging are logged as they are", () => {
    for (const url of [
      "/api/v1/chat/completions",
      `/api/v1/guardrails/${UUID}`,
      `/api/v1/keys/${HASH}`,
      `/api/v1/usage?key_hash=${HASH}&workspace_id=${UUID}&offset=20&limit=50`,
      "/api/v1/models/anthropic/claude-sonnet-4.5/endpoints",
      "/api/v1/models/meta-llama/llama-3.1-8b-instruct",
      "/api/v1/audit-log?include_deleted",
    ]) {
      assert.equal(logSafeUrl(url), url);
    }
  });

  it("any generated key, in any segment or id value, never reaches the logged URL", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 24, maxLength: 48 }),
        fc.constantFrom("sk-gr-v1-", "sk-gr-mgmt-", ""),
        fc.constantFrom("path", "id", "name"),
        (bytes, prefix, where) => {
          const token = Buffer.from(bytes).toString("base64url");
          const secret = `${prefix}${token}`;
          const url =
            where === "path"
              ? `/api/v1/guardrails/${secret}/x`
              : where === "id"
                ? `/api/v1/guardrails?workspace_id=${secret}`
                : `/api/v1/guardrails?${secret}=1`;
          // Without our prefix, the rule claims only tokens that mix cases and digits with many
          // distinct characters; most generated keys do.
          const claimed =
            prefix !== "" ||
            (/[A-Z]/.test(token) && /[a-z]/.test(token) && /[0-9]/.test(token) && new Set(token).size >= 16);
          return !claimed || !logSafeUrl(url).includes(token);
        },
      ),
    );
  });
});

describe("the request log lines mask secrets in URLs (docs/behaviour.md#secrets-not-logged)", () => {
  let server: TestServer;
  let org: TestOrg;
  const lines: string[] = [];
  before(async () => {
    server = await startTestServer({ logLines: lines });
    org = await server.newOrg();
  });
  after(async () => server.close());

  it("a key pasted into a path segment or an id query value is not written to the log", async () => {
    const inference = await orgSteps(server, org).key();
    const cases = [
      `/api/v1/guardrails/${inference.secret}`,
      `/api/v1/guardrails/${encodeURIComponent(org.key)}/assignments`,
      `/api/v1/guardrails?workspace_id=${encodeURIComponent(inference.secret)}`,
      `/api/v1/usage?key_hash=${org.key}`,
      `/api/v1/${inference.secret}?limit=3`,
      // Broken percent-encoding: the framework's own error names the URL.
      `/api/v1/guardrails/${inference.secret}%E0%A4%A`,
    ];
    for (const path of cases) {
      const res = await call(server, "GET", path, { key: org.key });
      assert.ok(res.status >= 400 && res.status < 500, `${path}: ${res.status}`);
    }
    const logged = lines.join("\n");
    const requests = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === "request completed");
    assert.ok(requests.length >= cases.length, "every request wrote its line");
    assert.ok(!logged.includes(inference.secret), "the inference key reached the log");
    assert.ok(!logged.includes(org.key), "the management key reached the log");
    const urls = requests.map((l) => String(l.req.url));
    assert.ok(urls.includes("/api/v1/guardrails/[REDACTED]"), urls.join("\n"));
    assert.ok(urls.includes("/api/v1/guardrails?workspace_id=[REDACTED]"), urls.join("\n"));
    assert.ok(urls.includes("/api/v1/[REDACTED]?limit=3"), urls.join("\n"));
  });

  it("ids in the path and query are still logged, and the direct chat path's line goes through the same mask", async () => {
    const made = await orgSteps(server, org).key();
    await call(server, "GET", `/api/v1/guardrails/${UUID}?workspace_id=${UUID}`, { key: org.key });
    // Twice: the key's first request is served by the app, the next directly (docs/gateway.md#request-handling).
    await chat(server, made.secret, ask("hi", LLAMA));
    await chat(server, made.secret, ask("hi", LLAMA));
    const urls = lines
      .map((l) => JSON.parse(l))
      .filter((l) => l.msg === "request completed")
      .map((l) => String(l.req.url));
    assert.ok(urls.includes(`/api/v1/guardrails/${UUID}?workspace_id=${UUID}`), urls.join("\n"));
    assert.equal(urls.filter((u) => u === "/api/v1/chat/completions").length, 2, urls.join("\n"));
    assert.ok(!lines.join("\n").includes(made.secret));
  });
});
