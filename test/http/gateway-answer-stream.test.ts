import "../helpers/property-seed.js";
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import { OpenRouter } from "@openrouter/sdk";
import type { ChatStreamChunk } from "@openrouter/sdk/models";
import fc from "fast-check";
import OpenAI from "openai";
import { DEFAULT_CONFIG_FILE, loadCatalogFile } from "../../src/config.js";
import type { CatalogData } from "../../src/domain/catalog.js";
import type { ChatText } from "../../src/domain/chat-texts.js";
import { compileFilters, scanTexts } from "../../src/domain/content-scan.js";
import { DETECTORS } from "../../src/domain/detectors/index.js";
import type { ReceivedRequest, ScriptedAnswer } from "../../src/local-upstream/server.js";
import {
  type GatewayBench,
  guardKey,
  orgWithKey,
  post,
  type RawResponse,
  SONNET,
  startGatewayBench,
  streamData,
} from "./gateway-support.js";

/**
 * Answer filters on streamed answers, door by door (docs/gateway.md#answer-streams): a fake provider
 * streams an answer holding a card number, an e-mail address, a secret and a custom pattern's match,
 * each split between two events at every place it can be cut.
 */

const CARD = "4111 1111 1111 1111";
const EMAIL = "jane.roe@example.com";
const SECRET = "AKIAZ7Q3KXW9PLM2RT4V";
const CUSTOM = "PRJ-4242";
const VALUES = [CARD, EMAIL, SECRET, CUSTOM];
const PATTERN = "PRJ-[0-9]{4}";
const GPT = "openai/gpt-4.1";

const filtersOf = (action: string) => ({
  name: `answers ${action}`,
  content_filter_builtins: ["credit-card", "email", "secrets"].map((slug) => ({
    slug,
    action,
    apply_to: "response",
  })),
  content_filters: [{ pattern: PATTERN, action, label: "[PROJECT]", apply_to: "response" }],
});

/** The whole answer redacted, as the domain redacts one text. */
function redacted(text: string): string {
  const filters = compileFilters(
    {
      content_filter_builtins: ["credit-card", "email", "secrets"].map((slug) => ({
        slug: slug as "email",
        action: "redact" as const,
      })),
      content_filters: [{ pattern: PATTERN, action: "redact", label: "[PROJECT]" }],
    },
    DETECTORS,
  );
  const t = { text, role: "assistant", message: 0, json: false, kind: "text" } as unknown as ChatText;
  return scanTexts(filters, [t]).replacements[0]?.value ?? text;
}

const sse = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`;
const named = (data: { type: string } & Record<string, unknown>) =>
  `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;

/** An upstream chat stream whose content deltas are `pieces`, or whose tool call arguments are. */
function chatEvents(pieces: string[], tool = false): string[] {
  const head = { id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "m" };
  const out = [sse({ ...head, choices: [{ index: 0, delta: { role: "assistant" }, finish_reason: null }] })];
  if (tool)
    out.push(
      sse({
        ...head,
        choices: [
          {
            index: 0,
            delta: {
              tool_calls: [
                { index: 0, id: "call_1", type: "function", function: { name: "lookup", arguments: "" } },
              ],
            },
            finish_reason: null,
          },
        ],
      }),
    );
  for (const p of pieces)
    out.push(
      sse({
        ...head,
        choices: [
          {
            index: 0,
            delta: tool ? { tool_calls: [{ index: 0, function: { arguments: p } }] } : { content: p },
            finish_reason: null,
          },
        ],
      }),
    );
  out.push(sse({ ...head, choices: [{ index: 0, delta: {}, finish_reason: tool ? "tool_calls" : "stop" }] }));
  out.push(
    sse({ ...head, choices: [], usage: { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 } }),
  );
  out.push("data: [DONE]\n\n");
  return out;
}

