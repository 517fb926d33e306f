import type { IncomingHttpHeaders } from "node:http";
import type { Readable } from "node:stream";
import { answerShapeOf } from "../domain/answer-texts.js";
import { DEFAULT_OUTPUT_ALLOWANCE } from "../domain/budget-admission.js";
import type { Api, Model, Region } from "../domain/catalog.js";
import type { FilterHit } from "../domain/content-scan.js";
import { budgetViolation, type Decision } from "../domain/decision.js";
import { AppError } from "../domain/errors.js";
import { resolveKeyPolicy } from "../services/effective-policy.js";
import { answerFiltersOf } from "./answers/policy.js";
import { guardStream } from "./answers/stream-guard.js";
import { filterWholeAnswer, type WholeAnswer } from "./answers/whole.js";
import { Attempt, type GatewayLog } from "./attempt.js";
import { forwardedText } from "./forward-body.js";
import { type GatewayDeps, outputCap, prepareRequest } from "./prepare.js";
import { relayStream } from "./relay.js";
import { admitRequest } from "./spend.js";
import type { AnswerDefaults, Surface } from "./surfaces/surface.js";
import { bodyFailureKind, UpstreamFailure, type UpstreamReply } from "./upstream.js";
import { failureError, retryable, upstreamError } from "./upstream-errors.js";

export type { GatewayLog } from "./attempt.js";

/**
 * The governed request path, the same for every governed API (a surface, surfaces/surface.ts):
 * decide, admit (reserve the budgets), forward, answer. What differs between the APIs is read from
 * the surface.
 */

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

