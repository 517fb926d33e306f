import type { FastifyInstance } from "fastify";
import Type from "typebox";
import type { ServiceDeps } from "../../services/context.js";
import { runIdempotent } from "../../services/idempotency.js";
import {
  type CreateKeyInput,
  createInferenceKey,
  getKey,
  listKeys,
  presentKey,
  presentKeys,
  readKeySpend,
  removeKey,
  type UpdateKeyInput,
  updateKey,
} from "../../services/keys.js";
import { principalOf } from "../auth.js";
import { Deleted, dataOf, errorResponses, listOf, Pagination, page, Uuid } from "../schemas/common.js";
import { IdempotencyHeaders, idempotencyOf, sendStored } from "./idempotent.js";

const Usd = Type.Number({ description: "USD." });
/** One budget layer that counts a key, in its current window. */
const KeyBudget = Type.Object({
  guardrail_id: Type.Union([Uuid, Type.Null()], {
    description: "The guardrail whose budget this is; null for the key's own limit and a workspace budget.",
  }),
  layer: Type.Enum(["key_limit", "key", "member", "workspace_default", "workspace_budget"]),
  workspace_id: Type.Union([Uuid, Type.Null()]),
  scope: Type.Enum(["key", "member", "workspace"], {
    description:
      "Whose spend it counts: this key, its member's keys in the workspace, or the workspace's keys.",
  }),
  reset_interval: Type.Enum(["daily", "weekly", "monthly", "lifetime"]),
  limit_usd: Usd,
  spent_usd: Type.Number({ description: "Settled spend in the current window." }),
  reserved_usd: Type.Number({ description: "Held by requests in flight." }),
  remaining_usd: Type.Number({ description: "The limit minus settled spend, never below 0." }),
  resets_at: Type.Union([Type.String({ format: "date-time" }), Type.Null()], {
    description: "When the window ends; null for a lifetime budget.",
  }),
});
const Key = Type.Object({
  hash: Type.String({ description: "SHA-256 of the secret: the key's public identifier." }),
  name: Type.String(),
  label: Type.String({ description: "The secret's prefix and last characters, to recognise it." }),
  workspace_id: Uuid,
  member_user_id: Type.Union([Type.String(), Type.Null()]),
  creator_user_id: Type.Union([Type.String(), Type.Null()], {
    description: "The member who owns the key (the same as member_user_id).",
  }),
  external_user: Type.Null({ description: "Always null: keys are not made for external users here." }),
  disabled: Type.Boolean(),
  created_at: Type.String({ format: "date-time" }),
  updated_at: Type.Union([Type.String({ format: "date-time" }), Type.Null()]),
  expires_at: Type.Null({ description: "Always null: keys do not expire here." }),
  limit: Type.Union([Usd, Type.Null()], { description: "The key's own spending limit in USD; null: none." }),
  limit_remaining: Type.Union([Usd, Type.Null()], {
    description:
      "What the key's own limit has left in its current window (settled spend only); null without a limit.",
  }),
  limit_reset: Type.Union([Type.Enum(["daily", "weekly", "monthly"]), Type.Null()], {
    description: "The window of the key's own limit (UTC calendar windows); null: the key's lifetime.",
  }),
  include_byok_in_limit: Type.Boolean({
    description: "Whether bring-your-own-key spend counts on the key's own limit.",
  }),
  usage: Type.Number({ description: "USD spent on the service's provider accounts, all time." }),
  usage_daily: Type.Number({ description: "The same in the current UTC day." }),
  usage_weekly: Type.Number({ description: "The same in the current UTC week, from Monday." }),
  usage_monthly: Type.Number({ description: "The same in the current UTC month." }),
  byok_usage: Usd,
  byok_usage_daily: Usd,
  byok_usage_weekly: Usd,
  byok_usage_monthly: Usd,
  budgets: Type.Array(KeyBudget, {
    description:
      "Every budget layer that counts the key, in the order the gateway checks them (docs/gateway.md#budgets).",
  }),
});
const LimitFields = {
  limit: Type.Optional(
    Type.Union([Type.Number({ minimum: 0 }), Type.Null()], {
      description:
        "The key's own spending limit in USD, kept to the micro-dollar; null removes it. Enforced by the gateway as a budget layer.",
    }),
  ),
  limit_reset: Type.Optional(
    Type.Union([Type.Enum(["daily", "weekly", "monthly"]), Type.Null()], {
      description: "The limit's UTC calendar window; null: the limit is for the key's lifetime.",
    }),
  ),
  include_byok_in_limit: Type.Optional(
    Type.Boolean({ description: "Whether bring-your-own-key spend counts on the limit (default false)." }),
  ),
};
const CreateKeyBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    workspace_id: Type.Optional(Uuid),
    member_user_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: "The member who owns the key; must belong to the key's workspace.",
      }),
    ),
    creator_user_id: Type.Optional(
      Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Null()], {
        description: "The reference SDK's name for member_user_id.",
      }),
    ),
    expires_at: Type.Optional(Type.Null({ description: "Keys do not expire here; only null is accepted." })),
    ...LimitFields,
  },
  { additionalProperties: false },
);
const UpdateKeyBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    disabled: Type.Optional(
      Type.Boolean({ description: "A disabled key is refused (401) until enabled again." }),
    ),
    ...LimitFields,
  },
  { additionalProperties: false },
);
const CreatedKey = Type.Object({
  data: Key,
  key: Type.String({ description: "The secret. Shown once, never again." }),
});
const HashParams = Type.Object({ hash: Type.String() });
const ListKeysQuery = Type.Object(
  {
    ...Pagination.properties,
    workspace_id: Type.Optional(Uuid),
    include_disabled: Type.Optional(
      Type.Boolean({ description: "Also list disabled keys (default false, as the reference service)." }),
    ),
  },
  { additionalProperties: false },
);

