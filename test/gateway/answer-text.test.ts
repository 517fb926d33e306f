import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { completeAnswerText } from "../../src/gateway/surfaces/chat/response-fields.js";

/** The answer sent for an upstream's JSON answer (docs/gateway.md#answer-fields). */
describe("answer fields filled on the upstream's text (docs/gateway.md#answer-fields)", () => {
  const defaults = { id: "gen-request", created: 1_700_000_000, model: "anthropic/claude-sonnet-4.5" };
  const answer = (over: Record<string, unknown> = {}) => ({
    id: "chatcmpl-1",
    object: "chat.completion",
    created: 1_690_000_000,
    model: "claude-sonnet-4-5",
    choices: [
      { index: 0, message: { role: "assistant", content: "a } and a { in text" }, finish_reason: "stop" },
    ],
    usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
    ...over,
  });
  const send = (text: string) => completeAnswerText(text, JSON.parse(text), defaults);

  it("an answer with every field is sent byte for byte as the upstream wrote it", () => {
    const text = `${JSON.stringify(answer({ system_fingerprint: "fp_1" }), null, 1)}\n`;
    assert.equal(send(text), text);
  });

  it("an answer lacking only system_fingerprint keeps the upstream's bytes and gains system_fingerprint null", () => {
    for (const text of [
      JSON.stringify(answer()),
      `${JSON.stringify(answer(), null, 2)}\n\r\n `,
      JSON.stringify(
        answer({ choices: [{ index: 0, message: { content: "é 😀 \\u00e9 }}" }, finish_reason: null }] }),
      ),
    ]) {
      const sent = send(text);
      assert.deepEqual(JSON.parse(sent), { ...JSON.parse(text), system_fingerprint: null });
      assert.equal(
        sent.slice(0, text.lastIndexOf("}")),
        text.slice(0, text.lastIndexOf("}")),
        "the upstream's bytes, untouched",
      );
    }
  });

  it("an answer lacking other fields is filled from the request: id, object, created, model, index, finish_reason", () => {
    const bare = { choices: [{ message: { role: "assistant", content: "hi" } }] };
    assert.deepEqual(JSON.parse(send(JSON.stringify(bare))), {
      id: "gen-request",
      object: "chat.completion",
      created: 1_700_000_000,
      model: "anthropic/claude-sonnet-4.5",
      choices: [{ index: 0, message: { role: "assistant", content: "hi" }, finish_reason: null }],
      system_fingerprint: null,
    });
  });

  it("what is not a chat answer (no choices, not an object) is sent as it came", () => {
    for (const text of ['{"error":{"message":"x"}}', "[1,2]", '"text"', "null"])
      assert.equal(send(text), text);
  });
});
