import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  type ChatBody,
  type ChatText,
  collectTexts,
  MAX_NESTING,
  MAX_TEXTS,
  REQUEST_ROLE,
  replaceTexts,
  textPointer,
} from "../../src/domain/chat-texts.js";
import { AppError } from "../../src/domain/errors.js";

const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");

/** Every text by its JSON pointer (a pointer can hold several: the tokens of one JSON string). */
function byPointer(texts: ChatText[]): Map<string, ChatText[]> {
  const out = new Map<string, ChatText[]>();
  for (const t of texts) out.set(textPointer(t), [...(out.get(textPointer(t)) ?? []), t]);
  return out;
}

/** Replaces every occurrence of `find` in every text, as a redact filter would. */
function redactAll(body: ChatBody, find: string, label: string) {
  const texts = collectTexts(body);
  return replaceTexts(
    body,
    texts
      .filter((t) => t.text.includes(find))
      .map((t) => ({ text: t, value: t.text.replaceAll(find, label) })),
  );
}

/** A request with a marker in every place the walk must read (docs/gateway.md#what-is-scanned). */
function everyField(mark: string): ChatBody {
  return {
    model: "acme/chat",
    messages: [
      { role: "system", content: `sys ${mark}`, name: "ops" },
      {
        role: "user",
        name: "jane",
        content: [
          { type: "text", text: `text ${mark}` },
          { type: "input_text", input_text: `input ${mark}` },
          {
            type: "file",
            file: { filename: "notes.txt", file_data: `data:text/plain;base64,${b64(`b64 ${mark}`)}` },
          },
          {
            type: "file",
            file: { file_data: `data:application/json,${encodeURIComponent(`{"n":"${mark}"}`)}` },
          },
        ],
      },
      {
        role: "assistant",
        content: [
          { type: "output_text", text: `out ${mark}` },
          { type: "refusal", refusal: `part refusal ${mark}` },
        ],
        refusal: `refusal ${mark}`,
        reasoning: `reasoning ${mark}`,
        reasoning_content: `reasoning content ${mark}`,
        reasoning_details: [
          { type: "reasoning.text", text: `detail ${mark}` },
          { type: "reasoning.summary", summary: `summary ${mark}` },
        ],
        tool_calls: [
          {
            id: "call_1",
            type: "function",
            function: { name: "mail", arguments: JSON.stringify({ to: `x\n${mark}`, n: 7 }) },
          },
        ],
        function_call: { name: "mail", arguments: JSON.stringify({ cc: mark }) },
      },
      { role: "tool", tool_call_id: "call_1", content: `tool ${mark}` },
    ],
    tools: [
      {
        type: "function",
        function: {
          name: "mail",
          description: `tool description ${mark}`,
          parameters: {
            type: "object",
            properties: { to: { type: "string", description: `param ${mark}` } },
            required: ["to"],
          },
        },
      },
    ],
    functions: [{ name: "legacy", description: `legacy ${mark}` }],
    tool_choice: { type: "function", function: { name: "mail" } },
    response_format: {
      type: "json_schema",
      json_schema: {
        name: "answer",
        description: `format ${mark}`,
        schema: {
          type: "object",
          properties: {
            who: {
              type: "string",
              description: `who ${mark}`,
              enum: [`enum ${mark}`],
              examples: [`ex ${mark}`],
            },
          },
        },
      },
    },
    prediction: { type: "content", content: `predicted ${mark}` },
    stop: [`stop ${mark}`],
    user: `user ${mark}`,
    metadata: { note: `meta ${mark}` },
    x_vendor_hint: { text: `vendor ${mark}` },
  };
}

