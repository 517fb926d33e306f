import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { freePortRun, ROOT } from "./child.js";

/**
 * The README's quick start, taken from the README text itself and run as written: `npm start`, then
 * every later shell block in one bash session (as in one terminal), each block's output checked
 * against the text block that follows it. The one rewrite is the addresses: the service listens on
 * free ports instead of 8080 and, for its regions, the two after it (docs/behaviour.md#ingress-region),
 * so the test never meets another server. The database is a fresh file.
 */

interface Block {
  lang: string;
  text: string;
}

/** The fenced blocks of the README's "Quick start" section, in order. */
function quickStartBlocks(): Block[] {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const start = readme.indexOf("## Quick start");
  assert.ok(start >= 0, "the README has a Quick start section");
  const next = readme.indexOf("\n## ", start + 1);
  const section = readme.slice(start, next < 0 ? undefined : next);
  return [...section.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((m) => ({
    lang: m[1] ?? "",
    text: m[2] ?? "",
  }));
}

/**
 * Does `actual` show what `expected` says? `...` stands for anything; the rest of each line must
 * appear, in order (surrounding spaces and line breaks aside).
 */
function shows(actual: string, expected: string): string | undefined {
  let from = 0;
  for (const line of expected.split("\n")) {
    for (const piece of line.split("...").map((p) => p.trim())) {
      if (piece === "") continue;
      const at = actual.indexOf(piece, from);
      if (at < 0) return piece;
      from = at + piece.length;
    }
  }
  return undefined;
}

/** Our environment without anything that would configure the service or a real provider. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const catalog = JSON.parse(readFileSync(join(ROOT, "config", "default.json"), "utf8")) as {
    providers: { api_key_env: string | null }[];
  };
  const providerVars = new Set(catalog.providers.map((p) => p.api_key_env));
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (name.startsWith("GUARDRAILS_") || providerVars.has(name)) continue;
    if (["DATABASE_URL", "PORT", "HOST", "LOG_LEVEL", "LOG_FORMAT"].includes(name)) continue;
    env[name] = value;
  }
  return { ...env, ...extra };
}

function collect(child: ChildProcess): { out: () => string; err: () => string } {
  let out = "";
  let err = "";
  child.stdout?.setEncoding("utf8").on("data", (c: string) => {
    out += c;
  });
  child.stderr?.setEncoding("utf8").on("data", (c: string) => {
    err += c;
  });
  return { out: () => out, err: () => err };
}

describe("the README's quick start, word for word (README.md#quick-start)", () => {
  const dir = mkdtempSync(join(tmpdir(), "guardrails-quickstart-"));
  let server: ChildProcess | undefined;
  after(() => {
    // npm runs the service as its grandchild: the whole process group goes.
    if (server?.pid !== undefined && server.exitCode === null) {
      try {
        process.kill(-server.pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it("starts with the install-and-start and the test commands, and every later block prints what the README shows", {
    timeout: 300_000,
  }, async () => {
    const blocks = quickStartBlocks();
    assert.deepEqual(
      blocks.slice(0, 2).map((b) => [b.lang, b.text.trim()]),
      [
        ["sh", "npm ci && npm start"],
        ["sh", "npm ci && npm test"],
      ],
      "the quick start opens with its two commands",
    );
    const steps: { script: string; expected: string }[] = [];
    for (let i = 2; i < blocks.length; i++) {
      const block = blocks[i] as Block;
      if (block.lang !== "sh") continue;
      const following = blocks[i + 1];
      assert.equal(following?.lang, "text", `the output the README expects after:\n${block.text}`);
      steps.push({ script: block.text, expected: following?.text ?? "" });
    }
    assert.ok(steps.length >= 4, "a request, a redaction, a region refusal and a request through Europe");
    const all = steps.map((s) => s.script).join("\n");
    assert.match(all, /"action": "redact"/);
    assert.match(all, /"allowed_data_regions": \["europe"\]/);
    // Europe is reached as any client reaches it: the openai SDK, at localhost and the Europe port.
    assert.match(all, /import OpenAI from "openai";/);
    assert.match(all, /new OpenAI\(\{ baseURL: "http:\/\/localhost:8081\/api\/v1"/);
    assert.doesNotMatch(all, /eu\.localhost|\bHost:/i, "no region chosen by a name or a Host header");

    const port = await freePortRun(3);
    const env = cleanEnv({
      PORT: String(port),
      HOST: "127.0.0.1",
      DATABASE_URL: `sqlite:${join(dir, "g.db")}`,
    });
    // `npm ci` is what the suite itself was installed with; the start is the README's `npm start`.
    server = spawn("npm", ["start"], { cwd: ROOT, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    const serverOut = collect(server);
    const origin = `http://127.0.0.1:${port}`;
    for (let tries = 0; ; tries++) {
      assert.equal(server.exitCode, null, `npm start exited: ${serverOut.err()}`);
      const up = await fetch(`${origin}/healthz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (up) break;
      assert.ok(tries < 1200, `the service did not answer: ${serverOut.err()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.match(serverOut.err(), /shown only now/, "the first start shows a management key");
    assert.match(serverOut.err(), /echo provider \(local\) is served in-process/);

    const marker = (i: number) => `@@quickstart-step-${i}@@`;
    const script = [
      "set -euo pipefail",
      ...steps.flatMap((s, i) => [
        s.script.replace(
          /localhost:(808[0-2])\b/g,
          (_, shown: string) => `localhost:${port + Number(shown) - 8080}`,
        ),
        `printf '\\n${marker(i)}\\n'`,
      ]),
    ].join("\n");
    const shell = spawn("bash", ["-c", script], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    const shellOut = collect(shell);
    const code = await new Promise<number | null>((resolve) => shell.once("close", (c) => resolve(c)));
    assert.equal(code, 0, `the quick start's commands failed:\n${shellOut.out()}\n${shellOut.err()}`);

    let rest = shellOut.out();
    steps.forEach((step, i) => {
      const end = rest.indexOf(marker(i));
      assert.ok(end >= 0, `step ${i + 1} finished`);
      const output = rest.slice(0, end);
      rest = rest.slice(end + marker(i).length);
      const missing = shows(output, step.expected);
      assert.equal(missing, undefined, `step ${i + 1} printed:\n${output}\nwhich lacks: ${missing}`);
    });
  });
});
