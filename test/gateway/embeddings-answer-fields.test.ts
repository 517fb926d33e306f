import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { completeEmbeddingsAnswer } from "../../src/gateway/surfaces/embeddings/answer-fields.js";

/** The answer sent for an upstream's JSON embeddings answer (docs/gateway.md#embeddings-answer-fields). */
describe("embeddings answer fields filled on the upstream's text (docs/gateway.md#embeddings-answer-fields)", () => {
  const defaults = { id: "gen-request", created: 1_700_000_000, model: "openai/text-embedding-3-small" };
  const answer = (over: Record<string, unknown> = {}) => ({
    object: "list",
    data: [
      { object: "embedding", index: 0, embedding: [0.5, -0.25] },
      { object: "embedding", index: 1, embedding: "AAAAPwAAgL4=" },
    ],
    model: "text-embedding-3-small",
    usage: { prompt_tokens: 3, total_tokens: 3 },
    ...over,
  });
  const send = (text: string) => completeEmbeddingsAnswer(text, JSON.parse(text), defaults);

  it("an answer with every field is sent byte for byte as the upstream wrote it, its spacing and number forms kept", () => {
    const text = `${JSON.stringify(answer(), null, 1).replace("0.5", "5e-1")}\n`;
    assert.equal(send(text), text);
  });

  it("the upstream's own model, ids and extra fields are kept; only what lacks is filled", () => {
    const sent = JSON.parse(
      send(
        JSON.stringify({
          id: "emb-1",
          extra: { kept: true },
          model: "upstream-model",
          data: [{ embedding: [1], index: 7, extra: 1 }, { embedding: [2] }],
          usage: { prompt_tokens: 4, cost: 0.1 },
        }),
      ),
    );
    assert.deepEqual(sent, {
      id: "emb-1",
      extra: { kept: true },
      object: "list",
      model: "upstream-model",
      data: [
        { object: "embedding", embedding: [1], index: 7, extra: 1 },
        { object: "embedding", embedding: [2], index: 1 },
      ],
      usage: { prompt_tokens: 4, total_tokens: 4, cost: 0.1 },
    });
  });

  it("a wrong object is set to the API's, and an empty model is the routed slug", () => {
    const sent = JSON.parse(send(JSON.stringify(answer({ object: "embeddings", model: "" }))));
    assert.equal(sent.object, "list");
    assert.equal(sent.model, defaults.model);
  });

  it("no usage, or a usage without prompt_tokens, is left without: no token count is invented", () => {
    const bare = { data: [{ embedding: [1] }] };
    assert.equal("usage" in JSON.parse(send(JSON.stringify(bare))), false);
    const partial = JSON.parse(send(JSON.stringify({ ...bare, usage: { total_tokens: 2 } })));
    assert.deepEqual(partial.usage, { total_tokens: 2 });
  });

  it("what is not an embeddings list is sent as it came", () => {
    for (const text of ['{"error":{"message":"x"}}', '{"data":{}}', "[1,2]", '"text"', "null"]) {
      assert.equal(send(text), text);
    }
    assert.equal(completeEmbeddingsAnswer("not json", undefined, defaults), "not json");
  });
});
