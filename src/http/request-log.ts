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
    const line = { req: request, res: reply, responseTime: reply.elapsedTime, ...request.logDetails };
    if (error) request.log.error({ ...line, err: error }, "request errored");
    else request.log.info(line, "request completed");
  }
}
