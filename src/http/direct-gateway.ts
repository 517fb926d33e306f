import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { finished, type Readable } from "node:stream";
import type { ValidateFunction } from "ajv";
import type { FastifyBaseLogger } from "fastify";
import type { Region } from "../domain/catalog.js";
import { AppError } from "../domain/errors.js";
import { completeGoverned, type GatewayAnswer, type GatewayLog } from "../gateway/complete.js";
import type { GatewayDeps } from "../gateway/prepare.js";
import type { Surface } from "../gateway/surfaces/index.js";
import { authenticateCached } from "../services/authenticate.js";
import { credentialOf } from "./auth.js";
import { errorAnswer, issuesFromValidation, timedOut } from "./errors.js";
import { readJsonBody } from "./json-parser.js";
import { writeRequestLine } from "./request-log.js";

/** A governed route the direct path serves: its surface and the app's validator of its body. */
export interface DirectRoute {
  surface: Surface<object>;
  validate: ValidateFunction;
}

/** What the routes served from Node's server need; everything else it shares with the app. */
export interface DirectGatewayDeps {
  gw: GatewayDeps;
  /** The app's body limit: a longer declared body is left to the app, which answers 413. */
  bodyLimit: number;
  regionOf: (request: IncomingMessage) => Region;
  /**
   * Every governed API's route, with its surface and the app's own validator of its body (strict
   * types, as on every route).
   */
  routes: ReadonlyMap<string, DirectRoute>;
  log: FastifyBaseLogger;
  /** Whether the app is closing: its answers then close their connection, and new requests go to it. */
  closing: () => boolean;
}

/**
 * The governed routes (`POST /api/v1/chat/completions`, `/embeddings`, ... one per surface) served
 * straight from Node's HTTP server (docs/gateway.md#request-handling). The governed request path is
 * the route every model request takes, and a framework's
 * request and reply objects, hooks, content-type lookup and per-request child logger cost it about
 * as much CPU as the forwarding itself. So the common case (a JSON body of declared length within
 * the limit, and an inference key the service already knows) is taken here before the app's router
 * sees it; every other request on that path (no or unknown key, another kind of key, another
 * content type or encoding, a chunked or oversized body, a server closing) goes to the app, whose
 * hooks answer it. Both end in the same code: the body reader, validator, handler, error answers
 * and log line are the app's, so an answer does not depend on which of the two served it.
 */
export class DirectGateway {
  constructor(private readonly deps: DirectGatewayDeps) {}

  /** Serves the request and returns true, or returns false and leaves it to the app. */
  take(request: IncomingMessage, response: ServerResponse): boolean {
    if (request.method !== "POST" || this.deps.closing()) return false;
    // The path without its query: Anthropic's SDKs ask for `/v1/messages?beta=true`, which the
    // route serves as it serves the bare path.
    const url = request.url as string;
    const query = url.indexOf("?");
    const route = this.deps.routes.get(query < 0 ? url : url.slice(0, query));
    if (route === undefined) return false;
    const headers = request.headers;
    if (!isJson(headers["content-type"]) || headers["content-encoding"] !== undefined) return false;
    if (headers["transfer-encoding"] !== undefined) return false;
    const declared = headers["content-length"];
    const length = declared === undefined ? Number.NaN : Number(declared);
    if (!(length > 0 && length <= this.deps.bodyLimit)) return false;
    let keyHash: string;
    try {
      const principal = authenticateCached(
        this.deps.gw.services,
        credentialOf(headers, route.surface.keyHeader),
      );
      if (principal?.kind !== "inference") return false;
      keyHash = principal.keyHash;
    } catch {
      // A missing or malformed key: the app's authentication answers it.
      return false;
    }
    new Exchange(this.deps, route, request, response, keyHash).read(length);
    return true;
  }
}

