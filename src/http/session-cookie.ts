import type { FastifyRequest } from "fastify";
import { AppError } from "../domain/errors.js";

/** The console's session cookie; scoped to the API, the only place that reads it. */
export const SESSION_COOKIE = "gr_session";
const COOKIE_PATH = "/api/v1";

/** The session token in a Cookie header, if there is one. */
export function sessionTokenOf(request: FastifyRequest): string | undefined {
  const header = request.headers.cookie;
  if (typeof header !== "string") return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === SESSION_COOKIE) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The first value of a header a proxy may have repeated or listed. */
function firstOf(value: string | string[] | undefined): string | undefined {
  const one = Array.isArray(value) ? value[0] : value;
  return one?.split(",")[0]?.trim() || undefined;
}

/**
 * Whether the browser reached us over HTTPS: a TLS socket, or a trusted proxy that says so (the
 * same trust that lets it name the host).
 */
export function cameOverHttps(request: FastifyRequest, trustProxy: boolean): boolean {
  if (request.protocol === "https") return true;
  return trustProxy && firstOf(request.headers["x-forwarded-proto"])?.toLowerCase() === "https";
}

/** The origin the browser sees this service at: scheme and host as it addressed us. */
export function ownOrigin(request: FastifyRequest, trustProxy: boolean): string | undefined {
  const host =
    (trustProxy ? firstOf(request.headers["x-forwarded-host"]) : undefined) ?? request.headers.host;
  if (!host) return undefined;
  return `${cameOverHttps(request, trustProxy) ? "https" : "http"}://${host.toLowerCase()}`;
}

/**
 * A write carried by the cookie must come from a page of this origin: a browser attaches the
 * cookie on its own, so without this any site the administrator visits could write through it.
 * Browsers send Origin on every non-GET fetch, so a missing one is refused too.
 */
export function checkSameOrigin(request: FastifyRequest, trustProxy: boolean): void {
  const origin = request.headers.origin;
  if (typeof origin !== "string" || origin === "" || origin === "null") {
    throw new AppError("cross_origin_refused", {
      reason: "a write signed in by the session cookie must carry the Origin header of this service",
    });
  }
  const expected = ownOrigin(request, trustProxy);
  if (origin.toLowerCase() !== expected) {
    throw new AppError("cross_origin_refused", {
      reason: "the Origin of this write is not the origin of this service",
      origin,
      expected_origin: expected ?? null,
    });
  }
}

/** Methods that change nothing, so the cookie alone may carry them. */
export function isSafeMethod(method: string): boolean {
  return method === "GET" || method === "HEAD" || method === "OPTIONS";
}

function cookieAttributes(secure: boolean): string {
  return `Path=${COOKIE_PATH}; HttpOnly; SameSite=Strict${secure ? "; Secure" : ""}`;
}

export function sessionCookie(token: string, maxAgeSeconds: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${token}; Max-Age=${maxAgeSeconds}; ${cookieAttributes(secure)}`;
}

export function clearedSessionCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; Max-Age=0; ${cookieAttributes(secure)}`;
}
