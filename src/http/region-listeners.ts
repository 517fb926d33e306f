import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { FastifyInstance } from "fastify";
import type { Region } from "../domain/catalog.js";
import { clientErrorHandler } from "./errors.js";
import { receiveLimits } from "./receive-timeout.js";

declare module "fastify" {
  interface FastifyInstance {
    /** Serves a request that arrived on another server of the app's, as its own server does (app.ts). */
    serveRequest(request: IncomingMessage, response: ServerResponse): void;
  }
}

const LISTENER_REGION = Symbol("listener region");

/** The region of the listener a request arrived on, when it arrived on a region listener. */
export function listenerRegionOf(request: IncomingMessage): Region | undefined {
  return (request as IncomingMessage & { [LISTENER_REGION]?: Region })[LISTENER_REGION];
}

export interface RegionListener {
  region: Region;
  address: string;
  close(): Promise<void>;
}

/**
 * A listener of its own for one region: every request that connects to it arrives through that
 * region, whatever its Host header says. A client chooses its Host header, not the address it can
 * reach, so a deployment that exposes each region on its own address or port binds the region to
 * something the client cannot forge. The requests are served by the same app as the main listener.
 */
export async function listenForRegion(
  app: FastifyInstance,
  region: Region,
  at: { host: string; port: number },
): Promise<RegionListener> {
  // The same limits and error answers as the main listener: a slow request ends in a 408 here too
  // (docs/gateway.md#receive-timeout).
  const server: Server = createServer(receiveLimits(app.server.requestTimeout), (request, response) => {
    (request as IncomingMessage & { [LISTENER_REGION]?: Region })[LISTENER_REGION] = region;
    app.serveRequest(request, response);
  });
  server.on("clientError", clientErrorHandler.bind(app));
  server.keepAliveTimeout = app.server.keepAliveTimeout;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(at.port, at.host, () => resolve());
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(":") ? `[${address}]` : address;
  return {
    region,
    address: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
