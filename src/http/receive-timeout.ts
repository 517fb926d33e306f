import type { ServerOptions } from "node:http";

/** How long a request may take to arrive, headers and body, by default (docs/gateway.md#receive-timeout). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/**
 * The options every HTTP server of the app is made with (the main one in app.ts, the region
 * listeners): a request whose headers or body have not fully arrived within `ms` of its first byte
 * is answered 408 by the clientError handler and its connection closed, whatever its key and
 * path (docs/gateway.md#receive-timeout). Node measures only the receiving: once the body is in,
 * the request leaves the timed set, so a long answer is never cut.
 *
 * Node looks for late requests every `connectionsCheckingInterval` (30 s by default, which would
 * let a 30 s limit run to a minute), so the check runs every tenth of the limit, and at least once a second.
 */
export function receiveLimits(
  ms: number,
): Required<Pick<ServerOptions, "requestTimeout" | "headersTimeout" | "connectionsCheckingInterval">> {
  return {
    requestTimeout: ms,
    headersTimeout: ms,
    connectionsCheckingInterval: Math.max(10, Math.min(1_000, Math.floor(ms / 10))),
  };
}
