import { PassThrough, type Readable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import { DEFAULT_OUTPUT_ALLOWANCE } from "../domain/budget-admission.js";
import type { Endpoint, Model, Region } from "../domain/catalog.js";
import type { ChatBody } from "../domain/chat-texts.js";
import { budgetViolation, costMicros, type Decision, promptTokenBound } from "../domain/decision.js";
import { AppError } from "../domain/errors.js";
import { type KeyPolicy, resolveKeyPolicy } from "../services/effective-policy.js";
import type { AlertWatch } from "../services/raise-budget-alerts.js";
import { forwardedText } from "./forward-body.js";
import { type GatewayDeps, outputCap, type Prepared, prepareRequest, withOutputCap } from "./prepare.js";
import { type AnswerDefaults, completeAnswerText } from "./response-fields.js";
import { admitRequest, type Reservation, release, settle } from "./spend.js";
import { ChunkReader, type Usage, usageOf } from "./stream-chunks.js";
import {
  bodyFailureKind,
  connectHint,
  failureKind,
  readLimited,
  UpstreamFailure,
  type UpstreamReply,
} from "./upstream.js";

/** Where the gateway logs: the request's logger, which carries the request id. */
export interface GatewayLog {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

/**
 * How much of a streamed answer the relay keeps for a client that reads slower than the provider
 * sends (on each side of its PassThrough, so about twice this in all).
 */
const CLIENT_ALLOWANCE = 512 * 1024;

/** Largest upstream answer read whole (non-streaming). */
const MAX_UPSTREAM_BODY = 32 * 1024 * 1024;
/**
 * A reservation outlives the provider's time-out by this much before the sweep may release it; a
 * request still in flight renews it at half its length (docs/behaviour.md#budget-reservations).
 */
const HOLD_MARGIN_MS = 60_000;

/** The response header that carries the output cap the budgets set (docs/gateway.md#budgets). */
export const OUTPUT_CAP_HEADER = "x-guardrails-max-tokens";

export type GatewayAnswer = (
  | { kind: "json"; status: number; contentType: string; payload: string }
  | { kind: "stream"; stream: Readable }
) & { headers: Record<string, string> };

/** One forwarded request: what to charge it and how to answer for it. */
class Attempt {
  reservation: Reservation | null = null;
  /** The timer that renews the reservation (keepHeld). */
  private renewal: NodeJS.Timeout | undefined;
  endpoint: Endpoint;
  started = process.hrtime.bigint();

  constructor(
    readonly gw: GatewayDeps,
    readonly keyPolicy: KeyPolicy,
    readonly model: Model,
    readonly prepared: Prepared,
    readonly requestId: string,
    readonly log: GatewayLog,
  ) {
    this.endpoint = prepared.decision.endpoints[0] as Endpoint;
  }

  /** Upstream usage when reported; otherwise the prompt bound and about four bytes a token. */
  usage(reported: Usage | undefined, completionBytes: number): Usage {
    if (reported) return reported;
    const texts = this.prepared.texts;
    return {
      prompt_tokens: promptTokenBound(texts, this.prepared.redacted.messages.length),
      completion_tokens: Math.ceil(completionBytes / 4),
    };
  }

  /**
   * Renews the reservation at half its hold while the request is in flight, so that a request that
   * runs longer than its first hold (a long stream) is never swept while it still spends.
   */
  keepHeld(holdMs: number): void {
    const reservation = this.reservation;
    if (!reservation) return;
    const services = this.gw.services;
    this.renewal = setInterval(() => {
      const expiresAt = new Date(services.now().getTime() + holdMs).toISOString();
      services.spend.renew(reservation, expiresAt).catch((err: unknown) => {
        this.log.warn({ err }, "renewing a budget reservation failed");
      });
    }, holdMs / 2);
    this.renewal.unref();
  }

  async settle(usage: Usage): Promise<void> {
    clearInterval(this.renewal);
    const cost = costMicros(this.model, this.endpoint, usage.prompt_tokens, usage.completion_tokens);
    const provider = this.endpoint.provider;
    await settle(this.gw.services, this.reservation, {
      requestId: this.requestId,
      key: this.keyPolicy.key,
      model: this.model.canonical_slug,
      provider,
      byok: this.endpoint.byok,
      promptTokens: usage.prompt_tokens,
      completionTokens: usage.completion_tokens,
      costMicros: cost,
      guardrailIds: this.keyPolicy.applied.map((a) => a.guardrail.id),
    });
    this.watchAlerts();
    this.gw.metrics.spendMicros.inc({ provider }, cost);
    this.gw.metrics.upstreamSeconds.observe(
      { provider },
      Number(process.hrtime.bigint() - this.started) / 1e9,
    );
  }

  async release(): Promise<void> {
    clearInterval(this.renewal);
    await release(this.gw.services, this.reservation);
  }

  /** Hands the charged counters whose guardrail has alert thresholds to the alerts; never waits. */
  private watchAlerts(): void {
    const alerts = this.gw.alerts;
    const counters = this.reservation?.counters;
    if (!alerts || !counters) return;
    // The reservation's counters are those of the counted layers, in order, in the request's window.
    const counted = this.prepared.decision.budgets.filter((c) => c.counts);
    const watches: AlertWatch[] = [];
    counted.forEach((c, i) => {
      const counter = counters[i];
      const thresholds = this.keyPolicy.applied.find((a) => a.guardrail.id === c.layer.guardrail_id)
        ?.guardrail.alert_thresholds;
      if (counter && thresholds && thresholds.length > 0)
        watches.push({ counter, limit_micros: c.layer.limit_micros, thresholds });
    });
    if (watches.length > 0)
      alerts.check({
        organizationId: this.keyPolicy.key.organization_id,
        keyHash: this.keyPolicy.key.hash,
        watches,
      });
  }
}

function refuse(gw: GatewayDeps, decision: Decision): never {
  const v = decision.violations[0];
  if (!v) throw new Error("refusing an allowed decision");
  gw.metrics.requests.inc({ outcome: "refused", reason: v.rule });
  throw new AppError(v.code, v.metadata, v.message);
}

/** The upstream failures worth trying the next endpoint for: nothing was answered yet. */
function retryable(status: number): boolean {
  return status === 429 || status >= 500;
}

async function upstreamError(gw: GatewayDeps, provider: string, reply: UpstreamReply): Promise<AppError> {
  const text = await readLimited(reply.body).catch(() => "");
  gw.metrics.upstreamErrors.inc({ provider, kind: "status" });
  let upstreamMessage: string | undefined;
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } };
    if (typeof parsed.error?.message === "string") upstreamMessage = parsed.error.message.slice(0, 500);
  } catch {
    // Not JSON: the status says enough.
  }
  const metadata = {
    reason: "upstream_status",
    provider,
    upstream_status: reply.status,
    upstream_message: upstreamMessage,
  };
  if (reply.status === 429) return new AppError("upstream_rate_limited", metadata);
  // The caller's request was refused by the provider: theirs to fix, so a 400 with the provider's words.
  if ([400, 404, 413, 422].includes(reply.status))
    return new AppError("invalid_request", { ...metadata, reason: "upstream_rejected" });
  return new AppError("upstream_error", metadata);
}

