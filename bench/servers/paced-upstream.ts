/**
 * A chat upstream that streams like a model: the echo of the last user message cut into pieces of
 * BENCH_PACE_CHARS characters (4), BENCH_PACE_EVENTS of them (400, the echo repeated as needed), one
 * every BENCH_PACE_MS (2). The gateway bench's time-to-first-token round talks to it
 * (docs/gateway.md#answer-streams): an upstream that writes its events at once, as ./upstream.ts
 * does, lets no hold-back show in the first token's time.
 *
 * The pieces follow a fixed schedule from the answer's start (piece i is due at i × the interval,
 * the first at once, with the role chunk), so a late timer makes the next pieces leave together
 * rather than pushing every later one back: the stream's pace stays the one asked.
 */
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { serveChild } from "../shared.js";

function positive(name: string, fallback: number): number {
  const raw = process.env[name];
  const value = raw === undefined || raw === "" ? fallback : Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
  return value;
}

const intervalMs = positive("BENCH_PACE_MS", 2);
const pieceChars = Math.round(positive("BENCH_PACE_CHARS", 4));
const pieceCount = Math.round(positive("BENCH_PACE_EVENTS", 400));

/** The last user message's text (a string, or text parts). */
function lastUserText(body: Record<string, unknown>): string {
  const messages = Array.isArray(body.messages) ? (body.messages as Record<string, unknown>[]) : [];
  const last = [...messages].reverse().find((m) => m?.role === "user");
  const content = last?.content;
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return content.map((p) => (typeof p?.text === "string" ? (p.text as string) : "")).join("");
  return "";
}

/** The answer's pieces: `Echo: <text>` repeated until it fills them, cut every `pieceChars`. */
function piecesOf(text: string): string[] {
  const echo = `Echo: ${text || "nothing was said"} `;
  let answer = echo;
  while (answer.length < pieceChars * pieceCount) answer += echo;
  return Array.from({ length: pieceCount }, (_, i) => answer.slice(i * pieceChars, (i + 1) * pieceChars));
}

function stream(res: ServerResponse, body: Record<string, unknown>): void {
  const model = typeof body.model === "string" ? body.model : "local";
  const id = `chatcmpl-paced-${Date.now().toString(36)}`;
  const created = Math.floor(Date.now() / 1000);
  const chunk = (delta: Record<string, unknown>, finish: string | null) =>
    `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const pieces = piecesOf(lastUserText(body));
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  res.write(chunk({ role: "assistant", content: "" }, null));
  const started = performance.now();
  let next = 0;
  const tick = () => {
    if (res.destroyed) return;
    const due = Math.floor((performance.now() - started) / intervalMs);
    // Every piece whose time has come goes in one write, as a provider's buffered events would.
    let out = "";
    for (; next <= due && next < pieces.length; next++) out += chunk({ content: pieces[next] }, null);
    if (next < pieces.length) {
      if (out !== "") res.write(out);
      setTimeout(tick, Math.max(0, started + next * intervalMs - performance.now()));
      return;
    }
    const usage = { prompt_tokens: 1000, completion_tokens: pieceCount, total_tokens: 1000 + pieceCount };
    out += chunk({}, "stop");
    const options = body.stream_options as { include_usage?: unknown } | undefined;
    if (options?.include_usage === true)
      out += `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [], usage })}\n\n`;
    res.end(`${out}data: [DONE]\n\n`);
  };
  tick();
}

const server = createServer({ noDelay: true }, (req, res) => {
  if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
    res.writeHead(404, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { message: "only POST .../chat/completions is served here" } }));
    return;
  }
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
    } catch {
      res.writeHead(400, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: "the body is not JSON" } }));
      return;
    }
    if (body.stream === true) {
      stream(res, body);
      return;
    }
    const content = piecesOf(lastUserText(body)).join("");
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        id: `chatcmpl-paced-${Date.now().toString(36)}`,
        object: "chat.completion",
        created: Math.floor(Date.now() / 1000),
        model: typeof body.model === "string" ? body.model : "local",
        choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
        usage: { prompt_tokens: 1000, completion_tokens: pieceCount, total_tokens: 1000 + pieceCount },
      }),
    );
  });
});
server.keepAliveTimeout = 60_000;
await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
const { port } = server.address() as AddressInfo;
serveChild({ type: "ready", origin: `http://127.0.0.1:${port}/v1`, key: null }, async () => {
  server.closeAllConnections();
  await new Promise<void>((done) => server.close(() => done()));
});
