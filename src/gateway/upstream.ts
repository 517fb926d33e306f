import type { Readable } from "node:stream";
import { errors, Pool } from "undici";
import type { Provider } from "../domain/catalog.js";

/**
 * Calls to the upstream providers: one keep-alive connection pool per provider, `POST` to the
 * provider's base URL followed by the governed API's path (a surface's `upstreamPath`). Failures come back as values with a kind, so the caller decides the
 * answer (502, 504) and releases what it reserved.
 */

export interface UpstreamReply {
  status: number;
  contentType: string;
  body: Readable;
}

/** `stream_broken`: the provider answered, then its body broke off (docs/gateway.md#upstream-stream-broken). */
export type UpstreamFailureKind = "timeout" | "connect" | "protocol" | "stream_broken";

export class UpstreamFailure extends Error {
  constructor(
    readonly kind: UpstreamFailureKind,
    readonly provider: string,
  ) {
    super(`upstream ${provider}: ${kind}`);
  }
}

interface ProviderClient {
  provider: Provider;
  pool: Pool;
  /** The base URL's path, without a trailing slash. */
  base: string;
  /** The full request path per API path, built once each. */
  paths: Map<string, string>;
  /** The header the provider's key goes in, and its value (docs/gateway.md#provider-auth). */
  credential: { name: string; value: string } | undefined;
}

/** Largest upstream error body read into an error message. */
const MAX_ERROR_BODY = 16 * 1024;

export class Upstreams {
  private readonly clients = new Map<string, ProviderClient>();
  /** Providers whose API key is not configured: no request goes to them. */
  readonly unavailable = new Set<string>();

  constructor(providers: readonly Provider[], apiKeys: Readonly<Record<string, string | undefined>>) {
    for (const provider of providers) {
      const key = provider.api_key_env === null ? undefined : apiKeys[provider.id];
      if (provider.api_key_env !== null && !key) {
        this.unavailable.add(provider.id);
        continue;
      }
      const url = new URL(provider.base_url);
      this.clients.set(provider.id, {
        provider,
        pool: new Pool(url.origin, { connections: 256, pipelining: 1, keepAliveTimeout: 30_000 }),
        base: url.pathname.replace(/\/+$/, ""),
        paths: new Map(),
        credential: !key
          ? undefined
          : provider.auth === "x-api-key"
            ? { name: "x-api-key", value: key }
            : { name: "authorization", value: `Bearer ${key}` },
      });
    }
  }

  /** Where a provider is called, for error messages that say what was tried. */
  addressOf(providerId: string): string | undefined {
    return this.clients.get(providerId)?.provider.base_url;
  }

  timeoutOf(providerId: string): number {
    return this.clients.get(providerId)?.provider.timeout_ms ?? 60_000;
  }

  /**
   * Sends a request to the API at `path` under the provider's base URL ("/chat/completions");
   * resolves once the upstream's status and headers have arrived. `extra` are headers of the API's
   * own passed on (Messages' `anthropic-version`, docs/gateway.md#messages).
   */
  async send(
    providerId: string,
    path: string,
    body: string,
    signal?: AbortSignal,
    extra?: Readonly<Record<string, string>>,
  ): Promise<UpstreamReply> {
    const client = this.clients.get(providerId);
    if (!client) throw new UpstreamFailure("connect", providerId);
    let fullPath = client.paths.get(path);
    if (fullPath === undefined) {
      fullPath = `${client.base}${path}`;
      client.paths.set(path, fullPath);
    }
    const timeout = client.provider.timeout_ms;
    const headers: Record<string, string> = {
      ...extra,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    };
    if (client.credential) headers[client.credential.name] = client.credential.value;
    try {
      const response = await client.pool.request({
        path: fullPath,
        method: "POST",
        headers,
        body,
        signal,
        headersTimeout: timeout,
        bodyTimeout: timeout,
      });
      const type = response.headers["content-type"];
      return {
        status: response.statusCode,
        contentType: (Array.isArray(type) ? type[0] : type) ?? "application/json",
        body: response.body,
      };
    } catch (err) {
      throw new UpstreamFailure(failureKind(err), providerId);
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.clients.values()].map((c) => c.pool.close()));
  }
}

/** What an operator can do when nothing answered at a provider's address. */
export function connectHint(providerId: string, address: string | undefined): string {
  if (providerId === "local") {
    let port = "";
    try {
      port = address ? new URL(address).port : "";
    } catch {
      // A catalog address that does not parse: the hint names no port.
    }
    const start = port ? `npx guardrails upstream --port ${port}` : "npx guardrails upstream";
    return `nothing answered at ${address}: start the bundled echo provider there (${start}), or let the service serve it in-process (GUARDRAILS_ECHO_PROVIDER=on)`;
  }
  return `nothing answered at ${address}: check that this host can reach it, and the provider's base_url in the catalog file (GUARDRAILS_CONFIG)`;
}

export function failureKind(err: unknown): UpstreamFailureKind {
  if (err instanceof UpstreamFailure) return err.kind;
  if (
    err instanceof errors.HeadersTimeoutError ||
    err instanceof errors.BodyTimeoutError ||
    err instanceof errors.ConnectTimeoutError
  ) {
    return "timeout";
  }
  if (err instanceof errors.SocketError || (err as NodeJS.ErrnoException)?.code === "ECONNREFUSED")
    return "connect";
  return "protocol";
}

/**
 * The kind of a failure met while reading the body of an answer whose status and headers had
 * arrived: a provider that goes silent is still a timeout, and our own refusals (an answer too
 * large) keep their kind; any other failure (a closed or reset connection, broken framing) broke
 * the answer off, which is not "nothing answered" (docs/gateway.md#upstream-stream-broken).
 */
export function bodyFailureKind(err: unknown): UpstreamFailureKind {
  if (err instanceof UpstreamFailure) return err.kind;
  const kind = failureKind(err);
  return kind === "timeout" ? kind : "stream_broken";
}

/** Reads a small upstream body as text (error bodies), never more than MAX_ERROR_BODY. */
export async function readLimited(body: Readable): Promise<string> {
  let out = "";
  const decoder = new TextDecoder("utf-8");
  for await (const chunk of body) {
    out += decoder.decode(chunk as Buffer, { stream: true });
    if (out.length > MAX_ERROR_BODY) {
      body.destroy();
      break;
    }
  }
  return out.slice(0, MAX_ERROR_BODY);
}
