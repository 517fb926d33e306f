import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ChatText } from "../../src/domain/chat-texts.js";
import { compileFilters, scanTexts } from "../../src/domain/content-scan.js";
import { DETECTORS } from "../../src/domain/detectors/index.js";

const text = (value: string) => ({ text: value, role: "user", json: false }) as unknown as ChatText;

/** The redacted text and the match count of one redacting pattern over one text. */
function redactWith(pattern: string, value: string): { value: string; count: number } {
  const filters = compileFilters(
    { content_filter_builtins: [], content_filters: [{ pattern, action: "redact", label: "[X]" }] },
    DETECTORS,
  );
  const result = scanTexts(filters, [text(value)]);
  return { value: result.replacements[0]?.value ?? value, count: result.hits[0]?.count ?? 0 };
}

describe("custom pattern matches (docs/gateway.md#what-happens-to-a-request)", () => {
  it("redacts each match at its place in the text when characters of two, three and four UTF-8 bytes come before it", () => {
    assert.deepEqual(redactWith("PRJ-[0-9]+", "é 😀 PRJ-12, ü PRJ-345 – PRJ-6"), {
      value: "é 😀 [X], ü [X] – [X]",
      count: 3,
    });
  });

  it("redacts whole matches of a pattern with its own groups, some of which take no part in a match", () => {
    assert.deepEqual(redactWith("(PRJ)-([0-9]+)|(x)(y)?", "😀x PRJ-1 xy PRJ-22"), {
      value: "😀[X] [X] [X] [X]",
      count: 4,
    });
  });

  it("counts and redacts only the non-empty matches of a pattern that can also match empty", () => {
    assert.deepEqual(redactWith("x*", "axxb 😀 x"), { value: "a[X]b 😀 [X]", count: 2 });
    assert.deepEqual(redactWith("\\bx+|\\B", "xx ax x"), { value: "[X] ax [X]", count: 2 });
    assert.deepEqual(redactWith("(?m)^", "a\nb"), { value: "a\nb", count: 0 });
  });

  it("matches text that holds NUL and other control characters like any other text", () => {
    assert.deepEqual(redactWith("PRJ-[0-9]+", "\u0000PRJ-1\u0001 \u0001\u0000PRJ-22"), {
      value: "\u0000[X]\u0001 \u0001\u0000[X]",
      count: 2,
    });
  });

  it("reads a match at the very end and one at the very start of the text", () => {
    assert.deepEqual(redactWith("ab", "ab ab"), { value: "[X] [X]", count: 2 });
  });
});