/** `application/json`, with a charset parameter or not, as clients send it; other forms go to the app. */
function isJson(type: string | undefined): boolean {
  if (type === undefined) return false;
  const semicolon = type.indexOf(";");
  const media = (semicolon < 0 ? type : type.slice(0, semicolon)).trim().toLowerCase();
  return (
    media === "application/json" &&
    (semicolon < 0 || /^;\s*charset=("?)utf-8\1\s*$/i.test(type.slice(semicolon)))
  );
}

/** One request served here, from its body to its log line. */
class Exchange implements GatewayLog {
  private readonly id = randomUUID();
  private readonly started = process.hrtime.bigint();
  private details: Record<string, unknown> | undefined;

  constructor(
    private readonly deps: DirectGatewayDeps,
    private readonly route: DirectRoute,
    private readonly request: IncomingMessage,
    private readonly response: ServerResponse,
    private readonly keyHash: string,
  ) {}

  read(length: number): void {
    const chunks: Buffer[] = [];
    let received = 0;
    this.request.on("data", (chunk: Buffer) => {
      received += chunk.length;
      chunks.push(chunk);
    });
    this.request.once("end", () => {
      // Node's parser ends a body at its declared length; a shorter one is an aborted request.
      if (received !== length) return;
      const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, received);
      this.serve(body).catch((err: unknown) => {
        // Nothing may escape as an unhandled rejection, which would end the process.
        try {
          this.fail(err as Error);
        } catch (failure) {
          this.error({ err: failure }, "answering an error failed");
          this.response.destroy();
        }
      });
    });
    this.response.once("close", () => this.logLine());
  }

  private async serve(body: Buffer): Promise<void> {
    const { parsed, text } = readJsonBody(body, undefined, false);
    const { validate, surface } = this.route;
    if (!validate(parsed)) {
      throw new AppError("invalid_request", {
        issues: issuesFromValidation(validate.errors ?? [], "body", false),
      });
    }
    const answer = await completeGoverned(
      this.deps.gw,
      surface,
      this.keyHash,
      // The app's own validator of the surface's schema has just checked it.
      { body: parsed as object, text, headers: this.request.headers },
      this.deps.regionOf(this.request),
      this.id,
      this,
      (details) => {
        this.details = details;
      },
    );
    this.answer(answer);
  }

  private answer(answer: GatewayAnswer): void {
    const response = this.response;
    if (answer.kind === "json") {
      const headers = this.headers(answer.headers);
      headers["content-type"] = withCharset(answer.contentType);
      headers["content-length"] = String(Buffer.byteLength(answer.payload));
      response.writeHead(answer.status, headers);
      response.end(answer.payload);
      return;
    }
    const headers = this.headers(answer.headers);
    headers["cache-control"] = "no-cache";
    headers["content-type"] = "text/event-stream";
    response.writeHead(200, headers);
    relay(answer.stream, response);
  }

  private fail(err: Error): void {
    const answer = errorAnswer(err, "POST", this.route.surface.errorBody);
    if (answer.logged) this.error({ err }, "request failed");
    const response = this.response;
    if (response.headersSent) {
      response.destroy();
      return;
    }
    const body = JSON.stringify(answer.body);
    const headers = this.headers(answer.headers);
    headers["content-type"] = "application/json; charset=utf-8";
    headers["content-length"] = String(Buffer.byteLength(body));
    response.writeHead(answer.status, headers);
    response.end(body);
  }

  /** The headers every answer of the app carries (app.ts), then the answer's own. */
  private headers(own: Record<string, string>): Record<string, string> {
    const headers: Record<string, string> = {
      "x-request-id": this.id,
      "x-content-type-options": "nosniff",
      ...own,
    };
    if (this.deps.closing()) headers.connection = "close";
    return headers;
  }

  /** The request's one log line (docs/configuration.md#logs), as the app writes it for its routes. */
  private logLine(): void {
    const request = this.request;
    const response = this.response;
    // Cut off by the receive time-out: the client got the 408 (docs/gateway.md#receive-timeout).
    const late = !response.writableFinished && timedOut(request.socket);
    writeRequestLine(
      this,
      response.writableFinished || late
        ? null
        : new Error("the connection closed before the answer was sent"),
      // Shaped as the app's request, for its log serializer (requestForLog).
      {
        method: request.method,
        url: request.url,
        host: request.headers.host,
        ip: request.socket.remoteAddress,
        socket: request.socket,
      },
      late ? { statusCode: 408 } : response,
      Number(process.hrtime.bigint() - this.started) / 1e6,
      this.details,
    );
  }

  info(details: object, message: string): void {
    this.deps.log.info({ reqId: this.id, ...details }, message);
  }

  warn(details: object, message: string): void {
    this.deps.log.warn({ reqId: this.id, ...details }, message);
  }

  error(details: object, message: string): void {
    this.deps.log.error({ reqId: this.id, ...details }, message);
  }
}

/**
 * A JSON answer's type with its charset: the provider's type as it came, and `; charset=utf-8`
 * where a JSON type names no charset, as the app's reply does.
 */
function withCharset(type: string): string {
  const semicolon = type.indexOf(";");
  const media = semicolon < 0 ? type : type.slice(0, semicolon);
  if (!media.toLowerCase().includes("json") || /;\s*charset=/i.test(type)) return type;
  return `${type.trim().replace(/;\s*$/, "")}; charset=utf-8`;
}

/**
 * Pipes a stream of server-sent events to the client. When the client goes away first, the stream
 * is destroyed, which stops the upstream (src/gateway/relay.ts); when the stream fails after its
 * headers went out, the connection is cut, as nothing else can say so.
 */
function relay(stream: Readable, response: ServerResponse): void {
  let open = true;
  finished(stream, { readable: true, writable: false }, (err) => {
    open = false;
    if (err) response.destroy();
  });
  finished(response, () => {
    if (open) stream.destroy();
  });
  stream.pipe(response);
}
