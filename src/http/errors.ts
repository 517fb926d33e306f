import type { Socket } from "node:net";
import type { ErrorObject } from "ajv";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { AppError, ERROR_CODES, type ErrorCode, type ErrorEnvelope, type Issue } from "../domain/errors.js";
import { answeredEarly } from "./linger.js";
import { NOT_UPDATABLE } from "./schemas/guardrail.js";

declare module "fastify" {
  interface FastifyContextConfig {
    /** The route's API's own error body (a governed route's Surface.errorBody); absent: the service's. */
    errorBody?: ErrorEnvelope;
  }
}

/** At most this many issues are listed in one 400: enough to fix a body, bounded for huge ones. */
const MAX_ISSUES = 50;

function errorBody(code: ErrorCode, metadata?: Record<string, unknown>, text?: string) {
  const { status } = ERROR_CODES[code];
  const message = text ?? ERROR_CODES[code].message;
  return { error: metadata ? { code: status, message, metadata } : { code: status, message } };
}

export function sendError(
  reply: FastifyReply,
  code: ErrorCode,
  metadata?: Record<string, unknown>,
  message?: string,
): FastifyReply {
  return reply
    .code(ERROR_CODES[code].status)
    .type("application/json; charset=utf-8")
    .send(errorBody(code, metadata, message));
}

/** A property name as one JSON Pointer token (RFC 6901): `~` and `/` escaped. */
function pointerToken(name: string): string {
  return name.replaceAll("~", "~0").replaceAll("/", "~1");
}

/** Turns Ajv's errors into one readable issue per offending property. */
export function issuesFromValidation(errors: ErrorObject[], context: string, isUpdate: boolean): Issue[] {
  const byPath = new Map<string, string[]>();
  const add = (path: string, message: string) => {
    const list = byPath.get(path) ?? [];
    if (!list.includes(message)) list.push(message);
    byPath.set(path, list);
  };
  for (const e of errors) {
    switch (e.keyword) {
      case "additionalProperties": {
        const prop = String((e.params as { additionalProperty: string }).additionalProperty);
        const notUpdatable = isUpdate && e.instancePath === "" && NOT_UPDATABLE.includes(prop);
        add(
          `${e.instancePath}/${pointerToken(prop)}`,
          notUpdatable ? "cannot be updated" : "is not a known property",
        );
        break;
      }
      case "required":
        add(
          `${e.instancePath}/${pointerToken((e.params as { missingProperty: string }).missingProperty)}`,
          "is required",
        );
        break;
      case "anyOf":
        break;
      case "enum":
        add(
          e.instancePath,
          `must be one of: ${(e.params as { allowedValues: unknown[] }).allowedValues.join(", ")}`,
        );
        break;
      default:
        add(e.instancePath, e.message ?? "is invalid");
    }
  }
  const issues: Issue[] = [];
  const paths = [...byPath.keys()];
  for (const [path, messages] of byPath) {
    // "must be null" on a list whose items failed says nothing the item issues do not.
    if (messages.every((m) => m === "must be null") && paths.some((p) => p.startsWith(`${path}/`))) continue;
    // A nullable property's failed branches read better as one message: "must be array or null",
    // and "must be null" says nothing when the value failed the non-null branch for another reason.
    const types = messages.filter((m) => /^must be [a-z]+$/.test(m));
    const others = messages.filter((m) => !types.includes(m));
    const merged =
      others.length > 0
        ? [...others, ...types.filter((m) => m !== "must be null")]
        : [`must be ${types.map((m) => m.slice(8)).join(" or ")}`];
    const issue: Issue = { path, message: merged.join("; ") };
    if (context !== "body") Object.assign(issue, { in: context });
    issues.push(issue);
  }
  return issues.slice(0, MAX_ISSUES);
}

const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: "payload_too_large",
  FST_ERR_CTP_INVALID_MEDIA_TYPE: "unsupported_media_type",
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: "invalid_request",
  FST_ERR_CTP_EMPTY_JSON_BODY: "invalid_request",
  FST_ERR_CTP_INVALID_JSON_BODY: "invalid_request",
};

/** What an error answers: status, body and headers, and whether its details belong in the log. */
export type { ErrorEnvelope };

