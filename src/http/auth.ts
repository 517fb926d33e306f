import type { FastifyInstance, FastifyRequest } from "fastify";
import { authenticate, requireInference, requireManagement } from "../services/authenticate.js";
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
  app.addHook("onRequest", async (request) => {
    const requirement = request.routeOptions.config.auth ?? "none";
    if (requirement === "none") return;
    const principal = await authenticate(deps, request.headers.authorization);
    if (requirement === "management") requireManagement(principal);
    if (requirement === "inference") requireInference(principal);
    request.principal = principal;
  });
}

/** The caller of an authenticated route (set by the onRequest hook). */
export function principalOf(request: FastifyRequest): Principal {
  const principal = request.principal;
  if (!principal) throw new Error("route is missing its auth requirement");
  return principal;
}
