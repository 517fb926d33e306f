import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import "../helpers/property-seed.js";
import { type AnswerShape, answerTexts, writeAnswer } from "../../src/domain/answer-texts.js";
import { compileFilters, scanTexts } from "../../src/domain/content-scan.js";
import { DETECTORS } from "../../src/domain/detectors/index.js";

/**
 * The texts of each API's whole answer and their write-back (docs/gateway.md#answer-filters): what
 * the model wrote is read wherever its API puts it, and a redaction changes that and nothing else.
 */

const EMAIL = "jane.roe@example.com";
const filters = compileFilters(
  { content_filter_builtins: [{ slug: "email", action: "redact" }], content_filters: [] },
  DETECTORS,
);

/** The answer redacted, parsed, and what was read. */
function redacted(shape: AnswerShape, answer: unknown) {
  const read = answerTexts(shape, answer);
  const result = scanTexts(filters, read.texts);
  const text = JSON.stringify(answer);
  return {
    read,
    out: writeAnswer(text, read, result.replacements).parsed,
    count: result.hits[0]?.count ?? 0,
  };
}

describe("answer texts (docs/gateway.md#answer-filters)", () => {
  it("chat: content (string and parts), refusal, reasoning under every name, tool and function call arguments; nothing else", () => {
    const answer = {
      id: EMAIL,
      model: "m",
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: `a ${EMAIL}`,
            refusal: `r ${EMAIL}`,
            reasoning: `t ${EMAIL}`,
            reasoning_content: `u ${EMAIL}`,
            reasoning_details: [
              { type: "reasoning.text", text: `v ${EMAIL}` },
              { type: "reasoning.summary", summary: `w ${EMAIL}` },
            ],
            tool_calls: [
              {
                id: "call_1",
                type: "function",
                function: { name: EMAIL, arguments: JSON.stringify({ to: EMAIL, n: 1 }) },
              },
            ],
            function_call: { name: "f", arguments: JSON.stringify({ [EMAIL]: true }) },
          },
        },
        { index: 1, message: { role: "assistant", content: [{ type: "text", text: `p ${EMAIL}` }] } },
      ],
    };
    const { out, count } = redacted("chat", answer);
    assert.equal(count, 9);
    const m = (out as typeof answer).choices[0]?.message as (typeof answer.choices)[0]["message"];
    assert.equal(m.content, "a [EMAIL]");
    assert.equal(m.refusal, "r [EMAIL]");
    assert.equal(m.reasoning, "t [EMAIL]");
    assert.equal(m.reasoning_content, "u [EMAIL]");
    assert.deepEqual(m.reasoning_details, [
      { type: "reasoning.text", text: "v [EMAIL]" },
      { type: "reasoning.summary", summary: "w [EMAIL]" },
    ]);
    assert.deepEqual(JSON.parse(m.tool_calls[0]?.function.arguments as string), { to: "[EMAIL]", n: 1 });
    // A property name of arguments is the model's text too.
    assert.deepEqual(JSON.parse(m.function_call.arguments), { "[EMAIL]": true });
    // The provider's fields (ids, names the request chose) are not the model's text.
    assert.equal((out as typeof answer).id, EMAIL);
    assert.equal(m.tool_calls[0]?.function.name, EMAIL);
    assert.deepEqual((out as typeof answer).choices[1]?.message.content, [
      { type: "text", text: "p [EMAIL]" },
    ]);
  });

  it("chat: arguments that are not JSON (cut off) are read whole, and the label is written JSON-escaped", () => {
    const args = `{"to": "${EMAIL}", "body": "unfinished`;
    const { out } = redacted("chat", {
      choices: [{ message: { tool_calls: [{ function: { arguments: args } }] } }],
    });
    assert.equal(
      (out as { choices: { message: { tool_calls: { function: { arguments: string } }[] } }[] }).choices[0]
        ?.message.tool_calls[0]?.function.arguments,
      '{"to": "[EMAIL]", "body": "unfinished',
    );
  });

  it("responses: message text and refusal, function call arguments, custom tool input, reasoning summary and content", () => {
    const answer = {
      output: [
        {
          type: "reasoning",
          summary: [{ type: "summary_text", text: `s ${EMAIL}` }],
          content: [{ type: "reasoning_text", text: `c ${EMAIL}` }],
        },
        {
          type: "message",
          content: [
            { type: "output_text", text: `a ${EMAIL}` },
            { type: "refusal", refusal: `r ${EMAIL}` },
          ],
        },
        { type: "function_call", call_id: "call_1", name: "send", arguments: JSON.stringify({ to: EMAIL }) },
        { type: "custom_tool_call", call_id: "call_2", name: "raw", input: `to ${EMAIL}` },
      ],
    };
    const { out, count } = redacted("responses", answer);
    assert.equal(count, 6);
    assert.equal(JSON.stringify(out).includes(EMAIL), false);
    const o = (out as typeof answer).output;
    assert.equal(JSON.parse((o[2] as { arguments: string }).arguments).to, "[EMAIL]");
    assert.equal((o[3] as { input: string }).input, "to [EMAIL]");
  });

  it("messages: text, tool input (an object: keys and values, numbers too), thinking; the signature untouched", () => {
    const answer = {
      content: [
        { type: "thinking", thinking: `t ${EMAIL}`, signature: "c2ln" },
        { type: "text", text: `a ${EMAIL}` },
        {
          type: "tool_use",
          id: "toolu_1",
          name: "send",
          input: { to: [EMAIL], [EMAIL]: 4111111111111111, n: 2 },
        },
      ],
    };
    const { out, count } = redacted("messages", answer);
    assert.equal(count, 4);
    const c = (out as typeof answer).content;
    assert.deepEqual(c[0], { type: "thinking", thinking: "t [EMAIL]", signature: "c2ln" });
    assert.deepEqual((c[2] as { input: unknown }).input, {
      to: ["[EMAIL]"],
      "[EMAIL]": 4111111111111111,
      n: 2,
    });
  });

  it("an answer of another shape, or not an object, has no texts", () => {
    assert.equal(
      answerTexts("chat", { output: [{ type: "message", content: [{ type: "output_text", text: EMAIL }] }] })
        .texts.length,
      0,
    );
    assert.equal(answerTexts("messages", "text").texts.length, 0);
    assert.equal(answerTexts("responses", null).texts.length, 0);
  });

  it("property: arguments of any JSON shape with e-mails in their strings stay valid JSON, keep their shape and lose every e-mail; without one they are left as they are", () => {
    const word = fc.stringMatching(/^[a-z ]{0,8}$/);
    const leaf = fc.oneof(
      word,
      word.map((w) => `${w} ${EMAIL} ${w}`),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
    );
    const value = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: "small" }, leaf, tie("array"), tie("object")),
      array: fc.array(tie("node"), { maxLength: 4 }),
      object: fc.dictionary(fc.stringMatching(/^[a-z]{1,6}$/), tie("node"), { maxKeys: 4 }),
    })).object;
    fc.assert(
      fc.property(value, fc.boolean(), (args, object) => {
        const answer = object
          ? { content: [{ type: "tool_use", id: "toolu_1", name: "f", input: args }] }
          : { choices: [{ message: { tool_calls: [{ function: { arguments: JSON.stringify(args) } }] } }] };
        const shape = object ? "messages" : "chat";
        const read = answerTexts(shape, answer);
        const result = scanTexts(filters, read.texts);
        const source = JSON.stringify(args);
        if (!source.includes(EMAIL)) {
          assert.equal(result.replacements.length, 0);
          return;
        }
        const out = writeAnswer(JSON.stringify(answer), read, result.replacements).parsed as typeof answer;
        const written = object
          ? (out as { content: { input: unknown }[] }).content[0]?.input
          : JSON.parse(
              (out as { choices: { message: { tool_calls: { function: { arguments: string } }[] } }[] })
                .choices[0]?.message.tool_calls[0]?.function.arguments as string,
            );
        assert.equal(JSON.stringify(written).includes(EMAIL), false);
        // The same shape: only the strings that held an address changed, each to its label.
        assert.equal(JSON.stringify(written), source.replaceAll(EMAIL, "[EMAIL]"));
      }),
    );
  });
});
