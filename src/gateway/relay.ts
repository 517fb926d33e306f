import { PassThrough, type Readable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import type { FilterHit } from "../domain/content-scan.js";
import { AppError } from "../domain/errors.js";
import type { GuardedReader } from "./answers/stream.js";
import type { Attempt } from "./attempt.js";
import type { EventReader, Surface, Usage } from "./surfaces/surface.js";
import { failureError } from "./upstream-errors.js";

/**
 * How much of a streamed answer the relay keeps for a client that reads slower than the provider
 * sends (on each side of its PassThrough, so about twice this in all).
 */
const CLIENT_ALLOWANCE = 512 * 1024;

/**
 * The data of one server-sent event: the values of its `data:` lines, joined by newlines. Almost
 * every event of a chat stream is one such line, and almost every event of a Messages or Responses
 * stream is an `event:` line and one `data:` line: both are read without splitting them
 * (docs/gateway.md#stream-fast-paths).
 */
export function eventData(event: string): string {
  const nl = event.indexOf("\n");
  if (nl < 0) return event.startsWith("data:") ? event.slice(5).trimStart() : "";
  if (!event.startsWith("data:") && event.startsWith("data:", nl + 1) && event.indexOf("\n", nl + 1) < 0)
    return event.slice(nl + 6).trimStart();
  return event
    .split("\n")
    .filter((l) => l.startsWith("data:"))
    .map((l) => l.slice(5).trimStart())
    .join("\n");
}

/**
 * Relays the upstream's server-sent events to the client as they come, each read by the surface's
 * `events` reader (chat: the usage chunk asked for with include_usage is read for the cost and
 * passed on only if the client asked for it too); the surface's closing event ([DONE]) is sent
 * after the spend is settled, so an answered stream is always charged.
 */
export function relayStream(
  a: Attempt,
  upstream: Readable,
  surface: Pick<Surface<object>, "api" | "streamTerminator" | "streamEnd" | "errorBody" | "errorEvent">,
  events: EventReader,
  controller: AbortController,
  /**
   * The answer filters on this stream (docs/gateway.md#answer-streams): `events` itself, wrapped,
   * and where its detections go (the request's log line).
   */
  answers?: { guard: GuardedReader; note(hits: FilterHit[]): void },
): Readable {
  // Up to this much of the answer waits for a slow client in the gateway, so an answer of ordinary
  // size is read, and settled, at the provider's pace whoever reads it; beyond it the relay waits
  // for the client (docs/gateway.md#streaming).
  const out = new PassThrough({ highWaterMark: CLIENT_ALLOWANCE });
  let client = true;
  /** Whether the upstream's stream has ended (read to its end, or failed). */
  let upstreamDone = false;
  out.on("close", () => {
    client = false;
    // The client went away: stop the upstream too; what it produced so far is still charged. Once
    // the upstream has ended there is nothing to stop (an abort builds an error and its stack).
    if (!upstreamDone) controller.abort();
  });
  // A client may take nothing for as long as the provider may stay silent between chunks.
  const patience = a.gw.upstreams.timeoutOf(a.endpoint.provider);
  /**
   * Sends text on to the client. When the client takes it slower than the upstream sends, the
   * promise to wait for before reading on, so the upstream is held back rather than its answer
   * held in memory; a client that takes nothing for `patience` is cut off, as a silent provider
   * is (docs/gateway.md#streaming).
   */
  const send = (text: string): Promise<void> | undefined => {
    if (!client || out.write(text)) return undefined;
    return new Promise<void>((resolve) => {
      const cut = setTimeout(() => out.destroy(), patience);
      const go = () => {
        clearTimeout(cut);
        out.off("drain", go);
        out.off("close", go);
        resolve();
      };
      out.on("drain", go);
      out.on("close", go);
    });
  };
  const terminator = surface.streamTerminator;
  void (async () => {
    let buffer = "";
    let usage: Usage | undefined;
    let completionBytes = 0;
    let failed = false;
    let refused: AppError | undefined;
    /** What to send the client instead of one event of the upstream's: null for the event itself. */
    const onEvent = (event: string): string | null => {
      const data = eventData(event);
      // The upstream's own end ([DONE]) is dropped: the relay sends its own once the spend is settled.
      if (data === terminator) return "";
      const facts = events.read(data);
      usage = facts.usage ?? usage;
      completionBytes += facts.contentBytes;
      return facts.send;
    };
    // Providers split their bytes anywhere, a character's too: a streaming decoder keeps the
    // unfinished bytes of one read for the next instead of turning them into U+FFFD.
    // Node's StringDecoder: the same text as TextDecoder's streaming mode, invalid bytes included,
    // at a seventh of its cost on a read of tens of KB.
    const decoder = new StringDecoder("utf8");
    try {
      for await (const piece of upstream) {
        // A CR ending one read may pair with the LF starting the next, so the pair is joined here.
        buffer = (buffer + decoder.write(piece as Buffer)).replaceAll("\r\n", "\n");
        // The events one read completes go to the client in one write (a write per event cost a
        // system call each, docs/gateway.md#streaming); those that go on as they came are sent as
        // the run of the text they stand in, whole.
        let reply = "";
        let run = 0;
        let start = 0;
        try {
          for (let at = buffer.indexOf("\n\n"); at >= 0; at = buffer.indexOf("\n\n", start)) {
            const instead = onEvent(buffer.slice(start, at));
            if (instead !== null) {
              reply += buffer.slice(run, start) + instead;
              run = at + 2;
            }
            start = at + 2;
          }
        } catch (err) {
          // The events before a refused one were decided: they go out before the refusal.
          reply += buffer.slice(run, start);
          if (reply !== "") send(reply);
          throw err;
        }
        reply += buffer.slice(run, start);
        buffer = buffer.slice(start);
        const taken = reply !== "" ? send(reply) : undefined;
        if (taken) await taken;
      }
      buffer += decoder.end();
      const last = buffer.trim() !== "" ? (onEvent(buffer) ?? `${buffer}\n\n`) : "";
      if (last !== "") send(last);
      if (answers) {
        // What the channels still hold, decided now that the answer is complete.
        const held = answers.guard.finish();
        usage = held.usage ?? usage;
        completionBytes += held.contentBytes;
        if (held.send !== null && held.send !== "") send(held.send);
      }
    } catch (err) {
      failed = true;
      if (answers && err instanceof AppError && err.code === "guardrail_refused") {
        // Blocked or unscanned: nothing more of the answer is read or sent, what was produced is
        // charged, and the stream ends with the door's error (docs/gateway.md#answer-streams).
        refused = err;
        upstream.destroy();
        controller.abort();
        if (client) send(answers.guard.refusal(err));
      } else if (client) {
        const error = failureError(a.gw, a.endpoint.provider, err, a.log);
        const body = surface.errorBody
          ? surface.errorBody(error)
          : { error: { code: error.status, message: error.message, metadata: error.metadata } };
        const name = surface.errorEvent === undefined ? "" : `event: ${surface.errorEvent}\n`;
        send(`${name}data: ${JSON.stringify(body)}\n\n`);
      }
    }
    upstreamDone = true;
    try {
      await a.settle(a.usage(usage, completionBytes));
      const outcome = refused
        ? "refused"
        : !client
          ? "client_closed"
          : failed
            ? "upstream_error"
            : "forwarded";
      const reason = refused ? String(refused.metadata?.reason ?? "answer_content_filter") : "";
      a.gw.metrics.requests.inc({ outcome, reason, api: surface.api });
    } catch (err) {
      a.log.error({ err }, "settling a streamed request failed");
    }
    if (answers) {
      const hits = answers.guard.hits();
      for (const hit of hits)
        a.gw.metrics.detections.inc(
          {
            filter: hit.filter.type === "builtin" ? hit.filter.slug : "custom",
            action: hit.action,
            direction: "response",
          },
          hit.count,
        );
      answers.note(hits);
    }
    const closing = (client && !failed && events.end?.()) || "";
    if (closing !== "" || surface.streamEnd !== "") send(closing + surface.streamEnd);
    out.end();
  })();
  return out;
}
