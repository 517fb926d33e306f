import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { DEFAULT_CONFIG_FILE, loadCatalogFile } from "../../src/config.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import {
  type Answer,
  leaks,
  postRaw,
  type RecordingProvider,
  skeleton,
  startRecordingProvider,
  stringsOf,
} from "./bypass-support.js";
import { type MadeKey, orgSteps } from "./org-support.js";

/**
 * The hostile client's tests (docs/behaviour.md#what-reaches-the-provider): every way of hiding a
 * value from a content filter that a client can write, sent through every door, against a provider
 * that records every byte it receives. Under `block` nothing reaches the provider; under `redact`
 * either nothing does (the request was refused) or no run of the value's characters does, in any
 * disguise, and the forwarded body is valid JSON without duplicated keys. The dry run agrees with
 * the gateway on every case.
 */

const MODEL = "meta-llama/llama-3.1-8b-instruct";
const EMAIL = "jane.doe@example.com";
const CARD = "4111 1111 1111 1111";
const CUSTOM = "PRJ-482913";
const CUSTOM_PATTERN = "PRJ-[0-9]{6}";

/** A hiding place: the request body's JSON text for a value, written as a client could send it. */
interface Case {
  name: string;
  value: string;
  body: string;
}

const user = (content: unknown) => ({ role: "user", content });
const request = (messages: unknown[], extra: Record<string, unknown> = {}) =>
  JSON.stringify({ model: MODEL, messages, ...extra });
const asked = (text: string, extra: Record<string, unknown> = {}) =>
  request([user(`mail ${text} today`)], extra);

/* Disguises of a value, each a way its characters can be written so that a reader still gets them. */

const between = (value: string, mark: string) => [...value].join(mark);
const fullwidth = (value: string) =>
  [...value]
    .map((c) => (c > " " && c <= "~" ? String.fromCodePoint((c.codePointAt(0) as number) + 0xfee0) : c))
    .join("");
const digitsFrom = (zero: number) => (value: string) =>
  value.replace(/[0-9]/g, (d) => String.fromCodePoint(zero + Number(d)));
const combining = (value: string) => value.replace(/[a-z0-9]/gi, (c) => `${c}\u0301`);
const entities = (value: string) =>
  value.replace(/[@.0-9]/g, (c, i: number) =>
    i % 2 === 0 ? `&#${c.codePointAt(0)};` : `&#x${(c.codePointAt(0) as number).toString(16)};`,
  );
const namedEntities = (value: string) => value.replaceAll("@", "&commat;").replaceAll(".", "&period;");
const brokenLine = (value: string) => `${value.slice(0, 7)}\n${value.slice(7)}`;

const DISGUISES: [string, (v: string) => string][] = [
  ["zero-width spaces between its characters", (v) => between(v, "\u200b")],
  ["zero-width joiners between its characters", (v) => between(v, "\u200d")],
  ["soft hyphens between its characters", (v) => between(v, "\u00ad")],
  [
    "a word joiner and a left-to-right mark inside",
    (v) => `${v.slice(0, 4)}\u2060${v.slice(4, 8)}\u200e${v.slice(8)}`,
  ],
  ["fullwidth forms", fullwidth],
  ["Arabic-Indic digits", digitsFrom(0x0660)],
  ["Devanagari digits", digitsFrom(0x0966)],
  ["mathematical bold digits", digitsFrom(0x1d7ce)],
  ["combining accents on every letter and digit", combining],
  ["numeric HTML entities", entities],
  ["named HTML entities", namedEntities],
  ["a line break inside", brokenLine],
];

const CARD_SEPARATORS: [string, string][] = [
  ["dots", "."],
  ["underscores", "_"],
  ["slashes", "/"],
  ["en dashes", "\u2013"],
  ["tabs", "\t"],
  ["no-break spaces", "\u00a0"],
];

