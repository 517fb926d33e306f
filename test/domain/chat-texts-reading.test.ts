import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type ChatBody, collectTexts, replaceTexts, textPointer } from "../../src/domain/chat-texts.js";

/**
 * What is scanned is what is sent: JSON text inside strings, `data:` URLs in every form a provider
 * decodes, and the allow-listed fields, which must hold what they are (docs/gateway.md#what-is-scanned).
 */

const EMAIL = "jane@example.com";

/** Replaces every occurrence of `find` in every text, as a redact filter would. */
function redactAll(body: ChatBody, find: string, label: string): ChatBody {
  const texts = collectTexts(body);
  return replaceTexts(
    body,
    texts
      .filter((t) => t.text.includes(find))
      .map((t) => ({ text: t, value: t.text.replaceAll(find, label) })),
    texts,
  );
}

const withArguments = (args: string): ChatBody => ({
  model: "m",
  messages: [
    {
      role: "assistant",
      tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: args } }],
    },
  ],
});

describe("JSON text inside a string repeats a key: every copy is scanned and redacted (docs/behaviour.md#duplicate-keys)", () => {
  it("both copies of a repeated key in tool-call arguments are texts, and both are redacted", () => {
    const args = `{"to":"${EMAIL}","to":"safe","note":{"to":"x ${EMAIL}","to":"y ${EMAIL}"}}`;
    const body = withArguments(args);
    const texts = collectTexts(body).filter((t) => t.kind === "text");
    assert.deepEqual(
      texts.map((t) => t.text),
      [EMAIL, "safe", `x ${EMAIL}`, `y ${EMAIL}`],
    );
    const out = redactAll(body, EMAIL, "[EMAIL]");
    const calls = out.messages[0]?.tool_calls as { function: { arguments: string } }[];
    const sent = calls[0]?.function.arguments ?? "";
    assert.equal(sent, '{"to":"[EMAIL]","to":"safe","note":{"to":"x [EMAIL]","to":"y [EMAIL]"}}');
    assert.equal(sent.includes("jane"), false);
  });

  it("both copies of a repeated key in a JSON data: URL are scanned and redacted", () => {
    const payload = encodeURIComponent(`{"a":"${EMAIL}","a":"ok"}`);
    const body: ChatBody = {
      model: "m",
      messages: [
        {
          role: "user",
          content: [{ type: "file", file: { file_data: `data:application/json,${payload}` } }],
        },
      ],
    };
    const texts = collectTexts(body).filter((t) => t.kind === "text");
    assert.deepEqual(
      texts.map((t) => [textPointer(t), t.text]),
      [
        ["/messages/0/content/0/file/file_data", EMAIL],
        ["/messages/0/content/0/file/file_data", "ok"],
      ],
    );
    const out = redactAll(body, EMAIL, "[EMAIL]");
    const parts = out.messages[0]?.content as { file: { file_data: string } }[];
    const sent = decodeURIComponent((parts[0]?.file.file_data ?? "").slice("data:application/json,".length));
    assert.equal(sent, '{"a":"[EMAIL]","a":"ok"}');
  });
});

/** A request carrying one data: URL as a file's payload. */
const withFile = (url: string): ChatBody => ({
  model: "m",
  messages: [{ role: "user", content: [{ type: "file", file: { file_data: url } }] }],
});
function fileOf(body: ChatBody): string {
  const parts = body.messages[0]?.content as { file: { file_data: string } }[];
  return parts[0]?.file.file_data ?? "";
}
/** The bytes of a percent-encoded payload. */
const percentBytes = (p: string) =>
  Buffer.from(
    p.replace(/%([0-9A-F]{2})/gi, (_, h: string) => String.fromCharCode(Number.parseInt(h, 16))),
    "latin1",
  );

/** Text whose base64 holds `+` and `/` (and so `-` and `_` in the URL-safe alphabet). */
const TEXT = `Contact: ${EMAIL} ??>>~~ ünï`;
const utf8 = Buffer.from(TEXT, "utf8");
const std = utf8.toString("base64");
const urlSafe = utf8.toString("base64url");
const lines = (b64: string, sep: string) => b64.match(/.{1,8}/g)?.join(sep) ?? "";

