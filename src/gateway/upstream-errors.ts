import { AppError } from "../domain/errors.js";
import type { GatewayLog } from "./attempt.js";
import type { GatewayDeps } from "./prepare.js";
import { bodyFailureKind, connectHint, failureKind, readLimited, type UpstreamReply } from "./upstream.js";

/** The upstream failures worth trying the next endpoint for: nothing was answered yet. */
export function retryable(status: number): boolean {
  return status === 429 || status >= 500;
}

export async function upstreamError(
  gw: GatewayDeps,
  provider: string,
  reply: UpstreamReply,
): Promise<AppError> {
  const text = await readLimited(reply.body).catch(() => "");
  gw.metrics.upstreamErrors.inc({ provider, kind: "status" });
  let upstreamMessage: string | undefined;
  let overloaded = reply.status === 529;
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown; type?: unknown } };
    if (typeof parsed.error?.message === "string") upstreamMessage = parsed.error.message.slice(0, 500);
    // Anthropic's own word for it, whatever the status (docs/gateway.md#upstream-overloaded).
    if (parsed.error?.type === "overloaded_error") overloaded = true;
  } catch {
    // Not JSON: the status says enough.
  }
  const metadata = {
    reason: "upstream_status",
    provider,
    upstream_status: reply.status,
    upstream_message: upstreamMessage,
  };
  if (reply.status === 429) return new AppError("upstream_rate_limited", metadata);
  if (overloaded && reply.status >= 500)
    return new AppError("upstream_overloaded", { ...metadata, reason: "upstream_overloaded" });
  // The caller's request was refused by the provider: theirs to fix, so a 400 with the provider's words.
  if ([400, 404, 413, 422].includes(reply.status))
    return new AppError("invalid_request", { ...metadata, reason: "upstream_rejected" });
  return new AppError("upstream_error", metadata);
}

/**
 * The answer to an upstream failure. `answered` (the request's log) is given once the provider had
 * answered and its body was being read: the failure is then read as a broken answer rather than as
 * nothing answered (docs/gateway.md#upstream-stream-broken), and said in that log.
 */
export function failureError(
  gw: GatewayDeps,
  provider: string,
  err: unknown,
  answered?: GatewayLog,
): AppError {
  const kind = answered ? bodyFailureKind(err) : failureKind(err);
  gw.metrics.upstreamErrors.inc({ provider, kind });
  if (kind === "timeout") return new AppError("upstream_timeout", { reason: "upstream_timeout", provider });
  if (kind === "stream_broken") {
    // The error's own text (an undici or socket message) names no secret and no message text.
    answered?.warn({ provider, cause: (err as Error | undefined)?.message }, "upstream answer broken off");
    return new AppError("upstream_error", {
      reason: "upstream_stream_broken",
      provider,
      detail:
        "the provider's answer was cut off part-way: its connection closed or broke after it began to answer",
    });
  }
  if (kind === "connect") {
    const address = gw.upstreams.addressOf(provider);
    return new AppError("upstream_error", {
      reason: "upstream_connect",
      provider,
      address,
      hint: connectHint(provider, address),
    });
  }
  return new AppError("upstream_error", { reason: `upstream_${kind}`, provider });
}
