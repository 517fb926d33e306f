import type { FastifyInstance, FastifyRequest } from "fastify";
import {
  authenticate,
  authenticateCached,
  requireInference,
  requireManagement,
} from "../services/authenticate.js";
import type { Principal, ServiceDeps } from "../services/context.js";
import { resolveSession } from "../services/sessions.js";
import type { SessionRecord } from "../storage/session-repo.js";
import { checkSameOrigin, isSafeMethod, sessionTokenOf } from "./session-cookie.js";

export type AuthRequirement = "management" | "inference" | "none";

declare module "fastify" {
  interface FastifyContextConfig {
    /** Who may call the route; checked before the body is even parsed. */
    auth?: AuthRequirement;
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
  options: { trustProxy?: boolean } = {},
): void {
  app.decorateRequest("principal", undefined);
  app.decorateRequest("session", undefined);
  const trustProxy = options.trustProxy ?? false;
  const admit = (request: FastifyRequest, requirement: AuthRequirement, principal: Principal) => {
    if (requirement === "management") requireManagement(principal);
    if (requirement === "inference") requireInference(principal);
    request.principal = principal;
  };
  // Callback style with a synchronous path for a cached key: this runs on every request.
  app.addHook("onRequest", (request, _reply, done) => {
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
    try {
      const cached = authenticateCached(deps, request.headers.authorization);
      if (cached) {
        admit(request, requirement, cached);
        return done();
      }
    } catch (err) {
      return done(err as Error);
    }
    authenticate(deps, request.headers.authorization).then(
      (principal) => {
        try {
          admit(request, requirement, principal);
          done();
        } catch (err) {
          done(err as Error);
        }
      },
      (err: Error) => done(err),
    );
  });
}

/** The caller of an authenticated route (set by the onRequest hook). */
export function principalOf(request: FastifyRequest): Principal {
  const principal = request.principal;
  if (!principal) throw new Error("route is missing its auth requirement");
  return principal;
}