export interface ErrorAnswer {
  status: number;
  /** The service's error body, or the route's API's own (`ErrorEnvelope`). */
  body: unknown;
  headers: Record<string, string>;
  /** A failure of ours (5xx): its details go to the log under the request id, never to the client. */
  logged: boolean;
}

function answerOf(
  code: ErrorCode,
  metadata?: Record<string, unknown>,
  message?: string,
  envelope?: ErrorEnvelope,
): ErrorAnswer {
  return {
    status: ERROR_CODES[code].status,
    body: envelope ? envelope(new AppError(code, metadata, message)) : errorBody(code, metadata, message),
    headers: {},
    logged: false,
  };
}

/**
 * The one place that turns any error into the HTTP error body (CONTRIBUTING.md#errors), for the
 * Fastify app and for the governed routes served straight from Node's server alike; `envelope` is
 * the route's API's own error body, when it has one (docs/gateway.md#messages-errors).
 */
export function errorAnswer(
  err: FastifyError | AppError | Error,
  method: string,
  envelope?: ErrorEnvelope,
): ErrorAnswer {
  if (err instanceof AppError) {
    const answer = envelope
      ? { status: envelope.statusOf?.(err) ?? err.status, body: envelope(err), headers: {}, logged: false }
      : answerOf(err.code, err.metadata, err.message);
    answer.logged = err.status >= 500;
    // A refusal worth retrying says when (a budget held by requests in flight).
    const retryAfter = err.metadata?.retry_after_seconds;
    if (typeof retryAfter === "number") answer.headers["retry-after"] = String(retryAfter);
    return answer;
  }
  const fe = err as FastifyError;
  if (fe.validation) {
    const issues = issuesFromValidation(
      fe.validation as ErrorObject[],
      fe.validationContext ?? "body",
      method === "PATCH",
    );
    return answerOf("invalid_request", { issues }, undefined, envelope);
  }
  const mapped = fe.code ? FASTIFY_CODES[fe.code] : undefined;
  if (mapped) {
    const reason =
      mapped === "invalid_request" ? { issues: [{ path: "", message: bodyProblem(fe) }] } : undefined;
    return answerOf(mapped, reason, undefined, envelope);
  }
  if (typeof fe.statusCode === "number" && fe.statusCode >= 400 && fe.statusCode < 500) {
    return answerOf(
      "invalid_request",
      { issues: [{ path: "", message: "the request could not be read" }] },
      undefined,
      envelope,
    );
  }
  const answer = answerOf("internal", undefined, undefined, envelope);
  answer.logged = true;
  return answer;
}

export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler(
    (err: FastifyError | AppError | Error, request: FastifyRequest, reply: FastifyReply) => {
      const answer = errorAnswer(err, request.method, request.routeOptions.config.errorBody);
      if (answer.logged) request.log.error({ err }, "request failed");
      return reply
        .code(answer.status)
        .headers(answer.headers)
        .type("application/json; charset=utf-8")
        .send(answer.body);
    },
  );
}

function bodyProblem(err: FastifyError): string {
  if (err.code === "FST_ERR_CTP_EMPTY_JSON_BODY") return "the body is empty; send a JSON object";
  if (err.code === "FST_ERR_CTP_INVALID_CONTENT_LENGTH") return "Content-Length does not match the body";
  return "the body is not valid JSON";
}

/** At most this many characters of a path are named in a 404 or 405: enough to spot a typo. */
const MAX_SHOWN_PATH = 200;
/** A path segment longer than this is not shown in a 404 or 405 unless it is an id of ours. */
const MAX_SHOWN_SEGMENT = 40;
/** The ids paths carry: UUIDs and key hashes (hex). */
const PATH_ID = /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{64})$/i;
/** The prefixes of API keys, ours and other services' (`sk-...`), and of bearer tokens. */
const SECRET_LIKE = /^(?:sk[-_]|bearer)|sk-gr-/i;

/**
 * The path of a request as a 404 or 405 names it (docs/behaviour.md#unknown-routes): without its
 * query string (where clients put keys), a segment that looks like a key masked as the log masks
 * secrets, any other long segment (a pasted token of another shape) replaced by its length, the
 * whole bounded.
 */
