import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { DEFAULT_CONFIG_FILE, loadCatalogFile } from "../../src/config.js";
import type { ReceivedRequest, ScriptedAnswer } from "../../src/local-upstream/server.js";
import {
  guardKey,
  orgWithKey,
  providerKey,
  type Received,
  startGatewayBench,
} from "../http/gateway-support.js";
import {
  AGENT_PATH,
  agentCatalog,
  type ChildRun,
  findAgent,
  inTempFolder,
  onlyRequestSince,
  reportOf,
  runChild,
  suiteBench,
} from "./agent-support.js";

/**
 * Claude Code (`@anthropic-ai/claude-code`), an agent that speaks only the Anthropic Messages API,
 * answers a prompt through our messages door (docs/gateway.md#claude-code): once to a provider that
 * speaks Messages, once to one that speaks only chat completions, so the door translates
 * (docs/gateway.md#provider-apis). The real CLI runs as a child process against the real service;
 * the bundled echo upstream stands in for the providers and records what reached it.
 *
 * The package is large (a native binary of about 400 MB), so it is not a dependency: the test runs
 * when `@anthropic-ai/claude-code` resolves from the repository (or GUARDRAILS_CLAUDE_BIN names its
 * `claude` launcher) and is skipped otherwise.
 */

const { launcher: CLAUDE, skip: SKIP } = findAgent({
  pkg: "@anthropic-ai/claude-code",
  variable: "GUARDRAILS_CLAUDE_BIN",
  command: "claude",
  fromPackage: (require) => {
    const root = dirname(require.resolve("@anthropic-ai/claude-code/package.json"));
    // The package's postinstall copies the platform's native binary over bin/claude.exe; when install
    // scripts did not run, that file is a small stub and cli-wrapper.cjs finds the binary instead.
    const native = join(root, "bin", "claude.exe");
    if (existsSync(native) && statSync(native).size > 1_000_000) return native;
    const wrapper = join(root, "cli-wrapper.cjs");
    return existsSync(wrapper) ? wrapper : undefined;
  },
});

/** A model served only by a provider that speaks the Messages API. */
const MESSAGES_MODEL = "acme/messages-only";
/** A model served only by a provider that speaks chat completions. */
const CHAT_MODEL = "acme/chat-only";

/** One provider per API, each serving one model; Claude Code sends about 90 KB of system prompt and tool definitions with every turn. */
const agentModels = () =>
  agentCatalog(
    [
      { slug: MESSAGES_MODEL, provider: "messages-only", api: "messages" },
      { slug: CHAT_MODEL, provider: "chat-only", api: "chat" },
    ],
    32_000,
  );

/** What `claude -p --output-format json` prints: one result object (the fields this test reads). */
interface ClaudeResult {
  type: string;
  is_error: boolean;
  result: string;
  api_error_status: number | null;
  session_id: string;
}

interface ClaudeRun extends ChildRun {
  /** stdout parsed, or undefined when it is not one JSON object. */
  json: ClaudeResult | undefined;
  /** The models its gateway discovery cached, when asked to discover (undefined: no cache written). */
  discovered: { id: string; display_name: string }[] | undefined;
}

/**
 * What every run of claude is given: a fresh HOME and config folder under `root`, the service as
 * its base URL, its models (the main one and the one for background chores, under both names
 * Claude Code reads it by), and nothing that reaches past loopback.
 */
function claudeEnv(root: string, origin: string, model: string, smallFastModel: string): NodeJS.ProcessEnv {
  const home = join(root, "home");
  const config = join(root, "config");
  for (const d of [home, config]) mkdirSync(d, { recursive: true });
  return {
    PATH: AGENT_PATH,
    HOME: home,
    CLAUDE_CONFIG_DIR: config,
    TMPDIR: root,
    NO_COLOR: "1",
    // It appends /v1/messages (docs/gateway.md#claude-code).
    ANTHROPIC_BASE_URL: `${origin}/api`,
    ANTHROPIC_MODEL: model,
    ANTHROPIC_SMALL_FAST_MODEL: smallFastModel,
    ANTHROPIC_DEFAULT_HAIKU_MODEL: smallFastModel,
    // Without it each run also opens connections to api.anthropic.com (telemetry, feature flags).
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_ERROR_REPORTING: "1",
  };
}

