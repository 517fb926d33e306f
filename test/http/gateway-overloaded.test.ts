import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import {
  ask,
  chat,
  type GatewayBench,
  orgWithKey,
  post,
  SONNET,
  startGatewayBench,
} from "./gateway-support.js";

/**
 * A provider that is overloaded (a 529, or Anthropic's `overloaded_error` body): the next endpoint is
 * tried as for any 5xx, and when none answers, the Messages door says 529 `overloaded_error` and the
 * other doors 503 `upstream_overloaded` (docs/gateway.md#upstream-overloaded).
 */

const OVERLOADED = { type: "error", error: { type: "overloaded_error", message: "Overloaded" } };

const messages = (content: string) => ({
  model: SONNET,
  max_tokens: 64,
  messages: [{ role: "user", content }],
});

describe("an overloaded provider (docs/gateway.md#upstream-overloaded)", () => {
  let bench: GatewayBench;
  before(async () => {
    bench = await startGatewayBench();
  });
  after(async () => {
    await bench.close();
  });

  /** Every request the provider gets is answered with `status` and `body` while `run` runs. */
  async function overloaded<T>(status: number, body: unknown, run: () => Promise<T>): Promise<T> {
    bench.script.next = () => ({ status, body });
    try {
      return await run();
    } finally {
      bench.script.next = undefined;
    }
  }

  it("529 from every endpoint: the Messages door answers 529 overloaded_error with the service's metadata, after trying each endpoint once; nothing is charged", async () => {
    const { key } = await orgWithKey(bench);
    const before = bench.received.length;
    const res = await overloaded(529, OVERLOADED, () =>
      post(bench.server, "/api/v1/messages", key.secret, messages("busy?")),
    );
    assert.equal(res.status, 529, res.text);
    assert.equal(res.body.type, "error");
    assert.equal(res.body.error.type, "overloaded_error");
    assert.equal(res.body.error.message, "Upstream provider is overloaded. Please try again later.");
    assert.equal(res.body.error.metadata.reason, "upstream_overloaded");
    assert.equal(res.body.error.metadata.upstream_status, 529);
    const tried = bench.received.slice(before);
    assert.ok(tried.length >= 2, `endpoints tried: ${tried.length}`);
    const rows = await bench.server.deps.db
      .selectFrom("spend_ledger")
      .select("id")
      .where("key_hash", "=", key.hash)
      .execute();
    assert.equal(rows.length, 0);
  });

  it("Anthropic's SDK reads it as its typed 529 error", async () => {
    const { key } = await orgWithKey(bench);
    const client = new Anthropic({
      apiKey: key.secret,
      authToken: null,
      baseURL: `${bench.server.origin}/api`,
      maxRetries: 0,
    });
    await overloaded(529, OVERLOADED, () =>
      assert.rejects(
        client.messages.create(messages("busy?") as Anthropic.MessageCreateParamsNonStreaming),
        (err: unknown) =>
          err instanceof Anthropic.APIError &&
          err.status === 529 &&
          (err.error as { error?: { type?: string } }).error?.type === "overloaded_error",
      ),
    );
  });

  it("an overloaded_error body under a 503 is an overload too; a plain 503 stays a 502 upstream_error", async () => {
    const { key } = await orgWithKey(bench);
    const typed = await overloaded(503, OVERLOADED, () =>
      post(bench.server, "/api/v1/messages", key.secret, messages("busy?")),
    );
    assert.equal(typed.status, 529, typed.text);
    assert.equal(typed.body.error.type, "overloaded_error");
    const plain = await overloaded(503, { error: { message: "down" } }, () =>
      post(bench.server, "/api/v1/messages", key.secret, messages("busy?")),
    );
    assert.equal(plain.status, 502, plain.text);
    assert.equal(plain.body.error.type, "api_error");
    assert.equal(plain.body.error.metadata.reason, "upstream_status");
  });

  it("chat completions and Responses answer 503 upstream_overloaded in the service's body", async () => {
    const { key } = await orgWithKey(bench);
    const viaChat = await overloaded(529, OVERLOADED, () => chat(bench.server, key.secret, ask("busy?")));
    assert.equal(viaChat.status, 503, viaChat.text);
    assert.equal(viaChat.body.error.code, 503);
    assert.equal(viaChat.body.error.message, "Upstream provider is overloaded. Please try again later.");
    assert.equal(viaChat.body.error.metadata.reason, "upstream_overloaded");
    const viaResponses = await overloaded(529, OVERLOADED, () =>
      post(bench.server, "/api/v1/responses", key.secret, { model: SONNET, input: "busy?" }),
    );
    assert.equal(viaResponses.status, 503, viaResponses.text);
    assert.equal(viaResponses.body.error.metadata.reason, "upstream_overloaded");
  });

  it("529 from the first endpoint only: the next endpoint answers and is charged, the client sees its 200", async () => {
    const { key } = await orgWithKey(bench);
    const before = bench.received.length;
    let calls = 0;
    bench.script.next = () => (calls++ === 0 ? { status: 529, body: OVERLOADED } : undefined);
    let res: Awaited<ReturnType<typeof post>>;
    try {
      res = await post(bench.server, "/api/v1/messages", key.secret, messages("busy once"));
    } finally {
      bench.script.next = undefined;
    }
    assert.equal(res.status, 200, res.text);
    assert.equal(bench.received.length - before, 2);
    const rows = await bench.server.deps.db
      .selectFrom("spend_ledger")
      .select("provider")
      .where("key_hash", "=", key.hash)
      .execute();
    assert.equal(rows.length, 1);
    assert.notEqual(rows[0]?.provider, "anthropic");
  });
});
