import type { FastifyInstance } from "fastify";
import type { Region } from "../domain/catalog.js";
import { ingressMap, ingressRegion } from "../domain/ingress.js";
import { listenerRegionOf } from "./region-listeners.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The region address the request arrived through (docs/behaviour.md#ingress-region). */
    ingressRegion: Region;
  }
}

export function installIngress(
  app: FastifyInstance,
  baseUrls: Record<Region, string>,
  trustForwardedHost: boolean,
  /** Regions are bound to listeners (see listenForRegion): Host and X-Forwarded-Host are not read. */
  byListener = false,
): void {
  const map = ingressMap(baseUrls);
  app.decorateRequest("ingressRegion", "global");
  app.addHook("onRequest", (request, _reply, done) => {
    if (byListener) {
      request.ingressRegion = listenerRegionOf(request.raw) ?? "global";
      return done();
    }
    const forwarded = trustForwardedHost ? request.headers["x-forwarded-host"] : undefined;
    // A proxy chain lists hosts left to right; the first is the one the client asked for.
    const host = typeof forwarded === "string" ? forwarded.split(",")[0] : request.headers.host;
    request.ingressRegion = ingressRegion(map, host);
    done();
  });
}
