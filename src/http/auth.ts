import type { FastifyInstance, FastifyRequest } from "fastify";
import {
  authenticate,
  authenticateCached,
  requireInference,
  requireManagement,
} from "../services/authenticate.js";
import type { Principal, ServiceDeps } from "../services/context.js";

export type AuthRequirement = "management" | "inference" | "none";

declare module "fastify" {
  interface FastifyContextConfig {
    /** Who may call the route; checked before the body is even parsed. */
    auth?: AuthRequirement;
  }
  interface FastifyRequest {
    principal?: Principal;
  }
}

/**
 * Authentication runs on onRequest, before body parsing and validation: a caller without the right
 * key learns nothing about the body rules (401/403 come before 400).
 */
export function installAuth(app: FastifyInstance, deps: ServiceDeps): void {
  app.decorateRequest("principal", undefined);
  const admit = (request: FastifyRequest, requirement: AuthRequirement, principal: Principal) => {
    if (requirement === "management") requireManagement(principal);
    if (requirement === "inference") requireInference(principal);
    request.principal = principal;
  };
  // Callback style with a synchronous path for a cached key: this runs on every request.
  app.addHook("onRequest", (request, _reply, done) => {
    const requirement = request.routeOptions.config.auth ?? "none";
    if (requirement === "none") return done();
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
