import assert from "node:assert/strict";
import { request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before } from "node:test";
import { DEFAULT_CONFIG_FILE, loadCatalogFile } from "../../src/config.js";
import type { Api, CatalogData } from "../../src/domain/catalog.js";
import {
  type LocalUpstream,
  type ReceivedRequest,
  type ScriptedAnswer,
  startLocalUpstream,
} from "../../src/local-upstream/server.js";
import {
  type ApiResponse,
  call,
  clientFor,
  startTestServer,
  type TestOrg,
  type TestServer,
  type TestServerOptions,
} from "../helpers/server.js";
import { type MadeKey, orgSteps } from "./org-support.js";

/**
 * The gateway's test bench (docs/gateway.md#what-happens-to-a-request): the real service on a real SQLite file, and the bundled local
 * upstream on another loopback port standing in for every provider (a party outside the project),
 * recording what reached it.
 */

/** A model served by a global, a US and a European endpoint in the default catalog. */
export const SONNET = "anthropic/claude-sonnet-4.5";
/** A model served only by the `local` provider. */
export const LLAMA = "meta-llama/llama-3.1-8b-instruct";

/** A request as the upstream received it. */
export interface Received extends ReceivedRequest {
  // biome-ignore lint/suspicious/noExplicitAny: tests read the forwarded JSON body and assert on it.
  body: any;
}

export interface GatewayBench {
  server: TestServer;
  upstream: LocalUpstream;
  /** Every request the upstream received, oldest first. */
  received: Received[];
  /** Replace to script the upstream's next answers (undefined: answer normally). */
  script: { next?: (r: ReceivedRequest) => ScriptedAnswer | undefined };
  close(): Promise<void>;
}

/** The provider key each provider is configured with in the bench: never the caller's key. */
export const providerKey = (id: string) => `upstream-key-${id}`;

/**
 * The provider key a request reached the upstream with: in `x-api-key` for a provider that takes
 * it there (Anthropic's), else as a Bearer key (docs/gateway.md#provider-auth).
 */
export function upstreamKeyOf(received: ReceivedRequest | undefined): string | undefined {
  const apiKey = received?.headers["x-api-key"];
  if (typeof apiKey === "string") return apiKey;
  return received?.headers.authorization?.replace(/^Bearer /, "");
}

export async function startGatewayBench(
  options: TestServerOptions & { timeoutMs?: number; catalog?: CatalogData } = {},
): Promise<GatewayBench> {
  const received: Received[] = [];
  const script: GatewayBench["script"] = {};
  const upstream = await startLocalUpstream({
    onRequest: (r) => received.push(r),
    script: (r) => script.next?.(r),
  });
  const base = options.catalog ?? loadCatalogFile(DEFAULT_CONFIG_FILE);
  const catalog: CatalogData = {
    ...base,
    providers: base.providers.map((p) => ({ ...p, timeout_ms: options.timeoutMs ?? p.timeout_ms })),
  };
  const server = await startTestServer({
    ...options,
    catalog,
    upstreamUrl: upstream.url,
    providerKeys: Object.fromEntries(catalog.providers.map((p) => [p.id, providerKey(p.id)])),
  });
  return {
    server,
    upstream,
    received,
    script,
    async close() {
      await server.close();
      await upstream.close();
    },
  };
}

/** $0.06 and $0.18 per million prompt and completion tokens in the default catalog. */
export const MISTRAL_SMALL = "mistralai/mistral-small-3.2-24b-instruct";
/** Served by a bring-your-own-key endpoint (azure) besides openai's own. */
export const GPT_41 = "openai/gpt-4.1";
/** Sonnet at 3 and 15 micro-dollars a token: 1000 prompt and 100 completion tokens cost 4,500. */
export const USAGE_4500 = { prompt_tokens: 1000, completion_tokens: 100 };

/** A bench whose clock the tests set, for budgets whose windows turn with the date. */
export interface ClockedBench extends GatewayBench {
  /** What the service takes as now. */
  clock: Date;
  /** Runs `run` while the upstream reports `usage` for every answer, each sent after `delayMs`. */
  withUsage<T>(usage: typeof USAGE_4500, run: () => Promise<T>, delayMs?: number): Promise<T>;
}