const base64 = (text: string) => Buffer.from(text, "utf8").toString("base64");
const DATA_FORMS: [string, (v: string) => string][] = [
  ["base64", (v) => `data:text/plain;base64,${base64(`mail ${v}`)}`],
  [
    "base64 broken into lines",
    (v) => {
      const b = base64(`please mail ${v} today`);
      return `data:text/plain;base64,${b.slice(0, 8)}\r\n${b.slice(8, 20)}\n${b.slice(20)}`;
    },
  ],
  [
    "base64 in the URL-safe alphabet",
    (v) => `data:text/plain;base64,${Buffer.from(`mail ${v} ??>>`).toString("base64url")}`,
  ],
  [
    "UTF-16LE text",
    (v) =>
      `data:text/plain;charset=utf-16le;base64,${Buffer.from(`mail ${v}`, "utf16le").toString("base64")}`,
  ],
  [
    "UTF-16 text with a byte-order mark",
    (v) =>
      `data:text/plain;charset=utf-16;base64,${Buffer.from(`\ufeffmail ${v}`, "utf16le").toString("base64")}`,
  ],
  ["percent-encoding", (v) => `data:text/plain,${encodeURIComponent(`mail ${v}`)}`],
  ["no media type", (v) => `data:;base64,${base64(`mail ${v}`)}`],
];

function casesFor(label: string, value: string): Case[] {
  const cases: Case[] = [{ name: `${label} as written`, value, body: asked(value) }];
  for (const [name, disguise] of DISGUISES) {
    const written = disguise(value);
    if (written !== value) cases.push({ name: `${label} written with ${name}`, value, body: asked(written) });
  }
  for (const [name, form] of DATA_FORMS) {
    cases.push({
      name: `${label} in a data: URL file part, ${name}`,
      value,
      body: request([user([{ type: "file", file: { filename: "note.txt", file_data: form(value) } }])]),
    });
  }
  const cut = Math.floor(value.length / 2);
  cases.push(
    {
      name: `${label} split across two text parts of one message`,
      value,
      body: request([
        user([
          { type: "text", text: `mail ${value.slice(0, cut)}` },
          { type: "text", text: value.slice(cut) },
        ]),
      ]),
    },
    {
      name: `${label} split across two user messages`,
      value,
      body: request([user(`mail ${value.slice(0, cut)}`), user(value.slice(cut))]),
    },
  );
  // A duplicated key: the first copy carries the value, the last (which a parser keeps) is safe.
  const said = JSON.stringify(`mail ${value}`);
  const m = JSON.stringify(MODEL);
  cases.push(
    {
      name: `${label} in the first copy of a duplicated content`,
      value,
      body: `{"model":${m},"messages":[{"role":"user","content":${said},"content":"safe"}]}`,
    },
    {
      name: `${label} in the first of two messages arrays`,
      value,
      body: `{"model":${m},"messages":[{"role":"user","content":${said}}],"messages":[{"role":"user","content":"safe"}]}`,
    },
    {
      name: `${label} in the first copy of a text part's text`,
      value,
      body: `{"model":${m},"messages":[{"role":"user","content":[{"type":"text","text":${said},"text":"safe"}]}]}`,
    },
    {
      name: `${label} in the first copy of a tools list`,
      value,
      body: `{"model":${m},"messages":[{"role":"user","content":"hi"}],"tools":${JSON.stringify([tool(`mail ${value}`)])},"tools":[]}`,
    },
    {
      name: `${label} in the first copy of a role's message, the key written with an escape`,
      value,
      body: `{"model":${m},"messages":[{"role":"user","cont\\u0065nt":${said},"content":"safe"}]}`,
    },
    {
      name: `${label} in the first copy of a key inside tool-call arguments`,
      value,
      body: request([
        user("hi"),
        {
          role: "assistant",
          content: null,
          tool_calls: [
            {
              id: "call_1",
              type: "function",
              function: { name: "send", arguments: `{"to":${said},"to":"x"}` },
            },
          ],
        },
      ]),
    },
  );
  // Free text in fields the scan skips because they are not prose.
  const free = `mail ${value}`;
  cases.push(
    { name: `${label} as a content part's type`, value, body: request([user([{ type: free, text: "hi" }])]) },
    {
      name: `${label} as a tool message's tool_call_id`,
      value,
      body: request([
        user("hi"),
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "call_1", type: "function", function: { name: "send", arguments: "{}" } }],
        },
        { role: "tool", tool_call_id: free, content: "done" },
      ]),
    },
    {
      name: `${label} as a tool call's id`,
      value,
      body: request([
        user("hi"),
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: free, type: "function", function: { name: "send", arguments: "{}" } }],
        },
      ]),
    },
    { name: `${label} as service_tier`, value, body: asked("hello", { service_tier: free }) },
    {
      name: `${label} in the provider preferences' order`,
      value,
      body: asked("hello", { provider: { order: [free] } }),
    },
    {
      name: `${label} in a member of stream_options`,
      value,
      body: asked("hello", { stream_options: { include_usage: true, note: free } }),
    },
    { name: `${label} as reasoning_effort`, value, body: asked("hello", { reasoning_effort: free }) },
    { name: `${label} as reasoning.effort`, value, body: asked("hello", { reasoning: { effort: free } }) },
    { name: `${label} in modalities`, value, body: asked("hello", { modalities: [free] }) },
    { name: `${label} as a logit_bias key`, value, body: asked("hello", { logit_bias: { [free]: 1 } }) },
    { name: `${label} as a transforms entry`, value, body: asked("hello", { transforms: [free] }) },
    {
      name: `${label} in a link's query`,
      value,
      body: request([
        user([
          {
            type: "image_url",
            image_url: { url: `https://img.example.org/a.png?to=${encodeURIComponent(value)}` },
          },
        ]),
      ]),
    },
    {
      name: `${label} in an encrypted reasoning detail's data`,
      value,
      body: request([
        user("hi"),
        {
          role: "assistant",
          content: "ok",
          reasoning_details: [{ type: "reasoning.encrypted", data: free }],
        },
      ]),
    },
    {
      name: `${label} in input_audio's data`,
      value,
      body: request([user([{ type: "input_audio", input_audio: { data: free, format: "wav" } }])]),
    },
  );
  return cases;
}