/** Each form a provider decodes, with the charset its redacted payload must be read back in. */
const FORMS: { label: string; url: string; read: (payload: string) => string }[] = [
  {
    label: "base64 with CRLF line breaks (RFC 2045)",
    url: `data:text/plain;base64,${lines(std, "\r\n")}`,
    read: (p) => Buffer.from(p, "base64").toString("utf8"),
  },
  {
    label: "base64 with spaces",
    url: `data:text/plain;base64,${lines(std, " ")}`,
    read: (p) => Buffer.from(p, "base64").toString("utf8"),
  },
  {
    label: "URL-safe base64 without padding",
    url: `data:text/plain;base64,${urlSafe}`,
    read: (p) => Buffer.from(p, "base64").toString("utf8"),
  },
  {
    label: "base64 with its padding percent-escaped",
    url: `data:text/plain;base64,${std.replaceAll("=", "%3D").replaceAll("+", "%2B")}`,
    read: (p) => Buffer.from(p, "base64").toString("utf8"),
  },
  {
    label: "charset=utf-16le, base64",
    url: `data:text/plain;charset=utf-16le;base64,${Buffer.from(TEXT, "utf16le").toString("base64")}`,
    read: (p) => Buffer.from(p, "base64").toString("utf16le"),
  },
  {
    label: "charset=utf-16be, base64",
    url: `data:text/plain;charset=UTF-16BE;base64,${Buffer.from(TEXT, "utf16le").swap16().toString("base64")}`,
    read: (p) => Buffer.from(p, "base64").swap16().toString("utf16le"),
  },
  {
    label: "no charset, a UTF-16LE byte-order mark",
    url: `data:text/plain;base64,${Buffer.from(`\ufeff${TEXT}`, "utf16le").toString("base64")}`,
    read: (p) => Buffer.from(p, "base64").toString("utf16le").slice(1),
  },
  {
    label: "charset=utf-16 with a big-endian byte-order mark, percent-encoded",
    url: `data:text/plain;charset=utf-16,${[...Buffer.from(`\ufeff${TEXT}`, "utf16le").swap16()].map((b) => `%${b.toString(16).padStart(2, "0")}`).join("")}`,
    read: (p) => percentBytes(p).swap16().toString("utf16le").slice(1),
  },
  {
    label: "percent-encoded UTF-8 with a stray %",
    url: `data:text/plain,100%25 ${encodeURIComponent(TEXT)} 5%`,
    read: (p) => decodeURIComponent(p).replace("100% ", "").replace(/ 5%$/, ""),
  },
];

