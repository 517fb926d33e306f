import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  chat,
  type GatewayBench,
  guardKey,
  orgWithKey,
  SONNET,
  startGatewayBench,
} from "./gateway-support.js";

/**
 * Look-alike and split values through the real gateway, against the bundled provider that records
 * what reaches it: on the event loop, and in a scan worker (every request offloaded), the provider
 * never receives a character of the value, and everything around it arrives as the client sent it.
 */

const filters = {
  content_filter_builtins: [
    { slug: "email", action: "redact" },
    { slug: "credit-card", action: "redact" },
    { slug: "phone", action: "redact" },
  ],
  content_filters: [{ pattern: "PRJ-[0-9]{4}", action: "redact", label: "[REF]" }],
};

const request = {
  model: SONNET,
  messages: [
    { role: "system", content: "Japanese desk: ４１１１ １１１１ １１１１ １１１１ on file" },
    {
      role: "user",
      content: [
        { type: "text", text: "mail ja\u200bne&#64;example.com or jane.doe@" },
        { type: "text", text: "example.org, card ٤١١١–١١١١–١١١١–١١١١, ref PRJ-１２\u200d３４" },
      ],
    },
    { role: "user", content: "line 4111 1111 11\n11 1111 and ｈｅｌｌｏ\u200b there" },
    {
      role: "assistant",
      content: null,
      tool_calls: [
        {
          id: "c1",
          type: "function",
          function: {
            name: "send",
            arguments: '{"to":"ja\\u0301ne@example.com","card":"4111.1111.1111.1111"}',
          },
        },
      ],
    },
  ],
};

/** Every fragment of a hidden value that must not reach the provider, in any spelling it was sent in. */
const FRAGMENTS = [
  "１１１１",
  "ja\u200bne",
  "&#64;",
  "jane.doe",
  "example.org",
  "١١١١",
  "１２\u200d３４",
  "PRJ",
  "11\n11",
  "4111",
  "example.com",
];

for (const [where, scan] of [
  ["on the event loop", undefined],
  ["in a scan worker", { timeoutMs: 30_000, workerChars: 1, workers: 1 }],
] as const) {
  describe(`look-alike and split values never reach the provider, ${where} (docs/behaviour.md#normalization; docs/behaviour.md#split-values)`, () => {
    let bench: GatewayBench;
    before(async () => {
      bench = await startGatewayBench(scan ? { scan } : {});
    });
    after(async () => {
      await bench.close();
    });

    it("redact: each value is replaced where it was sent, the rest arrives as sent", async () => {
      const { steps, key } = await orgWithKey(bench);
      await guardKey(steps, key, filters);
      const res = await chat(bench.server, key.secret, request);
      assert.equal(res.status, 200, res.text);
      const sent = bench.received.at(-1)?.body;
      const raw = JSON.stringify(sent);
      for (const f of FRAGMENTS) assert.equal(raw.includes(JSON.stringify(f).slice(1, -1)), false, f);
      assert.equal(sent.messages[0].content, "Japanese desk: [CREDIT_CARD] on file");
      assert.deepEqual(
        sent.messages[1].content.map((p: { text: string }) => p.text),
        ["mail [EMAIL] or [EMAIL]", ", card [CREDIT_CARD], ref [REF]"],
      );
      assert.equal(sent.messages[2].content, "line [CREDIT_CARD] and ｈｅｌｌｏ\u200b there");
      assert.deepEqual(JSON.parse(sent.messages[3].tool_calls[0].function.arguments), {
        to: "[EMAIL]",
        card: "[CREDIT_CARD]",
      });
    });

    it("redact: a property name that holds a value only in its canonical form refuses the request, as names are never rewritten", async () => {
      const { steps, key } = await orgWithKey(bench);
      await guardKey(steps, key, { content_filter_builtins: [{ slug: "email", action: "redact" }] });
      const count = bench.received.length;
      const res = await chat(bench.server, key.secret, {
        model: SONNET,
        messages: [{ role: "user", content: "hi" }],
        tools: [
          {
            type: "function",
            function: {
              name: "send",
              parameters: {
                type: "object",
                properties: { "ja\u200bne&#64;example.com": { type: "string" } },
              },
            },
          },
        ],
      });
      assert.equal(res.status, 403, res.text);
      assert.equal(res.body.error.metadata.action, "redact");
      assert.equal(typeof res.body.error.metadata.name_at, "string");
      assert.equal(bench.received.length, count);
    });

    it("block: a value split across two messages is refused, and nothing reaches the provider", async () => {
      const { steps, key } = await orgWithKey(bench);
      await guardKey(steps, key, { content_filter_builtins: [{ slug: "email", action: "block" }] });
      const count = bench.received.length;
      const res = await chat(bench.server, key.secret, {
        model: SONNET,
        messages: [
          { role: "user", content: "write to jane.doe@" },
          { role: "user", content: "exam\u200bple.com please" },
        ],
      });
      assert.equal(res.status, 403, res.text);
      assert.equal(res.body.error.message, "Request blocked by content filter: [EMAIL]");
      assert.equal(bench.received.length, count);
    });
  });
}
