import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { FastifyInstance, FastifyReply } from "fastify";
import { sendError } from "./errors.js";

/** Where `npm run build` puts the console: dist/console, from src/http or dist/http alike. */
export const DEFAULT_CONSOLE_DIR = fileURLToPath(new URL("../../dist/console/", import.meta.url));

/**
 * The console's pages load only what this origin serves and talk only to it: no inline script or
 * style, nothing framed, no form posted elsewhere. A script injected into a page has nowhere to
 * send what it reads.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const FILES: Record<string, string> = {
  "index.html": "text/html; charset=utf-8",
  "console.js": "text/javascript; charset=utf-8",
  "console.css": "text/css; charset=utf-8",
};

/**
 * Serves the browser console at `/` (docs/api.md#console-sessions for its sign-in). Files are read
 * on first use and kept: they change only with a new build, which means a new process.
 */
export function consoleRoutes(app: FastifyInstance, dir: string = DEFAULT_CONSOLE_DIR): void {
  const cache = new Map<string, Buffer>();
  const notBuilt = { reason: "the console is not built: run npm run build" };
  /** `missing`: what a 404 says when the file is absent (a chunk's absence says nothing more). */
  const send = async (
    reply: FastifyReply,
    name: string,
    missing: Record<string, unknown> | null = notBuilt,
  ) => {
    let body = cache.get(name);
    if (!body) {
      try {
        body = await readFile(join(dir, name));
      } catch {
        return sendError(reply, "not_found", missing ?? undefined);
      }
      cache.set(name, body);
    }
    return reply
      .header("content-security-policy", CONSOLE_CSP)
      .header("x-content-type-options", "nosniff")
      .header("x-frame-options", "DENY")
      .header("referrer-policy", "no-referrer")
      .header("cache-control", "no-cache")
      .type(
        FILES[name] ?? (name.endsWith(".js") ? "text/javascript; charset=utf-8" : "application/octet-stream"),
      )
      .send(body);
  };
  app.get("/", { schema: { hide: true } }, (_request, reply) => send(reply, "index.html"));
  app.get("/console/console.js", { schema: { hide: true } }, (_request, reply) => send(reply, "console.js"));
  app.get("/console/console.css", { schema: { hide: true } }, (_request, reply) =>
    send(reply, "console.css"),
  );
  // Chunks the script loads on demand, named by esbuild from their content. Nothing else is read,
  // and any other name is as unknown as an unknown route; only files that exist are cached.
  app.get("/console/:chunk", { schema: { hide: true } }, (request, reply) => {
    const { chunk } = request.params as { chunk: string };
    if (!/^chunk-[A-Z0-9]{8,}\.js$/.test(chunk)) return sendError(reply, "not_found");
    return send(reply, chunk, null);
  });
}
