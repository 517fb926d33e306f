import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type RequestListener, type ServerResponse } from "node:http";
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import { Ajv, type Options as AjvOptions } from "ajv";
import addFormats from "ajv-formats";
import Fastify, { type FastifyInstance, type FastifyServerOptions } from "fastify";
import type { OutputAllowance } from "./domain/budget-admission.js";
import type { Region } from "./domain/catalog.js";
import type { BuiltinSlug } from "./domain/content-filters.js";
import type { Detector } from "./domain/content-scan.js";
import { DETECTORS } from "./domain/detectors/index.js";
import { type AlertSettings, BudgetAlerts, DEFAULT_ALERT_SETTINGS } from "./gateway/budget-alerts.js";
import { GatewayMetrics } from "./gateway/metrics.js";
import type { GatewayDeps } from "./gateway/prepare.js";
import { DEFAULT_SCAN_SETTINGS, Scanner, type ScanSettings } from "./gateway/scan-request.js";
import { SURFACES } from "./gateway/surfaces/index.js";
import type { Upstreams } from "./gateway/upstream.js";
import { type AuthThrottle, installAuth } from "./http/auth.js";
import { consoleRoutes } from "./http/console.js";
import { DirectGateway } from "./http/direct-gateway.js";
import { clientErrorHandler, installErrorHandler, installNotFoundHandler, sendError } from "./http/errors.js";
import { installIngress, regionReader } from "./http/ingress.js";
import { installJsonParser } from "./http/json-parser.js";
import { installLingeringClose } from "./http/linger.js";
import { requestForLog } from "./http/log-safety.js";
import { completeOperations } from "./http/openapi-complete.js";
import { DEFAULT_REQUEST_TIMEOUT_MS, receiveLimits } from "./http/receive-timeout.js";
import { OneLinePerRequest } from "./http/request-log.js";
import { activityRoutes } from "./http/routes/activity.js";
import { assignmentRoutes } from "./http/routes/assignments.js";
import { auditLogRoutes } from "./http/routes/audit-log.js";
import { chatCompletionRoutes } from "./http/routes/chat-completions.js";
import { currentKeyRoutes } from "./http/routes/current-key.js";
import { embeddingsRoutes } from "./http/routes/embeddings.js";
import { evaluateRoutes } from "./http/routes/evaluate.js";
import { guardrailRoutes } from "./http/routes/guardrails.js";
import { healthRoutes } from "./http/routes/health.js";
import { keyRoutes } from "./http/routes/keys.js";
import { managementKeyRoutes } from "./http/routes/management-keys.js";
import { memberRoutes } from "./http/routes/members.js";
import { messagesRoutes } from "./http/routes/messages.js";
import { metricsRoutes } from "./http/routes/metrics.js";
import { modelRoutes } from "./http/routes/models.js";
import { responsesRoutes } from "./http/routes/responses.js";
import { sessionRoutes } from "./http/routes/session.js";
import { usageRoutes } from "./http/routes/usage.js";
import { workspaceBudgetRoutes } from "./http/routes/workspace-budgets.js";
import { workspaceMemberRoutes } from "./http/routes/workspace-members.js";
import { workspaceRoutes } from "./http/routes/workspaces.js";
import { ErrorBody } from "./http/schemas/common.js";
import type { ServiceDeps } from "./services/context.js";
import { renameZdrFamilies } from "./services/zdr-families.js";

export interface AppDeps extends ServiceDeps {
  /** Answers when the database does (GET /readyz). */
  ping: () => Promise<void>;
  /** The three region addresses (docs/behaviour.md#ingress-region). */
  regionBaseUrls: Record<Region, string>;
  /** Take the ingress host from X-Forwarded-Host (only behind a trusted proxy). */
  trustForwardedHost: boolean;
  /**
   * Each region has a listener of its own (listenForRegion); the main one is global. `guardrails
   * serve` sets it unless the operator chose Host-based regions (docs/behaviour.md#ingress-region);
   * without it the Host header decides, as tests that forge hosts on one listener need.
   */
  regionByListener?: boolean;
  /** The upstream providers of the governed request path. */
  upstreams: Upstreams;
  /** The builtin content detectors (the shipped ones unless a test substitutes). */
  detectors?: Record<BuiltinSlug, Detector>;
}

/**
 * The service's logger settings: secrets and message text never reach the log
 * (docs/configuration.md#logs). Request bodies are never logged; the two headers that carry secrets are masked, and so
 * are query values other than paging and ids.
 */