/**
 * Starts a bench with a settable clock before the enclosing describe block's tests and closes it
 * after them; call it in the block's body. Its parts are read through once the block has begun.
 */
export function clockedBench(start: Date): ClockedBench {
  let started: GatewayBench | undefined;
  const running = (): GatewayBench => {
    if (!started) throw new Error("the bench starts in the describe block's before hook");
    return started;
  };
  const clocked: ClockedBench = {
    get server() {
      return running().server;
    },
    get upstream() {
      return running().upstream;
    },
    get received() {
      return running().received;
    },
    get script() {
      return running().script;
    },
    close: () => running().close(),
    clock: start,
    async withUsage(usage, run, delayMs = 0) {
      const { script } = running();
      script.next = () => ({ delayMs, usage });
      try {
        return await run();
      } finally {
        script.next = undefined;
      }
    },
  };
  before(async () => {
    started = await startGatewayBench({ now: () => clocked.clock });
  });
  after(async () => {
    await started?.close();
  });
  return clocked;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON bodies and assert on them.
  body: any;
}

/** A POST with a chosen Host header, so the request arrives through a region address (docs/behaviour.md#ingress-region). */
export function post(
  server: TestServer,
  path: string,
  key: string,
  body: unknown,
  host?: string,
  /** The body's media type; a string body is sent as it is. */
  contentType = "application/json",
): Promise<RawResponse> {
  return rawPost(
    server,
    path,
    { authorization: `Bearer ${key}`, "content-type": contentType, ...(host ? { host } : {}) },
    typeof body === "string" ? body : JSON.stringify(body),
  );
}

/** A POST with exactly these headers (and the payload's length), for what an SDK will not send. */
export function rawPost(
  server: TestServer,
  path: string,
  headers: Record<string, string>,
  payload: string,
): Promise<RawResponse> {
  const { port } = new URL(server.origin);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path,
        method: "POST",
        headers: { ...headers, "content-length": Buffer.byteLength(payload) },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
        });
        res.on("end", () => {
          let parsed: unknown = text;
          if ((res.headers["content-type"] ?? "").includes("json") && text) parsed = JSON.parse(text);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body: parsed });
        });
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

export function chat(server: TestServer, key: string, body: Record<string, unknown>, host?: string) {
  return post(server, "/api/v1/chat/completions", key, body, host);
}

export const ask = (content: string, model = SONNET) => ({ model, messages: [{ role: "user", content }] });

/** An organization with one inference key, ready to govern. */
export async function orgWithKey(bench: GatewayBench): Promise<{
  org: TestOrg;
  steps: ReturnType<typeof orgSteps>;
  key: MadeKey;
}> {
  const org = await bench.server.newOrg();
  const steps = orgSteps(bench.server, org);
  const key = await steps.key();
  return { org, steps, key };
}

/** A guardrail assigned to one key. */
export async function guardKey(
  steps: ReturnType<typeof orgSteps>,
  key: MadeKey,
  body: Record<string, unknown>,
): Promise<string> {
  const g = await steps.guardrail(body);
  assert.equal(await steps.assignKeys(g.id, [key.hash]), 1);
  return g.id;
}

/** The server-sent events of a streamed answer, as parsed data objects (without [DONE]). */
export function events(text: string): { data: unknown[]; done: boolean } {
  const data: unknown[] = [];
  let done = false;
  for (const block of text.split("\n\n")) {
    const line = block.split("\n").find((l) => l.startsWith("data:"));
    if (!line) continue;
    const value = line.slice(5).trim();
    if (value === "[DONE]") done = true;
    else data.push(JSON.parse(value));
  }
  return { data, done };
}

/** The events of a streamed answer: each event's `event:` name and parsed data. */
export function namedEvents(text: string): { name: string | undefined; data: Record<string, unknown> }[] {
  const out: { name: string | undefined; data: Record<string, unknown> }[] = [];
  for (const block of text.split("\n\n")) {
    const lines = block.split("\n");
    const data = lines.filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim());
    if (data.length === 0) continue;
    const name = lines
      .find((l) => l.startsWith("event:"))
      ?.slice(6)
      .trim();
    out.push({ name, data: JSON.parse(data.join("\n")) });
  }
  return out;
}

