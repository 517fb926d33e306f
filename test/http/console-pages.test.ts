import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { buildConsole } from "../../scripts/build-console.js";
import { CONSOLE_CSP } from "../../src/http/console.js";
import { call, startTestServer, type TestServer } from "../helpers/server.js";

/**
 * The browser console served by the service itself at `/`, from the files `npm run build` writes
 * (README.md#admin-console), under a strict Content-Security-Policy; the API stays under /api/v1.
 */
describe("the console's pages (README.md#admin-console)", () => {
  let server: TestServer;
  let unbuilt: TestServer;
  const dir = mkdtempSync(join(tmpdir(), "guardrails-console-"));
  before(async () => {
    await buildConsole(join(dir, "built"));
    server = await startTestServer({ consoleDir: join(dir, "built") });
    unbuilt = await startTestServer({ consoleDir: join(dir, "missing") });
  });
  after(async () => {
    await server.close();
    await unbuilt.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("/ is the console's page, loading only same-origin files, with the strict CSP and no framing (README.md#admin-console)", async () => {
    const res = await call(server, "GET", "/");
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^text\/html/);
    assert.equal(res.headers.get("content-security-policy"), CONSOLE_CSP);
    assert.match(CONSOLE_CSP, /default-src 'none'/);
    assert.match(CONSOLE_CSP, /script-src 'self'(;|$)/);
    assert.doesNotMatch(CONSOLE_CSP, /unsafe-inline|unsafe-eval|https?:/);
    assert.equal(res.headers.get("x-frame-options"), "DENY");
    assert.equal(res.headers.get("x-content-type-options"), "nosniff");
    const html = String(res.body);
    assert.match(html, /<script type="module" src="\/console\/console.js"><\/script>/);
    // Under this CSP an inline script or style would not run: the page has none, and no remote URL.
    assert.doesNotMatch(html, /<script>|<style|style="|https?:\/\//);
  });

  it("the script and stylesheet are served with their types and the same CSP, and the script is small (README.md#admin-console)", async () => {
    const js = await call(server, "GET", "/console/console.js");
    assert.equal(js.status, 200);
    assert.match(js.headers.get("content-type") ?? "", /^text\/javascript/);
    assert.equal(js.headers.get("content-security-policy"), CONSOLE_CSP);
    assert.ok(String(js.body).length < 60_000, `console.js is ${String(js.body).length} bytes`);
    assert.doesNotMatch(String(js.body), /localStorage|sessionStorage/, "nothing is kept in web storage");
    const css = await call(server, "GET", "/console/console.css");
    assert.equal(css.status, 200);
    assert.match(css.headers.get("content-type") ?? "", /^text\/css/);
  });

  it("the chart library is a chunk of its own, loaded on demand from this origin under the same CSP; no other file name is read (README.md#admin-console)", async () => {
    const chunks = readdirSync(join(dir, "built")).filter((name) => name.startsWith("chunk-"));
    assert.ok(chunks.length > 0, "the build splits off at least one chunk");
    const main = String((await call(server, "GET", "/console/console.js")).body);
    for (const chunk of chunks) {
      const res = await call(server, "GET", `/console/${chunk}`);
      assert.equal(res.status, 200, chunk);
      assert.match(res.headers.get("content-type") ?? "", /^text\/javascript/);
      assert.equal(res.headers.get("content-security-policy"), CONSOLE_CSP);
    }
    // uPlot's own class name: in a chunk, not in the script every page loads.
    assert.doesNotMatch(main, /uplot/);
    for (const name of [
      "chunk-X.js",
      "index.html.js",
      "chunk-..%2Fconsole.js",
      "chunk-AAAAAAAA.css",
      "chunk-AAAAAAAA.js",
    ]) {
      const res = await call(server, "GET", `/console/${name}`);
      assert.deepEqual(res.body, { error: { code: 404, message: "Resource not found" } }, name);
    }
  });

  it("the API stays JSON under /api/v1 and does not carry the console's CSP (README.md#admin-console)", async () => {
    const res = await call(server, "GET", "/api/v1/nothing-here");
    assert.equal(res.status, 404);
    assert.equal(res.body.error.message, "Resource not found");
    assert.equal(res.body.error.metadata.reason, "no_such_route");
    assert.equal(res.headers.get("content-security-policy"), null);
  });

  it("an unbuilt console answers 404 in the error envelope saying how to build it (README.md#admin-console)", async () => {
    const res = await call(unbuilt, "GET", "/");
    assert.equal(res.status, 404);
    assert.equal(res.body.error.message, "Resource not found");
    assert.match(res.body.error.metadata.reason, /npm run build/);
  });
});
