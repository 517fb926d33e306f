import { conflict, notFound } from "../domain/errors.js";
import {
  applyGuardrailBody,
  defaultPolicy,
  type Guardrail,
  type GuardrailBody,
  ifMatchSatisfied,
  presentGuardrail,
  workspaceDefaultName,
} from "../domain/guardrail.js";
import { isUuid, newId } from "../domain/ids.js";
import { deleteKeyAssignments, deleteMemberAssignments } from "../storage/assignment-repo.js";
import {
  deleteGuardrail,
  findGuardrail,
  insertGuardrail,
  listGuardrails,
  updateGuardrailIfVersion,
} from "../storage/guardrail-repo.js";
import type { Executor } from "../storage/schema.js";
import { findWorkspaceByDefaultGuardrail } from "../storage/workspace-repo.js";
import {
  type AuditChange,
  inTransaction,
  isoNow,
  type Principal,
  recordAudit,
  type ServiceDeps,
} from "./context.js";
import { resolveTargetWorkspace } from "./workspaces.js";

/** Create a guardrail (specification, POST /guardrails; decisions §4–6). */
export async function createGuardrail(
  deps: ServiceDeps,
  db: Executor,
  principal: Principal,
  body: GuardrailBody,
): Promise<Guardrail> {
  const name = body.name ?? "";
  const policy = applyGuardrailBody(defaultPolicy(name, deps.catalog.familyIds()), body, deps.catalog, {
    isCreate: true,
  });
  const workspace = await resolveTargetWorkspace(db, principal, body.workspace_id);
  const guardrail: Guardrail = {
    ...policy,
    id: newId(),
    organization_id: principal.organizationId,
    workspace_id: workspace.id,
    is_workspace_default: false,
    version: 1,
    created_at: isoNow(deps),
    updated_at: null,
  };
  await insertGuardrail(db, guardrail);
  await recordAudit(deps, db, principal, auditOf(deps, "guardrail.create", undefined, guardrail));
  return guardrail;
}

export interface UpdateOptions {
  /** The If-Match header, when the caller sent one. */
  ifMatch?: string;
}

/**
 * Update a guardrail (specification, PATCH /guardrails/{id}; decisions §7). The new version is written
 * only over the version it was computed from, so a concurrent writer's change is never overwritten:
 * the loser gets 409. The first PATCH on a workspace's derived default id materializes that guardrail.
 */
export async function updateGuardrail(
  deps: ServiceDeps,
  principal: Principal,
  id: string,
  body: GuardrailBody,
  options: UpdateOptions = {},
): Promise<Guardrail> {
  if (!isUuid(id)) throw notFound();
  return inTransaction(deps, async (tx) => {
    const current = await findGuardrail(tx, principal.organizationId, id);
    if (options.ifMatch !== undefined && !ifMatchSatisfied(options.ifMatch, current)) {
      if (!current && !(await findWorkspaceByDefaultGuardrail(tx, principal.organizationId, id)))
        throw notFound();
      throw conflict("the guardrail changed since the entity tag in If-Match was read");
    }
    const now = isoNow(deps);
    if (current) {
      const fixedName = current.is_workspace_default ? current.name : undefined;
      const policy = applyGuardrailBody(current, body, deps.catalog, { isCreate: false, fixedName });
      const next: Guardrail = { ...current, ...policy, version: current.version + 1, updated_at: now };
      if (!(await updateGuardrailIfVersion(tx, next, current.version))) {
        throw conflict("the guardrail was changed by another request at the same time");
      }
      await recordAudit(deps, tx, principal, auditOf(deps, "guardrail.update", current, next));
      return next;
    }
    const workspace = await findWorkspaceByDefaultGuardrail(tx, principal.organizationId, id);
    if (!workspace) throw notFound();
    const name = workspaceDefaultName(workspace.id);
    const policy = applyGuardrailBody(defaultPolicy(name, deps.catalog.familyIds()), body, deps.catalog, {
      isCreate: false,
      fixedName: name,
    });
    const created: Guardrail = {
      ...policy,
      id,
      organization_id: principal.organizationId,
      workspace_id: workspace.id,
      is_workspace_default: true,
      version: 1,
      created_at: now,
      updated_at: now,
    };
    try {
      await insertGuardrail(tx, created);
    } catch {
      // Another instance materialized it between our read and this insert (primary key clash).
      throw conflict("the workspace default guardrail was created by another request at the same time");
    }
    await recordAudit(deps, tx, principal, auditOf(deps, "guardrail.update", undefined, created));
    return created;
  });
}

export async function getGuardrail(deps: ServiceDeps, principal: Principal, id: string): Promise<Guardrail> {
  const g = isUuid(id) ? await findGuardrail(deps.db, principal.organizationId, id) : undefined;
  if (!g) throw notFound();
  return g;
}

export async function listWorkspaceGuardrails(
  deps: ServiceDeps,
  principal: Principal,
  query: { offset: number; limit: number; workspace_id?: string },
): Promise<{ items: Guardrail[]; total: number }> {
  const ws = await resolveTargetWorkspace(deps.db, principal, query.workspace_id);
  return listGuardrails(deps.db, principal.organizationId, ws.id, query);
}

/** Deletes a guardrail and every assignment that hangs on it, in one transaction (decisions §8). */
export async function removeGuardrail(deps: ServiceDeps, principal: Principal, id: string): Promise<void> {
  if (!isUuid(id)) throw notFound();
  await inTransaction(deps, async (tx) => {
    const current = await findGuardrail(tx, principal.organizationId, id);
    if (!current) throw notFound();
    await deleteKeyAssignments(tx, principal.organizationId, { guardrailId: id });
    await deleteMemberAssignments(tx, principal.organizationId, { guardrailId: id });
    await deleteGuardrail(tx, principal.organizationId, id);
    await recordAudit(deps, tx, principal, auditOf(deps, "guardrail.delete", current, undefined));
  });
}

function auditOf(
  deps: ServiceDeps,
  action: string,
  before: Guardrail | undefined,
  after: Guardrail | undefined,
): AuditChange {
  const families = deps.catalog.familyIds();
  const subject = (after ?? before) as Guardrail;
  const b = before ? presentGuardrail(before, families) : null;
  const a = after ? presentGuardrail(after, families) : null;
  // An update records the properties it changed, before and after; create and delete the whole.
  if (b && a) {
    const changed = Object.keys(a).filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]));
    return {
      action,
      resource_type: "guardrail",
      resource_id: subject.id,
      before: Object.fromEntries(changed.map((k) => [k, b[k]])),
      after: Object.fromEntries(changed.map((k) => [k, a[k]])),
    };
  }
  return { action, resource_type: "guardrail", resource_id: subject.id, before: b, after: a };
}