describe("every data: URL form a provider decodes is decoded and scanned (docs/gateway.md#data-urls)", () => {
  it("the forms carry + and / (or - and _) in their base64, so the alphabet matters", () => {
    assert.ok(std.includes("+") && std.includes("/"), std);
    assert.ok(urlSafe.includes("-") && urlSafe.includes("_"), urlSafe);
  });

  for (const { label, url, read } of FORMS) {
    it(`${label}: the address is a text (a block filter sees it), and a redaction leaves no character of it`, () => {
      const body = withFile(url);
      const texts = collectTexts(body);
      assert.equal(
        texts.some((t) => t.text.includes(EMAIL)),
        true,
        `${label}: ${JSON.stringify(texts.map((t) => t.text))}`,
      );
      const out = redactAll(body, EMAIL, "[EMAIL]");
      const sent = fileOf(out);
      const comma = sent.indexOf(",");
      assert.equal(sent.slice(0, comma + 1), url.slice(0, url.indexOf(",") + 1), "the header is kept");
      const decoded = read(sent.slice(comma + 1));
      assert.ok(decoded.includes("[EMAIL]"), `${label}: ${decoded}`);
      assert.equal(decoded.includes("jane"), false);
      assert.equal(decoded.includes("example.com"), false);
    });
  }

  it("base64 that decoders read differently is forwarded re-encoded canonically even when nothing is redacted", () => {
    for (const url of [`data:text/plain;base64,${urlSafe}`, `data:text/plain;base64,${lines(std, "\n")}`]) {
      const body = withFile(url);
      const out = replaceTexts(body, [], collectTexts(body));
      assert.equal(fileOf(out), `data:text/plain;base64,${std}`);
    }
    const canonical = withFile(`data:text/plain;base64,${std}`);
    assert.equal(
      replaceTexts(canonical, [], collectTexts(canonical)),
      canonical,
      "canonical is left as sent",
    );
  });

  const UNDECODABLE: [string, string][] = [
    ["a character outside base64", `data:text/plain;base64,${std.slice(0, 8)}*${std.slice(8)}`],
    [
      "both base64 alphabets at once",
      `data:text/plain;base64,${std}${urlSafe.slice(0, 4).replace(/./, "-")}`,
    ],
    ["base64 of impossible length", "data:text/plain;base64,SmFuZUFBA"],
    ["a charset the gateway does not read", `data:text/plain;charset=shift_jis,${encodeURIComponent(TEXT)}`],
    [
      "bytes that are not its declared UTF-8",
      `data:text/plain;charset=utf-8;base64,${Buffer.from([0x6a, 0xff, 0x40]).toString("base64")}`,
    ],
    [
      "UTF-16 without a byte-order mark",
      `data:text/plain;charset=utf-16;base64,${Buffer.from(TEXT, "utf16le").toString("base64")}`,
    ],
    [
      "UTF-16 of an odd length",
      `data:text/plain;charset=utf-16le;base64,${Buffer.from("abc").toString("base64")}`,
    ],
  ];
  for (const [label, url] of UNDECODABLE) {
    it(`a text payload that cannot be decoded is a 400 naming its place: ${label}`, () => {
      assert.throws(
        () => collectTexts(withFile(url)),
        (err: unknown) => {
          const issues = (err as { metadata?: { issues?: { path: string }[] } }).metadata?.issues ?? [];
          assert.equal(issues[0]?.path, "/messages/0/content/0/file/file_data", JSON.stringify(err));
          return true;
        },
      );
    });
  }

  it("binary data: URLs are not decoded, whatever their form", () => {
    assert.deepEqual(
      collectTexts(withFile(`data:image/png;base64,${lines(std, "\n")}*`)).map((t) => t.text),
      [],
    );
  });
});

