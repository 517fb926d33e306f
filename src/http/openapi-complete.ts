/**
 * Adds to every operation of the OpenAPI document the answers that come from the service's common
 * layers rather than from the route itself, each with the error body: 400 (any request can be
 * unreadable), 401, 403 and 429 (authenticated routes), 404 (a path id), 413 and 415 (a body), 500.
 * Routes added later are covered without listing these again.
 */

// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is plain JSON walked here.
type Json = any;

const ERROR_REF = { $ref: "#/components/schemas/ErrorBody" };
const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

const DESCRIPTIONS: Record<string, string> = {
  "400": "Invalid request parameters (`metadata.issues`), or a request that is not valid HTTP",
  "401": "Missing Authentication header, or Invalid API key",
  "403": "The key may not do this (`metadata` says why)",
  "404": "Resource not found",
  "413": "Request body too large",
  "415": "Unsupported media type: send application/json",
  "429": "Too many failed authentication attempts (`Retry-After`)",
  "500": "Internal Server Error",
};

export function completeOperations(doc: Json): Json {
  for (const item of Object.values<Json>(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const responses: Record<string, Json> = op.responses ?? {};
      op.responses = responses;
      const params: Json[] = [...(item.parameters ?? []), ...(op.parameters ?? [])];
      const authenticated = Array.isArray(op.security)
        ? op.security.length > 0
        : (doc.security ?? []).length > 0;
      const statuses = ["400", "500"];
      if (authenticated) statuses.push("401", "403", "429");
      if (params.some((p) => p.in === "path")) statuses.push("404");
      if (op.requestBody) statuses.push("413", "415");
      for (const status of statuses) responses[status] ??= {};
      for (const [status, response] of Object.entries<Json>(responses)) {
        if (Number(status) < 400) continue;
        response.description =
          response.description && response.description !== "Default Response"
            ? response.description
            : (DESCRIPTIONS[status] ?? "Error");
        response.content ??= { "application/json": { schema: ERROR_REF } };
      }
    }
  }
  return doc;
}
