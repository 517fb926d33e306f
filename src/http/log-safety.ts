/** Query parameters whose values are logged: paging and identifiers, none of them a secret. */
const LOGGED_QUERY = /^(offset|limit|[a-z_]*_id|[a-z_]*_hash)$/;

/**
 * A request URL fit for the log: the value of every query parameter other than paging and ids is
 * replaced, since a client may put its API key there (`?api_key=...`) and the log must never hold
 * a secret.
 */
export function logSafeUrl(url: string): string {
  const at = url.indexOf("?");
  if (at < 0) return url;
  const query = url
    .slice(at + 1)
    .split("&")
    .map((pair) => {
      const eq = pair.indexOf("=");
      const name = eq < 0 ? pair : pair.slice(0, eq);
      let decoded = name;
      try {
        decoded = decodeURIComponent(name);
      } catch {
        // A name that does not decode is no parameter we know: its value is hidden like any other.
      }
      return eq < 0 || LOGGED_QUERY.test(decoded) ? pair : `${name}=[REDACTED]`;
    });
  return `${url.slice(0, at)}?${query.join("&")}`;
}

/** Fastify's request serializer for the log, with the URL made safe. */
export function requestForLog(request: {
  method: string;
  url: string;
  host?: string;
  ip?: string;
  socket?: { remotePort?: number };
}): Record<string, unknown> {
  return {
    method: request.method,
    url: logSafeUrl(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}
