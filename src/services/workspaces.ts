import { invalidRequest, notFound } from "../domain/errors.js";
import { isUuid, newId, workspaceDefaultGuardrailId } from "../domain/ids.js";
import { deleteKeyAssignments, deleteMemberAssignments } from "../storage/assignment-repo.js";
import { deleteWorkspaceGuardrails } from "../storage/guardrail-repo.js";
import { deleteWorkspaceKeys } from "../storage/key-repo.js";
import { removeWorkspaceFromMembers } from "../storage/member-repo.js";
import type { Executor } from "../storage/schema.js";
import { deleteWorkspaceBudgets } from "../storage/workspace-budget-repo.js";
import {
  deleteWorkspace,
  findDefaultWorkspace,
  findOrganization,
  findWorkspace,
  findWorkspaceBySlug,
  insertWorkspace,
  listWorkspaces,
  setDefaultWorkspace,
  updateWorkspaceRow,
  type Workspace,
} from "../storage/workspace-repo.js";
import { inTransaction, isoNow, type Principal, recordAudit, rowLock, type ServiceDeps } from "./context.js";

/**
 * A workspace as the reference SDK reads it (docs/api.md#workspaces-and-keys): the settings this
 * service does not have (default models, observability logging) carry the values of a workspace
 * where they are off.
 */
export function presentWorkspace(ws: Workspace) {
  return {
    id: ws.id,
    name: ws.name,
    slug: ws.slug,
    description: ws.description,
    is_default: ws.is_default === 1,
    default_guardrail_id: ws.default_guardrail_id,
    created_at: ws.created_at,
    updated_at: ws.updated_at,
    created_by: null,
    default_text_model: null,
    default_image_model: null,
    default_provider_sort: null,
    io_logging_api_key_ids: null,
    io_logging_sampling_rate: 1,
    is_data_discount_logging_enabled: false,
    is_observability_broadcast_enabled: false,
    is_observability_io_logging_enabled: false,
  };
}

export async function createWorkspace(
  deps: ServiceDeps,
  db: Executor,
  principal: Principal,
  input: { name: string; slug?: string; description?: string | null },
): Promise<Workspace> {
  const id = newId();
  // Without a slug the id serves as one: unique, and never a slug someone may ask for later.
  const slug = input.slug ?? id;
  if (await findWorkspaceBySlug(db, principal.organizationId, slug)) {
    throw invalidRequest([{ path: "/slug", message: "another workspace of the organization has this slug" }]);
  }
  const ws: Workspace = {
    id,
    organization_id: principal.organizationId,
    name: input.name,
    is_default: 0,
    default_guardrail_id: workspaceDefaultGuardrailId(id),
    created_at: isoNow(deps),
    slug,
    description: input.description ?? null,
    updated_at: null,
  };
  await insertWorkspace(db, ws);
  await recordAudit(deps, db, principal, {
    action: "workspace.create",
    resource_type: "workspace",
    resource_id: ws.id,
    before: null,
    after: presentWorkspace(ws),
  });
  return ws;
}

/** A workspace by id or, as the reference service allows, by slug. */
export async function getWorkspace(
  deps: ServiceDeps,
  principal: Principal,
  idOrSlug: string,
): Promise<Workspace> {
  const ws = isUuid(idOrSlug)
    ? await findWorkspace(deps.db, principal.organizationId, idOrSlug)
    : await findWorkspaceBySlug(deps.db, principal.organizationId, idOrSlug);
  if (!ws) throw notFound();
  return ws;
}

/**
 * Renames a workspace, or changes its slug or description (the reference SDK's workspaces.update),
 * addressed by id or slug. A slug another workspace of the organization has is a 400.
 */