/** An upstream Responses stream: one message item whose text deltas are `pieces`, or one function call. */
function responsesEvents(pieces: string[], tool = false): string[] {
  const text = pieces.join("");
  const response = (status: string, output: unknown[]) => ({
    id: "resp_1",
    object: "response",
    created_at: 1,
    status,
    model: "m",
    output,
    usage: status === "completed" ? { input_tokens: 10, output_tokens: 20, total_tokens: 30 } : null,
  });
  let seq = 0;
  const ev = (e: Record<string, unknown> & { type: string }) => named({ ...e, sequence_number: seq++ });
  const item = tool
    ? {
        id: "fc_1",
        type: "function_call",
        call_id: "call_1",
        name: "lookup",
        arguments: text,
        status: "completed",
      }
    : {
        id: "msg_1",
        type: "message",
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text, annotations: [] }],
      };
  const out = [
    ev({ type: "response.created", response: response("in_progress", []) }),
    ev({
      type: "response.output_item.added",
      output_index: 0,
      item: tool
        ? { ...item, arguments: "", status: "in_progress" }
        : { ...item, content: [], status: "in_progress" },
    }),
  ];
  if (tool) {
    for (const p of pieces)
      out.push(
        ev({ type: "response.function_call_arguments.delta", item_id: "fc_1", output_index: 0, delta: p }),
      );
    out.push(
      ev({
        type: "response.function_call_arguments.done",
        item_id: "fc_1",
        output_index: 0,
        arguments: text,
      }),
    );
  } else {
    const at = { item_id: "msg_1", output_index: 0, content_index: 0 };
    out.push(
      ev({
        type: "response.content_part.added",
        ...at,
        part: { type: "output_text", text: "", annotations: [] },
      }),
    );
    for (const p of pieces)
      out.push(ev({ type: "response.output_text.delta", ...at, delta: p, logprobs: [] }));
    out.push(ev({ type: "response.output_text.done", ...at, text, logprobs: [] }));
    out.push(
      ev({ type: "response.content_part.done", ...at, part: { type: "output_text", text, annotations: [] } }),
    );
  }
  out.push(ev({ type: "response.output_item.done", output_index: 0, item }));
  out.push(ev({ type: "response.completed", response: response("completed", [item]) }));
  return out;
}

/** An upstream Messages stream: one text block (or tool_use block) whose deltas are `pieces`. */
function messagesEvents(pieces: string[], tool = false): string[] {
  const out = [
    named({
      type: "message_start",
      message: {
        id: "msg_1",
        type: "message",
        role: "assistant",
        model: "m",
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 10, output_tokens: 1 },
      },
    }),
    named({
      type: "content_block_start",
      index: 0,
      content_block: tool
        ? { type: "tool_use", id: "toolu_1", name: "lookup", input: {} }
        : { type: "text", text: "" },
    }),
  ];
  for (const p of pieces)
    out.push(
      named({
        type: "content_block_delta",
        index: 0,
        delta: tool ? { type: "input_json_delta", partial_json: p } : { type: "text_delta", text: p },
      }),
    );
  out.push(named({ type: "content_block_stop", index: 0 }));
  out.push(
    named({
      type: "message_delta",
      delta: { stop_reason: tool ? "tool_use" : "end_turn", stop_sequence: null },
      usage: { output_tokens: 20 },
    }),
  );
  out.push(named({ type: "message_stop" }));
  return out;
}

/** What the fake provider streams next: `pieces` in the upstream API the request reached. */
function script(bench: GatewayBench, pieces: string[], tool = false): void {
  bench.script.next = (r: ReceivedRequest): ScriptedAnswer => ({
    events: r.path.endsWith("/chat/completions")
      ? chatEvents(pieces, tool)
      : r.path.endsWith("/responses")
        ? responsesEvents(pieces, tool)
        : messagesEvents(pieces, tool),
  });
}

interface Door {
  name: string;
  route: string;
  translated: boolean;
  body(): Record<string, unknown>;
  /** The answer's text as a client gathers it from the deltas. */
  text(events: Record<string, unknown>[]): string;
  /** The tool call's arguments as a client gathers them. */
  args(events: Record<string, unknown>[]): string;
  /** Whether the stream ended with the door's error for a blocked answer. */
  refused(events: Record<string, unknown>[]): boolean;
}

// biome-ignore lint/suspicious/noExplicitAny: events are read as the wire gives them, and asserted on.
type Ev = Record<string, any>;

const CHAT: Door = {
  name: "chat completions",
  route: "/api/v1/chat/completions",
  translated: false,
  body: () => ({ model: SONNET, stream: true, messages: [{ role: "user", content: "hi" }] }),
  text: (events) =>
    (events as Ev[]).map((e) => (e.choices?.[0]?.delta?.content as string | undefined) ?? "").join(""),
  args: (events) =>
    (events as Ev[])
      .flatMap((e) => (e.choices?.[0]?.delta?.tool_calls ?? []) as Ev[])
      .map((c) => (c.function?.arguments as string | undefined) ?? "")
      .join(""),
  refused: (events) => {
    const last = events.at(-1) as Ev;
    const before = events.at(-2) as Ev;
    return (
      before?.choices?.[0]?.finish_reason === "content_filter" &&
      last?.error?.code === 403 &&
      last.error.metadata?.reason === "answer_content_filter"
    );
  },
};