function tool(description: string) {
  return {
    type: "function",
    function: { name: "send", description, parameters: { type: "object", properties: {} } },
  };
}

const CARD_CASES: Case[] = CARD_SEPARATORS.map(([name, sep]) => ({
  name: `a card number split by ${name}`,
  value: CARD,
  body: asked(CARD.replaceAll(" ", sep)),
}));

const CASES: Case[] = [
  ...casesFor("an e-mail address", EMAIL),
  ...casesFor("a card number", CARD),
  ...casesFor("a custom pattern's match", CUSTOM),
  ...CARD_CASES,
];

/* The embeddings door (docs/gateway.md#embeddings): the same disguises, applied to `input`. */

const EMBEDDING_MODEL = "openai/text-embedding-3-small";
const embedding = (input: unknown, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ model: EMBEDDING_MODEL, input, ...extra });

function embeddingCasesFor(label: string, value: string): Case[] {
  const cases: Case[] = [
    { name: `${label} as written`, value, body: embedding(`mail ${value} today`) },
    { name: `${label} in the second input of an array`, value, body: embedding(["hello", `mail ${value}`]) },
    { name: `${label} in user`, value, body: embedding("hello", { user: `mail ${value}` }) },
  ];
  for (const [name, disguise] of DISGUISES) {
    const written = disguise(value);
    if (written !== value)
      cases.push({
        name: `${label} written with ${name}`,
        value,
        body: embedding([`mail ${written} today`]),
      });
  }
  for (const [name, form] of DATA_FORMS)
    cases.push({ name: `${label} as a data: URL input, ${name}`, value, body: embedding(form(value)) });
  const cut = Math.floor(value.length / 2);
  const said = JSON.stringify(`mail ${value}`);
  const m = JSON.stringify(EMBEDDING_MODEL);
  cases.push(
    {
      name: `${label} split across two inputs`,
      value,
      body: embedding([`mail ${value.slice(0, cut)}`, value.slice(cut)]),
    },
    {
      name: `${label} in the first copy of a duplicated input`,
      value,
      body: `{"model":${m},"input":${said},"input":"safe"}`,
    },
    {
      name: `${label} in the first of two input arrays`,
      value,
      body: `{"model":${m},"input":[${said}],"input":["safe"]}`,
    },
    {
      name: `${label} in the first copy of input, the key written with an escape`,
      value,
      body: `{"model":${m},"inp\\u0075t":${said},"input":"safe"}`,
    },
    {
      name: `${label} in a pass-through field`,
      value,
      body: embedding("hello", { metadata: { note: `mail ${value}` } }),
    },
  );
  return cases;
}

