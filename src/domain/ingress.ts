import { REGIONS, type Region } from "./catalog.js";

/** host:port of a base URL, lower-case, with the scheme's default port made explicit. */
function hostKey(host: string, defaultPort: string): string {
  const lower = host.trim().toLowerCase();
  // [v6]:port, name:port, or a bare name/address.
  const withPort = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(lower);
  return withPort ? `${withPort[1]}:${withPort[2]}` : `${lower}:${defaultPort}`;
}

export interface IngressMap {
  /** hostKey → region */
  byHost: Map<string, Region>;
}

/** Builds the host → region map from the three configured base URLs (docs/behaviour.md#ingress-region). */
export function ingressMap(baseUrls: Record<Region, string>): IngressMap {
  const byHost = new Map<string, Region>();
  for (const region of REGIONS) {
    const url = new URL(baseUrls[region]);
    const port = url.port || (url.protocol === "https:" ? "443" : "80");
    const key = `${url.hostname.toLowerCase()}:${port}`;
    // The first region to claim a host keeps it, in the order global, europe, us.
    if (!byHost.has(key)) byHost.set(key, region);
  }
  return { byHost };
}

/**
 * The region a request arrived through: the region whose base URL's host and port equal the Host
 * header. A host that matches none counts as global (docs/behaviour.md#ingress-region). Both the default ports 80 and
 * 443 are tried for a Host without a port, since the scheme the client used is not known here.
 */
export function ingressRegion(map: IngressMap, host: string | undefined): Region {
  if (!host) return "global";
  for (const defaultPort of ["80", "443"]) {
    const region = map.byHost.get(hostKey(host, defaultPort));
    if (region) return region;
  }
  return "global";
}