const responsesDoor = (translated: boolean): Door => ({
  name: `responses (${translated ? "translated" : "native"})`,
  route: "/api/v1/responses",
  translated,
  body: () => ({ model: GPT, stream: true, input: "hi" }),
  text: (events) =>
    (events as Ev[])
      .filter((e) => e.type === "response.output_text.delta")
      .map((e) => e.delta as string)
      .join(""),
  args: (events) =>
    (events as Ev[])
      .filter((e) => e.type === "response.function_call_arguments.delta")
      .map((e) => e.delta as string)
      .join(""),
  refused: (events) => {
    const last = events.at(-1) as Ev;
    return (
      last?.type === "response.failed" && last.response?.error?.metadata?.reason === "answer_content_filter"
    );
  },
});

const messagesDoor = (translated: boolean): Door => ({
  name: `messages (${translated ? "translated" : "native"})`,
  route: "/api/v1/messages",
  translated,
  body: () => ({ model: SONNET, max_tokens: 256, stream: true, messages: [{ role: "user", content: "hi" }] }),
  text: (events) =>
    (events as Ev[])
      .filter((e) => e.type === "content_block_delta" && e.delta?.type === "text_delta")
      .map((e) => e.delta.text as string)
      .join(""),
  args: (events) =>
    (events as Ev[])
      .filter((e) => e.type === "content_block_delta" && e.delta?.type === "input_json_delta")
      .map((e) => e.delta.partial_json as string)
      .join(""),
  refused: (events) => {
    const last = events.at(-1) as Ev;
    return (
      last?.type === "error" &&
      last.error?.type === "permission_error" &&
      last.error?.metadata?.reason === "answer_content_filter"
    );
  },
});

/** The shipped catalog with these providers speaking chat only: their Responses and Messages are translated. */
function chatOnly(providers: string[]): CatalogData {
  const shipped = loadCatalogFile(DEFAULT_CONFIG_FILE);
  return {
    ...shipped,
    providers: shipped.providers.map((p) =>
      providers.includes(p.id) ? { ...p, apis: ["chat" as const] } : p,
    ),
  };
}

/** Every split of the answer `Here: <value> ok.` into two events inside the value, for every value. */
function everySplit(): { value: string; pieces: string[] }[] {
  const out: { value: string; pieces: string[] }[] = [];
  for (const value of VALUES) {
    const text = `Here: ${value} ok.`;
    for (let p = 1; p < value.length; p++) {
      const at = 6 + p;
      out.push({ value, pieces: [text.slice(0, at), text.slice(at)] });
    }
  }
  return out;
}