const EMBEDDING_CASES: Case[] = [
  ...embeddingCasesFor("an e-mail address", EMAIL),
  ...embeddingCasesFor("a card number", CARD),
  ...embeddingCasesFor("a custom pattern's match", CUSTOM),
  ...CARD_SEPARATORS.map(([name, sep]) => ({
    name: `a card number split by ${name}`,
    value: CARD,
    body: embedding(`mail ${CARD.replaceAll(" ", sep)} today`),
  })),
];

/** A door of the service: how one request is sent through it. */
interface Door {
  name: string;
  path: string;
  chunked: boolean;
}

const DOORS: Door[] = [
  { name: "chat completions, served directly", path: "/api/v1/chat/completions", chunked: false },
  { name: "chat completions, through the app", path: "/api/v1/chat/completions", chunked: true },
];

/** Whether a raw JSON text has an object with the same key twice (decoded), at any depth. */
function hasDuplicateKey(raw: string): boolean {
  const seen: Set<string>[] = [];
  const tokens = raw.matchAll(/"(?:[^"\\]|\\.)*"\s*:|[{}]/g);
  for (const m of tokens) {
    const t = m[0];
    if (t === "{") seen.push(new Set());
    else if (t === "}") seen.pop();
    else {
      const key = JSON.parse(t.slice(0, t.lastIndexOf(":")).trim()) as string;
      const top = seen.at(-1);
      if (top?.has(key)) return true;
      top?.add(key);
    }
  }
  return false;
}

