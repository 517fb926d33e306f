import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { textPointer } from "../../src/domain/chat-texts.js";
import { AppError } from "../../src/domain/errors.js";
import { SURFACES } from "../../src/gateway/surfaces/index.js";
import { ResponsesEventReader } from "../../src/gateway/surfaces/responses/answer.js";
import { type ResponsesBody, responsesSurface } from "../../src/gateway/surfaces/responses/index.js";

const defaults = { id: "gen-1", created: 1700000000, model: "openai/gpt-4.1" };

describe("the Responses surface (docs/gateway.md#responses)", () => {
  it("is registered, with no stream terminator: its streams end with response.completed", () => {
    assert.ok(SURFACES.includes(responsesSurface));
    assert.equal(responsesSurface.route, "/api/v1/responses");
    assert.equal(responsesSurface.upstreamPath, "/responses");
    assert.equal(responsesSurface.api, "responses");
    assert.equal(responsesSurface.streamTerminator, undefined);
    assert.equal(responsesSurface.streamEnd, "");
  });

  it("gives each text its role and item index (docs/gateway.md#responses-roles)", () => {
    const body: ResponsesBody = {
      model: "m",
      instructions: "sys text",
      input: [
        { role: "user", content: [{ type: "input_text", text: "user text" }] },
        { type: "message", role: "assistant", content: "assistant text" },
        { type: "function_call", call_id: "call_1", name: "called_fn", arguments: '{"a":"args text"}' },
        { type: "function_call_output", call_id: "call_1", output: "tool text" },
        { role: "developer", content: "dev text" },
      ],
      // The schema types only a tool's `type`; the rest passes through.
      tools: [{ type: "function", name: "fn", description: "tool description" } as { type: string }],
      text: { format: { type: "json_schema", name: "s", schema: { description: "schema text" } } },
    };
    const roles = Object.fromEntries(
      responsesSurface.collectTexts(body).map((t) => [t.text, [t.role, t.message, textPointer(t)]]),
    );
    assert.deepEqual(roles["sys text"], ["system", null, "/instructions"]);
    assert.deepEqual(roles["user text"], ["user", 0, "/input/0/content/0/text"]);
    assert.deepEqual(roles["assistant text"], ["assistant", 1, "/input/1/content"]);
    assert.deepEqual(roles["args text"], ["assistant", 2, "/input/2/arguments"]);
    assert.deepEqual(roles.called_fn?.slice(0, 2), ["assistant", 2]);
    assert.deepEqual(roles["tool text"], ["tool", 3, "/input/3/output"]);
    assert.deepEqual(roles["dev text"], ["developer", 4, "/input/4/content"]);
    assert.deepEqual(roles["tool description"], ["developer", null, "/tools/0/description"]);
    assert.deepEqual(roles["schema text"], ["developer", null, "/text/format/schema/description"]);
    // Ids and enums are not texts; their names are the API's own.
    for (const notText of ["call_1", "function_call", "instructions", "output", "message"])
      assert.equal(notText in roles, false, notText);
    const one = responsesSurface.collectTexts({ model: "m", input: "just this" });
    assert.deepEqual(
      one.map((t) => [t.text, t.role, t.message]),
      [["just this", "user", 0]],
    );
  });

  it("refuses what needs stored state with a 400 naming the field, before reading anything", () => {
    for (const [extra, path] of [
      [{ store: true }, "/store"],
      [{ previous_response_id: "resp_1" }, "/previous_response_id"],
      [{ background: true }, "/background"],
      [{ conversation: { id: "conv_1" } }, "/conversation"],
      [{ prompt: { id: "pmpt_1" } }, "/prompt"],
      [
        {
          input: [
            { role: "user", content: "x" },
            { type: "item_reference", id: "i" },
          ],
        },
        "/input/1/type",
      ],
    ] as const) {
      assert.throws(
        () => responsesSurface.collectTexts({ model: "m", input: "x", ...extra } as ResponsesBody),
        (err: unknown) =>
          err instanceof AppError &&
          (err.metadata as { issues: { path: string }[] }).issues[0]?.path === path,
        path,
      );
    }
  });

  it("forwards store false, caps max_output_tokens, counts items and instructions as messages", () => {
    const body: ResponsesBody = { model: "m", input: [{ role: "user", content: "a" }], instructions: "i" };
    assert.equal(responsesSurface.forwardBody(body, body, false).store, false);
    const stored = { ...body, store: false };
    assert.equal(responsesSurface.forwardBody(stored, stored, true), stored);
    assert.equal(responsesSurface.messageCount(body), 2);
    assert.equal(responsesSurface.messageCount({ model: "m", input: "x" }), 1);
    assert.equal(responsesSurface.maxOutputTokens(body), null);
    assert.equal(responsesSurface.withOutputCap(body, null), body);
    assert.equal(
      responsesSurface.withOutputCap({ ...body, max_output_tokens: 500 }, 20).max_output_tokens,
      20,
    );
    assert.equal(responsesSurface.maxOutputTokens({ ...body, max_output_tokens: 7 }), 7);
  });

  it("reads usage from input_tokens and output_tokens", () => {
    assert.deepEqual(responsesSurface.usageOf({ usage: { input_tokens: 10.2, output_tokens: 3 } }), {
      prompt_tokens: 11,
      completion_tokens: 3,
    });
    assert.equal(responsesSurface.usageOf({ usage: { prompt_tokens: 1, completion_tokens: 1 } }), undefined);
  });

  it("an answer that lacks nothing is sent byte for byte", () => {
    const full = {
      id: "resp_1",
      object: "response",
      created_at: 1,
      model: "x",
      status: "completed",
      output: [],
      tools: [],
      tool_choice: "auto",
      parallel_tool_calls: true,
      completed_at: 1,
      error: null,
      incomplete_details: null,
      instructions: null,
      metadata: {},
      frequency_penalty: 0,
      presence_penalty: 0,
      temperature: 1,
      top_p: 1,
    };
    const text = JSON.stringify(full, null, 2);
    assert.equal(responsesSurface.completeAnswer(text, full, defaults), text);
    const { presence_penalty: _, ...lacking } = full;
    assert.equal(
      JSON.parse(responsesSurface.completeAnswer(JSON.stringify(lacking), lacking, defaults))
        .presence_penalty,
      null,
    );
  });
});