/** Runs `use` with the upstream scripted by `next`, answering normally again after, whatever happens. */
export async function withScript<T>(
  bench: GatewayBench,
  next: NonNullable<GatewayBench["script"]["next"]>,
  use: () => Promise<T>,
): Promise<T> {
  bench.script.next = next;
  try {
    return await use();
  } finally {
    bench.script.next = undefined;
  }
}

/** The shipped catalog with the named providers speaking only `apis` (docs/gateway.md#provider-apis). */
export function catalogSpeaking(providerIds: string[], apis: Api[]): CatalogData {
  const shipped = loadCatalogFile(DEFAULT_CONFIG_FILE);
  return {
    ...shipped,
    providers: shipped.providers.map((p) => (providerIds.includes(p.id) ? { ...p, apis } : p)),
  };
}

/** A chat completion stream's events, each chunk as the provider would write it, then [DONE]. */
export const chatStream = (...data: unknown[]): string[] => [
  ...data.map((d) => `data: ${JSON.stringify(d)}\n\n`),
  "data: [DONE]\n\n",
];

/**
 * The chunks of a chat answer that is one tool call, streamed: the call opened with its id and
 * name, its arguments in `pieces`, the `tool_calls` finish, then the usage chunk.
 */
export function toolCallChunks(
  model: string,
  call: { id: string; name: string },
  pieces: string[],
  usage: { prompt_tokens: number; completion_tokens: number },
): Record<string, unknown>[] {
  const base = { id: "c1", object: "chat.completion.chunk", created: 1, model };
  return [
    {
      ...base,
      choices: [
        {
          index: 0,
          delta: {
            role: "assistant",
            tool_calls: [
              { index: 0, id: call.id, type: "function", function: { name: call.name, arguments: "" } },
            ],
          },
        },
      ],
    },
    ...pieces.map((arguments_) => ({
      ...base,
      choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: arguments_ } }] } }],
    })),
    { ...base, choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] },
    {
      ...base,
      choices: [],
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    },
  ];
}

/**
 * The event types a client read from a stream the upstream broke off after `breakStreamAfter`
 * events, the client having raised `error` at the break (docs/gateway.md#upstream-stream-broken).
 */
export async function typesBeforeBreak(
  bench: GatewayBench,
  breakStreamAfter: number,
  open: () => AsyncIterable<{ type: string }> | Promise<AsyncIterable<{ type: string }>>,
  error: Parameters<typeof assert.rejects>[1],
): Promise<string[]> {
  const seen: string[] = [];
  await withScript(
    bench,
    () => ({ breakStreamAfter }),
    async () => {
      const stream = await open();
      await assert.rejects(async () => {
        for await (const event of stream) seen.push(event.type);
      }, error);
    },
  );
  return seen;
}

/** After a stream broken off: what was sent is charged and nothing stays reserved (docs/behaviour.md#budgets). */
export async function assertChargedNothingReserved(bench: GatewayBench, secret: string): Promise<void> {
  const current = await call(bench.server, "GET", "/api/v1/key", { key: secret });
  assert.equal(current.body.data.budgets[0].reserved_usd, 0);
  assert.equal(current.body.data.usage > 0, true);
}

/** The usage report's bench: two organizations' requests on one day, read the next day. */
export interface UsageDay {
  readonly bench: GatewayBench;
  /** The organization whose report is read. */
  readonly setup: Awaited<ReturnType<typeof orgWithKey>>;
  /** Another organization, whose requests never show in `setup`'s report. */
  readonly other: Awaited<ReturnType<typeof orgWithKey>>;
  /** A GET as `key` (the organization's management key by default). */
  get(path: string, key?: string): Promise<ApiResponse>;
  /** The usage report of `day` with the query's other parameters. */
  usage(query: string): Promise<ApiResponse>;
}

/**
 * Starts a bench before the suite's tests (call inside `describe`) whose clock stands on `day`
 * while `send` makes its requests, each charged 1,000 prompt and 100 completion tokens, and moves to
 * noon of the next day after, so the report reads a closed day (docs/behaviour.md#usage-by-api,
 * docs/behaviour.md#usage-by-session).
 */
