import { type FastifyReply, type FastifyRequest, LogController } from "fastify";

declare module "fastify" {
  interface FastifyRequest {
    /** Fields the handler adds to the request's log line (the gateway's decision). */
    logDetails?: Record<string, unknown>;
  }
}

/**
 * One log line per request (docs/configuration.md#logs), written when it completes: the request
 * (method, path made safe, address), the answer's status and time, and whatever the handler noted
 * (the gateway's decision, model and detections). Fastify's own request logging writes two lines,
 * and each line is a serialization and a system call that every request pays.
 */
export class OneLinePerRequest extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    writeRequestLine(request.log, error, request, reply, reply.elapsedTime, request.logDetails);
  }
}

/**
 * Writes a request's one line: for the app's routes (above) and for the chat completions route
 * served from Node's server (direct-gateway.ts), so both log the same fields under the same messages.
 * `request` and `response` go through the logger's serializers (requestForLog, the status code).
 */
export function writeRequestLine(
  /** The request's logger, which carries its id. */
  log: { info(line: object, message: string): void; error(line: object, message: string): void },
  error: Error | null | undefined,
  request: object,
  response: object,
  responseTime: number,
  details: Record<string, unknown> | undefined,
): void {
  const line = { req: request, res: response, responseTime, ...details };
  if (error) log.error({ ...line, err: error }, "request errored");
  else log.info(line, "request completed");
}