/**
 * Runs `claude -p <prompt> --output-format json` in a fresh HOME, config folder and working folder,
 * with only what it needs in its environment: the service as its base URL, the inference key, the
 * model, and nothing that reaches past loopback.
 */
async function claudePrint(
  launcher: string,
  origin: string,
  inferenceKey: string,
  model: string,
  prompt: string,
  options: {
    keyVariable?: "ANTHROPIC_API_KEY" | "ANTHROPIC_AUTH_TOKEN";
    discover?: boolean;
    /** The model for background chores (default: `model`). */
    smallFastModel?: string;
    /** Written as its user settings file, `$CLAUDE_CONFIG_DIR/settings.json`. */
    settings?: Record<string, unknown>;
  } = {},
): Promise<ClaudeRun> {
  const keyVariable = options.keyVariable ?? "ANTHROPIC_API_KEY";
  return inTempFolder("guardrails-claude-", async (root) => {
    const work = join(root, "work");
    mkdirSync(work);
    const args = ["-p", prompt, "--output-format", "json"];
    const [command, commandArgs] = launcher.endsWith(".cjs")
      ? [process.execPath, [launcher, ...args]]
      : [launcher, args];
    // No proxy variables and no real HOME: claude talks to the loopback service and nothing else,
    // and never reads or writes the user's ~/.claude.
    const env: NodeJS.ProcessEnv = {
      ...claudeEnv(root, origin, model, options.smallFastModel ?? model),
      [keyVariable]: inferenceKey,
      // At start, GET /api/v1/models?limit=1000 in the Anthropic shape (docs/gateway.md#anthropic-model-list).
      ...(options.discover ? { CLAUDE_CODE_ENABLE_GATEWAY_MODEL_DISCOVERY: "1" } : {}),
    };
    if (options.settings)
      writeFileSync(join(root, "config", "settings.json"), JSON.stringify(options.settings));
    const run = await runChild(command, commandArgs, { cwd: work, env });
    let json: ClaudeResult | undefined;
    try {
      json = JSON.parse(run.stdout.trim()) as ClaudeResult;
    } catch {
      json = undefined;
    }
    const cache = join(root, "config", "cache", "gateway-models.json");
    const discovered = existsSync(cache)
      ? (JSON.parse(readFileSync(cache, "utf8")) as { models: { id: string; display_name: string }[] }).models
      : undefined;
    return { ...run, json, discovered };
  });
}

/** Removes a terminal's control sequences from what claude drew, to read its text. */
const plain = (screen: string) =>
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the escape character is what is removed.
  screen.replace(/\x1b(\[[0-9;?<>=]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()][A-Z0-9]|[=>78])/g, "");

/** A guard against an interactive claude that never reaches the next step; not a measurement. */
const STEP_KILL_AFTER_MS = 60_000;

/**
 * Runs claude interactively in a terminal (`script` gives it one), types `prompt` once its input
 * box is drawn, and `/exit` once the answer (`Echo:`) is drawn: each step waits for what claude
 * drew, never for a time. Its onboarding and the folder's trust question are answered beforehand in
 * its config file. Resolves with what it drew, its control sequences removed.
 */
