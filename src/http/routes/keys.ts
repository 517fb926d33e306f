import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import Type from "typebox";
import type { ServiceDeps } from "../../services/context.js";
import { runIdempotent } from "../../services/idempotency.js";
import {
  createInferenceKey,
  getKey,
  listKeys,
  presentKey,
  readKeySpend,
  removeKey,
  updateKey,
} from "../../services/keys.js";
import { presentServedKey, presentServedKeys } from "../../services/served-keys.js";
import { principalOf } from "../auth.js";
import { Deleted, dataOf, errorResponses, listOf, Pagination, page, Uuid } from "../schemas/common.js";
import { BudgetState as KeyBudget } from "../schemas/responses.js";
import { IdempotencyHeaders, idempotencyOf, sendStored } from "./idempotent.js";

const Usd = Type.Number({ description: "USD." });
/** One budget layer that counts a key, in its current window. */
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

export function keyRoutes(parent: FastifyInstance, deps: ServiceDeps): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
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
        const created = await createInferenceKey(deps, tx, principal, request.body);
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
      const query = request.query;
      const principal = principalOf(request);
      const result = await listKeys(deps, principal, {
        ...page(query),
        ...(query.workspace_id !== undefined ? { workspaceId: query.workspace_id } : {}),
        includeDisabled: query.include_disabled === true,
      });
      return {
        data: await presentServedKeys(deps, result.items),
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
      const key = await getKey(deps, principal, request.params.hash);
      return { data: await presentServedKey(deps, key) };
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
      const key = await updateKey(deps, principal, request.params.hash, request.body);
      return { data: await presentServedKey(deps, key) };
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
      await removeKey(deps, principalOf(request), request.params.hash);
      return { deleted: true as const };
    },
  );
}