export function serviceLogger(
  level: string,
  stream?: { write(line: string): void },
): Exclude<FastifyServerOptions["logger"], boolean | undefined> {
  return {
    level,
    redact: ["req.headers.authorization", "req.headers['idempotency-key']"],
    // A key sent in the query string (by mistake or by a probe) is not logged either.
    serializers: { req: requestForLog },
    ...(stream ? { stream } : {}),
  };
}

export interface AppOptions {
  logger?: FastifyServerOptions["logger"];
  bodyLimit?: number;
  /** Failed authentications allowed per client address (default: DEFAULT_AUTH_THROTTLE). */
  authThrottle?: AuthThrottle;
  /** Large content scans (defaults: DEFAULT_SCAN_SETTINGS). */
  scan?: ScanSettings;
  /** Output reserved under a budget when a request names none (defaults: DEFAULT_OUTPUT_ALLOWANCE). */
  output?: OutputAllowance;
  /** How long a budget hold outlasts its provider's time-out (default: HOLD_MARGIN_MS, a minute). */
  holdMarginMs?: number;
  /** Budget alerts' webhook and delivery (defaults: DEFAULT_ALERT_SETTINGS, no webhook). */
  alerts?: AlertSettings;
  /** The built browser console (defaults: dist/console, written by npm run build). */
  consoleDir?: string;
  /** How long a request's headers and body may take to arrive (default: DEFAULT_REQUEST_TIMEOUT_MS). */
  requestTimeoutMs?: number;
}

function makeAjv(options: AjvOptions): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: false, ...options });
  addFormats.default(ajv, ["uuid", "date-time"]);
  return ajv;
}

/**
 * Builds the Fastify app; no I/O on import and none here beyond what deps do. Tests boot exactly this.
 */
