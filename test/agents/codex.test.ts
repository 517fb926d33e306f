import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { guardKey, orgWithKey, providerKey } from "../http/gateway-support.js";
import {
  AGENT_PATH,
  agentCatalog,
  findAgent,
  inTempFolder,
  onlyRequestSince,
  reportOf,
  runChild,
  suiteBench,
} from "./agent-support.js";

/**
 * Codex CLI (`@openai/codex`), an agent that speaks only the Responses API, answers a prompt through
 * our responses door while the only provider speaks chat completions, so the door translates
 * (docs/gateway.md#codex-cli, docs/gateway.md#provider-apis). The real CLI runs as a child process
 * against the real service; the bundled echo upstream stands in for the provider and records what
 * reached it.
 *
 * The package is large (a native binary of several hundred MB), so it is not a dependency: the test
 * runs when `@openai/codex` resolves from the repository (or GUARDRAILS_CODEX_BIN names its `codex`
 * launcher) and is skipped otherwise.
 */

const { launcher: CODEX, skip: SKIP } = findAgent({
  pkg: "@openai/codex",
  variable: "GUARDRAILS_CODEX_BIN",
  command: "codex",
  fromPackage: (require) => {
    const launcher = join(dirname(require.resolve("@openai/codex/package.json")), "bin", "codex.js");
    return existsSync(launcher) ? launcher : undefined;
  },
});

/** A model served only by a provider that speaks chat completions and nothing else. */
const CHAT_ONLY_MODEL = "acme/chat-only";
const CHAT_ONLY_PROVIDER = "chat-only";

/** The environment variable codex reads our inference key from (the provider's `env_key`). */
const KEY_ENV = "GUARDRAILS_INFERENCE_KEY";

/**
 * Codex's configuration: our service as a custom Responses provider, no approvals, a read-only
 * sandbox, and every feature that would reach past loopback (plugin sync, apps, update checks,
 * analytics, telemetry) off. No retries, so one codex turn is one request to the service.
 */
function codexConfig(baseUrl: string): string {
  return `model = "${CHAT_ONLY_MODEL}"
model_provider = "guardrails"
approval_policy = "never"
sandbox_mode = "read-only"
check_for_update_on_startup = false

[model_providers.guardrails]
name = "Guardrail gateway"
base_url = "${baseUrl}"
env_key = "${KEY_ENV}"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[features]
plugins = false
remote_plugin = false
apps = false
in_app_updates = false
shell_snapshot = false

[analytics]
enabled = false

[otel]
exporter = "none"
`;
}

interface CodexRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The agent's last message, as codex wrote it to --output-last-message ("" when none). */
  lastMessage: string;
}

/** Runs `codex exec <prompt>` in a fresh CODEX_HOME and working folder, with only what it needs in its environment. */
function codexExec(
  launcher: string,
  baseUrl: string,
  inferenceKey: string,
  prompt: string,
): Promise<CodexRun> {
  return inTempFolder("guardrails-codex-", async (root) => {
    const home = join(root, "codex-home");
    const work = join(root, "work");
    mkdirSync(home);
    mkdirSync(work);
    writeFileSync(join(home, "config.toml"), codexConfig(baseUrl));
    const lastMessageFile = join(root, "last-message.txt");
    const args = [
      "exec",
      // An unknown key is an error rather than silently ignored, so a renamed switch cannot turn a
      // feature that reaches the network back on unnoticed.
      "--strict-config",
      "--skip-git-repo-check",
      "--ephemeral",
      "--color",
      "never",
      "-C",
      work,
      "--output-last-message",
      lastMessageFile,
      prompt,
    ];
    const [command, commandArgs] = launcher.endsWith(".js")
      ? [process.execPath, [launcher, ...args]]
      : [launcher, args];
    // No proxy variables and no real HOME: codex talks to the loopback service and nothing else,
    // and never reads or writes the user's ~/.codex.
    const env: NodeJS.ProcessEnv = {
      PATH: AGENT_PATH,
      HOME: work,
      CODEX_HOME: home,
      TMPDIR: root,
      NO_COLOR: "1",
      [KEY_ENV]: inferenceKey,
    };
    const run = await runChild(command, commandArgs, { cwd: work, env });
    const lastMessage = existsSync(lastMessageFile) ? readFileSync(lastMessageFile, "utf8") : "";
    return { ...run, lastMessage };
  });
}

