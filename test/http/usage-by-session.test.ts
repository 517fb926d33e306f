import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { call, TEST_DATABASE_KIND } from "../helpers/server.js";
import { type GatewayBench, LLAMA, usageDay } from "./gateway-support.js";

const DAY = "2026-11-10";
const SESSION_A = "9b2f6c1e-5d1a-4c3e-8f0a-2a7d1c0b9e11";
const SESSION_B = "sess_B-2";

interface Row {
  session_id?: string | null;
  api?: string;
  requests: number;
  prompt_tokens: number;
}

/**
 * Requests of one key on the Messages and chat doors, some naming a Claude Code session in
 * X-Claude-Code-Session-Id, and the usage report and activity read per session
 * (docs/behaviour.md#usage-by-session).
 */
describe(`usage and activity by agent session, on ${TEST_DATABASE_KIND} (docs/behaviour.md#usage-by-session)`, () => {
  const messages = (bench: GatewayBench, secret: string, session?: string) =>
    call(bench.server, "POST", "/api/v1/messages", {
      key: secret,
      headers: session === undefined ? {} : { "x-claude-code-session-id": session },
      body: { model: LLAMA, max_tokens: 64, messages: [{ role: "user", content: "hi" }] },
    });
  const chat = (bench: GatewayBench, secret: string, session?: string) =>
    call(bench.server, "POST", "/api/v1/chat/completions", {
      key: secret,
      headers: session === undefined ? {} : { "X-Claude-Code-Session-Id": session },
      body: { model: LLAMA, messages: [{ role: "user", content: "hi" }] },
    });

  const day = usageDay(DAY, async (bench, setup, other) => {
    const secret = setup.key.secret;
    const sent = [
      await messages(bench, secret, SESSION_A),
      await messages(bench, secret, SESSION_A),
      await chat(bench, secret, SESSION_A),
      await messages(bench, secret, SESSION_B),
      await chat(bench, secret),
      // Not of the form: recorded without a session, and still answered.
      await messages(bench, secret, "x".repeat(129)),
      await messages(bench, secret, "two words"),
      // Another organization's request in session A: never in this one's report.
      await messages(bench, other.key.secret, SESSION_A),
    ];
    for (const res of sent) assert.equal(res.status, 200, JSON.stringify(res.body));
  });

  it("each ledger entry records the session its request named, and null when it named none or a malformed one", async () => {
    const rows = await day.bench.server.deps.db
      .selectFrom("spend_ledger")
      .select(["session_id", "api"])
      .where("organization_id", "=", day.setup.org.organizationId)
      .execute();
    assert.deepEqual(rows.map((r) => `${r.api} ${r.session_id}`).sort(), [
      "chat 9b2f6c1e-5d1a-4c3e-8f0a-2a7d1c0b9e11",
      "chat null",
      "messages 9b2f6c1e-5d1a-4c3e-8f0a-2a7d1c0b9e11",
      "messages 9b2f6c1e-5d1a-4c3e-8f0a-2a7d1c0b9e11",
      "messages null",
      "messages null",
      `messages ${SESSION_B}`,
    ]);
  });

  it("group_by=session: a row per session with its requests and tokens, the requests that named none under null", async () => {
    const bySession = await day.usage("group_by=session");
    assert.equal(bySession.status, 200, JSON.stringify(bySession.body));
    const rows = (bySession.body as { data: Row[] }).data.map((r) => [
      r.session_id,
      r.requests,
      r.prompt_tokens,
    ]);
    assert.deepEqual(
      rows.sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
      [
        [SESSION_A, 3, 3000],
        [null, 3, 3000],
        [SESSION_B, 1, 1000],
      ].sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
    );
    const byApi = await day.usage(`group_by=session,api&session_id=${SESSION_A}`);
    assert.deepEqual(
      (byApi.body as { data: Row[] }).data.map((r) => [r.session_id, r.api, r.requests]),
      [
        [SESSION_A, "chat", 1],
        [SESSION_A, "messages", 2],
      ],
    );
  });

  it("session_id= keeps one session's requests; a session of another organization or none answers no rows", async () => {
    const one = await day.usage(`session_id=${SESSION_B}`);
    assert.equal(one.status, 200, JSON.stringify(one.body));
    assert.deepEqual(
      (one.body as { data: Row[] }).data.map((r) => r.requests),
      [1],
    );
    const none = await day.usage("session_id=never-seen");
    assert.deepEqual(none.body, { data: [], total_count: 0 });
    const theirs = await day.get(
      `/api/v1/usage?from=${DAY}&to=${DAY}&session_id=${SESSION_A}`,
      day.other.org.key,
    );
    assert.deepEqual(
      (theirs.body as { data: Row[] }).data.map((r) => r.requests),
      [1],
    );
  });

  it("activity: group_by=session gives each row its session_id; session_id= keeps one session; the default rows are as before", async () => {
    const bySession = await day.get("/api/v1/activity?group_by=session");
    assert.equal(bySession.status, 200, JSON.stringify(bySession.body));
    const rows = (bySession.body as { data: (Row & { api: string })[] }).data.map((r) => [
      r.api,
      r.session_id,
      r.requests,
    ]);
    assert.deepEqual(
      rows.sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y))),
      [
        ["chat", SESSION_A, 1],
        ["chat", null, 1],
        ["messages", SESSION_A, 2],
        ["messages", SESSION_B, 1],
        ["messages", null, 2],
      ].sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y))),
    );
    const one = await day.get(`/api/v1/activity?session_id=${SESSION_A}`);
    assert.deepEqual(
      (one.body as { data: (Row & { api: string })[] }).data.map((r) => [
        r.api,
        r.requests,
        "session_id" in r,
      ]),
      [
        ["chat", 1, false],
        ["messages", 2, false],
      ],
    );
    const plain = await day.get("/api/v1/activity");
    assert.deepEqual(
      (plain.body as { data: (Row & { api: string })[] }).data.map((r) => [
        r.api,
        r.requests,
        "session_id" in r,
      ]),
      [
        ["chat", 2, false],
        ["messages", 5, false],
      ],
    );
  });

  it("a session_id filter that is not visible ASCII of at most 128 is 400 naming the parameter, on both routes; nothing changes", async () => {
    for (const path of [
      `/api/v1/usage?from=${DAY}&to=${DAY}&session_id=${"y".repeat(129)}`,
      "/api/v1/activity?session_id=two%20words",
      "/api/v1/activity?group_by=sessions",
    ]) {
      const res = await day.get(path);
      assert.equal(res.status, 400, path);
      assert.equal(res.body.error.message, "Invalid request parameters");
      assert.ok(
        res.body.error.metadata.issues.some((i: { path: string }) => /session|group_by/.test(i.path)),
        `${path}: ${JSON.stringify(res.body.error.metadata.issues)}`,
      );
    }
  });
});