async function claudeInteractive(
  launcher: string,
  origin: string,
  inferenceKey: string,
  model: string,
  smallFastModel: string,
  prompt: string,
  options: {
    /** Written as its user settings file, `$CLAUDE_CONFIG_DIR/settings.json`. */
    settings?: Record<string, unknown>;
  } = {},
): Promise<{ code: number | null; screen: string }> {
  return inTempFolder("guardrails-claude-", async (root) => {
    const work = join(root, "work");
    mkdirSync(work);
    const env: NodeJS.ProcessEnv = {
      ...claudeEnv(root, origin, model, smallFastModel),
      // An auth token is used without the question an API key from the environment asks first.
      ANTHROPIC_AUTH_TOKEN: inferenceKey,
      TERM: "xterm",
    };
    writeFileSync(
      join(root, "config", ".claude.json"),
      JSON.stringify({
        hasCompletedOnboarding: true,
        theme: "dark",
        projects: { [work]: { hasTrustDialogAccepted: true } },
      }),
    );
    if (options.settings)
      writeFileSync(join(root, "config", "settings.json"), JSON.stringify(options.settings));
    const command = launcher.endsWith(".cjs") ? `${process.execPath} ${launcher}` : launcher;
    const child = spawn("script", ["-qec", command, "/dev/null"], {
      cwd: work,
      env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let screen = "";
    const steps = [
      { when: (s: string) => s.includes("shortcuts"), type: prompt },
      { when: (s: string) => s.includes("Echo:"), type: "/exit" },
    ];
    let guard = setTimeout(() => child.kill("SIGKILL"), STEP_KILL_AFTER_MS);
    const onData = (chunk: Buffer) => {
      screen += chunk.toString("utf8");
      const step = steps[0];
      if (step?.when(plain(screen))) {
        steps.shift();
        clearTimeout(guard);
        guard = setTimeout(() => child.kill("SIGKILL"), STEP_KILL_AFTER_MS);
        // The text, then Enter on its own: typed at once, the Enter would be part of a paste.
        child.stdin.write(step.type);
        setImmediate(() => child.stdin.write("\r"));
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    const code = await new Promise<number | null>((resolve, reject) => {
      child.on("error", reject);
      child.on("close", (c) => resolve(c));
    }).finally(() => clearTimeout(guard));
    return { code, screen: plain(screen) };
  });
}

/**
 * A prompt hook on every submitted prompt. A hook of type `prompt` that names no model of its own is
 * sent to Claude Code's small fast model, with the hook's input (which holds the prompt) in place of
 * `$ARGUMENTS`, and its answer is read as a verdict `{"ok": boolean, "reason": string}`; it runs in
 * print and interactive mode alike, whatever the non-essential traffic setting
 * (docs/gateway.md#claude-code-small-fast-model).
 */
const PROMPT_HOOK = {
  hooks: {
    UserPromptSubmit: [
      {
        hooks: [
          {
            type: "prompt",
            prompt: "Let the prompt go ahead unless it asks for something harmful. $ARGUMENTS",
          },
        ],
      },
    ],
  },
};

/**
 * The provider's answer to a request for `model`: the verdict as the assistant's text, in the shape
 * of the API it was asked in (Messages or chat completions), streamed or whole as asked; other
 * requests are answered by the echo.
 */
function verdictFrom(model: string, verdict: { ok: boolean; reason: string }) {
  return (r: ReceivedRequest): ScriptedAnswer | undefined => {
    if (r.body.model !== model) return undefined;
    const text = JSON.stringify(verdict);
    const stream = r.body.stream === true;
    if (r.path.split("?")[0]?.endsWith("/messages")) {
      const usage = { input_tokens: 400, output_tokens: 12 };
      const message = {
        id: "msg_verdict",
        type: "message",
        role: "assistant",
        model,
        content: [{ type: "text", text }],
        stop_reason: "end_turn",
        stop_sequence: null,
        usage,
      };
      if (!stream) return { body: message };
      const event = (type: string, data: Record<string, unknown>) =>
        `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
      return {
        events: [
          event("message_start", {
            message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } },
          }),
          event("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
          event("content_block_delta", { index: 0, delta: { type: "text_delta", text } }),
          event("content_block_stop", { index: 0 }),
          event("message_delta", { delta: { stop_reason: "end_turn", stop_sequence: null }, usage }),
          event("message_stop", {}),
        ],
      };
    }
    const usage = { prompt_tokens: 400, completion_tokens: 12, total_tokens: 412 };
    const base = { id: "chatcmpl-verdict", created: 1_700_000_000, model };
    if (!stream) {
      return {
        body: {
          ...base,
          object: "chat.completion",
          choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
          usage,
        },
      };
    }
    const chunk = (extra: Record<string, unknown>) =>
      `data: ${JSON.stringify({ ...base, object: "chat.completion.chunk", ...extra })}\n\n`;
    return {
      events: [
        chunk({ choices: [{ index: 0, delta: { role: "assistant", content: text }, finish_reason: null }] }),
        chunk({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }),
        chunk({ choices: [], usage }),
        "data: [DONE]\n\n",
      ],
    };
  };
}

/** The caller's key appears in no header the provider got; the provider's own key is in one. */
function assertProviderKey(sent: Received, providerId: string, callerKey: string): void {
  const headers = JSON.stringify(sent.headers);
  assert.equal(headers.includes(callerKey), false);
  assert.equal(headers.includes(providerKey(providerId)), true, headers);
}

describe("Claude Code through the messages door (docs/gateway.md#claude-code)", { skip: SKIP }, () => {
  const logLines: string[] = [];
  const suite = suiteBench({ catalog: agentModels(), logLines });

  it("answers the prompt with the provider's text, sent once to a Messages provider (docs/gateway.md#provider-apis)", async () => {
    const { key } = await orgWithKey(suite.bench);
    const before = suite.bench.received.length;
    const prompt = "Reply with one word: marmalade-7Q";
    const run = await claudePrint(
      CLAUDE as string,
      suite.bench.server.origin,
      key.secret,
      MESSAGES_MODEL,
      prompt,
    );
    const report = reportOf(run);
    assert.equal(run.code, 0, report);
    assert.equal(run.json?.is_error, false, report);

    const sent = onlyRequestSince(suite.bench, before, report);
    assert.equal(sent.path.split("?")[0]?.endsWith("/messages"), true, sent.path);
    assertProviderKey(sent, "messages-only", key.secret);
    assert.equal(sent.body.model, MESSAGES_MODEL);
    assert.equal(JSON.stringify(sent.body.messages).includes(prompt), true);

    // The echo provider answers "Echo: " and the last user message: claude's result is that answer.
    assert.equal(run.json?.result.startsWith("Echo: "), true, report);
    assert.equal(run.json?.result.includes(prompt), true, report);
  });

  it("with ANTHROPIC_AUTH_TOKEN, to a chat-only provider: one translated chat completion, the same answer (docs/gateway.md#provider-apis)", async () => {
    const { key } = await orgWithKey(suite.bench);
    const before = suite.bench.received.length;
    const prompt = "Reply with one word: quince-4B";
    const run = await claudePrint(
      CLAUDE as string,
      suite.bench.server.origin,
      key.secret,
      CHAT_MODEL,
      prompt,
      {
        keyVariable: "ANTHROPIC_AUTH_TOKEN",
      },
    );
    const report = reportOf(run);
    assert.equal(run.code, 0, report);
    assert.equal(run.json?.is_error, false, report);

    const sent = onlyRequestSince(suite.bench, before, report);
    assert.equal(sent.path.endsWith("/chat/completions"), true, sent.path);
    assertProviderKey(sent, "chat-only", key.secret);
    assert.equal(sent.body.model, CHAT_MODEL);
    assert.equal(JSON.stringify(sent.body.messages).includes(prompt), true);
    assert.equal(run.json?.result.startsWith("Echo: "), true, report);
    assert.equal(run.json?.result.includes(prompt), true, report);
  });

  it("redact: an e-mail in claude's prompt never reaches the provider, and claude gets the answer to the redacted prompt (docs/behaviour.md#what-is-scanned)", async () => {
    const { steps, key } = await orgWithKey(suite.bench);
    await guardKey(steps, key, { content_filter_builtins: [{ slug: "email", action: "redact" }] });
    const before = suite.bench.received.length;
    const email = "dana.claude-probe@example.org";
    const prompt = `Draft a two-line note to ${email} about the lunch menu`;
    const run = await claudePrint(
      CLAUDE as string,
      suite.bench.server.origin,
      key.secret,
      MESSAGES_MODEL,
      prompt,
    );
    const report = reportOf(run);
    assert.equal(run.code, 0, report);

    const forwarded = JSON.stringify(onlyRequestSince(suite.bench, before, report).body);
    assert.equal(forwarded.includes(email), false);
    assert.equal(forwarded.includes("claude-probe@"), false);
    assert.equal(forwarded.includes("Draft a two-line note to [EMAIL] about the lunch menu"), true);

    // What came back is the echo of the redacted text; the address appears nowhere in it, nor in
    // the service's log lines (docs/behaviour.md#secrets-not-logged: no request body is logged).
    assert.equal(run.json?.result.includes("[EMAIL]"), true, report);
    assert.equal(run.json?.result.includes(email), false, report);
    assert.equal(
      logLines.some((l) => l.includes(email)),
      false,
    );
  });

  it("block: claude reports the refusal as an error result and exits 1; nothing reaches the provider (docs/behaviour.md#what-is-scanned)", async () => {
    const { steps, key } = await orgWithKey(suite.bench);
    await guardKey(steps, key, { content_filter_builtins: [{ slug: "email", action: "block" }] });
    const before = suite.bench.received.length;
    const prompt = "Write to erin.claude-block@example.org that the build is green";
    const run = await claudePrint(
      CLAUDE as string,
      suite.bench.server.origin,
      key.secret,
      MESSAGES_MODEL,
      prompt,
    );
    const report = reportOf(run);
    // A block is a 403, which claude sends once and does not retry with fewer features
    // (docs/gateway.md#claude-code); it prints "API Error: 403 <our message>".
    assert.equal(run.code, 1, report);
    assert.equal(run.json?.is_error, true, report);
    assert.equal(run.json?.api_error_status, 403, report);
    assert.equal(run.json?.result.includes("Request blocked by content filter"), true, report);
    assert.equal(suite.bench.received.length, before, report);
  });

  it("gateway model discovery reads the model list in the Anthropic shape and keeps the catalog's Claude models (docs/gateway.md#anthropic-model-list)", async () => {
    const shipped = await startGatewayBench();
    try {
      const { key } = await orgWithKey(shipped);
      const run = await claudePrint(
        CLAUDE as string,
        shipped.server.origin,
        key.secret,
        "anthropic/claude-sonnet-4.5",
        "Reply with one word: damson-2C",
        { discover: true },
      );
      const catalog = loadCatalogFile(DEFAULT_CONFIG_FILE).models;
      const claudeModels = catalog.filter((m) => m.slug.includes("claude"));
      assert.ok(claudeModels.length > 0 && claudeModels.length < catalog.length);
      // Claude Code offers only the models whose id names a Claude model, with our display names.
      assert.deepEqual(
        run.discovered,
        claudeModels.map((m) => ({ id: m.slug, display_name: m.name })),
        reportOf(run),
      );
    } finally {
      await shipped.close();
    }
  });

  describe("its small fast model, asked by a prompt hook (docs/gateway.md#claude-code-small-fast-model)", () => {
    /** The ledger entries of one key: model, API and session. */
    const ledgerOf = (keyHash: string) =>
      suite.bench.server.deps.db
        .selectFrom("spend_ledger")
        .select(["model", "api", "session_id"])
        .where("key_hash", "=", keyHash)
        .execute();

    /**
     * `claude -p` to the main model with the prompt hook, the small fast model on a chat-only
     * provider answering the hook with `verdict`.
     */
    async function printWithVerdict(
      secret: string,
      prompt: string,
      verdict: { ok: boolean; reason: string },
    ): Promise<ClaudeRun> {
      suite.bench.script.next = verdictFrom(CHAT_MODEL, verdict);
      try {
        return await claudePrint(
          CLAUDE as string,
          suite.bench.server.origin,
          secret,
          MESSAGES_MODEL,
          prompt,
          {
            smallFastModel: CHAT_MODEL,
            settings: PROMPT_HOOK,
          },
        );
      } finally {
        suite.bench.script.next = undefined;
      }
    }

    it("-p with ANTHROPIC_SMALL_FAST_MODEL naming another catalog model: the hook's request names it, is governed like any other (its e-mail redacted), translated to its chat provider, and recorded under its model with claude's session", async () => {
      const { steps, key } = await orgWithKey(suite.bench);
      await guardKey(steps, key, { content_filter_builtins: [{ slug: "email", action: "redact" }] });
      const before = suite.bench.received.length;
      const email = "fern.small-model@example.org";
      const prompt = `Reply with one word, then mail it to ${email}: loquat-6M`;
      const run = await printWithVerdict(key.secret, prompt, { ok: true, reason: "a harmless request" });
      const report = reportOf(run);
      assert.equal(run.code, 0, report);
      assert.equal(run.json?.is_error, false, report);

      const reached = suite.bench.received.slice(before);
      const small = reached.filter((r) => r.body.model === CHAT_MODEL);
      const main = reached.filter((r) => r.body.model === MESSAGES_MODEL);
      assert.equal(small.length, 1, report);
      assert.ok(main.length >= 1, report);
      assert.equal(small.length + main.length, reached.length, report);
      // The hook decides before the prompt is sent on.
      assert.ok(reached.indexOf(small[0] as Received) < reached.indexOf(main[0] as Received));

      const hook = small[0] as Received;
      assert.equal(hook.path.endsWith("/chat/completions"), true, hook.path);
      assertProviderKey(hook, "chat-only", key.secret);
      const forwarded = JSON.stringify(hook.body);
      assert.equal(forwarded.includes("loquat-6M"), true, forwarded.slice(0, 2000));
      assert.equal(forwarded.includes(email), false);
      assert.equal(forwarded.includes("[EMAIL]"), true);
      // The verdict's shape, asked as Messages' output_config.format, reaches the chat provider as
      // its response_format (docs/gateway.md#provider-apis).
      assert.equal(hook.body.response_format?.type, "json_schema", forwarded.slice(0, 2000));
      for (const r of main) assert.equal(JSON.stringify(r.body).includes(email), false);
      assert.equal(
        logLines.some((l) => l.includes(email)),
        false,
      );

      // Both models' requests are in the ledger, each under its own model and claude's session.
      const rows = await ledgerOf(key.hash);
      assert.deepEqual(
        rows.map((r) => [r.model, r.api, r.session_id]).sort(),
        reached.map((r) => [r.body.model, "messages", run.json?.session_id]).sort(),
      );
    });

    it("-p: the small model's answer is the verdict claude acts on; a refusal stops the prompt before the main model is asked", async () => {
      const { key } = await orgWithKey(suite.bench);
      const before = suite.bench.received.length;
      const reason = "prompts about tamarind-9P wait for review";
      const run = await printWithVerdict(key.secret, "Reply with one word: tamarind-9P", {
        ok: false,
        reason,
      });
      const report = reportOf(run);
      const reached = suite.bench.received.slice(before);
      assert.deepEqual(
        reached.map((r) => r.body.model),
        [CHAT_MODEL],
        report,
      );
      // It ends the run without an error, its result the hook's stop with the small model's reason.
      assert.equal(run.code, 0, report);
      assert.equal(run.json?.is_error, false, report);
      assert.equal(run.json?.result, `Operation stopped by hook: ${reason}`, report);
    });
  });

  describe("Anthropic's own model ids through the shipped catalog (docs/gateway.md#model-aliases)", () => {
    const shippedSuite = suiteBench();

    const SONNET_ID = "claude-sonnet-4-5-20250929";
    const HAIKU_ID = "claude-haiku-4-5-20251001";

    /** The ledger entries of one key: model, API and session. */
    const ledgerOf = (keyHash: string) =>
      shippedSuite.bench.server.deps.db
        .selectFrom("spend_ledger")
        .select(["model", "api", "session_id"])
        .where("key_hash", "=", keyHash)
        .execute();

    it("ANTHROPIC_MODEL and the small fast model as Anthropic's dated ids: every request names one of them, reaches the anthropic endpoint as it, and is recorded under the catalog's canonical slug with claude's session (docs/behaviour.md#usage-by-session)", async () => {
      const { key } = await orgWithKey(shippedSuite.bench);
      const before = shippedSuite.bench.received.length;
      const run = await claudePrint(
        CLAUDE as string,
        shippedSuite.bench.server.origin,
        key.secret,
        SONNET_ID,
        "Reply with one word: greengage-5D",
        { smallFastModel: HAIKU_ID },
      );
      const report = reportOf(run);
      assert.equal(run.code, 0, report);
      assert.equal(run.json?.is_error, false, report);
      const reached = shippedSuite.bench.received.slice(before);
      assert.ok(reached.length >= 1, report);
      // Claude Code 2.1.332 sends a plain -p turn on the main model only, with or without
      // non-essential traffic: nothing in it asks the small one unless a hook does
      // (docs/gateway.md#claude-code-small-fast-model).
      for (const r of reached) assert.ok([SONNET_ID, HAIKU_ID].includes(r.body.model), r.body.model);
      assert.ok(reached.some((r) => r.body.model === SONNET_ID));
      const catalog = shippedSuite.bench.server.deps.catalog;
      const canonical = new Map([
        [SONNET_ID, catalog.findModel(SONNET_ID)?.canonical_slug],
        [HAIKU_ID, catalog.findModel(HAIKU_ID)?.canonical_slug],
      ]);
      const rows = await ledgerOf(key.hash);
      assert.deepEqual(
        rows.map((r) => [r.model, r.api, r.session_id]).sort(),
        reached.map((r) => [canonical.get(r.body.model), "messages", run.json?.session_id]).sort(),
      );
    });

    it("interactively, in a terminal: the typed prompt is answered, its prompt hook asks the small fast model (docs/gateway.md#claude-code-small-fast-model), and its requests are recorded under the session claude names at exit", async () => {
      const { key } = await orgWithKey(shippedSuite.bench);
      const before = shippedSuite.bench.received.length;
      const prompt = "Reply with one word: mirabelle-8K";
      shippedSuite.bench.script.next = verdictFrom(HAIKU_ID, { ok: true, reason: "a harmless request" });
      let run: { code: number | null; screen: string };
      try {
        run = await claudeInteractive(
          CLAUDE as string,
          shippedSuite.bench.server.origin,
          key.secret,
          SONNET_ID,
          HAIKU_ID,
          prompt,
          { settings: PROMPT_HOOK },
        );
      } finally {
        shippedSuite.bench.script.next = undefined;
      }
      const screen = run.screen.slice(-4000);
      assert.ok(run.screen.includes("Echo:"), screen);
      const reached = shippedSuite.bench.received.slice(before);
      for (const r of reached) assert.ok([SONNET_ID, HAIKU_ID].includes(r.body.model), r.body.model);
      // The hook's one request to the small model comes first, then the turn on the main one.
      assert.deepEqual(
        reached.slice(0, 2).map((r) => r.body.model),
        [HAIKU_ID, SONNET_ID],
        screen,
      );
      assert.equal(reached.filter((r) => r.body.model === HAIKU_ID).length, 1, screen);
      for (const r of reached.slice(0, 2))
        assert.equal(JSON.stringify(r.body.messages).includes(prompt), true);
      // At exit it prints `claude --resume <session id>`.
      const session = /--resume\s*([0-9a-f-]{36})/.exec(run.screen)?.[1];
      assert.ok(session, screen);
      const rows = await ledgerOf(key.hash);
      assert.equal(rows.length, reached.length);
      for (const r of rows) assert.equal(r.session_id, session);
    });
  });
});
