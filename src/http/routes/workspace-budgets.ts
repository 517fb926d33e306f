import type { FastifyInstance } from "fastify";
import Type from "typebox";
import type { ServiceDeps } from "../../services/context.js";
import {
  getWorkspaceBudget,
  listBudgetsOfWorkspace,
  presentWorkspaceBudget,
  removeWorkspaceBudget,
  setWorkspaceBudget,
  WORKSPACE_BUDGET_INTERVALS,
} from "../../services/workspace-budgets.js";
import { principalOf } from "../auth.js";
import { Deleted, errorResponses, Uuid } from "../schemas/common.js";

const WorkspaceBudget = Type.Object({
  id: Uuid,
  workspace_id: Uuid,
  limit_usd: Type.Number({ description: "USD the workspace's keys may spend together in each window." }),
  reset_interval: Type.Union([Type.Enum(["daily", "weekly", "monthly"]), Type.Null()], {
    description: "The UTC calendar window; null for the lifetime budget, which never resets.",
  }),
  created_at: Type.String({ format: "date-time" }),
  updated_at: Type.String({ format: "date-time" }),
});
const IncludeByok = Type.Boolean({
  description:
    "Workspace-wide: whether bring-your-own-key spend counts on every one of the workspace's budgets.",
});
const OneBudget = Type.Object({ data: WorkspaceBudget, include_byok_in_budgets: IncludeByok });
const BudgetList = Type.Object({ data: Type.Array(WorkspaceBudget), include_byok_in_budgets: IncludeByok });
const SetBudgetBody = Type.Object(
  {
    limit_usd: Type.Number({ description: "More than 0, kept to the micro-dollar." }),
    include_byok_in_budgets: Type.Optional(
      Type.Boolean({ description: "Sets the workspace-wide setting; left unchanged when omitted." }),
    ),
  },
  { additionalProperties: false },
);
const WorkspaceParams = Type.Object({
  id: Type.String({ description: "The workspace's id or slug." }),
});
const BudgetParams = Type.Object({
  id: Type.String({ description: "The workspace's id or slug." }),
  interval: Type.String({ enum: [...WORKSPACE_BUDGET_INTERVALS] }),
});

/**
 * Workspace budgets, as the reference SDK's workspaces.setBudget, getBudget, listBudgets and
 * deleteBudget call them (docs/api.md#workspace-budgets): at most one per interval, each enforced
 * by the gateway over all the workspace's keys.
 */
export function workspaceBudgetRoutes(app: FastifyInstance, deps: ServiceDeps): void {
  const tags = ["Workspaces"];
  const config = { auth: "management" as const };
  const paramsOf = (params: unknown) => params as { id: string; interval: string };

  app.get(
    "/api/v1/workspaces/:id/budgets",
    {
      config,
      schema: {
        tags,
        summary: "List a workspace's budgets",
        params: WorkspaceParams,
        response: { 200: BudgetList, ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => {
      const result = await listBudgetsOfWorkspace(deps, principalOf(request), paramsOf(request.params).id);
      return {
        data: result.rows.map(presentWorkspaceBudget),
        include_byok_in_budgets: result.include_byok_in_budgets,
      };
    },
  );

  app.put(
    "/api/v1/workspaces/:id/budgets/:interval",
    {
      config,
      schema: {
        tags,
        summary: "Set a workspace's budget for one interval",
        description:
          "Creates the workspace's budget for the interval (daily, weekly, monthly or lifetime) or replaces its limit. The gateway refuses a request once any budget of the key's workspace is spent (docs/gateway.md#budgets).",
        params: BudgetParams,
        body: SetBudgetBody,
        response: { 200: OneBudget, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { id, interval } = paramsOf(request.params);
      const result = await setWorkspaceBudget(
        deps,
        principalOf(request),
        id,
        interval,
        request.body as { limit_usd: number; include_byok_in_budgets?: boolean },
      );
      return {
        data: presentWorkspaceBudget(result.budget),
        include_byok_in_budgets: result.include_byok_in_budgets,
      };
    },
  );

  app.get(
    "/api/v1/workspaces/:id/budgets/:interval",
    {
      config,
      schema: {
        tags,
        summary: "Get a workspace's budget for one interval",
        params: BudgetParams,
        response: { 200: OneBudget, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { id, interval } = paramsOf(request.params);
      const result = await getWorkspaceBudget(deps, principalOf(request), id, interval);
      return {
        data: presentWorkspaceBudget(result.budget),
        include_byok_in_budgets: result.include_byok_in_budgets,
      };
    },
  );

  app.delete(
    "/api/v1/workspaces/:id/budgets/:interval",
    {
      config,
      schema: {
        tags,
        summary: "Delete a workspace's budget for one interval",
        description: "Answers `deleted: true` also when the workspace had no budget for the interval.",
        params: BudgetParams,
        response: { 200: Deleted, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { id, interval } = paramsOf(request.params);
      await removeWorkspaceBudget(deps, principalOf(request), id, interval);
      return { deleted: true as const };
    },
  );
}