describe("no way around a filter (docs/behaviour.md#what-reaches-the-provider)", () => {
  let provider: RecordingProvider;
  let server: TestServer;
  let keys: Record<"block" | "redact", MadeKey>;
  let managementKey: string;

  before(async () => {
    provider = await startRecordingProvider();
    const catalog = loadCatalogFile(DEFAULT_CONFIG_FILE);
    server = await startTestServer({
      catalog,
      upstreamUrl: provider.url,
      providerKeys: Object.fromEntries(catalog.providers.map((p) => [p.id, `upstream-key-${p.id}`])),
    });
    const org = await server.newOrg();
    managementKey = org.key;
    const steps = orgSteps(server, org);
    const made: Partial<Record<"block" | "redact", MadeKey>> = {};
    for (const action of ["block", "redact"] as const) {
      const key = await steps.key({ name: action });
      const g = await steps.guardrail({
        name: action,
        content_filter_builtins: [
          { slug: "email", action },
          { slug: "credit-card", action },
        ],
        content_filters: [{ pattern: CUSTOM_PATTERN, action, label: "[PROJECT]" }],
      });
      assert.equal(await steps.assignKeys(g.id, [key.hash]), 1);
      made[action] = key;
    }
    keys = made as Record<"block" | "redact", MadeKey>;
  });
  after(async () => {
    await server?.close();
    await provider?.close();
  });

  /** Sends a case through a door and returns the answer with what the provider received for it. */
  async function send(
    door: Door,
    key: MadeKey,
    body: string,
  ): Promise<{ answer: Answer; received: string[] }> {
    const before = provider.bodies.length;
    const answer = await postRaw(server.origin, door.path, key.secret, body, door.chunked);
    return { answer, received: provider.bodies.slice(before) };
  }

  test("the recorder sees a value sent plainly under no filter: the checks below can fail", async () => {
    const steps = orgSteps(server, { ...(await server.newOrg()) });
    const open = await steps.key({ name: "open" });
    for (const door of DOORS) {
      const { answer, received } = await send(door, open, asked(EMAIL));
      assert.equal(answer.status, 200, answer.text);
      assert.equal(received.length, 1);
      assert.ok(leaks(skeleton(stringsOf(received[0] as string)), EMAIL));
    }
    const embeddings: Door = { name: "embeddings", path: "/api/v1/embeddings", chunked: false };
    const { answer, received } = await send(embeddings, open, embedding([`mail ${EMAIL}`]));
    assert.equal(answer.status, 200, answer.text);
    assert.equal(received.length, 1);
    assert.ok(leaks(skeleton(stringsOf(received[0] as string)), EMAIL));
  });

  for (const door of DOORS) {
    describe(door.name, () => {
      for (const c of CASES) {
        test(`block: ${c.name} reaches the provider in no form`, async () => {
          const { answer, received } = await send(door, keys.block, c.body);
          assert.ok(answer.status >= 400 && answer.status < 500, `${answer.status} ${answer.text}`);
          assert.deepEqual(received, [], "a refused request forwards nothing");
        });

        test(`redact: no run of the characters of ${c.name} reaches the provider`, async () => {
          const { answer, received } = await send(door, keys.redact, c.body);
          if (answer.status !== 200) {
            assert.ok(answer.status >= 400 && answer.status < 500, `${answer.status} ${answer.text}`);
            assert.deepEqual(received, []);
            return;
          }
          assert.equal(received.length, 1);
          const raw = received[0] as string;
          assert.doesNotThrow(() => JSON.parse(raw), "the forwarded body is JSON");
          assert.equal(hasDuplicateKey(raw), false, "the forwarded body has no duplicated key");
          assert.equal(leaks(skeleton(stringsOf(raw)), c.value), undefined, raw);
        });
      }
    });
  }

  describe("embeddings (docs/gateway.md#embeddings)", () => {
    const door: Door = { name: "embeddings", path: "/api/v1/embeddings", chunked: false };
    for (const c of EMBEDDING_CASES) {
      test(`block: ${c.name} reaches the provider in no form`, async () => {
        const { answer, received } = await send(door, keys.block, c.body);
        assert.ok(answer.status >= 400 && answer.status < 500, `${answer.status} ${answer.text}`);
        assert.deepEqual(received, [], "a refused request forwards nothing");
      });

      test(`redact: no run of the characters of ${c.name} reaches the provider`, async () => {
        const { answer, received } = await send(door, keys.redact, c.body);
        if (answer.status !== 200) {
          assert.ok(answer.status >= 400 && answer.status < 500, `${answer.status} ${answer.text}`);
          assert.deepEqual(received, []);
          return;
        }
        assert.equal(received.length, 1);
        const raw = received[0] as string;
        assert.doesNotThrow(() => JSON.parse(raw), "the forwarded body is JSON");
        assert.equal(hasDuplicateKey(raw), false, "the forwarded body has no duplicated key");
        assert.equal(leaks(skeleton(stringsOf(raw)), c.value), undefined, raw);
      });
    }
  });

  describe("the dry run agrees with the embeddings door (docs/gateway.md#dry-run)", () => {
    const door: Door = { name: "embeddings", path: "/api/v1/embeddings", chunked: false };
    for (const c of EMBEDDING_CASES) {
      test(`redact: ${c.name} is judged alike, and the dry run's request is what the provider got`, async () => {
        const { answer, received } = await send(door, keys.redact, c.body);
        const dry = await postRaw(
          server.origin,
          "/api/v1/guardrails/evaluate",
          managementKey,
          `{"key_hash":${JSON.stringify(keys.redact.hash)},"api":"embeddings",${c.body.slice(1)}`,
          false,
        );
        if (answer.status === 200) {
          assert.equal(dry.status, 200, dry.text);
          const data = JSON.parse(dry.text).data;
          assert.equal(data.allowed, true);
          const sent = JSON.parse(received[0] as string);
          assert.deepEqual(data.request.input, sent.input);
          assert.deepEqual(data.request.user, sent.user);
        } else if (dry.status === 200) {
          const data = JSON.parse(dry.text).data;
          assert.equal(data.allowed, false);
          assert.equal(data.status, answer.status);
        } else {
          assert.equal(dry.status, answer.status, dry.text);
        }
      });
    }
  });

  describe("the dry run agrees with the gateway", () => {
    for (const c of CASES) {
      test(`redact: ${c.name} is judged alike, and the dry run's request is what the provider got`, async () => {
        const door = DOORS[0] as Door;
        const { answer, received } = await send(door, keys.redact, c.body);
        const dry = await postRaw(
          server.origin,
          "/api/v1/guardrails/evaluate",
          managementKey,
          `{"key_hash":${JSON.stringify(keys.redact.hash)},${c.body.slice(1)}`,
          false,
        );
        if (answer.status === 200) {
          assert.equal(dry.status, 200, dry.text);
          const data = JSON.parse(dry.text).data;
          assert.equal(data.allowed, true);
          const sent = JSON.parse(received[0] as string);
          assert.deepEqual(data.request.messages, sent.messages);
        } else if (dry.status === 200) {
          const data = JSON.parse(dry.text).data;
          assert.equal(data.allowed, false);
          assert.equal(data.status, answer.status);
        } else {
          assert.equal(dry.status, answer.status, dry.text);
        }
      });
    }
  });
});
