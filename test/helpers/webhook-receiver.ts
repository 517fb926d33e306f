import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One request the receiver got, and how to answer it when the test holds it. */
export interface Delivery {
  headers: IncomingHttpHeaders;
  body: string;
  /** Answers a held delivery. */
  answer(status: number): void;
}

/**
 * An operator's webhook receiver on a loopback port: records every delivery and answers with what
 * `respond` says for it (a status, or "hold" to keep it open until the test answers it).
 */
export async function startWebhookReceiver(respond: (attempt: number) => number | "hold" = () => 200) {
  const deliveries: Delivery[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const held = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => {
      body += chunk;
    });
    req.on("end", () => {
      const answer = (status: number) => {
        held.delete(res);
        res.writeHead(status).end();
      };
      deliveries.push({ headers: req.headers, body, answer });
      const how = respond(deliveries.length);
      if (how === "hold") held.add(res);
      else answer(how);
      for (const w of [...waiters]) {
        if (deliveries.length >= w.count) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve();
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/budget`,
    deliveries,
    /** Resolves once at least `count` deliveries arrived. */
    received(count: number): Promise<void> {
      if (deliveries.length >= count) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ count, resolve }));
    },
    async close(): Promise<void> {
      for (const res of held) res.writeHead(503).end();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