export function keyRoutes(app: FastifyInstance, deps: ServiceDeps): void {
  const tags = ["Keys"];
  const config = { auth: "management" as const };

  app.post(
    "/api/v1/keys",
    {
      config,
      schema: {
        tags,
        summary: "Create an inference key",
        description: "In the named workspace, or the default one. The secret is in `key`, shown once.",
        headers: IdempotencyHeaders,
        body: CreateKeyBody,
        response: { 201: CreatedKey, ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const stored = await runIdempotent(deps, principal, idempotencyOf(request), async (tx) => {
        const created = await createInferenceKey(deps, tx, principal, request.body as CreateKeyInput);
        return {
          status: 201,
          headers: { location: `/api/v1/keys/${created.record.hash}` },
          body: {
            data: presentKey(created.record, await readKeySpend(deps, created.record, tx)),
            key: created.secret,
          },
        };
      });
      reply.header("cache-control", "no-store");
      return sendStored(reply, stored);
    },
  );

  app.get(
    "/api/v1/keys",
    {
      config,
      schema: {
        tags,
        summary: "List inference keys",
        querystring: ListKeysQuery,
        response: { 200: listOf(Key), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const query = request.query as {
        offset?: number;
        limit?: number;
        workspace_id?: string;
        include_disabled?: boolean;
      };
      const principal = principalOf(request);
      const result = await listKeys(deps, principal, {
        ...page(query),
        ...(query.workspace_id !== undefined ? { workspaceId: query.workspace_id } : {}),
        includeDisabled: query.include_disabled === true,
      });
      return {
        data: await presentKeys(deps, result.items),
        total_count: result.total,
      };
    },
  );

  app.get(
    "/api/v1/keys/:hash",
    {
      config,
      schema: {
        tags,
        summary: "Get an inference key",
        params: HashParams,
        response: { 200: dataOf(Key), ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const key = await getKey(deps, principal, (request.params as { hash: string }).hash);
      return { data: (await presentKeys(deps, [key]))[0] };
    },
  );

  app.patch(
    "/api/v1/keys/:hash",
    {
      config,
      schema: {
        tags,
        summary: "Rename, disable or enable an inference key, or set its own limit",
        params: HashParams,
        body: UpdateKeyBody,
        response: { 200: dataOf(Key), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const key = await updateKey(
        deps,
        principal,
        (request.params as { hash: string }).hash,
        request.body as UpdateKeyInput,
      );
      return { data: (await presentKeys(deps, [key]))[0] };
    },
  );

  app.delete(
    "/api/v1/keys/:hash",
    {
      config,
      schema: {
        tags,
        summary: "Delete an inference key",
        params: HashParams,
        response: { 200: Deleted, ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => {
      await removeKey(deps, principalOf(request), (request.params as { hash: string }).hash);
      return { deleted: true as const };
    },
  );
}