function refuse(gw: GatewayDeps, api: Api, decision: Decision): never {
  const v = decision.violations[0];
  if (!v) throw new Error("refusing an allowed decision");
  gw.metrics.requests.inc({ outcome: "refused", reason: v.rule, api });
  throw new AppError(v.code, v.metadata, v.message);
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

/** The header Claude Code names its session in (docs/behaviour.md#usage-by-session). */
export const SESSION_HEADER = "x-claude-code-session-id";
/** Visible ASCII, bounded: an id to group by, never text to store at length. */
const SESSION_ID = /^[\x21-\x7e]{1,128}$/;

/**
 * The session a request's client named, or null when it named none or one not of the form: a bad
 * value is ignored, never an error (docs/behaviour.md#usage-by-session). A header sent twice is
 * joined with ", " by Node, which the form refuses.
 */
export function sessionIdOf(headers: IncomingHttpHeaders | undefined): string | null {
  const value = headers?.[SESSION_HEADER];
  return typeof value === "string" && SESSION_ID.test(value) ? value : null;
}

/** The header naming the tools a translated request left out (docs/gateway.md#provider-apis). */
export const DROPPED_TOOLS_HEADER = "x-guardrails-dropped-tools";

/** How the request went to the endpoint that answered: in the surface's own API, or as chat. */
type Wire = { native: true } | { native: false; dropped: string[] };

/**
 * Sends the request to the first endpoint that answers, trying the next only when nothing was
 * answered (connection failures, 429, 5xx), and only endpoints charged alike (same free and
 * bring-your-own-key standing) so the reservation still fits. An endpoint whose provider does not
 * speak the surface's API is sent the request translated to chat completions.
 */
async function sendToUpstream<Body extends object>(
  a: Attempt,
  surface: Surface<Body>,
  bodies: { forwarded: Body; capped: Body },
  stream: boolean,
  sent: { body: object; text?: string | undefined },
  signal: AbortSignal | undefined,
  extra: Record<string, string> | undefined,
): Promise<{ reply: UpstreamReply; wire: Wire }> {
  const first = a.endpoint;
  const catalog = a.gw.services.catalog;
  const alike = a.prepared.decision.endpoints.filter((e) => e.free === first.free && e.byok === first.byok);
  // An endpoint that speaks the API itself is tried before one it is translated for: nothing of the
  // request is lost in translation there (docs/gateway.md#provider-apis). The sort is stable, so the
  // catalog's order holds among each kind.
  if (surface.translation) {
    const native = alike.filter((e) => catalog.speaks(e.provider, surface.api));
    if (native.length > 0 && native.length < alike.length)
      alike.splice(
        0,
        alike.length,
        ...native,
        ...alike.filter((e) => !catalog.speaks(e.provider, surface.api)),
      );
  }
  let translated: { body: object; dropped: string[] } | undefined;
  let lastError: AppError | undefined;
  for (const endpoint of alike) {
    a.endpoint = endpoint;
    a.started = process.hrtime.bigint();
    const model = endpoint.model_id ?? a.model.slug;
    const translation = catalog.speaks(endpoint.provider, surface.api) ? undefined : surface.translation;
    let path = surface.upstreamPath;
    let payload: string;
    let wire: Wire = { native: true };
    let headers = extra;
    if (translation) {
      headers = undefined;
      translated ??= translation.request(bodies.capped, stream);
      path = translation.upstreamPath;
      payload = JSON.stringify({ ...translated.body, model });
      wire = { native: false, dropped: translated.dropped };
    } else payload = forwardedText(sent.text, sent.body, bodies.forwarded, model);
    try {
      const reply = await a.gw.upstreams.send(endpoint.provider, path, payload, signal, headers);
      if (reply.status < 400) return { reply, wire };
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
 * The governed request path for the inference key with this hash, for a request of `surface`'s
 * API: its effective guardrails decide, then reserve, forward (with redactions), settle. Refusals
 * throw the AppError of the first violated rule; the reservation is released on every failure.
 */
export async function completeGoverned<Body extends object>(
  gw: GatewayDeps,
  surface: Surface<Body>,
  keyHash: string,
  request: { body: Body; text?: string | undefined; headers?: IncomingHttpHeaders },
  ingress: Region,
  requestId: string,
  log: GatewayLog,
  noteDecision: (details: Record<string, unknown>) => void,
): Promise<GatewayAnswer> {
  const keyPolicy = await resolveKeyPolicy(gw.services, keyHash);
  if (!keyPolicy) throw new AppError("invalid_api_key");
  const body = request.body;
  // Read before anything is decided: a bad one is the client's 400, whoever would answer.
  const extra =
    surface.upstreamHeaders && request.headers ? surface.upstreamHeaders(request.headers) : undefined;
  let prepared = await prepareRequest(gw, surface, keyPolicy, body, ingress, false);
  const decision = prepared.decision;
  for (const hit of decision.scan.hits) {
    gw.metrics.detections.inc(
      { filter: hit.filter.type === "builtin" ? hit.filter.slug : "custom", action: hit.action },
      hit.count,
    );
  }
  // The decision and what the filters found (which filter, how often), never the text: for the
  // request's log line. Kept: a streamed answer's detections are added once it has ended, before its log line is written.
  const details: Record<string, unknown> = {
    decision: decision.allowed ? "allow" : (decision.violations[0]?.rule ?? "refuse"),
    model: decision.model?.canonical_slug,
    detections: decision.scan.hits.map((h) => ({ filter: h.filter, action: h.action, count: h.count })),
  };
  noteDecision(details);
  if (!decision.allowed) refuse(gw, surface.api, decision);
  const model = decision.model as Model;
  const attempt = new Attempt(gw, keyPolicy, model, prepared, requestId, log);
  attempt.sessionId = sessionIdOf(request.headers);
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
    prepared = await prepareRequest(gw, surface, keyPolicy, body, ingress, true, prepared);
    if (!prepared.decision.allowed) refuse(gw, surface.api, prepared.decision);
    // The holds were released between the two: the store's own answer still stands.
    const check = prepared.decision.budgets[admitted.index] ?? decision.budgets[admitted.index];
    if (!check) throw new Error("a refused admission names no budget layer");
    const v = budgetViolation(check, admitted.admission.reason, admitted.admission.tokens_that_fit);
    gw.metrics.requests.inc({ outcome: "refused", reason: v.rule, api: surface.api });
    throw new AppError(v.code, v.metadata, v.message);
  }
  attempt.reservation = admitted.reservation;
  const cap = admitted.admission ? outputCap(surface, body, model, admitted.admission.tokens) : null;
  const headers: Record<string, string> = cap === null ? {} : { [OUTPUT_CAP_HEADER]: String(cap) };
  const stream = surface.streams(body);
  const capped = surface.withOutputCap(prepared.redacted, cap);
  // As forwarded in the surface's own API; a translation starts from `capped`, the redacted request.
  const forwarded = surface.forwardBody(capped, body, stream);
  // Only a stream is stopped when its client goes away; a signal costs every request listeners.
  const controller = stream ? new AbortController() : undefined;
  let reply: UpstreamReply;
  let wire: Wire;
  // From here every way out settles or releases, which ends the renewals.
  attempt.keepHeld(hold);
  try {
    ({ reply, wire } = await sendToUpstream(
      attempt,
      surface,
      { forwarded, capped },
      stream,
      request,
      controller?.signal,
      extra,
    ));
  } catch (err) {
    await attempt.release();
    gw.metrics.requests.inc({
      outcome: "upstream_error",
      reason: (err as AppError).code ?? "error",
      api: surface.api,
    });
    throw err;
  }
  const translation = wire.native ? undefined : surface.translation;
  if (!wire.native && wire.dropped.length > 0) headers[DROPPED_TOOLS_HEADER] = wire.dropped.join(", ");
  const defaults: AnswerDefaults = {
    id: `gen-${requestId}`,
    created: Math.floor(gw.services.now().getTime() / 1000),
    model: model.slug,
  };
  if (controller && reply.contentType.startsWith("text/event-stream")) {
    const events = translation ? translation.events(capped, defaults) : surface.eventReader(body, defaults);
    // A translated stream still ends, and fails, in the surface's own API.
    const ends = translation
      ? {
          api: surface.api,
          streamTerminator: translation.streamTerminator,
          streamEnd: "",
          errorBody: surface.errorBody,
          errorEvent: surface.errorEvent,
        }
      : surface;
    // Answer filters (docs/gateway.md#answer-streams): only when the policy has some, else the
    // stream is relayed exactly as before.
    const filters = answerFiltersOf(keyPolicy.policy, gw.detectors);
    const guard =
      filters === null
        ? null
        : guardStream(
            surface.id,
            translation !== undefined,
            events,
            filters,
            keyPolicy.applied,
            defaults,
            (error) => {
              const body = surface.errorBody
                ? surface.errorBody(error)
                : { error: { code: error.status, message: error.message, metadata: error.metadata } };
              const name = surface.errorEvent === undefined ? "" : `event: ${surface.errorEvent}\n`;
              return `${name}data: ${JSON.stringify(body)}\n\n`;
            },
          );
    const answers = guard
      ? {
          guard,
          note: (hits: FilterHit[]) => {
            details.answer_detections = hits.map((h) => ({
              filter: h.filter,
              action: h.action,
              count: h.count,
            }));
          },
        }
      : undefined;
    return {
      kind: "stream",
      stream: relayStream(attempt, reply.body, ends, guard ?? events, controller, answers),
      headers,
    };
  }
  let text: string;
  try {
    text = await readWhole(reply.body);
  } catch (err) {
    await attempt.release();
    gw.metrics.requests.inc({ outcome: "upstream_error", reason: bodyFailureKind(err), api: surface.api });
    throw failureError(gw, attempt.endpoint.provider, err, log);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const usage = translation ? translation.usageOf(parsed) : surface.usageOf(parsed);
  await attempt.settle(attempt.usage(usage, Buffer.byteLength(text)));
  let answer: WholeAnswer = { text, parsed };
  // Read as the upstream sent it, before it is completed or translated (docs/gateway.md#answer-filters);
  // under a policy with no answer filter nothing is read, and the answer goes on as before.
  const answerFilters = reply.status < 300 ? answerFiltersOf(keyPolicy.policy, gw.detectors) : null;
  const shape = answerFilters ? answerShapeOf(translation ? "chat" : surface.api) : null;
  if (answerFilters && shape)
    answer = await filterWholeAnswer(gw, keyPolicy, answerFilters, shape, surface.api, answer, log, (found) =>
      noteDecision({ ...details, answer_detections: found }),
    );
  gw.metrics.requests.inc({ outcome: "forwarded", reason: "", api: surface.api });
  let payload = answer.text;
  if (reply.status < 300)
    payload = translation
      ? translation.answer(answer.text, answer.parsed, capped, defaults)
      : surface.completeAnswer(answer.text, answer.parsed, defaults);
  return { kind: "json", status: reply.status, contentType: reply.contentType, payload, headers };
}
