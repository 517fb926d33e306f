import type { IncomingHttpHeaders } from "node:http";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { AppError } from "../domain/errors.js";
import { FailureWindow } from "../domain/failure-window.js";
import {
  authenticate,
  authenticateCached,
  requireInference,
  requireManagement,
} from "../services/authenticate.js";
import type { Principal, ServiceDeps } from "../services/context.js";
import type { SessionRecord } from "../services/sessions.js";
import { resolveSession } from "../services/sessions.js";
import { checkSameOrigin, isSafeMethod, sessionTokenOf } from "./session-cookie.js";

export type AuthRequirement = "management" | "inference" | "none";

declare module "fastify" {
  interface FastifyContextConfig {
    /** Who may call the route; checked before the body is even parsed. */
    auth?: AuthRequirement;
    /**
     * Another header the route takes its key in, beside Authorization (a governed route's
     * Surface.keyHeader: Messages' `x-api-key`, docs/gateway.md#messages).
     */
    keyHeader?: string;
  }
  interface FastifyRequest {
    principal?: Principal;
    /** The console session that signed the request in, when the cookie did rather than a key. */
    session?: SessionRecord;
  }
}

/**
 * Authentication runs on onRequest, before body parsing and validation: a caller without the right
 * key learns nothing about the body rules (401/403 come before 400).
 */
export function installAuth(
  app: FastifyInstance,
  deps: ServiceDeps,
  throttle: AuthThrottle = DEFAULT_AUTH_THROTTLE,
  options: { trustProxy?: boolean } = {},
): AuthFailures {
  app.decorateRequest("principal", undefined);
  app.decorateRequest("session", undefined);
  const failures = new AuthFailures(throttle);
  const trustProxy = options.trustProxy ?? false;
  const admit = (request: FastifyRequest, requirement: AuthRequirement, principal: Principal) => {
    if (requirement === "management") requireManagement(principal);
    if (requirement === "inference") requireInference(principal);
    request.principal = principal;
  };
  // Callback style with a synchronous path for a cached key: this runs on every request.
  app.addHook("onRequest", (request, reply, done) => {
    const requirement = request.routeOptions.config.auth ?? "none";
    if (requirement === "none") return done();
    // The console's cookie stands in for a management key, and only where no key was sent: an
    // explicit Authorization header always decides.
    const token = requirement === "management" ? sessionTokenOf(request) : undefined;
    if (token !== undefined && request.headers.authorization === undefined) {
      try {
        if (!isSafeMethod(request.method)) checkSameOrigin(request, trustProxy);
      } catch (err) {
        return done(err as Error);
      }
      resolveSession(deps, token).then(({ principal, session }) => {
        request.principal = principal;
        request.session = session;
        done();
      }, done);
      return;
    }
    const credential = credentialOf(request.headers, request.routeOptions.config.keyHeader);
    try {
      const cached = authenticateCached(deps, credential);
      if (cached) {
        admit(request, requirement, cached);
        return done();
      }
    } catch (err) {
      return done(err as Error);
    }
    // A client that failed too often is refused before its key costs a lookup; keys already known
    // valid (above) still pass, so a shared address is not locked out of working keys.
    const refused = failures.refusal(request, reply, deps.now().getTime());
    if (refused) return done(refused);
    authenticate(deps, credential).then(
      (principal) => {
        try {
          admit(request, requirement, principal);
          done();
        } catch (err) {
          done(err as Error);
        }
      },
      (err: Error) => {
        failures.recordIfFailed(request, err, deps.now().getTime());
        done(err);
      },
    );
  });
  return failures;
}

/**
 * The key a request presents, as an Authorization header value: the route's own key header when it
 * has one and the request sends it (Anthropic's `x-api-key`, read first: its SDK sends it, and
 * Authorization only when given a token instead, docs/gateway.md#messages), else Authorization.
 * A key header's value is checked as a Bearer key is, so a malformed one is the same 401.
 */
export function credentialOf(
  headers: IncomingHttpHeaders,
  keyHeader: string | undefined,
): string | undefined {
  if (keyHeader !== undefined) {
    const value = headers[keyHeader];
    if (typeof value === "string" && value !== "") return `Bearer ${value}`;
  }
  return headers.authorization;
}

/**
 * Failed authentications per client address, shared by every way in: Bearer keys on the API and
 * the console's sign-in (docs/behaviour.md#sign-in-throttle), so guessing keys through either
 * counts toward the one limit and is refused with the one 429.
 */
export class AuthFailures {
  private readonly window: FailureWindow;
  constructor(readonly throttle: AuthThrottle) {
    this.window = new FailureWindow(throttle.failures, throttle.windowMs);
  }

  /** The 429 for a client that failed too often (its Retry-After set on `reply`); undefined while it may try. */
  refusal(request: FastifyRequest, reply: FastifyReply, nowMs: number): AppError | undefined {
    const wait = this.window.retryAfterMs(request.ip, nowMs);
    if (wait <= 0) return undefined;
    const seconds = Math.ceil(wait / 1000);
    reply.header("retry-after", String(seconds));
    return new AppError("too_many_failed_authentications", {
      reason: "authentication_throttled",
      retry_after_seconds: seconds,
      limit: this.throttle.failures,
      window_seconds: Math.round(this.throttle.windowMs / 1000),
    });
  }

  /** Counts `err` against the client when it says the key was unknown, malformed or disabled. */
  recordIfFailed(request: FastifyRequest, err: unknown, nowMs: number): void {
    if (err instanceof AppError && err.code === "invalid_api_key") this.window.record(request.ip, nowMs);
  }
}

export interface AuthThrottle {
  /** Failed authentications (an unknown or malformed key) a client address may make per window. */
  failures: number;
  windowMs: number;
}

export const DEFAULT_AUTH_THROTTLE: AuthThrottle = { failures: 100, windowMs: 60_000 };

/** The caller of an authenticated route (set by the onRequest hook). */
export function principalOf(request: FastifyRequest): Principal {
  const principal = request.principal;
  if (!principal) throw new Error("route is missing its auth requirement");
  return principal;
}
