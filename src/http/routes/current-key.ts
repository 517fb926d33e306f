import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import { REGIONS } from "../../domain/catalog.js";
import { AppError } from "../../domain/errors.js";
import { presentGuardrail } from "../../domain/guardrail.js";
import { presentKeyLimit } from "../../domain/key-limit.js";
import { microsToUsd } from "../../domain/money.js";
import { readUsage } from "../../gateway/spend.js";
import type { ServiceDeps } from "../../services/context.js";
import {
  type BudgetStatus,
  budgetStatuses,
  presentPolicy,
  resolveKeyPolicy,
} from "../../services/effective-policy.js";
import { keyLimitOf } from "../../services/keys.js";
import { readKeyUsage } from "../../services/read-subject-spend.js";
import { principalOf } from "../auth.js";
import { errorResponses } from "../schemas/common.js";
import { asSent, CurrentKeyResponse } from "../schemas/responses.js";

/** Settled spend on the key's own limit in its current window (0 without one). */
function keyLimitSpent(statuses: readonly BudgetStatus[]): number {
  return statuses.find((b) => b.layer === "key_limit")?.spent_micros ?? 0;
}

/** GET /api/v1/key: the calling inference key, the guardrails that govern it and its effective policy. */
export function currentKeyRoutes(parent: FastifyInstance, deps: ServiceDeps): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const families = deps.catalog.familyIds();
  app.get(
    "/api/v1/key",
    {
      config: { auth: "inference" },
      ...asSent,
      schema: {
        tags: ["Keys"],
        summary: "The calling inference key and its effective policy",
        description:
          "Lists the guardrails that apply (workspace default, member, key) with their layer, the combined policy, the effective allowed regions, and each budget layer with its current UTC window.",
        response: { 200: CurrentKeyResponse, ...errorResponses(401, 403) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const resolved = await resolveKeyPolicy(deps, principal.keyHash);
      if (!resolved) throw new AppError("invalid_api_key");
      const { key, applied, policy } = resolved;
      // Only inference keys reach this route, and an inference key always has a workspace.
      if (key.workspace_id === null) throw new AppError("invalid_api_key");
      const now = deps.now();
      const usage = await readUsage(deps, key, policy, now);
      const statuses = budgetStatuses(policy, now, usage);
      const spent = await readKeyUsage(deps, key.organization_id, key.hash, now);
      return {
        data: {
          hash: key.hash,
          name: key.name,
          label: key.label,
          organization_id: key.organization_id,
          workspace_id: key.workspace_id,
          member_user_id: key.member_user_id,
          // The reference SDK's fields (docs/api.md#the-effective-policy-of-a-key-get-apiv1key).
          creator_user_id: key.member_user_id,
          expires_at: null,
          is_management_key: false,
          is_provisioning_key: false,
          is_free_tier: false,
          ...presentKeyLimit(keyLimitOf(key), keyLimitSpent(statuses)),
          ...spent,
          rate_limit: { requests: -1, interval: "10s", note: "This field is deprecated and safe to ignore." },
          free_model_daily_requests: { limit: -1, remaining: -1, used: 0 },
          guardrails: applied.map((a) => ({ layer: a.layer, ...presentGuardrail(a.guardrail, families) })),
          // Every region when no guardrail restricts them: the reference SDK reads a list, never null.
          allowed_data_regions: policy.allowed_data_regions ?? [...REGIONS],
          effective_policy: presentPolicy(policy, families),
          budgets: statuses.map((b) => ({
            guardrail_id: b.guardrail_id,
            layer: b.layer,
            scope: b.scope,
            reset_interval: b.reset_interval,
            include_byok_in_budgets: b.include_byok_in_budgets,
            limit_usd: microsToUsd(b.limit_micros),
            spent_usd: microsToUsd(b.spent_micros),
            // Held by requests in flight until their cost is known.
            reserved_usd: microsToUsd(b.reserved_micros),
            // Spend may pass a limit by one request's overshoot: what remains is then nothing.
            remaining_usd: microsToUsd(Math.max(0, b.limit_micros - b.spent_micros - b.reserved_micros)),
            window_start: b.window.start.toISOString(),
            resets_at: b.window.resetsAt?.toISOString() ?? null,
          })),
        },
      };
    },
  );
}