export async function updateWorkspace(
  deps: ServiceDeps,
  principal: Principal,
  idOrSlug: string,
  input: { name?: string; slug?: string; description?: string | null },
): Promise<Workspace> {
  const org = principal.organizationId;
  return inTransaction(deps, async (tx) => {
    const ws = isUuid(idOrSlug)
      ? await findWorkspace(tx, org, idOrSlug, rowLock(deps, "update"))
      : await findWorkspaceBySlug(tx, org, idOrSlug);
    if (!ws) throw notFound();
    if (input.slug !== undefined && input.slug !== ws.slug) {
      const holder = await findWorkspaceBySlug(tx, org, input.slug);
      if (holder && holder.id !== ws.id) {
        throw invalidRequest([
          { path: "/slug", message: "another workspace of the organization has this slug" },
        ]);
      }
    }
    const next: Workspace = {
      ...ws,
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.slug !== undefined ? { slug: input.slug } : {}),
      ...(input.description !== undefined ? { description: input.description } : {}),
      updated_at: isoNow(deps),
    };
    await updateWorkspaceRow(tx, next);
    await recordAudit(deps, tx, principal, {
      action: "workspace.update",
      resource_type: "workspace",
      resource_id: ws.id,
      before: { name: ws.name, slug: ws.slug, description: ws.description },
      after: { name: next.name, slug: next.slug, description: next.description },
    });
    return next;
  });
}

export async function listOrganizationWorkspaces(
  deps: ServiceDeps,
  principal: Principal,
  page: { offset: number; limit: number },
) {
  return listWorkspaces(deps.db, principal.organizationId, page);
}

/**
 * Deletes a workspace with everything it holds (its guardrails, its default guardrail, its inference
 * keys, the assignments hanging on any of them, and its member memberships), in one transaction.
 * Deleting the default workspace leaves the organization without one: creates must then name a
 * workspace (docs/behaviour.md#create-workspace).
 */
export async function removeWorkspace(deps: ServiceDeps, principal: Principal, id: string): Promise<void> {
  const org = principal.organizationId;
  await inTransaction(
    deps,
    async (tx) => {
      // Locked first (PostgreSQL): a create into this workspace either commits before the deletes
      // below read, or waits and then finds no workspace.
      const ws = await findWorkspace(tx, org, id, rowLock(deps, "update"));
      if (!ws) throw notFound();
      await deleteKeyAssignments(tx, org, { workspaceId: id });
      await tx
        .deleteFrom("key_assignments")
        .where("organization_id", "=", org)
        .where("guardrail_id", "in", (eb) =>
          eb
            .selectFrom("guardrails")
            .select("id")
            .where("organization_id", "=", org)
            .where("workspace_id", "=", id),
        )
        .execute();
      await deleteMemberAssignments(tx, org, { workspaceId: id });
      await removeWorkspaceFromMembers(tx, org, id);
      await deleteWorkspaceGuardrails(tx, org, id);
      await deleteWorkspaceKeys(tx, org, id);
      await deleteWorkspaceBudgets(tx, org, id);
      await deleteWorkspace(tx, org, id);
      const organization = await findOrganization(tx, org);
      if (organization?.default_workspace_id === id) await setDefaultWorkspace(tx, org, null);
      await recordAudit(deps, tx, principal, {
        action: "workspace.delete",
        resource_type: "workspace",
        resource_id: id,
        before: presentWorkspace(ws),
        after: null,
      });
    },
    { revokesKeys: true },
  );
}

/** The workspace a create names, or the organization's default; 400 when neither exists. */
export async function resolveTargetWorkspace(
  db: Executor,
  principal: Principal,
  workspaceId: string | undefined,
  /** Locks the workspace until the transaction ends, for a create that puts something in it. */
  lock?: "key share",
): Promise<Workspace> {
  if (workspaceId !== undefined) {
    const ws = await findWorkspace(db, principal.organizationId, workspaceId, lock);
    if (!ws) throw invalidRequest([{ path: "/workspace_id", message: "no such workspace" }]);
    return ws;
  }
  const ws = await findDefaultWorkspace(db, principal.organizationId, lock);
  if (!ws) {
    throw invalidRequest(
      [{ path: "/workspace_id", message: "the default workspace was deleted: pass workspace_id" }],
      { reason: "workspace_id_required" },
    );
  }
  return ws;
}