describe("the texts of a chat request (docs/gateway.md#what-is-scanned)", () => {
  it("every string the model or provider reads is a text, each at its place, with its role", () => {
    const texts = byPointer(collectTexts(everyField("MARK")));
    const at = (pointer: string) => {
      const found = texts.get(pointer);
      assert.ok(found, `no text at ${pointer}`);
      return found;
    };
    const expected: [string, string, string, number | null][] = [
      ["/messages/0/content", "sys MARK", "system", 0],
      ["/messages/1/content/0/text", "text MARK", "user", 1],
      ["/messages/1/content/1/input_text", "input MARK", "user", 1],
      ["/messages/1/content/2/file/file_data", "b64 MARK", "user", 1],
      ["/messages/2/content/0/text", "out MARK", "assistant", 2],
      ["/messages/2/content/1/refusal", "part refusal MARK", "assistant", 2],
      ["/messages/2/refusal", "refusal MARK", "assistant", 2],
      ["/messages/2/reasoning", "reasoning MARK", "assistant", 2],
      ["/messages/2/reasoning_content", "reasoning content MARK", "assistant", 2],
      ["/messages/2/reasoning_details/0/text", "detail MARK", "assistant", 2],
      ["/messages/2/reasoning_details/1/summary", "summary MARK", "assistant", 2],
      ["/messages/3/content", "tool MARK", "tool", 3],
      ["/tools/0/function/description", "tool description MARK", REQUEST_ROLE, null],
      ["/tools/0/function/parameters/properties/to/description", "param MARK", REQUEST_ROLE, null],
      ["/functions/0/description", "legacy MARK", REQUEST_ROLE, null],
      ["/response_format/json_schema/description", "format MARK", REQUEST_ROLE, null],
      ["/response_format/json_schema/schema/properties/who/description", "who MARK", REQUEST_ROLE, null],
      ["/response_format/json_schema/schema/properties/who/enum/0", "enum MARK", REQUEST_ROLE, null],
      ["/response_format/json_schema/schema/properties/who/examples/0", "ex MARK", REQUEST_ROLE, null],
      ["/prediction/content", "predicted MARK", REQUEST_ROLE, null],
      ["/stop/0", "stop MARK", REQUEST_ROLE, null],
      ["/user", "user MARK", REQUEST_ROLE, null],
      ["/metadata/note", "meta MARK", REQUEST_ROLE, null],
      ["/x_vendor_hint/text", "vendor MARK", REQUEST_ROLE, null],
    ];
    for (const [pointer, text, role, message] of expected) {
      const [t, ...more] = at(pointer);
      assert.equal(more.length, 0, pointer);
      assert.deepEqual(
        { text: t?.text, role: t?.role, message: t?.message, kind: t?.kind },
        {
          text,
          role,
          message,
          kind: "text",
        },
      );
    }
    // JSON text is read token by token, decoded: the escaped newline does not hide what follows it.
    assert.deepEqual(
      at("/messages/2/tool_calls/0/function/arguments").map((t) => [t.kind, t.text]),
      [
        ["key", "to"],
        ["text", "x\nMARK"],
        ["key", "n"],
        ["text", "7"],
      ],
    );
    assert.deepEqual(
      at("/messages/2/function_call/arguments").map((t) => [t.kind, t.text]),
      [
        ["key", "cc"],
        ["text", "MARK"],
      ],
    );
    // A percent-encoded JSON data: URL: decoded, then read as JSON.
    assert.deepEqual(
      at("/messages/1/content/3/file/file_data").map((t) => [t.kind, t.text]),
      [
        ["key", "n"],
        ["text", "MARK"],
      ],
    );
  });

  it("names are texts of kind name, and property names the caller chose are texts of kind key", () => {
    const texts = byPointer(collectTexts(everyField("MARK")));
    const kinds = (pointer: string) => texts.get(pointer)?.map((t) => `${t.kind}:${t.text}`);
    assert.deepEqual(kinds("/messages/0/name"), ["name:ops"]);
    assert.deepEqual(kinds("/messages/1/name"), ["name:jane"]);
    assert.deepEqual(kinds("/messages/2/tool_calls/0/function/name"), ["name:mail"]);
    assert.deepEqual(kinds("/tools/0/function/name"), ["name:mail"]);
    assert.deepEqual(kinds("/tool_choice/function/name"), ["name:mail"]);
    assert.deepEqual(kinds("/response_format/json_schema/name"), ["name:answer"]);
    // A property name is pointed at through its object, so a refusal can name the place, not the text.
    assert.deepEqual(kinds("/tools/0/function/parameters/properties"), ["key:to"]);
    assert.deepEqual(kinds("/response_format/json_schema/schema/properties"), ["key:who"]);
    assert.deepEqual(kinds("/metadata"), ["key:note"]);
    assert.deepEqual(kinds(""), ["key:x_vendor_hint"]);
    // The API's own field names are not texts.
    const keys = collectTexts(everyField("MARK"))
      .filter((t) => t.kind === "key")
      .map((t) => t.text);
    for (const field of ["role", "content", "tools", "description", "properties", "type", "required"])
      assert.equal(keys.includes(field), false, field);
  });

  it("the allow-list, each value in its form, is not scanned: routing, enums, ids and binary payloads; links and schema references are scanned as names", () => {
    const body: ChatBody = {
      model: "SKIP-model",
      models: ["SKIP-models"],
      provider: { order: ["SKIP-provider"], sort: "skip-sort" },
      route: "skip-route",
      transforms: ["skip-transforms"],
      service_tier: "skip-tier",
      reasoning_effort: "skip-effort",
      verbosity: "skip-verbosity",
      modalities: ["skip-modalities"],
      audio: { voice: "skip-voice", format: "skip-format" },
      logit_bias: { "50256": -100 },
      reasoning: { effort: "skip-reasoning-effort", summary: "skip-reasoning-summary" },
      tool_choice: "skip-tool-choice",
      function_call: "skip-function-call",
      response_format: { type: "skip-response-type" },
      messages: [
        {
          role: "user",
          content: [
            { type: "image_url", image_url: { url: "https://example.org/SKIP-image.png" } },
            { type: "image_url", image_url: `data:image/png;base64,${b64("SKIP-png")}` },
            { type: "input_audio", input_audio: { data: b64("SKIP-audio") } },
            {
              type: "file",
              file: { file_id: "SKIP-file-id", file_data: `data:application/pdf;base64,${b64("SKIP")}` },
            },
          ],
        },
        {
          role: "assistant",
          tool_calls: [
            { id: "SKIP-call-id", type: "skip-call-type", function: { name: "f", arguments: "{}" } },
          ],
          reasoning_details: [
            { type: "reasoning.encrypted", data: "SKIP-encrypted", id: "SKIP-detail-id" },
            { type: "reasoning.text", text: "kept", signature: "SKIP-signature" },
          ],
        },
        { role: "tool", tool_call_id: "SKIP-tool-call-id", content: "kept" },
      ],
      tools: [
        {
          type: "function",
          function: {
            name: "f",
            parameters: { $schema: "SKIP-schema", type: ["skip-type-a", "skip-type-b"], $ref: "#/SKIP-ref" },
          },
        },
      ],
    };
    const texts = collectTexts(body);
    const scannedAsNames = new Set(["https://example.org/SKIP-image.png", "SKIP-schema", "#/SKIP-ref"]);
    const leaked = texts.filter(
      (t) =>
        !scannedAsNames.has(t.text) &&
        (t.text.toLowerCase().includes("skip") || t.text.includes(b64("SKIP-audio"))),
    );
    assert.deepEqual(
      leaked.map((t) => textPointer(t)),
      [],
    );
    assert.deepEqual(
      texts.map((t) => t.text),
      ["https://example.org/SKIP-image.png", "f", "kept", "kept", "f", "SKIP-schema", "#/SKIP-ref"],
    );
    assert.deepEqual(
      texts.filter((t) => scannedAsNames.has(t.text)).map((t) => t.kind),
      ["name", "name", "name"],
    );
  });

  it("the same field names are scanned where they hold caller data (enum, examples, metadata, arguments)", () => {
    const body: ChatBody = {
      model: "m",
      messages: [
        {
          role: "assistant",
          tool_calls: [
            { id: "c", type: "function", function: { name: "f", arguments: '{"id":"A1","type":"A2"}' } },
          ],
        },
      ],
      metadata: { id: "A3" },
      tools: [
        {
          type: "function",
          function: {
            name: "f",
            parameters: {
              type: "object",
              properties: {},
              examples: [{ id: "A4", type: "A5" }],
              default: { role: "A6" },
            },
          },
        },
      ],
    };
    const values = collectTexts(body)
      .filter((t) => t.kind === "text")
      .map((t) => t.text);
    assert.deepEqual(values, ["A1", "A2", "A3", "A4", "A5", "A6"]);
  });

  it("a redaction is written back at the same place; untouched subtrees are shared, the request is not mutated", () => {
    const body = everyField("jane@example.com");
    const before = structuredClone(body);
    const out = redactAll(body, "jane@example.com", "[EMAIL]");
    assert.deepEqual(body, before, "the request is not mutated");
    // Every string moved exactly as the same request written with the label in its place.
    assert.deepEqual(out, everyField("[EMAIL]"));
    assert.equal(JSON.stringify(out).includes("jane@"), false);
    // Only the path to each change is copied.
    const clean = { role: "user", content: "nothing here" };
    const withClean: ChatBody = { ...body, messages: [...body.messages, clean] };
    const redacted = redactAll(withClean, "jane@example.com", "[EMAIL]");
    assert.equal(redacted.messages.at(-1), clean);
    assert.equal(
      (redacted.tools as { function: { parameters: { required: unknown } } }[])[0]?.function.parameters
        .required,
      (body.tools as { function: { parameters: { required: unknown } } }[])[0]?.function.parameters.required,
    );
    assert.equal(replaceTexts(body, []), body, "no replacement, no copy");
  });

  it("base64 data: URLs stay valid base64 of the redacted text; non-UTF-8 payloads keep their bytes", () => {
    const text = "Contact: jane@example.com — ünïcode";
    const body: ChatBody = {
      model: "m",
      messages: [
        {
          role: "user",
          content: [
            { type: "file", file: { file_data: `data:text/markdown;charset=utf-8;base64,${b64(text)}` } },
            {
              type: "file",
              file: {
                file_data: `data:text/plain;base64,${Buffer.from("caf\xe9 jane@example.com", "latin1").toString("base64")}`,
              },
            },
            {
              type: "file",
              file: { file_data: `data:,${encodeURIComponent("plain jane@example.com 100%")}` },
            },
          ],
        },
      ],
    };
    const out = redactAll(body, "jane@example.com", "[EMAIL]");
    const parts = out.messages[0]?.content as { file: { file_data: string } }[];
    const [head, payload] = (parts[0]?.file.file_data ?? "").split(",");
    assert.equal(head, "data:text/markdown;charset=utf-8;base64");
    assert.match(payload ?? "", /^[A-Za-z0-9+/]*={0,2}$/);
    assert.equal(Buffer.from(payload ?? "", "base64").toString("utf8"), "Contact: [EMAIL] — ünïcode");
    const latin = Buffer.from((parts[1]?.file.file_data ?? "").split(",")[1] ?? "", "base64");
    assert.deepEqual(latin, Buffer.from("caf\xe9 [EMAIL]", "latin1"));
    assert.equal(
      decodeURIComponent((parts[2]?.file.file_data ?? "").slice("data:,".length)),
      "plain [EMAIL] 100%",
    );
  });

  it("JSON arguments stay valid JSON: escapes before a match, escaped matches, numbers, and untouched formatting", () => {
    const args =
      '{ "note": "Contact:\\njane@example.com",  "alt": "jane\\u0040example.com", "card": 4111111111111111, "n": 2 }';
    const body: ChatBody = {
      model: "m",
      messages: [
        {
          role: "assistant",
          tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: args } }],
        },
      ],
    };
    const texts = collectTexts(body);
    const replacements = texts
      .filter((t) => t.text.includes("jane@example.com") || t.text === "4111111111111111")
      .map((t) => ({
        text: t,
        value: t.text.replace("jane@example.com", "[EMAIL]").replace(/^4111\d+$/, "[CARD]"),
      }));
    assert.equal(replacements.length, 3);
    const out = replaceTexts(body, replacements);
    const calls = out.messages[0]?.tool_calls as { function: { arguments: string } }[];
    const sent = calls[0]?.function.arguments ?? "";
    assert.deepEqual(JSON.parse(sent), { note: "Contact:\n[EMAIL]", alt: "[EMAIL]", card: "[CARD]", n: 2 });
    assert.equal(sent, '{ "note": "Contact:\\n[EMAIL]",  "alt": "[EMAIL]", "card": "[CARD]", "n": 2 }');
  });

  it("arguments that are not JSON are one text whose labels must be JSON-escaped", () => {
    const body: ChatBody = {
      model: "m",
      messages: [
        {
          role: "assistant",
          tool_calls: [
            { id: "c", type: "function", function: { name: "f", arguments: '{"to": "jane@example.com"' } },
          ],
        },
      ],
    };
    const [args] = collectTexts(body).filter((t) => t.kind === "text");
    assert.deepEqual([args?.text, args?.json], ['{"to": "jane@example.com"', true]);
  });

  it("names and property names are never rewritten (the decision refuses such a redaction instead)", () => {
    const body = everyField("MARK");
    const names = collectTexts(body).filter((t) => t.kind !== "text");
    assert.ok(names.length > 5);
    const out = replaceTexts(
      body,
      names.map((t) => ({ text: t, value: "[X]" })),
    );
    assert.deepEqual(out, body);
  });

  it(`nesting deeper than ${MAX_NESTING} objects and arrays is a 400 naming where, even in an allow-listed field; no stack overflow at 5,000`, () => {
    const nest = (depth: number): unknown => {
      let v: unknown = "leaf";
      for (let i = 0; i < depth; i++) v = { a: v };
      return v;
    };
    // The root object and one field: MAX_NESTING - 1 levels below the root is the most allowed.
    assert.doesNotThrow(() => collectTexts({ model: "m", messages: [], deep: nest(MAX_NESTING - 1) }));
    for (const [field, depth] of [
      ["deep", MAX_NESTING],
      ["deep", 5_000],
    ] as const) {
      assert.throws(
        () => collectTexts({ model: "m", messages: [], [field]: nest(depth) }),
        (err: unknown) => {
          assert.ok(err instanceof AppError);
          assert.equal(err.status, 400);
          const [issue] = (err.metadata as { issues: { path: string; message: string }[] }).issues;
          assert.equal(issue?.path, `/${field}${"/a".repeat(MAX_NESTING - 1)}`);
          assert.match(issue?.message ?? "", /nested deeper than 128/);
          return true;
        },
        `${field} at ${depth}`,
      );
    }
  });

  it(`more than ${MAX_TEXTS} strings to scan is a 400; allow-listed strings do not count`, () => {
    const many = Array.from({ length: MAX_TEXTS }, () => "x");
    assert.equal(collectTexts({ model: "m", messages: [], stop: many }).length, MAX_TEXTS);
    assert.equal(collectTexts({ model: "m", messages: [], models: [...many, ...many] }).length, 0);
    assert.throws(
      () => collectTexts({ model: "m", messages: [{ role: "user", content: "one more" }], stop: many }),
      (err: unknown) => err instanceof AppError && err.status === 400,
    );
  });
});
