import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { DEFAULT_CONFIG_FILE, loadCatalogFile } from "../../src/config.js";
import { checkCatalog } from "../../src/domain/catalog.js";
import { clientFor } from "../helpers/server.js";
import {
  ask,
  chat,
  type GatewayBench,
  guardKey,
  orgWithKey,
  post,
  SONNET,
  startGatewayBench,
} from "./gateway-support.js";

/**
 * Anthropic's own model ids, dated or not, name the catalog's models on every door; the native
 * Anthropic endpoint is sent Anthropic's id, never the catalog slug (docs/gateway.md#model-aliases).
 */

const OPUS_41 = "anthropic/claude-opus-4.1";
const HAIKU_35 = "anthropic/claude-3.5-haiku";

const messages = (model: string, content = "hello") => ({
  model,
  max_tokens: 64,
  messages: [{ role: "user", content }],
});

describe("model aliases (docs/gateway.md#model-aliases)", () => {
  let bench: GatewayBench;
  before(async () => {
    bench = await startGatewayBench();
  });
  after(async () => {
    await bench.close();
  });

  const canonical = (slug: string) => bench.server.deps.catalog.findModel(slug)?.canonical_slug;

  it("the shipped catalog is sound with its aliases, and an alias naming another model's slug is a problem", () => {
    const shipped = loadCatalogFile(DEFAULT_CONFIG_FILE);
    assert.deepEqual(checkCatalog(shipped), []);
    const [first, second] = shipped.models;
    assert.ok(first && second);
    const clash = {
      ...shipped,
      models: [{ ...first, aliases: [second.slug] }, second, ...shipped.models.slice(2)],
    };
    assert.deepEqual(checkCatalog(clash), [`model slug ${second.slug} is not unique`]);
  });

  for (const [name, slug, sent] of [
    ["claude-sonnet-4-5-20250929", SONNET, "claude-sonnet-4-5-20250929"],
    ["claude-sonnet-4-5", SONNET, "claude-sonnet-4-5-20250929"],
    ["claude-opus-4-1-20250805", OPUS_41, "claude-opus-4-1-20250805"],
    ["claude-3-5-haiku-20241022", HAIKU_35, "claude-3-5-haiku-20241022"],
    // The catalog slug itself is still sent to Anthropic as Anthropic's id.
    [SONNET, SONNET, "claude-sonnet-4-5-20250929"],
  ] as const) {
    it(`${name} on the Messages door and on chat: the ${slug} model, sent to the anthropic endpoint as ${sent}, its usage under the canonical slug`, async () => {
      const { key } = await orgWithKey(bench);
      const before = bench.received.length;
      const viaMessages = await post(bench.server, "/api/v1/messages", key.secret, messages(name));
      assert.equal(viaMessages.status, 200, viaMessages.text);
      const viaChat = await chat(bench.server, key.secret, ask("hello", name));
      assert.equal(viaChat.status, 200, viaChat.text);
      const reached = bench.received.slice(before);
      assert.deepEqual(
        reached.map((r) => [r.path.split("?")[0]?.split("/").at(-1), r.body.model]),
        [
          ["messages", sent],
          ["completions", sent],
        ],
      );
      const rows = await bench.server.deps.db
        .selectFrom("spend_ledger")
        .select(["model", "provider"])
        .where("key_hash", "=", key.hash)
        .execute();
      assert.deepEqual(
        rows.map((r) => [r.model, r.provider]),
        [
          [canonical(slug), "anthropic"],
          [canonical(slug), "anthropic"],
        ],
      );
    });
  }

  it("allowed_models and ignored_models judge an alias as its model: the slug allows its dated id, and an alias in a guardrail is stored as the canonical slug", async () => {
    const { steps, key } = await orgWithKey(bench);
    const id = await guardKey(steps, key, {
      allowed_models: [SONNET, "claude-opus-4-1"],
      ignored_models: ["claude-opus-4-1-20250805"],
    });
    const stored = await bench.server.deps.db
      .selectFrom("guardrails")
      .select(["allowed_models", "ignored_models"])
      .where("id", "=", id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(JSON.parse(String(stored.allowed_models)), [canonical(SONNET), canonical(OPUS_41)]);
    assert.deepEqual(JSON.parse(String(stored.ignored_models)), [canonical(OPUS_41)]);

    const before = bench.received.length;
    const allowed = await post(
      bench.server,
      "/api/v1/messages",
      key.secret,
      messages("claude-sonnet-4-5-20250929"),
    );
    assert.equal(allowed.status, 200, allowed.text);
    const ignored = await post(bench.server, "/api/v1/messages", key.secret, messages("claude-opus-4-1"));
    assert.equal(ignored.status, 403, ignored.text);
    assert.equal(ignored.body.error.type, "permission_error");
    assert.equal(ignored.body.error.metadata.reason, "model_ignored");
    assert.equal(ignored.body.error.metadata.model, OPUS_41);
    const notAllowed = await chat(bench.server, key.secret, ask("hello", "claude-3-5-haiku-20241022"));
    assert.equal(notAllowed.status, 403, notAllowed.text);
    assert.equal(notAllowed.body.error.metadata.reason, "model_not_allowed");
    assert.equal(notAllowed.body.error.metadata.model, HAIKU_35);
    assert.equal(bench.received.length, before + 1);
  });

  it("an alias on the Responses door, the Messages token count and the dry run names its model as the slug does", async () => {
    const { org, key } = await orgWithKey(bench);
    const before = bench.received.length;
    const viaResponses = await post(bench.server, "/api/v1/responses", key.secret, {
      model: "claude-sonnet-4-5",
      input: "hello",
    });
    assert.equal(viaResponses.status, 200, viaResponses.text);
    const reached = bench.received.slice(before);
    assert.equal(reached.length, 1);
    assert.equal(reached[0]?.body.model, "claude-sonnet-4-5-20250929");
    const rows = await bench.server.deps.db
      .selectFrom("spend_ledger")
      .select(["model", "api"])
      .where("key_hash", "=", key.hash)
      .execute();
    assert.deepEqual(
      rows.map((r) => [r.model, r.api]),
      [[canonical(SONNET), "responses"]],
    );

    const counted = await post(bench.server, "/api/v1/messages/count_tokens", key.secret, {
      model: "claude-opus-4-1",
      messages: [{ role: "user", content: "hello" }],
    });
    assert.equal(counted.status, 200, counted.text);
    assert.equal(typeof counted.body.input_tokens, "number");

    const dry = await post(bench.server, "/api/v1/guardrails/evaluate", org.key, {
      key_hash: key.hash,
      model: "claude-3-5-haiku-20241022",
      messages: [{ role: "user", content: "hello" }],
    });
    assert.equal(dry.status, 200, dry.text);
    assert.equal(dry.body.data.allowed, true, dry.text);
    assert.equal(dry.body.data.model, HAIKU_35, dry.text);
  });

  it("a name that is no slug and no alias is still model_not_found, on both doors; nothing is forwarded", async () => {
    const { key } = await orgWithKey(bench);
    const before = bench.received.length;
    for (const name of ["claude-sonnet-9-9-20990101", "sonnet", "claude-sonnet-4-5-2025092"]) {
      const viaMessages = await post(bench.server, "/api/v1/messages", key.secret, messages(name));
      assert.equal(viaMessages.status, 404, viaMessages.text);
      assert.equal(viaMessages.body.error.type, "not_found_error");
      assert.equal(viaMessages.body.error.metadata.reason, "model_not_found");
      assert.equal(viaMessages.body.error.metadata.model, name);
      const viaChat = await chat(bench.server, key.secret, ask("hello", name));
      assert.equal(viaChat.status, 404, viaChat.text);
      assert.equal(viaChat.body.error.metadata.reason, "model_not_found");
    }
    assert.equal(bench.received.length, before);
  });

  it("the model lists are unchanged: ids are slugs, never aliases", async () => {
    const { key } = await orgWithKey(bench);
    const openai = await clientFor(bench.server, key.secret).get("/api/v1/models");
    const anthropic = await clientFor(bench.server, key.secret).get("/api/v1/models?limit=1000", {
      headers: { "anthropic-version": "2023-06-01" },
    });
    for (const res of [openai, anthropic]) {
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const ids = (res.body as { data: { id: string }[] }).data.map((m) => m.id);
      assert.ok(ids.includes(SONNET) && ids.includes(OPUS_41), ids.join(" "));
      assert.equal(
        ids.some((id) => id.startsWith("claude-")),
        false,
      );
    }
  });
});