for (const [label, catalog, doors] of [
  ["native upstreams", undefined, [CHAT, responsesDoor(false), messagesDoor(false)]],
  [
    "chat-only upstreams",
    chatOnly(["openai", "azure", "anthropic"]),
    [responsesDoor(true), messagesDoor(true)],
  ],
] as const) {
  describe(`answer filters on streamed answers, ${label} (docs/gateway.md#answer-streams)`, () => {
    let bench: GatewayBench;
    let redactKey: string;
    let blockKey: string;
    before(async () => {
      bench = await startGatewayBench(catalog ? { catalog } : {});
      const r = await orgWithKey(bench);
      await guardKey(r.steps, r.key, filtersOf("redact"));
      redactKey = r.key.secret;
      const b = await orgWithKey(bench);
      await guardKey(b.steps, b.key, filtersOf("block"));
      blockKey = b.key.secret;
    });
    after(async () => {
      bench.script.next = undefined;
      await bench.close();
    });

    const send = async (door: Door, key: string): Promise<RawResponse> => {
      const res = await post(bench.server, door.route, key, door.body());
      assert.equal(res.status, 200, res.text);
      return res;
    };

    for (const door of doors) {
      describe(door.name, () => {
        it("redact: over every split of each value between two events, the client receives the label and no character of the value", async () => {
          for (const { value, pieces } of everySplit()) {
            script(bench, pieces);
            const res = await send(door, redactKey);
            const events = streamData(res.text);
            assert.equal(door.text(events), redacted(pieces.join("")), `split ${JSON.stringify(pieces)}`);
            assert.ok(!res.text.includes(value));
            for (const e of events) assert.ok(!JSON.stringify(e).includes(value.slice(0, 6)));
          }
        });

        it("redact: a random split of an answer holding every value into many events reads as the whole answer redacted", async () => {
          const text = `Card ${CARD}, mail ${EMAIL}, key ${SECRET}, project ${CUSTOM}. ${"filler text ".repeat(60)}end ${EMAIL}.`;
          await fc.assert(
            fc.asyncProperty(
              fc.array(fc.integer({ min: 1, max: text.length - 1 }), { maxLength: 40 }),
              async (points) => {
                const at = [0, ...new Set(points)].sort((a, b) => a - b);
                const pieces = at.map((p, i) => text.slice(p, at[i + 1] ?? text.length));
                script(bench, pieces);
                const res = await send(door, redactKey);
                assert.equal(door.text(streamData(res.text)), redacted(text));
                for (const v of VALUES) assert.ok(!res.text.includes(v));
              },
            ),
            { numRuns: 15 },
          );
        });

        it("block: over every split of each value, the client receives nothing of it and the stream ends with the door's error", async () => {
          for (const { pieces } of everySplit()) {
            script(bench, pieces);
            const res = await send(door, blockKey);
            const events = streamData(res.text);
            const got = door.text(events);
            assert.ok("Here: ".startsWith(got), `received ${JSON.stringify(got)}`);
            // The part of the value in the first event is not on the wire at all.
            const head = (pieces[0] as string).slice(6);
            // (The refusal names the custom filter by its pattern, which is not the value.)
            const wire = res.text.replaceAll(PATTERN, "");
            if (head.length >= 4) assert.ok(!wire.includes(head), `${head} was sent`);
            assert.ok(door.refused(events), res.text);
          }
        });

        it("tool call arguments: an e-mail inside them is redacted and the arguments stay valid JSON", async () => {
          const args = JSON.stringify({ q: `write to ${EMAIL} today`, n: 2 });
          for (const cut of [3, 14, 20, 25, 33]) {
            script(bench, [args.slice(0, cut), args.slice(cut)], true);
            const res = await send(door, redactKey);
            assert.ok(!res.text.includes(EMAIL));
            assert.deepEqual(JSON.parse(door.args(streamData(res.text))), {
              q: "write to [EMAIL] today",
              n: 2,
            });
          }
        });
      });
    }

    if (!catalog) {
      if (doors.includes(CHAT))
        it("chat with n = 2: a block finishes every choice still open on content_filter, a finished one keeps its finish, and nothing of the value is sent (docs/gateway.md#answer-stream-refusal)", async () => {
          const head = { id: "chatcmpl-2", object: "chat.completion.chunk", created: 1, model: "m" };
          const chunk = (index: number, content: string) =>
            sse({ ...head, choices: [{ index, delta: { content }, finish_reason: null }] });
          const finish = (index: number) =>
            sse({ ...head, choices: [{ index, delta: {}, finish_reason: "stop" }] });
          for (const [order, expected] of [
            // Choice 1 ends first: its value is read while choice 0 is still open.
            [
              [1, 0],
              [
                [0, "content_filter"],
                [1, "content_filter"],
              ],
            ],
            // Choice 0 has finished before choice 1's value is read.
            [
              [0, 1],
              [
                [0, "stop"],
                [1, "content_filter"],
              ],
            ],
          ] as const) {
            bench.script.next = () => ({
              events: [
                chunk(0, "First answer, "),
                chunk(1, "Second: jane.roe@exa"),
                chunk(0, "still going."),
                chunk(1, "mple.com ok."),
                ...order.map(finish),
                "data: [DONE]\n\n",
              ],
            });
            const res = await post(bench.server, CHAT.route, blockKey, { ...CHAT.body(), n: 2 });
            assert.equal(res.status, 200, res.text);
            assert.ok(!res.text.includes("jane.roe"), res.text);
            const events = streamData(res.text) as {
              choices?: { index: number; finish_reason: string | null }[];
            }[];
            const finishing = events.flatMap((e) =>
              (e.choices ?? [])
                .filter((c) => c.finish_reason !== null)
                .map((c) => [c.index, c.finish_reason]),
            );
            assert.deepEqual(finishing, expected, res.text);
            assert.ok(CHAT.refused(events), res.text);
          }
        });

      it("a guardrail whose filters read only requests streams the answer byte for byte as without one", async () => {
        const plain = await orgWithKey(bench);
        const guarded = await orgWithKey(bench);
        await guardKey(guarded.steps, guarded.key, {
          name: "requests only",
          content_filter_builtins: [{ slug: "email", action: "redact" }],
        });
        for (const door of doors) {
          const pieces = ["Here: jane.roe@exa", "mple.com ok."];
          script(bench, pieces);
          const a = await send(door, plain.key.secret);
          script(bench, pieces);
          const b = await send(door, guarded.key.secret);
          // The ids a door fills in are the request's own: the rest must be the same bytes.
          const strip = (t: string) => t.replace(/gen-[A-Za-z0-9_-]+/g, "gen-x");
          assert.equal(strip(b.text), strip(a.text), door.name);
          assert.equal(door.text(streamData(b.text)), pieces.join(""));
        }
      });

      it("flag: the answer streams unchanged, the detections are counted in /metrics, and a block counts as refused", async () => {
        const { steps, key } = await orgWithKey(bench);
        await guardKey(steps, key, {
          name: "flag answers",
          content_filter_builtins: [{ slug: "email", action: "flag", apply_to: "response" }],
        });
        const metric = async (pattern: RegExp) =>
          Number(pattern.exec(await (await fetch(`${bench.server.origin}/metrics`)).text())?.[1] ?? 0);
        const flagged =
          /guardrails_content_filter_detections_total\{filter="email",action="flag",direction="response"\} (\d+)/;
        const refused =
          /guardrails_gateway_requests_total\{outcome="refused",reason="answer_content_filter",api="chat"\} (\d+)/;
        const flagsBefore = await metric(flagged);
        const refusedBefore = await metric(refused);
        const pieces = [`mail ${EMAIL.slice(0, 5)}`, `${EMAIL.slice(5)} or ${EMAIL}.`];
        script(bench, pieces);
        const res = await send(CHAT, key.secret);
        assert.equal(CHAT.text(streamData(res.text)), pieces.join(""));
        assert.equal((await metric(flagged)) - flagsBefore, 2);
        script(bench, pieces);
        await send(CHAT, blockKey);
        assert.equal((await metric(refused)) - refusedBefore, 1);
      });

      it("the openai SDK, the reference SDK and the anthropic SDK read a redacted streamed answer without error", async () => {
        const pieces = [`Here: ${EMAIL.slice(0, 9)}`, `${EMAIL.slice(9)} and ${CARD} ok.`];
        const expected = redacted(pieces.join(""));
        script(bench, pieces);
        const openai = new OpenAI({ apiKey: redactKey, baseURL: bench.server.baseUrl, maxRetries: 0 });
        let text = "";
        for await (const c of await openai.chat.completions.create({
          model: SONNET,
          stream: true,
          messages: [{ role: "user", content: "hi" }],
        }))
          text += c.choices[0]?.delta.content ?? "";
        assert.equal(text, expected);

        script(bench, pieces);
        const responses = await openai.responses.create({ model: GPT, stream: true, input: "hi" });
        text = "";
        for await (const e of responses) if (e.type === "response.output_text.delta") text += e.delta;
        assert.equal(text, expected);

        script(bench, pieces);
        const reference = new OpenRouter({
          apiKey: redactKey,
          serverURL: bench.server.baseUrl,
          retryConfig: { strategy: "none" },
        });
        const stream = await reference.chat.send({
          chatRequest: { model: SONNET, messages: [{ role: "user", content: "hi" }], stream: true },
        });
        text = "";
        for await (const c of stream as AsyncIterable<ChatStreamChunk>)
          text += c.choices[0]?.delta.content ?? "";
        assert.equal(text, expected);

        script(bench, pieces);
        const anthropic = new Anthropic({
          apiKey: redactKey,
          authToken: null,
          baseURL: `${bench.server.origin}/api`,
          maxRetries: 0,
        });
        const message = await anthropic.messages
          .stream({ model: SONNET, max_tokens: 256, messages: [{ role: "user", content: "hi" }] })
          .finalMessage();
        assert.deepEqual(
          message.content.map((b) => (b.type === "text" ? b.text : "")),
          [expected],
        );
      });
    }
  });
}