/**
 * The answer to an upstream failure. `answered` (the request's log) is given once the provider had
 * answered and its body was being read: the failure is then read as a broken answer rather than as
 * nothing answered (docs/gateway.md#upstream-stream-broken), and said in that log.
 */
function failureError(gw: GatewayDeps, provider: string, err: unknown, answered?: GatewayLog): AppError {
  const kind = answered ? bodyFailureKind(err) : failureKind(err);
  gw.metrics.upstreamErrors.inc({ provider, kind });
  if (kind === "timeout") return new AppError("upstream_timeout", { reason: "upstream_timeout", provider });
  if (kind === "stream_broken") {
    // The error's own text (an undici or socket message) names no secret and no message text.
    answered?.warn({ provider, cause: (err as Error | undefined)?.message }, "upstream answer broken off");
    return new AppError("upstream_error", {
      reason: "upstream_stream_broken",
      provider,
      detail:
        "the provider's answer was cut off part-way: its connection closed or broke after it began to answer",
    });
  }
  if (kind === "connect") {
    const address = gw.upstreams.addressOf(provider);
    return new AppError("upstream_error", {
      reason: "upstream_connect",
      provider,
      address,
      hint: connectHint(provider, address),
    });
  }
  return new AppError("upstream_error", { reason: `upstream_${kind}`, provider });
}