describe("an allow-listed field holds only what it is; free text there is a 400 naming it (docs/gateway.md#what-is-scanned)", () => {
  const FREE = "mail jane@example.com now";
  const msg = (extra: Record<string, unknown>) => ({ role: "user", content: "hi", ...extra });
  const CASES: [string, Record<string, unknown>, string][] = [
    ["model", { model: FREE }, "/model"],
    ["models", { models: ["a/b", FREE] }, "/models/1"],
    ["provider.order", { provider: { order: [FREE] } }, "/provider/order/0"],
    ["provider.sort", { provider: { sort: FREE } }, "/provider/sort"],
    ["an unknown provider member", { provider: { note: "x" } }, "/provider/note"],
    ["provider.max_price", { provider: { max_price: { prompt: FREE } } }, "/provider/max_price/prompt"],
    ["provider.data_collection", { provider: { data_collection: "maybe" } }, "/provider/data_collection"],
    ["route", { route: FREE }, "/route"],
    ["transforms", { transforms: [FREE] }, "/transforms/0"],
    ["service_tier", { service_tier: FREE }, "/service_tier"],
    ["reasoning_effort", { reasoning_effort: FREE }, "/reasoning_effort"],
    ["verbosity", { verbosity: FREE }, "/verbosity"],
    ["modalities", { modalities: [FREE] }, "/modalities/0"],
    ["audio.voice", { audio: { voice: FREE, format: "mp3" } }, "/audio/voice"],
    [
      "stream_options member",
      { stream_options: { include_usage: true, note: FREE } },
      "/stream_options/note",
    ],
    ["logit_bias key", { logit_bias: { [FREE]: 1 } }, `/logit_bias/${FREE}`],
    ["logit_bias value", { logit_bias: { "50256": FREE } }, "/logit_bias/50256"],
    ["reasoning.effort", { reasoning: { effort: FREE } }, "/reasoning/effort"],
    ["tool_choice as a string", { tool_choice: FREE }, "/tool_choice"],
    ["function_call as a string", { function_call: FREE }, "/function_call"],
    [
      "a content part's type",
      { messages: [msg({ content: [{ type: FREE, text: "x" }] })] },
      "/messages/0/content/0/type",
    ],
    [
      "a schema's type list",
      { tools: [{ type: "function", function: { name: "f", parameters: { type: ["string", FREE] } } }] },
      "/tools/0/function/parameters/type/1",
    ],
    [
      "a tool call id",
      {
        messages: [
          msg({
            role: "assistant",
            tool_calls: [{ id: FREE, type: "function", function: { name: "f", arguments: "{}" } }],
          }),
        ],
      },
      "/messages/0/tool_calls/0/id",
    ],
    ["tool_call_id", { messages: [msg({ role: "tool", tool_call_id: FREE })] }, "/messages/0/tool_call_id"],
    [
      "file_id",
      { messages: [msg({ content: [{ type: "file", file: { file_id: FREE } }] })] },
      "/messages/0/content/0/file/file_id",
    ],
    [
      "signature",
      { messages: [msg({ reasoning_details: [{ type: "reasoning.text", text: "t", signature: FREE }] })] },
      "/messages/0/reasoning_details/0/signature",
    ],
    ["encrypted_content", { messages: [msg({ encrypted_content: FREE })] }, "/messages/0/encrypted_content"],
    [
      "input_audio.data",
      { messages: [msg({ content: [{ type: "input_audio", input_audio: { data: FREE, format: "wav" } }] })] },
      "/messages/0/content/0/input_audio/data",
    ],
    [
      "encrypted reasoning data",
      { messages: [msg({ reasoning_details: [{ type: "reasoning.encrypted", data: FREE }] })] },
      "/messages/0/reasoning_details/0/data",
    ],
  ];
  for (const [label, fields, path] of CASES) {
    it(`${label}: free text is a 400 at ${path}`, () => {
      const body = { model: "acme/chat", messages: [{ role: "user", content: "hi" }], ...fields } as ChatBody;
      assert.throws(
        () => collectTexts(body),
        (err: unknown) => {
          const issues = (err as { metadata?: { issues?: { path: string }[] } }).metadata?.issues ?? [];
          assert.equal(issues[0]?.path, path, JSON.stringify(err));
          return true;
        },
      );
    });
  }

  it("what real clients send in these fields passes", () => {
    const body = {
      model: "openai/gpt-4o:online",
      models: ["anthropic/claude-sonnet-4.5", "~openai/gpt-latest"],
      provider: {
        order: ["openai", "azure"],
        allow_fallbacks: false,
        data_collection: "deny",
        zdr: true,
        sort: { by: "throughput", partition: "none" },
        quantizations: ["fp8"],
        max_price: { prompt: 1, completion: "2.5" },
        preferred_min_throughput: { p90: 20 },
      },
      transforms: ["middle-out"],
      service_tier: "auto",
      reasoning: { effort: "high", summary: "auto" },
      stream_options: { include_usage: true },
      logit_bias: { "50256": -100 },
      audio: { voice: "alloy", format: "wav" },
      modalities: ["text", "audio"],
      tool_choice: "required",
      messages: [
        {
          role: "assistant",
          tool_calls: [
            {
              id: "toolu_01A09q90qw90lq917835lq9",
              type: "function",
              function: { name: "f", arguments: "{}" },
            },
          ],
          reasoning_details: [{ type: "reasoning.encrypted", data: "gAAAAABo-_x1==", id: "rs_1" }],
        },
        { role: "tool", tool_call_id: "call_abc.123:x", content: "ok" },
      ],
    } as ChatBody;
    assert.doesNotThrow(() => collectTexts(body));
  });

  it("an http(s) link in image_url is scanned decoded, as a name: an address in its query is found", () => {
    const body: ChatBody = {
      model: "m",
      messages: [
        {
          role: "user",
          content: [
            { type: "image_url", image_url: { url: "https://x.test/a.png?to=jane.doe%40example.com" } },
          ],
        },
      ],
    };
    const link = collectTexts(body).find((t) => textPointer(t) === "/messages/0/content/0/image_url/url");
    assert.deepEqual([link?.text, link?.kind], ["https://x.test/a.png?to=jane.doe@example.com", "name"]);
  });
});
