import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import Type from "typebox";
import { promptTokenBound, type Rule } from "../../domain/decision.js";
import { AppError } from "../../domain/errors.js";
import { type GatewayDeps, prepareRequest } from "../../gateway/prepare.js";
import { messagesSurface } from "../../gateway/surfaces/index.js";
import type { MessagesBody } from "../../gateway/surfaces/messages/index.js";
import { MessagesCountRequest } from "../../gateway/surfaces/messages/schema.js";
import { resolveKeyPolicy } from "../../services/effective-policy.js";
import { principalOf } from "../auth.js";
import { MessagesErrorBody, MessagesResponse } from "../schemas/messages.js";
import { governedRoute } from "./governed.js";

/** The budget rules, which a count (that spends nothing) is never refused by. */
const BUDGET_RULES: ReadonlySet<Rule> = new Set([
  "budget_exhausted",
  "request_exceeds_budget",
  "budget_reserved",
]);

/** The output allowance a count is judged with when it names none: nothing is generated. */
const COUNT_MAX_TOKENS = 1;

/**
 * POST /api/v1/messages/count_tokens (docs/gateway.md#messages-count-tokens): the request is
 * decided as the Messages door decides it (key, region, model, endpoints, content filters), nothing
 * is forwarded or charged, and the answer is an estimate of its input tokens: a fourth of the
 * prompt's UTF-8 bytes plus a few per message, never more than the bound the budgets reserve.
 */
function countTokensRoute(parent: FastifyInstance, gw: GatewayDeps): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    `${messagesSurface.route}/count_tokens`,
    {
      config: {
        auth: "inference",
        keyHeader: messagesSurface.keyHeader,
        errorBody: messagesSurface.errorBody,
      },
      schema: {
        tags: ["Gateway"],
        summary: "Count a Messages request's input tokens (an estimate) under the calling key's guardrails",
        description:
          "Anthropic's token count. The request is decided as `POST /api/v1/messages` decides it (region address, model, provider endpoints, content filters: a request the door would refuse is refused here with the same error), then nothing is forwarded and nothing is charged. `input_tokens` is an estimate: a fourth of the UTF-8 bytes of every text the provider would read, plus 4 per message, at most the upper bound the budgets reserve. `max_tokens` may be left out.",
        body: MessagesCountRequest,
        response: {
          200: Type.Object({ input_tokens: Type.Integer({ minimum: 0 }) }),
          ...Object.fromEntries([400, 401, 403, 404, 413, 429, 503].map((s) => [s, MessagesErrorBody])),
        },
        security: [{ bearer: [] }, { "x-api-key": [] }],
      },
    },
    async (request) => {
      const keyPolicy = await resolveKeyPolicy(gw.services, principalOf(request).keyHash);
      if (!keyPolicy) throw new AppError("invalid_api_key");
      const body = { max_tokens: COUNT_MAX_TOKENS, ...request.body } as MessagesBody;
      // Budgets are not read: a count spends nothing, so it is refused by no budget.
      const prepared = await prepareRequest(
        gw,
        messagesSurface,
        keyPolicy,
        body,
        request.ingressRegion,
        false,
      );
      const refused = prepared.decision.violations.find((v) => !BUDGET_RULES.has(v.rule));
      if (refused) throw new AppError(refused.code, refused.metadata, refused.message);
      let bytes = 0;
      for (const t of prepared.texts) bytes += Buffer.byteLength(t.text);
      const estimate = Math.ceil(bytes / 4) + 4 * prepared.messageCount;
      return { input_tokens: Math.min(estimate, promptTokenBound(prepared.texts, prepared.messageCount)) };
    },
  );
}

/**
 * POST /api/v1/messages: the governed Anthropic Messages path, forwarded natively (docs/gateway.md#messages)
 * or translated to chat completions (docs/gateway.md#messages-translation).
 */
export function messagesRoutes(app: FastifyInstance, gw: GatewayDeps): void {
  governedRoute(app, gw, messagesSurface, {
    summary: "Create a message (Anthropic Messages API) under the calling key's guardrails",
    description:
      'Anthropic Messages-compatible, forwarded as it is to providers that speak the Messages API, and translated to chat completions (the answer and its events back) for providers that speak only chat: server tools such a provider cannot run are left out and named in the response header `x-guardrails-dropped-tools`, thinking blocks and cache-control markers are dropped, and a block chat cannot carry is a 400 naming it. The inference key comes as `x-api-key` (Anthropic\'s SDKs) or `Authorization: Bearer`. The effective guardrails of the key decide as on chat completions: region address, model, provider endpoints, content filters (block, redact, flag) and budgets. Every string the provider reads is scanned: `system` as the system\'s, each message with its own role except `tool_result` blocks, read as the tool\'s, tools as the application\'s. Under a budget the forwarded `max_tokens` is lowered to what it pays for, shown in the response header `x-guardrails-max-tokens`. With `stream: true` the answer is the provider\'s server-sent events, ending with `message_stop`. Errors are in Anthropic\'s envelope (`{"type": "error", "error": {"type", "message", "metadata"}}`), in a stream as an `error` event.',
    answer: {
      description: "The message (JSON), or with `stream: true` its events as server-sent events.",
      schema: MessagesResponse,
      streams: true,
    },
    errors: MessagesErrorBody,
    moreErrorStatuses: [529],
    security: [{ bearer: [] }, { "x-api-key": [] }],
  });
  countTokensRoute(app, gw);
}
