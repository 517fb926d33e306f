import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { Ajv, type ValidateFunction } from "ajv";
import type { FastifyInstance } from "fastify";
import type { Region } from "../../domain/catalog.js";
import type { ChatBody } from "../../domain/chat-texts.js";
import { ERROR_CODES, invalidRequest, notFound } from "../../domain/errors.js";
import { microsToUsd } from "../../domain/money.js";
import { type GatewayDeps, outputCap, prepareRequest } from "../../gateway/prepare.js";
import type { EmbeddingsBody } from "../../gateway/surfaces/embeddings/index.js";
import {
  chatSurface,
  embeddingsSurface,
  messagesSurface,
  responsesSurface,
  type Surface,
} from "../../gateway/surfaces/index.js";
import type { MessagesBody } from "../../gateway/surfaces/messages/index.js";
import type { ResponsesBody } from "../../gateway/surfaces/responses/index.js";
import type { KeyPolicy } from "../../services/effective-policy.js";
import { resolveKeyPolicy } from "../../services/effective-policy.js";
import { principalOf } from "../auth.js";
import { issuesFromValidation } from "../errors.js";
import { EvaluateRequest } from "../schemas/chat.js";
import { errorResponses } from "../schemas/common.js";
import { asSent, EvaluateResponse } from "../schemas/responses.js";

/**
 * POST /api/v1/guardrails/evaluate: the decision the gateway would take for a key, with every
 * reason, the redacted request and the chosen endpoints. Nothing is forwarded, reserved or spent.
 */
export function evaluateRoutes(parent: FastifyInstance, gw: GatewayDeps): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    "/api/v1/guardrails/evaluate",
    {
      config: { auth: "management" },
      ...asSent,
      schema: {
        tags: ["Guardrails"],
        summary: "Dry run: the decision the gateway would take for a key and a request",
        description:
          'Evaluates every rule (region, model, endpoints, content filters, budgets) for the inference key `key_hash` of the caller\'s organization and returns them all, with the output cap the budgets would set (`max_tokens_forwarded`) and what would be reserved (`reservation_usd`). Nothing is forwarded and nothing is spent. With `api: "embeddings"` the request is an embeddings request (`model`, `input`, ...) and `request` shows it as it would be forwarded to `/embeddings`; with `api: "responses"` it is an OpenAI Responses request, shown as it would be forwarded to `/responses` (with `store: false`); with `api: "messages"` an Anthropic Messages request, shown as it would be forwarded to `/messages`.',
        body: EvaluateRequest,
        response: { 200: EvaluateResponse, ...errorResponses(400, 401, 403, 404, 413, 503) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const input = request.body;
      const keyPolicy = await resolveKeyPolicy(gw.services, input.key_hash);
      // Another organization's key is as unknown as a key that does not exist.
      if (!keyPolicy || keyPolicy.key.organization_id !== principal.organizationId) throw notFound();
      const { key_hash: _key, ingress_region, api, ...rest } = input;
      const ingress = ingress_region ?? "global";
      // The request is checked against its own API's schema: the body's schema leaves each API's
      // required fields optional (docs/gateway.md#dry-run).
      if (api === "embeddings")
        return dryRun(
          gw,
          embeddingsSurface,
          keyPolicy,
          checked<EmbeddingsBody>(validateEmbeddings, rest),
          ingress,
        );
      if (api === "responses")
        return dryRun(
          gw,
          responsesSurface,
          keyPolicy,
          checked<ResponsesBody>(validateResponses, rest),
          ingress,
        );
      if (api === "messages")
        return dryRun(gw, messagesSurface, keyPolicy, checked<MessagesBody>(validateMessages, rest), ingress);
      return dryRun(gw, chatSurface, keyPolicy, checked<ChatBody>(validateChat, rest), ingress);
    },
  );
}

const ajv = new Ajv({ allErrors: true, strict: false });
const validateChat = ajv.compile(chatSurface.requestSchema);
const validateEmbeddings = ajv.compile(embeddingsSurface.requestSchema);
const validateResponses = ajv.compile(responsesSurface.requestSchema);
const validateMessages = ajv.compile(messagesSurface.requestSchema);

/** The request, when its API's schema takes it; else the 400 naming what is wrong. */
function checked<Body>(validate: ValidateFunction, body: object): Body {
  if (!validate(body)) throw invalidRequest(issuesFromValidation(validate.errors ?? [], "body", false));
  return body as Body;
}

/** The dry run's answer for a request of `surface`'s API. */
async function dryRun<Body extends object>(
  gw: GatewayDeps,
  surface: Surface<Body>,
  keyPolicy: KeyPolicy,
  body: Body,
  ingress: Region,
) {
  const prepared = await prepareRequest(gw, surface, keyPolicy, body, ingress, true);
  const d = prepared.decision;
  const first = d.violations[0];
  // The cap the budgets would set on the forwarded request, judged on the usage read now.
  const cap = d.model && d.admission?.admitted ? outputCap(surface, body, d.model, d.admission.tokens) : null;
  return {
    data: {
      allowed: d.allowed,
      status: first ? ERROR_CODES[first.code].status : 200,
      error: first
        ? { code: ERROR_CODES[first.code].status, message: first.message, metadata: first.metadata }
        : null,
      violations: d.violations.map((v) => ({
        rule: v.rule,
        status: ERROR_CODES[v.code].status,
        message: v.message,
        metadata: v.metadata,
      })),
      guardrails: keyPolicy.applied.map((a) => ({
        layer: a.layer,
        id: a.guardrail.id,
        name: a.guardrail.name,
      })),
      api: surface.api,
      model: d.model?.slug ?? null,
      endpoints: d.endpoints,
      candidates: d.candidates.map((c) => ({ ...c.endpoint, removed_by: c.removed_by })),
      detections: d.scan.hits,
      // The chat request's messages; null for an API without them.
      messages: (prepared.redacted as { messages?: unknown }).messages ?? null,
      // The whole request as it would be forwarded: redactions in tools, response_format, ... too,
      // and what the surface adds (Responses: store false).
      request: surface.forwardBody(surface.withOutputCap(prepared.redacted, cap), body, false),
      max_tokens_forwarded: cap,
      budgets: d.budgets.map((b, i) => ({
        guardrail_id: b.layer.guardrail_id,
        layer: b.layer.layer,
        scope: b.layer.scope,
        reset_interval: b.layer.reset_interval,
        limit_usd: microsToUsd(b.layer.limit_micros),
        spend_usd: microsToUsd(prepared.spent[i] ?? 0),
        reserved_usd: microsToUsd(prepared.reserved[i] ?? 0),
        resets_at: b.window.resetsAt?.toISOString() ?? null,
        counts: b.counts,
      })),
      worst_case_cost_usd: microsToUsd(d.worst_case_micros),
      // What the gateway would reserve: the whole wanted output, or the capped one.
      reservation_usd: d.admission?.admitted ? microsToUsd(d.admission.amount_micros) : null,
    },
  };
}
