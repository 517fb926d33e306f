import { invalidRequest, notFound } from "../domain/errors.js";
import { newId, workspaceDefaultGuardrailId } from "../domain/ids.js";
import { deleteWorkspaceGuardrails } from "../storage/guardrail-repo.js";
import { deleteWorkspaceKeys } from "../storage/key-repo.js";
import type { Executor } from "../storage/schema.js";
import {
  deleteWorkspace,
  findOrganization,
  findWorkspace,
  insertWorkspace,
  listWorkspaces,
  setDefaultWorkspace,
  type Workspace,
} from "../storage/workspace-repo.js";
import { isoNow, type Principal, type ServiceDeps } from "./context.js";

export function presentWorkspace(ws: Workspace): Record<string, unknown> {
  return {
    id: ws.id,
    name: ws.name,
    is_default: ws.is_default === 1,
    default_guardrail_id: ws.default_guardrail_id,
    created_at: ws.created_at,
  };
}

export async function createWorkspace(
  deps: ServiceDeps,
  db: Executor,
  principal: Principal,
  input: { name: string },
): Promise<Workspace> {
  const id = newId();
  const ws: Workspace = {
    id,
    organization_id: principal.organizationId,
    name: input.name,
    is_default: 0,
    default_guardrail_id: workspaceDefaultGuardrailId(id),
    created_at: isoNow(deps),
  };
  await insertWorkspace(db, ws);
  return ws;
}

export async function getWorkspace(deps: ServiceDeps, principal: Principal, id: string): Promise<Workspace> {
  const ws = await findWorkspace(deps.db, principal.organizationId, id);
  if (!ws) throw notFound();
  return ws;
}

export async function listOrganizationWorkspaces(
  deps: ServiceDeps,
  principal: Principal,
  page: { offset: number; limit: number },
) {
  return listWorkspaces(deps.db, principal.organizationId, page);
}

/**
 * Deletes a workspace with everything it holds (its guardrails, its default guardrail and its
 * inference keys), in one transaction. Deleting the default workspace leaves the organization
 * without one: creates must then name a workspace (specification, create; decisions §4).
 */
export async function removeWorkspace(deps: ServiceDeps, principal: Principal, id: string): Promise<void> {
  await deps.db.transaction().execute(async (tx) => {
    const ws = await findWorkspace(tx, principal.organizationId, id);
    if (!ws) throw notFound();
    await deleteWorkspaceGuardrails(tx, principal.organizationId, id);
    await deleteWorkspaceKeys(tx, principal.organizationId, id);
    await deleteWorkspace(tx, principal.organizationId, id);
    const org = await findOrganization(tx, principal.organizationId);
    if (org?.default_workspace_id === id) await setDefaultWorkspace(tx, principal.organizationId, null);
  });
}

/** The workspace a create names, or the organization's default; 400 when neither exists. */
export async function resolveTargetWorkspace(
  db: Executor,
  principal: Principal,
  workspaceId: string | undefined,
): Promise<Workspace> {
  if (workspaceId !== undefined) {
    const ws = await findWorkspace(db, principal.organizationId, workspaceId);
    if (!ws) throw invalidRequest([{ path: "/workspace_id", message: "no such workspace" }]);
    return ws;
  }
  const org = await findOrganization(db, principal.organizationId);
  const ws = org?.default_workspace_id
    ? await findWorkspace(db, principal.organizationId, org.default_workspace_id)
    : undefined;
  if (!ws) {
    throw invalidRequest(
      [{ path: "/workspace_id", message: "the default workspace was deleted: pass workspace_id" }],
      { reason: "workspace_id_required" },
    );
  }
  return ws;
}