async function readWhole(body: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += (chunk as Buffer).length;
    if (size > MAX_UPSTREAM_BODY) {
      body.destroy();
      throw new UpstreamFailure("protocol", "upstream");
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Sends the request to the first endpoint that answers, trying the next only when nothing was
 * answered (connection failures, 429, 5xx), and only endpoints charged alike (same free and
 * bring-your-own-key standing) so the reservation still fits.
 */
async function sendToUpstream(
  a: Attempt,
  body: ChatBody,
  sent: { body: ChatBody; text?: string | undefined },
  signal: AbortSignal | undefined,
): Promise<UpstreamReply> {
  const first = a.endpoint;
  const alike = a.prepared.decision.endpoints.filter((e) => e.free === first.free && e.byok === first.byok);
  let lastError: AppError | undefined;
  for (const endpoint of alike) {
    a.endpoint = endpoint;
    a.started = process.hrtime.bigint();
    const payload = forwardedText(sent.text, sent.body, body, endpoint.model_id ?? a.model.slug);
    try {
      const reply = await a.gw.upstreams.send(endpoint.provider, payload, signal);
      if (reply.status < 400) return reply;
      lastError = await upstreamError(a.gw, endpoint.provider, reply);
      if (!retryable(reply.status)) break;
    } catch (err) {
      lastError = failureError(a.gw, endpoint.provider, err);
    }
    a.log.warn({ provider: endpoint.provider, error: lastError.metadata }, "upstream attempt failed");
  }
  throw lastError ?? new AppError("upstream_error");
}

/**
 * The governed request path for the inference key with this hash: its effective guardrails decide,
 * then reserve, forward (with redactions), settle. Refusals throw the AppError of the first violated
 * rule; the reservation is released on every failure.
 */
export async function completeChat(
  gw: GatewayDeps,
  keyHash: string,
  request: { body: ChatBody; text?: string | undefined },
  ingress: Region,
  requestId: string,
  log: GatewayLog,
  noteDecision: (details: Record<string, unknown>) => void,
): Promise<GatewayAnswer> {
  const keyPolicy = await resolveKeyPolicy(gw.services, keyHash);
  if (!keyPolicy) throw new AppError("invalid_api_key");
  const body = request.body;
  let prepared = await prepareRequest(gw, keyPolicy, body, ingress, false);
  const decision = prepared.decision;
  for (const hit of decision.scan.hits) {
    gw.metrics.detections.inc(
      { filter: hit.filter.type === "builtin" ? hit.filter.slug : "custom", action: hit.action },
      hit.count,
    );
  }
  // The decision and what the filters found (which filter, how often), never the text: for the
  // request's log line.
  noteDecision({
    decision: decision.allowed ? "allow" : (decision.violations[0]?.rule ?? "refuse"),
    model: decision.model?.canonical_slug,
    detections: decision.scan.hits.map((h) => ({ filter: h.filter, action: h.action, count: h.count })),
  });
  if (!decision.allowed) refuse(gw, decision);
  const model = decision.model as Model;
  const attempt = new Attempt(gw, keyPolicy, model, prepared, requestId, log);
  const hold = gw.upstreams.timeoutOf(attempt.endpoint.provider) + (gw.holdMarginMs ?? HOLD_MARGIN_MS);
  const allowance = gw.output ?? DEFAULT_OUTPUT_ALLOWANCE;
  const admitted = await admitRequest(
    gw.services,
    keyPolicy.key,
    decision.budgets,
    { price: decision.price, wanted: decision.wanted_tokens, minimal: allowance.minimalTokens },
    hold,
  );
  if (!admitted.ok) {
    // Decide again on the usage read now, for the refusal's details (settled spend and holds apart).
    prepared = await prepareRequest(gw, keyPolicy, body, ingress, true, prepared);
    if (!prepared.decision.allowed) refuse(gw, prepared.decision);
    // The holds were released between the two: the store's own answer still stands.
    const check = prepared.decision.budgets[admitted.index] ?? decision.budgets[admitted.index];
    if (!check) throw new Error("a refused admission names no budget layer");
    const v = budgetViolation(check, admitted.admission.reason, admitted.admission.tokens_that_fit);
    gw.metrics.requests.inc({ outcome: "refused", reason: v.rule });
    throw new AppError(v.code, v.metadata, v.message);
  }
  attempt.reservation = admitted.reservation;
  const cap = admitted.admission ? outputCap(body, model, admitted.admission.tokens) : null;
  const headers: Record<string, string> = cap === null ? {} : { [OUTPUT_CAP_HEADER]: String(cap) };
  const capped = withOutputCap(prepared.redacted, cap);
  const stream = body.stream === true;
  const forwarded: ChatBody = stream
    ? {
        ...capped,
        stream_options: { ...(body.stream_options as object | undefined), include_usage: true },
      }
    : capped;
  // Only a stream is stopped when its client goes away; a signal costs every request listeners.
  const controller = stream ? new AbortController() : undefined;
  let reply: UpstreamReply;
  // From here every way out settles or releases, which ends the renewals.
  attempt.keepHeld(hold);
  try {
    reply = await sendToUpstream(attempt, forwarded, request, controller?.signal);
  } catch (err) {
    await attempt.release();
    gw.metrics.requests.inc({ outcome: "upstream_error", reason: (err as AppError).code ?? "error" });
    throw err;
  }
  const defaults: AnswerDefaults = {
    id: `gen-${requestId}`,
    created: Math.floor(gw.services.now().getTime() / 1000),
    model: model.slug,
  };
  if (controller && reply.contentType.startsWith("text/event-stream")) {
    const clientWantsUsage =
      (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
    return {
      kind: "stream",
      stream: relayStream(attempt, reply.body, clientWantsUsage, controller, defaults),
      headers,
    };
  }
  let text: string;
  try {
    text = await readWhole(reply.body);
  } catch (err) {
    await attempt.release();
    gw.metrics.requests.inc({ outcome: "upstream_error", reason: bodyFailureKind(err) });
    throw failureError(gw, attempt.endpoint.provider, err, log);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  await attempt.settle(attempt.usage(usageOf(parsed), Buffer.byteLength(text)));
  gw.metrics.requests.inc({ outcome: "forwarded", reason: "" });
  const payload = reply.status < 300 ? completeAnswerText(text, parsed, defaults) : text;
  return { kind: "json", status: reply.status, contentType: reply.contentType, payload, headers };
}

/**
 * The data of one server-sent event: the values of its `data:` lines, joined by newlines. Almost
 * every event of a chat stream is one such line, read without splitting it.
 */
function eventData(event: string): string {
  if (event.startsWith("data:") && !event.includes("\n")) return event.slice(5).trimStart();
  return event
    .split("\n")
    .filter((l) => l.startsWith("data:"))
    .map((l) => l.slice(5).trimStart())
    .join("\n");
}

/**
 * Relays the upstream's server-sent events to the client as they come. The usage chunk (asked for
 * with include_usage) is read for the cost and passed on only if the client asked for it too; the
 * closing [DONE] is sent after the spend is settled, so an answered stream is always charged.
 */
function relayStream(
  a: Attempt,
  upstream: Readable,
  clientWantsUsage: boolean,
  controller: AbortController,
  defaults: AnswerDefaults,
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
  void (async () => {
    let buffer = "";
    let usage: Usage | undefined;
    let completionBytes = 0;
    let failed = false;
    const chunks = new ChunkReader(defaults, clientWantsUsage);
    /** What to send the client instead of one event of the upstream's: null for the event itself. */
    const onEvent = (event: string): string | null => {
      const data = eventData(event);
      // The upstream's own [DONE] is dropped: the relay sends its own once the spend is settled.
      if (data === "[DONE]") return "";
      const facts = chunks.read(data);
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
        for (let at = buffer.indexOf("\n\n"); at >= 0; at = buffer.indexOf("\n\n", start)) {
          const instead = onEvent(buffer.slice(start, at));
          if (instead !== null) {
            reply += buffer.slice(run, start) + instead;
            run = at + 2;
          }
          start = at + 2;
        }
        reply += buffer.slice(run, start);
        buffer = buffer.slice(start);
        const taken = reply !== "" ? send(reply) : undefined;
        if (taken) await taken;
      }
      buffer += decoder.end();
      const last = buffer.trim() !== "" ? (onEvent(buffer) ?? `${buffer}\n\n`) : "";
      if (last !== "") send(last);
    } catch (err) {
      failed = true;
      if (client) {
        const error = failureError(a.gw, a.endpoint.provider, err, a.log);
        send(
          `data: ${JSON.stringify({ error: { code: error.status, message: error.message, metadata: error.metadata } })}\n\n`,
        );
      }
    }
    upstreamDone = true;
    try {
      await a.settle(a.usage(usage, completionBytes));
      const outcome = !client ? "client_closed" : failed ? "upstream_error" : "forwarded";
      a.gw.metrics.requests.inc({ outcome, reason: "" });
    } catch (err) {
      a.log.error({ err }, "settling a streamed request failed");
    }
    send("data: [DONE]\n\n");
    out.end();
  })();
  return out;
}
