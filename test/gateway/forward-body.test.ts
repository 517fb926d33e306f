import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import "../helpers/property-seed.js";
import type { ChatBody } from "../../src/domain/chat-texts.js";
import { forwardedText, topLevelString } from "../../src/gateway/forward-body.js";

/**
 * The body sent to the provider (docs/gateway.md#what-happens-to-a-request): the client's own text
 * with only the top-level model replaced when nothing else changes, else the forwarded body
 * serialized; either way it reads as the forwarded body with the endpoint's model.
 */
describe("the forwarded body keeps the client's bytes when only the model changes (docs/gateway.md#what-happens-to-a-request)", () => {
  // The schema makes model a string and messages a list; other members keep their place and value.
  const chatBody = (extra: Record<string, unknown>) => ({ ...extra, model: "a/b", messages: [] }) as ChatBody;
  // Bodies with "model" keys and look-alikes nested anywhere, written compact or indented; top-level
  // keys that JSON writes without an escape (one with an escape is never spliced, tested below).
  const plainKey = fc.string().filter((k) => JSON.stringify(k) === `"${k}"`);
  const members = fc.dictionary(
    fc.oneof(fc.constantFrom("model", "Model", "models", "model ", "messages0"), plainKey),
    fc.jsonValue({ maxDepth: 3 }),
    { maxKeys: 5 },
  );
  const nested = members.map((extra) => ({ ...extra, nested: { model: "inner", list: [{ model: 1 }] } }));
  const indent = fc.constantFrom(0, 1, 2, "\t", " \r\n ");

  it("when nothing but the model changes, only the model's value differs from the text sent", () => {
    fc.assert(
      fc.property(nested, indent, fc.string(), (extra, space, model) => {
        const text = JSON.stringify(chatBody(extra), null, space);
        // The body as the service reads it from the client's text (JSON has no -0: it reads 0).
        const body = JSON.parse(text) as ChatBody;
        const sent = forwardedText(text, body, body, model);
        assert.deepEqual(JSON.parse(sent), { ...body, model });
        const at = topLevelString(text, "model");
        assert.ok(at, "the model member is found");
        assert.equal(sent.slice(0, at.start), text.slice(0, at.start));
        assert.equal(sent.slice(sent.length - (text.length - at.end)), text.slice(at.end));
      }),
    );
  });

  it("a changed body (redacted, capped, streamed) is serialized with the endpoint's model", () => {
    fc.assert(
      fc.property(members, fc.string(), (extra, model) => {
        const body = chatBody(extra);
        const changed = { ...body, max_tokens: 5 };
        assert.equal(
          forwardedText(JSON.stringify(body), body, changed, model),
          JSON.stringify({ ...changed, model }),
        );
      }),
    );
  });

  it("a model written twice or a top-level key with an escape is not spliced: the body is serialized", () => {
    const body = chatBody({});
    for (const text of [
      '{"model":"x","messages":[],"model":"a/b"}',
      '{"mod\\u0065l":"a/b","messages":[]}',
      '{"model":"a/b","messages":[],"me\\u0073sages2":1}',
      '{"model": 5, "messages": []}',
      '["model", "a/b"]',
    ]) {
      assert.equal(topLevelString(text, "model"), undefined, text);
      assert.equal(forwardedText(text, body, body, "m"), JSON.stringify({ ...body, model: "m" }), text);
    }
  });

  it("quotes and backslashes in the text sent do not hide or fake the model member", () => {
    const text = String.raw`{"messages":[{"role":"user","content":"say \"model\": \"evil\" \\"}],"model" : "a/b" }`;
    const body = JSON.parse(text) as ChatBody;
    const sent = forwardedText(text, body, body, "vendor-model");
    assert.equal(sent, text.replace('"model" : "a/b"', '"model" : "vendor-model"'));
    assert.deepEqual(JSON.parse(sent), { ...body, model: "vendor-model" });
  });
});