/** The text of a chat message's content, a string or an array of text parts. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content.map((p) => (typeof p?.text === "string" ? (p.text as string) : "")).join("");
  }
  return "";
}

describe("Codex CLI through the responses door to a chat-only provider (docs/gateway.md#codex-cli)", {
  skip: SKIP,
}, () => {
  const logLines: string[] = [];
  const suite = suiteBench({
    // Codex sends about 40 KB of instructions and tool definitions with every turn.
    catalog: agentCatalog([{ slug: CHAT_ONLY_MODEL, provider: CHAT_ONLY_PROVIDER, api: "chat" }], 8_192),
    logLines,
  });

  it("answers the prompt with the provider's text, sent to the provider as one translated chat completion (docs/gateway.md#provider-apis)", async () => {
    const { key } = await orgWithKey(suite.bench);
    const before = suite.bench.received.length;
    const prompt = "Reply with one word: marmalade-7Q";
    const run = await codexExec(CODEX as string, suite.bench.server.baseUrl, key.secret, prompt);
    const report = reportOf(run);
    assert.equal(run.code, 0, report);

    const sent = onlyRequestSince(suite.bench, before, report);
    assert.equal(sent.path.endsWith("/chat/completions"), true, sent.path);
    // The provider's key, never the caller's.
    assert.equal(sent.headers.authorization, `Bearer ${providerKey(CHAT_ONLY_PROVIDER)}`);
    assert.equal(sent.body.model, CHAT_ONLY_MODEL);
    assert.equal(Array.isArray(sent.body.messages), true);
    const userTexts = (sent.body.messages as { role: string; content: unknown }[])
      .filter((m) => m.role === "user")
      .map((m) => textOf(m.content));
    assert.equal(
      userTexts.some((t) => t.includes(prompt)),
      true,
      JSON.stringify(userTexts),
    );

    // The echo provider answers "Echo: " and the last user message: codex shows that answer.
    assert.equal(run.lastMessage.startsWith("Echo: "), true, report);
    assert.equal(run.lastMessage.includes(prompt), true, report);
    assert.equal(run.stdout.includes(`Echo: `), true, report);
    assert.equal(run.stdout.includes(prompt), true, report);
  });

  it("redact: an e-mail in codex's prompt never reaches the provider, and codex gets the answer to the redacted prompt (docs/behaviour.md#what-is-scanned)", async () => {
    const { steps, key } = await orgWithKey(suite.bench);
    await guardKey(steps, key, { content_filter_builtins: [{ slug: "email", action: "redact" }] });
    const before = suite.bench.received.length;
    const email = "dana.codex-probe@example.org";
    const prompt = `Draft a two-line note to ${email} about the lunch menu`;
    const run = await codexExec(CODEX as string, suite.bench.server.baseUrl, key.secret, prompt);
    const report = reportOf(run);
    assert.equal(run.code, 0, report);

    const sent = onlyRequestSince(suite.bench, before, report);
    assert.equal(sent.path.endsWith("/chat/completions"), true, sent.path);
    const forwarded = JSON.stringify(sent.body);
    assert.equal(forwarded.includes(email), false);
    assert.equal(forwarded.includes("codex-probe@"), false);
    assert.equal(forwarded.includes("Draft a two-line note to [EMAIL] about the lunch menu"), true);

    // What came back is the echo of the redacted text; the address appears nowhere in it, nor in
    // the service's log lines (docs/behaviour.md#secrets-not-logged: no request body is logged).
    assert.equal(run.lastMessage.includes("[EMAIL]"), true, report);
    assert.equal(run.lastMessage.includes(email), false, report);
    assert.equal(
      logLines.some((l) => l.includes(email)),
      false,
    );
  });
});
