import { isUtf8 } from "node:buffer";
import type { FastifyInstance } from "fastify";
import secureJson from "secure-json-parse";
import { AppError } from "../domain/errors.js";

/**
 * The JSON body parser: refuses invalid UTF-8 (Node would silently substitute U+FFFD) and the
 * `__proto__` / `constructor.prototype` keys that poison objects, each with a 400 in our error shape.
 */
export function installJsonParser(app: FastifyInstance): void {
  // Only JSON is accepted; any other type is a 415 (Fastify also parses text/plain by default).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    /^application\/([\w.+-]+\+)?json$/,
    { parseAs: "buffer" },
    (request, body, done) => {
      const encoding = request.headers["content-encoding"];
      if (encoding !== undefined && encoding.toLowerCase() !== "identity") {
        // Compressed bodies are not decoded; reading them as JSON would give a misleading 400.
        done(new AppError("unsupported_media_type", { reason: "content_encoding_not_supported" }));
        return;
      }
      const buffer = body as Buffer;
      if (buffer.length === 0) {
        done(
          new AppError("invalid_request", {
            issues: [{ path: "", message: "the body is empty; send a JSON object" }],
          }),
        );
        return;
      }
      if (!isUtf8(buffer)) {
        done(
          new AppError("invalid_request", { issues: [{ path: "", message: "the body is not valid UTF-8" }] }),
        );
        return;
      }
      let parsed: unknown;
      try {
        parsed = secureJson.parse(buffer.toString("utf8"), undefined, {
          protoAction: "error",
          constructorAction: "error",
        });
      } catch (err) {
        const poisoned = err instanceof SyntaxError && /prototype/i.test(err.message);
        const message = poisoned
          ? "the body uses a forbidden key (__proto__ or constructor.prototype)"
          : "the body is not valid JSON";
        done(new AppError("invalid_request", { issues: [{ path: "", message }] }));
        return;
      }
      // NUL can only arrive escaped; look for it only then. Model requests are forwarded, never stored.
      const nulAt =
        buffer.includes("\\u0000") && request.routeOptions.url !== CHAT_COMPLETIONS_ROUTE
          ? findNul(parsed, "")
          : undefined;
      if (nulAt !== undefined) {
        done(
          new AppError("invalid_request", {
            issues: [{ path: nulAt, message: "must not contain the NUL character (U+0000)" }],
          }),
        );
        return;
      }
      done(null, parsed);
    },
  );
}

const CHAT_COMPLETIONS_ROUTE = "/api/v1/chat/completions";

/**
 * The JSON pointer of the first string (or key) holding U+0000. PostgreSQL text cannot store it, and
 * no name or pattern needs it: refused on every database alike, so stored data means the same on both.
 */
function findNul(value: unknown, path: string): string | undefined {
  if (typeof value === "string") return value.includes("\0") ? path : undefined;
  if (value === null || typeof value !== "object") return undefined;
  for (const [key, item] of Object.entries(value)) {
    const at = `${path}/${key.replaceAll("~", "~0").replaceAll("/", "~1")}`;
    if (key.includes("\0")) return at;
    const found = findNul(item, at);
    if (found !== undefined) return found;
  }
  return undefined;
}