export function shownPath(url: string): string {
  const query = url.indexOf("?");
  const path = query < 0 ? url : url.slice(0, query);
  const shown = path
    .split("/")
    .map((segment) => {
      if (SECRET_LIKE.test(segment)) return "[REDACTED]";
      if (segment.length <= MAX_SHOWN_SEGMENT || PATH_ID.test(segment)) return segment;
      return `[${segment.length} characters]`;
    })
    .join("/");
  return shown.length <= MAX_SHOWN_PATH ? shown : `${shown.slice(0, MAX_SHOWN_PATH)}...`;
}

/** What a 404 for a route this service does not have says (docs/behaviour.md#unknown-routes). */
export function noSuchRoute(method: string, url: string): Record<string, unknown> {
  return { reason: "no_such_route", method, path: shownPath(url), api_reference: "/docs" };
}

/**
 * Unknown routes answer 404, and a known path with another method 405 with an Allow header, both
 * with the error body naming the method and path (docs/behaviour.md#unknown-routes).
 */
export function installNotFoundHandler(app: FastifyInstance): void {
  const routes = new Map<string, Set<string>>();
  app.addHook("onRoute", (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const set = routes.get(route.url) ?? new Set<string>();
    for (const m of methods) if (m !== "HEAD") set.add(m);
    routes.set(route.url, set);
  });
  let patterns: { regex: RegExp; methods: Set<string> }[] | undefined;
  app.setNotFoundHandler((request, reply) => {
    patterns ??= [...routes.entries()].map(([url, methods]) => ({
      regex: new RegExp(`^${url.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/:[A-Za-z_]+/g, "[^/]+")}/?$`),
      methods,
    }));
    const url = request.raw.url ?? "/";
    const path = url.split("?")[0] ?? "/";
    const allowed = new Set<string>();
    for (const p of patterns) if (p.regex.test(path)) for (const m of p.methods) allowed.add(m);
    if (allowed.size > 0) {
      const allow = [...allowed].sort();
      reply.header("allow", allow.join(", "));
      return sendError(reply, "method_not_allowed", {
        reason: "method_not_allowed",
        method: request.method,
        path: shownPath(url),
        allow,
      });
    }
    return sendError(reply, "not_found", noSuchRoute(request.method, url));
  });
}

const TIMED_OUT = Symbol("request timed out while arriving");

/** Whether the request on this socket was cut off by the receive time-out (docs/gateway.md#receive-timeout). */
export function timedOut(socket: Socket): boolean {
  return (socket as Socket & { [TIMED_OUT]?: boolean })[TIMED_OUT] === true;
}

/**
 * Errors Node's HTTP parser meets before there is a request to route (broken framing, such as bytes
 * after a body shorter than its Content-Length; headers over the size limit; a request that took
 * too long to arrive, docs/gateway.md#receive-timeout), answered in the error body like every other
 * error, then the connection closes. A request already answered early (linger.ts) gets no second
 * answer: its connection just closes.
 */
export function clientErrorHandler(
  this: { log?: { info(details: object, message: string): void } } | undefined,
  err: NodeJS.ErrnoException,
  socket: Socket,
): void {
  if (err.code === "ECONNRESET" || socket.destroyed) return;
  if (err.code === "ERR_HTTP_REQUEST_TIMEOUT") {
    (socket as Socket & { [TIMED_OUT]?: boolean })[TIMED_OUT] = true;
    // No URL or header: the request may not have been read far enough to mask them.
    this?.log?.info({ remoteAddress: socket.remoteAddress }, "request timed out while arriving");
  }
  const code: ErrorCode =
    err.code === "HPE_HEADER_OVERFLOW"
      ? "headers_too_large"
      : err.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? "request_timeout"
        : "invalid_request";
  const metadata =
    code === "invalid_request"
      ? { issues: [{ path: "", message: "the request is not valid HTTP/1.1" }] }
      : code === "headers_too_large"
        ? { limit: "header_size" }
        : undefined;
  const body = JSON.stringify(errorBody(code, metadata));
  const { status } = ERROR_CODES[code];
  if (socket.writable && !answeredEarly(socket)) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_TEXT[status]}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `X-Content-Type-Options: nosniff\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  }
  // Lingering as after an early answer would let a broken stream hold the socket; end, then close.
  socket.end();
  socket.destroySoon?.();
}

const STATUS_TEXT: Record<number, string> = {
  400: "Bad Request",
  408: "Request Timeout",
  431: "Request Header Fields Too Large",
};
