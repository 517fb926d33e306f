import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { TEST_DATABASE_KIND } from "../helpers/server.js";
import { ask, chat, LLAMA, post, usageDay } from "./gateway-support.js";

/** Served by the echo provider and openai, both speaking embeddings. */
const SMALL = "openai/text-embedding-3-small";
const DAY = "2026-11-10";

interface Row {
  api?: string;
  model?: string;
  requests: number;
  prompt_tokens: number;
}

/**
 * Chat completions (plain and streamed) and embeddings requests of one key, and the usage report and
 * activity that say which API each was made on (docs/behaviour.md#usage-by-api).
 */
describe(`usage and activity by API, on ${TEST_DATABASE_KIND} (docs/behaviour.md#usage-by-api)`, () => {
  let llama: string;
  let small: string;
  const day = usageDay(DAY, async (bench, setup, other) => {
    llama = bench.server.deps.catalog.findModel(LLAMA)?.canonical_slug ?? "";
    small = bench.server.deps.catalog.findModel(SMALL)?.canonical_slug ?? "";
    assert.ok(llama && small);
    const secret = setup.key.secret;
    assert.equal((await chat(bench.server, secret, ask("hello", LLAMA))).status, 200);
    const streamed = await chat(bench.server, secret, { ...ask("hello", LLAMA), stream: true });
    assert.equal(streamed.status, 200, streamed.text);
    const embedded = await post(bench.server, "/api/v1/embeddings", secret, { model: SMALL, input: "hello" });
    assert.equal(embedded.status, 200, embedded.text);
    // Another organization's embeddings request: never in this one's report.
    const theirs = await post(bench.server, "/api/v1/embeddings", other.key.secret, {
      model: SMALL,
      input: "x",
    });
    assert.equal(theirs.status, 200, theirs.text);
  });

  it("each forwarded request's ledger entry records the API of the route it came through", async () => {
    const rows = await day.bench.server.deps.db
      .selectFrom("spend_ledger")
      .select(["api", "model"])
      .where("organization_id", "=", day.setup.org.organizationId)
      .execute();
    assert.deepEqual(rows.map((r) => `${r.api} ${r.model}`).sort(), [
      `chat ${llama}`,
      `chat ${llama}`,
      `embeddings ${small}`,
    ]);
  });

  it("group_by=api gives a row per API with its requests and tokens; grouped otherwise, rows carry no api", async () => {
    const byApi = await day.usage("group_by=api");
    assert.equal(byApi.status, 200, JSON.stringify(byApi.body));
    assert.deepEqual(
      byApi.body.data.map((r: Row) => [r.api, r.requests, r.prompt_tokens]),
      [
        ["chat", 2, 2000],
        ["embeddings", 1, 1000],
      ],
    );
    assert.equal(byApi.body.total_count, 2);
    const byModelAndApi = await day.usage("group_by=model,api");
    assert.deepEqual(
      byModelAndApi.body.data.map((r: Row) => [r.model, r.api, r.requests]),
      [
        [llama, "chat", 2],
        [small, "embeddings", 1],
      ].sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
    );
    // The default grouping answers as it did before the API was recorded: one row a day, no api.
    const byDay = await day.usage("");
    assert.deepEqual(byDay.body.data, [
      {
        date: DAY,
        requests: 3,
        prompt_tokens: 3000,
        completion_tokens: byDay.body.data[0].completion_tokens,
        spend_usd: byDay.body.data[0].spend_usd,
        byok_requests: 0,
        byok_spend_usd: 0,
      },
    ]);
  });

  it("api= keeps only that API's requests; an API with none answers no rows", async () => {
    const embeddings = await day.usage("api=embeddings&group_by=model");
    assert.equal(embeddings.status, 200, JSON.stringify(embeddings.body));
    assert.deepEqual(
      embeddings.body.data.map((r: Row) => [r.model, r.requests]),
      [[small, 1]],
    );
    const chatOnly = await day.usage("api=chat");
    assert.deepEqual(
      chatOnly.body.data.map((r: Row) => r.requests),
      [2],
    );
    const none = await day.usage("api=responses");
    assert.deepEqual(none.body, { data: [], total_count: 0 });
  });

  it("activity: every row names its API; api= keeps one API's rows; another organization sees only its own", async () => {
    const all = await day.get("/api/v1/activity");
    assert.equal(all.status, 200, JSON.stringify(all.body));
    assert.deepEqual(
      all.body.data.map((r: { model_permaslug: string; api: string; requests: number }) => [
        r.model_permaslug,
        r.api,
        r.requests,
      ]),
      [
        [llama, "chat", 2],
        [small, "embeddings", 1],
      ].sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
    );
    const embeddings = await day.get("/api/v1/activity?api=embeddings");
    assert.deepEqual(
      embeddings.body.data.map((r: { model_permaslug: string; api: string }) => [r.model_permaslug, r.api]),
      [[small, "embeddings"]],
    );
    const theirs = await day.get("/api/v1/activity", day.other.org.key);
    assert.deepEqual(
      theirs.body.data.map((r: { api: string; requests: number }) => [r.api, r.requests]),
      [["embeddings", 1]],
    );
  });

  it("an api that is not one of the four is 400 naming the parameter, on both routes (docs/behaviour.md#errors)", async () => {
    for (const path of [`/api/v1/usage?from=${DAY}&to=${DAY}&api=completions`, "/api/v1/activity?api=Chat"]) {
      const res = await day.get(path);
      assert.equal(res.status, 400, path);
      assert.equal(res.body.error.code, 400);
      assert.equal(res.body.error.message, "Invalid request parameters");
      assert.ok(
        res.body.error.metadata.issues.some((i: { path: string }) => i.path === "/api"),
        `${path}: ${JSON.stringify(res.body.error.metadata.issues)}`,
      );
    }
    const badGroup = await day.usage("group_by=api,apis");
    assert.equal(badGroup.status, 400);
  });
});