describe("the Responses event reader (docs/gateway.md#responses-answers)", () => {
  it("passes whole events on, counts output deltas' bytes and reads the final usage", () => {
    const reader = new ResponsesEventReader(defaults);
    const delta = JSON.stringify({
      type: "response.output_text.delta",
      sequence_number: 3,
      item_id: "msg_1",
      output_index: 0,
      content_index: 0,
      delta: "héllo",
      logprobs: [],
    });
    assert.deepEqual(reader.read(delta), { send: null, usage: undefined, contentBytes: 6 });
    const args = JSON.stringify({
      type: "response.function_call_arguments.delta",
      sequence_number: 4,
      item_id: "fc_1",
      output_index: 1,
      delta: '{"a":1}',
    });
    assert.equal(reader.read(args).contentBytes, 7);
    for (const type of ["response.completed", "response.incomplete", "response.failed"]) {
      const facts = reader.read(
        JSON.stringify({
          type,
          sequence_number: 9,
          response: { usage: { input_tokens: 5, output_tokens: 2 } },
        }),
      );
      assert.deepEqual(facts.usage, { prompt_tokens: 5, completion_tokens: 2 }, type);
      // The sparse response is filled in, and the event keeps its name.
      assert.match(facts.send ?? "", new RegExp(`^event: ${type.replaceAll(".", "\\.")}\\ndata: `));
      assert.equal(JSON.parse((facts.send ?? "").split("data: ")[1] ?? "").response.usage.total_tokens, 7);
    }
    // A line that is not JSON goes on as it came.
    assert.deepEqual(reader.read("not json"), { send: null, usage: undefined, contentBytes: 0 });
  });

  it("numbers events without sequence numbers on from the last one seen, and names their item", () => {
    const reader = new ResponsesEventReader(defaults);
    const sent = (data: Record<string, unknown>) => {
      const facts = reader.read(JSON.stringify(data));
      return facts.send === null ? data : JSON.parse(facts.send.split("data: ")[1] ?? "");
    };
    assert.equal(sent({ type: "response.created", response: {} }).sequence_number, 0);
    assert.equal(sent({ type: "response.in_progress", sequence_number: 5, response: {} }).sequence_number, 5);
    const d = sent({ type: "response.output_text.delta", output_index: 2, content_index: 0, delta: "x" });
    assert.equal(d.sequence_number, 6);
    assert.equal(d.item_id, "gen-1-2");
    assert.deepEqual(d.logprobs, []);
    const added = sent({
      type: "response.output_item.added",
      output_index: 2,
      item: { type: "message", content: [] },
    });
    assert.equal(added.item.id, "gen-1-2");
    assert.equal(added.item.status, "in_progress");
    assert.equal(added.item.role, "assistant");
  });
});