export function usageDay(
  day: string,
  send: (bench: GatewayBench, setup: UsageDay["setup"], other: UsageDay["other"]) => Promise<void>,
): UsageDay {
  let clock = new Date(`${day}T10:00:00.000Z`);
  let started: { bench: GatewayBench; setup: UsageDay["setup"]; other: UsageDay["other"] } | undefined;
  before(async () => {
    const bench = await startGatewayBench({ now: () => clock });
    const setup = await orgWithKey(bench);
    const other = await orgWithKey(bench);
    started = { bench, setup, other };
    await withScript(
      bench,
      () => ({ usage: { prompt_tokens: 1000, completion_tokens: 100 } }),
      () => send(bench, setup, other),
    );
    clock = new Date(Date.parse(`${day}T12:00:00.000Z`) + 86_400_000);
  });
  after(async () => {
    await started?.bench.close();
  });
  const ready = () => {
    assert.ok(started, "the bench is started before the tests");
    return started;
  };
  const get = (path: string, key?: string) =>
    clientFor(ready().bench.server, key ?? ready().setup.org.key).get(path);
  return {
    get bench() {
      return ready().bench;
    },
    get setup() {
      return ready().setup;
    },
    get other() {
      return ready().other;
    },
    get,
    usage: (query: string) => get(`/api/v1/usage?from=${day}&to=${day}&${query}`),
  };
}

/**
 * The service, with the shipped catalog, in front of a hand-written upstream that `start` listens
 * (one that answers as no bundled upstream does), and one inference key; started before the suite's
 * tests and closed after them (call inside `describe`).
 */
export function behindUpstream(start: () => Promise<Server>): {
  readonly server: TestServer;
  readonly secret: string;
} {
  let started: { upstream: Server; server: TestServer; secret: string } | undefined;
  before(async () => {
    // The SDK falls back to these variables; the tests pass everything explicitly.
    delete process.env.OPENROUTER_API_KEY;
    delete process.env.OPENROUTER_BASE_URL;
    const upstream = await start();
    const catalog = loadCatalogFile(DEFAULT_CONFIG_FILE);
    const server = await startTestServer({
      catalog,
      upstreamUrl: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`,
      providerKeys: Object.fromEntries(catalog.providers.map((p) => [p.id, providerKey(p.id)])),
    });
    const secret = (await orgSteps(server, await server.newOrg()).key()).secret;
    started = { upstream, server, secret };
  });
  after(async () => {
    await started?.server.close();
    await new Promise((resolve) => started?.upstream.close(resolve));
  });
  const ready = () => {
    assert.ok(started, "the service is started before the tests");
    return started;
  };
  return {
    get server() {
      return ready().server;
    },
    get secret() {
      return ready().secret;
    },
  };
}

/** The data of each server-sent event of a streamed answer, parsed ("[DONE]" left out). */
export function streamData(text: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const block of text.split("\n\n")) {
    const data = block
      .split("\n")
      .filter((l) => l.startsWith("data:"))
      .map((l) => l.slice(5).trim())
      .join("\n");
    if (data !== "" && data !== "[DONE]") out.push(JSON.parse(data));
  }
  return out;
}

/** One HTTP/1.1 response as read off the wire. */
export interface WireResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Consecutive HTTP/1.1 responses with Content-Length bodies, parsed from raw bytes. */
export function parseWireResponses(raw: Buffer): WireResponse[] {
  const out: WireResponse[] = [];
  let rest = raw;
  while (rest.length > 0) {
    const end = rest.indexOf("\r\n\r\n");
    if (end < 0) break;
    const [statusLine = "", ...lines] = rest.subarray(0, end).toString("latin1").split("\r\n");
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(":");
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers["content-length"] ?? 0);
    out.push({
      status: Number(statusLine.split(" ")[1]),
      headers,
      body: rest.subarray(end + 4, end + 4 + length).toString("utf8"),
    });
    rest = rest.subarray(end + 4 + length);
  }
  return out;
}
