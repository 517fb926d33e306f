import type { IncomingMessage } from "node:http";
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

/**
 * How the region address a request arrived through is read (docs/behaviour.md#ingress-region): from
 * its listener when regions are bound to listeners, as `guardrails serve` does by default (see
 * listenForRegion: Host and X-Forwarded-Host are not read then, since a client chooses them), else
 * from its host, for an operator whose own proxy sets it (GUARDRAILS_REGION_FROM=host).
 */
export function regionReader(
  baseUrls: Record<Region, string>,
  trustForwardedHost: boolean,
  byListener = false,
): (request: IncomingMessage) => Region {
  if (byListener) return (request) => listenerRegionOf(request) ?? "global";
  const map = ingressMap(baseUrls);
  return (request) => {
    const forwarded = trustForwardedHost ? request.headers["x-forwarded-host"] : undefined;
    // A proxy chain lists hosts left to right; the first is the one the client asked for.
    const host = typeof forwarded === "string" ? forwarded.split(",")[0] : request.headers.host;
    return ingressRegion(map, host);
  };
}

export function installIngress(app: FastifyInstance, regionOf: (request: IncomingMessage) => Region): void {
  app.decorateRequest("ingressRegion", "global");
  app.addHook("onRequest", (request, _reply, done) => {
    request.ingressRegion = regionOf(request.raw);
    done();
  });
}
