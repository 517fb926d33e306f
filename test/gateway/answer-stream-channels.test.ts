import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { compileFilters } from "../../src/domain/content-scan.js";
import { DETECTORS } from "../../src/domain/detectors/index.js";
import { AppError } from "../../src/domain/errors.js";
import { Channels, ChatChunkAdapter } from "../../src/gateway/answers/stream.js";

const chunk = (content: string) =>
  JSON.stringify({
    id: "c",
    object: "chat.completion.chunk",
    created: 1,
    model: "m",
    choices: [{ index: 0, delta: { content }, finish_reason: null }],
  });

describe("the channels of a streamed answer (docs/gateway.md#answer-streams)", () => {
  it("fail closed: a scan that cannot run ends the stream with the unscanned refusal, never passes the text on", () => {
    const filters = compileFilters(
      { content_filter_builtins: [{ slug: "email", action: "redact" }], content_filters: [] },
      DETECTORS,
    );
    // A stored pattern this build cannot compile: the scan throws rather than read without it.
    filters.broken.push({ pattern: "(", error: "missing )" });
    const channels = new Channels(filters, () => {
      throw new Error("no block expected");
    });
    const adapter = new ChatChunkAdapter(channels);
    const text = "x".repeat(5000);
    assert.throws(
      () => {
        for (let i = 0; i < text.length; i += 100) adapter.rewrite(chunk(text.slice(i, i + 100)));
        adapter.flush();
      },
      (err: unknown) =>
        err instanceof AppError &&
        err.status === 403 &&
        (err.metadata as { reason?: string }).reason === "answer_scan_failed",
    );
  });

  it("a chunk of a known shape carrying only held text is dropped, and the held text comes out before the finish", () => {
    const filters = compileFilters(
      { content_filter_builtins: [{ slug: "email", action: "redact" }], content_filters: [] },
      DETECTORS,
    );
    const adapter = new ChatChunkAdapter(new Channels(filters, () => assert.fail("no block")));
    const out: string[] = [];
    for (const piece of ["mail ", "jane.roe@exa", "mple.com", " now"])
      out.push(...(adapter.rewrite(chunk(piece)) ?? []));
    out.push(
      ...(adapter.rewrite(
        JSON.stringify({
          id: "c",
          object: "chat.completion.chunk",
          created: 1,
          model: "m",
          choices: [{ index: 0, delta: {}, finish_reason: "stop" }],
        }),
      ) ?? []),
    );
    const text = out
      .map(
        (d) =>
          (JSON.parse(d) as { choices: { delta: { content?: string } }[] }).choices[0]?.delta.content ?? "",
      )
      .join("");
    assert.equal(text, "mail [EMAIL] now");
  });
});
