import { DEFAULT_CONFIG_FILE, loadCatalogFile } from "../src/config.js";
import type { Principal } from "../src/services/context.js";
import type { createOrganization } from "../src/services/organizations.js";

/** What a server child sends its parent once it listens. */
export interface ReadyMessage {
  type: "ready";
  origin: string;
  /** Bearer secret for the service's management API (the baseline takes none). */
  key: string | null;
}

/** What the parent sends a server child to end it. */
export interface StopMessage {
  type: "stop";
}

const catalog = loadCatalogFile(DEFAULT_CONFIG_FILE);
/** Three real model slugs from the shipped catalog. */
export const ALLOWED_MODELS = catalog.models.slice(0, 3).map((m) => m.slug);

/**
 * The body of POST /guardrails: every commonly set field. `[<id>]` is replaced by autocannon with a
 * random id, so every created guardrail has its own name.
 */
export function createBody(): Record<string, unknown> {
  return {
    name: "bench guardrail [<id>]",
    description: "Production traffic of the support assistant: approved models, monthly budget, no PII.",
    allowed_models: ALLOWED_MODELS,
    limit_usd: 250,
    reset_interval: "monthly",
    content_filter_builtins: [
      { slug: "email", action: "redact" },
      { slug: "regex-prompt-injection", action: "block", scan_scope: "user_only" },
    ],
  };
}

/** PATCH bodies, rotated so consecutive updates really change the row. */
export function updateBodies(count: number): string[] {
  return Array.from({ length: count }, (_, i) =>
    JSON.stringify({
      description: `Budget raised for the quarter (revision ${i}).`,
      limit_usd: 100 + i * 5,
      reset_interval: i % 2 === 0 ? "monthly" : "weekly",
      allowed_models: ALLOWED_MODELS.slice(0, 1 + (i % ALLOWED_MODELS.length)),
    }),
  );
}

const CHAT_BODY = JSON.stringify({
  model: "meta-llama/llama-3.1-8b-instruct",
  messages: [
    { role: "system", content: "You are a concise assistant." },
    { role: "user", content: "Summarize the weekly report for the team in two sentences, please." },
  ],
  max_tokens: 200,
});

/** The chat completion of the gateway benchmarks, POSTed to `path` (gateway or upstream). */
export function chatLoad(path: string): { path: string; method: "POST"; body: string } {
  return { path, method: "POST", body: CHAT_BODY };
}

/** Sends `ready` and ends the process on `stop` or when the parent goes away. */
export function serveChild(ready: ReadyMessage, stop: () => Promise<void>): void {
  let stopping = false;
  const end = async () => {
    if (stopping) return;
    stopping = true;
    await stop();
    // A normal exit, so --cpu-prof writes its profile.
    process.exit(0);
  };
  process.on("message", (message: StopMessage) => {
    if (message.type === "stop") void end();
  });
  process.on("disconnect", () => void end());
  process.send?.(ready);
}

/** The management principal of an organization that `createOrganization` made, for calling services directly. */
export function managementPrincipal(made: Awaited<ReturnType<typeof createOrganization>>): Principal {
  return {
    organizationId: made.organization.id,
    keyHash: made.key.record.hash,
    kind: "management",
    workspaceId: null,
  };
}
