/**
 * The one error type of the service, with a closed set of codes. The HTTP layer turns it into the
 * body of docs/behaviour.md#error-body; the message for each status is fixed (docs/behaviour.md#error-messages), the details go in
 * `metadata`.
 */
export const ERROR_CODES = {
  invalid_request: { status: 400, message: "Invalid request parameters" },
  missing_authentication: { status: 401, message: "Missing Authentication header" },
  invalid_api_key: { status: 401, message: "Invalid API key" },
  invalid_session: { status: 401, message: "Session expired or signed out" },
  management_key_required: { status: 403, message: "Only management keys can perform this operation" },
  inference_key_required: { status: 403, message: "Only inference keys can perform this operation" },
  cross_origin_refused: { status: 403, message: "Cross-origin request refused" },
  not_found: { status: 404, message: "Resource not found" },
  method_not_allowed: { status: 405, message: "Method not allowed" },
  conflict: { status: 409, message: "Resource conflict. Please try again later." },
  payload_too_large: { status: 413, message: "Request body too large" },
  unsupported_media_type: { status: 415, message: "Unsupported media type: send application/json" },
  request_timeout: { status: 408, message: "Request timeout" },
  headers_too_large: { status: 431, message: "Request header fields too large" },
  too_many_failed_authentications: {
    status: 429,
    message: "Too many failed authentication attempts. Please try again later.",
  },
  internal: { status: 500, message: "Internal Server Error" },
  // The governed request path (docs/behaviour.md#request-decision). A refusal's message names the rule; see `refusal`.
  guardrail_refused: { status: 403, message: "Request refused by guardrail" },
  model_not_found: { status: 404, message: "Model not found" },
  budget_reserved: {
    status: 429,
    message: "Budget held by requests in flight. Please try again shortly.",
  },
  upstream_rate_limited: {
    status: 429,
    message: "Upstream provider rate limit reached. Please try again later.",
  },
  upstream_error: { status: 502, message: "Upstream provider error" },
  // An API with its own overloaded status answers with it instead (docs/gateway.md#upstream-overloaded).
  upstream_overloaded: {
    status: 503,
    message: "Upstream provider is overloaded. Please try again later.",
  },
  no_provider_available: { status: 503, message: "No provider is available for this model" },
  scan_busy: { status: 503, message: "Content scanning is at capacity. Please try again later." },
  upstream_timeout: { status: 504, message: "Upstream provider timed out" },
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface Issue {
  /** JSON pointer of the offending property, e.g. "/limit_usd"; "" for the body itself. */
  path: string;
  message: string;
}

export type ErrorMetadata = Record<string, unknown>;

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly metadata: ErrorMetadata | undefined;

  /** `message` replaces the code's standard text where a rule has its own (docs/behaviour.md#refusals). */
  constructor(code: ErrorCode, metadata?: ErrorMetadata, message?: string) {
    super(message ?? ERROR_CODES[code].message);
    this.name = "AppError";
    this.code = code;
    this.status = ERROR_CODES[code].status;
    this.metadata = metadata;
  }
}

/**
 * An API's own error body for the service's error, on a route that answers in it, and, where that
 * API answers an error with another status than the service's, that status (`statusOf`).
 */
export interface ErrorEnvelope {
  (error: AppError): unknown;
  statusOf?: (error: AppError) => number;
}

export function invalidRequest(issues: Issue[], extra?: ErrorMetadata): AppError {
  return new AppError("invalid_request", { ...extra, issues });
}

export function notFound(): AppError {
  return new AppError("not_found");
}

export function conflict(reason: string): AppError {
  return new AppError("conflict", { reason });
}
