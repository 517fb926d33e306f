import { readFileSync } from "node:fs";
import type { CatalogData } from "../src/domain/catalog.js";
import type { Principal } from "../src/services/context.js";
import type { createOrganization } from "../src/services/organizations.js";

/** What a server child sends its parent once it listens. */
export interface ReadyMessage {
  type: "ready";
  origin: string;
  /** Bearer secret for the service's management API (the baseline takes none). */
  key: string | null;
  /** Headers every request to this child carries (the peer gateway's configuration). */
  headers?: Record<string, string>;
  /** The window W of the answer filters the gateway child governs its key with (0 for none). */
  answerWindow?: number;
}

/** What the parent sends a server child to end it, or to ask for the CPU time it has used so far. */
export interface StopMessage {
  type: "stop" | "cpu";
}

/** A server child's answer to `{type: "cpu"}`: its process.cpuUsage(), user + system, in µs. */
export interface CpuMessage {
  type: "cpu";
  micros: number;
}

// The shipped catalog read as data: a server child loads the service's modules from one build
// (./build.ts), which importing src/config.ts here would duplicate.
const catalog = JSON.parse(
  readFileSync(new URL("../config/default.json", import.meta.url), "utf8"),
) as CatalogData;
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

/**
 * Ten custom patterns, written so RE2 (this service) and JavaScript's RegExp (the peer gateway's
 * regexMatch check) read them alike: no inline flags, no lookaround, no backreferences.
 */
export const BENCH_PATTERNS = [
  "PRJ-[0-9]{4,8}",
  "[Cc]odename\\s+[a-z]+",
  "\\bACCT[0-9]{10}\\b",
  "[Ii]nternal use only",
  "\\b[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}\\b",
  "\\b[Cc]onfidential\\b",
  "ticket #[0-9]+",
  "\\bEMP-[0-9]{6}\\b",
  "[Dd]o not distribute",
  "\\b(?:sk|pk)_test_[A-Za-z0-9]{16,}\\b",
];

/**
 * About 4 KB of prose a support assistant might be sent, with nothing any builtin detector or the
 * patterns above match: under the full guardrail (every filter on block) each request is scanned
 * whole and still forwarded, so the round measures the scan and not a refusal.
 */
const PARAGRAPHS = [
  "We are preparing the quarterly summary of how the support queue behaved over the last three months, and we would like a short overview that the whole team can read before the planning meeting.",
  "Most requests this quarter were about billing questions, password resets and the new export feature. Response times improved after the queue was split by topic, although the weekend shifts still struggle when a release goes out on a Friday afternoon.",
  "The export feature generated more questions than expected. Customers were unsure which file format to choose, and several asked whether the archive keeps the original folder structure. The help article was rewritten twice and the number of questions dropped by about a third afterwards.",
  "Billing questions were mostly about invoices that arrived later than usual during the migration of the payment system. The finance team sent a notice to every affected account, and the follow-up questions were answered with a saved reply that explained the delay and the new schedule.",
  "Satisfaction scores stayed stable overall. The lowest scores came from long conversations that were handed between several agents, so we want to try keeping one owner per conversation from the first answer to the last one, even across shifts.",
  "For the next quarter we plan to publish a short guide on choosing export formats, to add a status page entry whenever invoices are delayed, and to measure how often a conversation changes hands before it is solved.",
];
export const BENCH_PROMPT = (() => {
  let text = "";
  for (let i = 0; text.length < 4000; i++) text += `${PARAGRAPHS[i % PARAGRAPHS.length]}\n\n`;
  return `Please summarize the following notes in three sentences for the team.\n\n${text.trimEnd()}`;
})();

/** The bench's chat model: its first endpoint's provider (groq in the catalog) speaks only chat. */
export const CHAT_MODEL = "meta-llama/llama-3.1-8b-instruct";
/** A chat model whose every provider speaks only chat: a Responses request to it is translated. */
export const CHAT_ONLY_MODEL = "meta-llama/llama-3.3-70b-instruct";
/** A model whose first provider speaks the Anthropic Messages API itself (anthropic). */
export const MESSAGES_MODEL = "anthropic/claude-sonnet-4.5";
/** A model served by a provider that speaks the Responses API itself (openai). */
export const RESPONSES_MODEL = "openai/gpt-4.1";
/** The echo upstream's embedding model (local) and OpenAI's. */
export const EMBEDDING_MODEL = "openai/text-embedding-3-small";

/** A chat completion of `prompt`, the gateway bench's request. */
export function chatBody(prompt: string, model = CHAT_MODEL): string {
  return JSON.stringify({
    model,
    messages: [
      { role: "system", content: "You are a concise assistant." },
      { role: "user", content: prompt },
    ],
    max_tokens: 200,
  });
}

/** The same request in the Responses API: the system message as `instructions`, the prompt as `input`. */
/** An Anthropic Messages request of `prompt`, the bench's request on the Messages door. */
export function messagesBody(prompt: string, model: string, stream = false): string {
  return JSON.stringify({
    model,
    system: "You are a concise assistant.",
    messages: [{ role: "user", content: prompt }],
    max_tokens: 200,
    ...(stream ? { stream: true } : {}),
  });
}

export function responsesBody(prompt: string, model: string): string {
  return JSON.stringify({
    model,
    instructions: "You are a concise assistant.",
    input: prompt,
    max_output_tokens: 200,
  });
}

/** An embeddings request of `prompt` as its one input. */
export function embeddingsBody(prompt: string): string {
  return JSON.stringify({ model: EMBEDDING_MODEL, input: prompt });
}

const FULL_CHAT_BODY = chatBody(BENCH_PROMPT);

/** The gateway bench's request: the 4 KB prompt, POSTed to `path`. */
export function promptLoad(path: string): { path: string; method: "POST"; body: string } {
  return { path, method: "POST", body: FULL_CHAT_BODY };
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
    if (message.type === "cpu") {
      const used = process.cpuUsage();
      process.send?.({ type: "cpu", micros: used.user + used.system } satisfies CpuMessage);
    }
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
