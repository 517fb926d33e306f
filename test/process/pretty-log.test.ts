import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { prettyLogStream } from "../../src/pretty-log.js";

/** Log lines for a person on a terminal (docs/configuration.md#logs). */
describe("pretty log lines (docs/configuration.md#logs)", () => {
  function render(lines: object[]): string {
    let out = "";
    const stream = prettyLogStream({ color: false, write: (t) => (out += t) });
    for (const line of lines) stream.write(`${JSON.stringify(line)}\n`);
    return out;
  }

  it("a request's line reads method, path, status and duration; its other fields follow", () => {
    const out = render([
      {
        level: 30,
        time: 0,
        reqId: "abcdef12-3456",
        req: { method: "POST", url: "/api/v1/keys" },
        res: { statusCode: 201 },
        decision: "allow",
        responseTime: 3.25,
        msg: "request completed",
      },
    ]);
    assert.equal(out, "00:00:00.000 INFO  POST /api/v1/keys → 201 3.3 ms decision=allow abcdef12\n");
  });

  it("other fields follow the message as key=value, and a line that is not JSON passes as it is", () => {
    const out = render([
      { level: 40, time: 0, msg: "upstream attempt failed", provider: "local", error: { reason: "x" } },
    ]);
    assert.equal(out, '00:00:00.000 WARN  upstream attempt failed provider=local error={"reason":"x"}\n');
    let raw = "";
    prettyLogStream({ color: false, write: (t) => (raw += t) }).write("plain text");
    assert.equal(raw, "plain text\n");
  });
});
