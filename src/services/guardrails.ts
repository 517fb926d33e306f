import { conflict, notFound } from "../domain/errors.js";
import {
  applyGuardrailBody,
  defaultPolicy,
  type Guardrail,
  type GuardrailBody,
  ifMatchSatisfied,
  workspaceDefaultName,
} from "../domain/guardrail.js";
import { isUuid } from "../domain/ids.js";
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
import { inTransaction, isoNow, type Principal, recordAudit, rowLock, type ServiceDeps } from "./context.js";
import { auditOf, createPolicy, newGuardrail, nextVersion, type UpdateOptions } from "./guardrail-changes.js";
import {
  createInOneStatement,
  forgetWritten,
  rememberDefaultWorkspace,
  updateInOneStatement,
} from "./guardrail-one-statement.js";
import { resolveTargetWorkspace } from "./workspaces.js";

/**
 * The guardrail verbs. Who opens the transaction:
 * - A verb that takes an `Executor` (createGuardrail) runs in the caller's transaction and opens
 *   none: the caller commits it together with its own writes (the Idempotency-Key record).
 * - Every other write verb (createGuardrailNow, updateGuardrail, removeGuardrail) opens its own,
 *   through inTransaction, which also announces the change once committed. Before that, create and
 *   update may try the one-statement write of guardrail-one-statement.ts (PostgreSQL): one
 *   statement is one transaction of its own; when it writes nothing, the verb's transaction decides.
 * - Reads (getGuardrail, listWorkspaceGuardrails) open none.
 */

export type { UpdateOptions };

/** Create a guardrail (docs/behaviour.md#guardrail-create; docs/behaviour.md#guardrail-fields; docs/behaviour.md#content-filters). */
export async function createGuardrail(
  deps: ServiceDeps,
  db: Executor,
  principal: Principal,
  body: GuardrailBody,
): Promise<Guardrail> {
  const policy = createPolicy(deps, body);
  const workspace = await resolveTargetWorkspace(
    db,
    principal,
    body.workspace_id,
    rowLock(deps, "key share"),
  );
  if (body.workspace_id === undefined) rememberDefaultWorkspace(deps, principal.organizationId, workspace.id);
  const guardrail = newGuardrail(deps, principal, policy, workspace.id);
  await insertGuardrail(db, guardrail);
  await recordAudit(deps, db, principal, auditOf(deps, "guardrail.create", undefined, guardrail));
  return guardrail;
}

/**
 * Create without an Idempotency-Key, answered as createGuardrail answers: in one statement where
 * the database offers it and the target workspace is known, else in a transaction of its own.
 */
export async function createGuardrailNow(
  deps: ServiceDeps,
  principal: Principal,
  body: GuardrailBody,
): Promise<Guardrail> {
  const written = await createInOneStatement(deps, principal, body);
  if (written) return written;
  return inTransaction(deps, (tx) => createGuardrail(deps, tx, principal, body));
}

/**
 * Update a guardrail (docs/behaviour.md#guardrail-update). The new version is written
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
  const written = await updateInOneStatement(deps, principal, id, body, options);
  if (written) return written;
  return inTransaction(deps, async (tx) => {
    const current = await findGuardrail(tx, principal.organizationId, id);
    if (options.ifMatch !== undefined && !ifMatchSatisfied(options.ifMatch, current)) {
      if (!current && !(await findWorkspaceByDefaultGuardrail(tx, principal.organizationId, id)))
        throw notFound();
      throw conflict("the guardrail changed since the entity tag in If-Match was read");
    }
    const now = isoNow(deps);
    if (current) {
      const next = nextVersion(deps, current, body, now);
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

/** Deletes a guardrail and every assignment that hangs on it, in one transaction (docs/behaviour.md#assignment-cleanup). */
export async function removeGuardrail(deps: ServiceDeps, principal: Principal, id: string): Promise<void> {
  if (!isUuid(id)) throw notFound();
  forgetWritten(deps, principal.organizationId, id);
  await inTransaction(deps, async (tx) => {
    // Locked first: an assignment to it either commits before the deletes below or finds it gone.
    const current = await findGuardrail(tx, principal.organizationId, id, rowLock(deps, "update"));
    if (!current) throw notFound();
    await deleteKeyAssignments(tx, principal.organizationId, { guardrailId: id });
    await deleteMemberAssignments(tx, principal.organizationId, { guardrailId: id });
    await deleteGuardrail(tx, principal.organizationId, id);
    await recordAudit(deps, tx, principal, auditOf(deps, "guardrail.delete", current, undefined));
  });
}