export async function buildApp(deps: AppDeps, options: AppOptions = {}): Promise<FastifyInstance> {
  // Before any request: a guardrail must never be served with its flags under a family's old id.
  await renameZdrFamilies(deps);
  const bodyLimit = options.bodyLimit ?? 1024 * 1024;
  // The chat completions route is served from Node's server before the router where it can be
  // (src/http/direct-gateway.ts); it is made once the gateway is, below.
  let direct: DirectGateway | undefined;
  const dispatch = (handler: RequestListener) => (request: IncomingMessage, response: ServerResponse) => {
    if (direct?.take(request, response) !== true) handler(request, response);
  };
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit,
    // The server Fastify would make itself, with the dispatch in front of its handler. Fastify
    // passes its options with their defaults filled in, typed as a plain record.
    serverFactory: (handler, opts) => {
      // The receive limits are the app's own, not Fastify's requestTimeout, whose default (0) would
      // let a slow body hold its connection for ever (docs/gateway.md#receive-timeout).
      const server = createServer(
        receiveLimits(options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS),
        dispatch(handler),
      );
      const number = (name: string) => (typeof opts[name] === "number" ? (opts[name] as number) : undefined);
      server.keepAliveTimeout = number("keepAliveTimeout") ?? server.keepAliveTimeout;
      // No idle limit on the socket: a streamed answer may be silent for as long as its provider is.
      server.setTimeout(number("connectionTimeout") ?? 0);
      const perSocket = number("maxRequestsPerSocket");
      if (perSocket !== undefined && perSocket > 0) server.maxRequestsPerSocket = perSocket;
      return server;
    },
    genReqId: () => randomUUID(),
    // One line per request, written when it completes, instead of Fastify's two.
    logController: new OneLinePerRequest(),
    return503OnClosing: true,
    // Deeply nested or huge bodies are bounded by bodyLimit; the parser refuses prototype keys.
    onProtoPoisoning: "error",
    onConstructorPoisoning: "error",
    // Broken framing and oversized headers answer in the error body too.
    clientErrorHandler,
    // A long id is simply an unknown id (404): any id that fits in the request head (16 KiB, else
    // 431) is matched as a parameter, so no length answers anything else.
    routerOptions: { maxParamLength: 16 * 1024 },
    // A path whose percent-encoding is broken names nothing that exists.
    frameworkErrors: (error, _request, reply) => {
      if (error.code === "FST_ERR_BAD_URL") return sendError(reply, "not_found");
      return sendError(reply, "invalid_request", {
        issues: [{ path: "", message: "the request could not be read" }],
      });
    },
  });

  // Bodies are typed strictly: "10" is not a number and "true" is not a boolean (docs/behaviour.md#strict-bodies).
  // Query strings and path parameters are text by nature, so they alone are coerced.
  const strict = makeAjv({ coerceTypes: false, useDefaults: false, removeAdditional: false });
  const lenient = makeAjv({ coerceTypes: true, useDefaults: true, removeAdditional: false });
  app.setValidatorCompiler(({ schema, httpPart }) => {
    const ajv = httpPart === "body" ? strict : lenient;
    return ajv.compile(schema);
  });

  // While shutting down, answers close their connection, so a keep-alive client cannot hold the
  // process open after its last request.
  let closing = false;
  app.addHook("preClose", async () => {
    closing = true;
  });
  // Callback-style hooks: on every request, a promise per hook is measurable overhead.
  app.addHook("onRequest", (request, reply, done) => {
    reply.header("x-request-id", request.id);
    // Every answer is JSON or the reference's own pages: no browser may guess another type.
    reply.header("x-content-type-options", "nosniff");
    done();
  });
  app.addHook("onSend", (_request, reply, payload, done) => {
    if (closing) reply.header("connection", "close");
    done(null, payload);
  });

  installJsonParser(app);
  app.decorateRequest("logDetails", undefined);
  installLingeringClose(app);
  installErrorHandler(app);
  installNotFoundHandler(app);
  const authFailures = installAuth(app, deps, options.authThrottle, { trustProxy: deps.trustForwardedHost });
  const regionOf = regionReader(deps.regionBaseUrls, deps.trustForwardedHost, deps.regionByListener);
  installIngress(app, regionOf);

  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "Guardrails service",
        version: "1.0.0",
        description:
          'Self-hostable guardrails for LLM API traffic. Errors always have the body `{"error": {"code", "message", "metadata"?}}`.',
      },
      components: {
        securitySchemes: {
          bearer: { type: "http", scheme: "bearer", description: "A management or inference key." },
          "x-api-key": {
            type: "apiKey",
            in: "header",
            name: "x-api-key",
            description: "An inference key, as Anthropic's clients send it: on the Messages route only.",
          },
          session: {
            type: "apiKey",
            in: "cookie",
            name: "gr_session",
            description:
              "The console's session (POST /api/v1/session): stands in for its management key on management routes; writes must carry this service's Origin.",
          },
        },
        schemas: { ErrorBody },
      },
      security: [{ bearer: [] }],
    },
    // The answers of the common layers (auth, body parsing, path ids) on every operation.
    transformObject: (document) =>
      completeOperations("openapiObject" in document ? document.openapiObject : document.swaggerObject),
  });
  await app.register(swaggerUi, { routePrefix: "/docs", staticCSP: true });

  const detectors = deps.detectors ?? DETECTORS;
  const scanner = new Scanner(options.scan ?? DEFAULT_SCAN_SETTINGS, detectors !== DETECTORS);
  // The scan workers stop with the app, so a closed server leaves no thread behind.
  app.addHook("onClose", async () => scanner.close());
  const alerts = new BudgetAlerts(deps, options.alerts ?? DEFAULT_ALERT_SETTINGS, app.log);
  app.addHook("onClose", async () => alerts.close());
  const gateway: GatewayDeps = {
    services: deps,
    upstreams: deps.upstreams,
    metrics: new GatewayMetrics(),
    detectors,
    scanner,
    alerts,
    ...(options.output ? { output: options.output } : {}),
    ...(options.holdMarginMs !== undefined ? { holdMarginMs: options.holdMarginMs } : {}),
  };
  healthRoutes(app, deps);
  metricsRoutes(app, gateway.metrics);
  modelRoutes(app, deps, deps.upstreams.unavailable);
  guardrailRoutes(app, deps);
  workspaceRoutes(app, deps);
  workspaceMemberRoutes(app, deps);
  workspaceBudgetRoutes(app, deps);
  keyRoutes(app, deps);
  managementKeyRoutes(app, deps);
  memberRoutes(app, deps);
  assignmentRoutes(app, deps);
  currentKeyRoutes(app, deps);
  auditLogRoutes(app, deps);
  usageRoutes(app, deps);
  activityRoutes(app, deps);
  sessionRoutes(app, deps, deps.trustForwardedHost, authFailures);
  consoleRoutes(app, options.consoleDir);
  chatCompletionRoutes(app, gateway);
  embeddingsRoutes(app, gateway);
  responsesRoutes(app, gateway);
  messagesRoutes(app, gateway);
  direct = new DirectGateway({
    gw: gateway,
    bodyLimit,
    regionOf,
    routes: new Map(
      SURFACES.map((surface) => [
        surface.route,
        { surface, validate: strict.compile(surface.requestSchema) },
      ]),
    ),
    log: app.log,
    closing: () => closing,
  });
  // Region listeners serve their requests the same way (src/http/region-listeners.ts).
  app.decorate(
    "serveRequest",
    dispatch((request, response) => app.routing(request, response)),
  );
  evaluateRoutes(app, gateway);
  app.get("/api/v1/openapi.json", { schema: { hide: true } }, async () => app.swagger());

  await app.ready();
  return app;
}
