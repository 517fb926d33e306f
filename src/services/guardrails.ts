import { conflict, notFound } from "../domain/errors.js";
import {
  applyGuardrailBody,
  defaultPolicy,
  type Guardrail,
  type GuardrailBody,
  type GuardrailPolicy,
  ifMatchSatisfied,
  presentGuardrail,
  workspaceDefaultName,
} from "../domain/guardrail.js";
import { isUuid, newId } from "../domain/ids.js";
import { deleteKeyAssignments, deleteMemberAssignments } from "../storage/assignment-repo.js";
import type { AtomicWrites, ChangeNotice } from "../storage/database.js";
import {
  deleteGuardrail,
  findGuardrail,
  guardrailToRow,
  insertGuardrail,
  listGuardrails,
  updateGuardrailIfVersion,
} from "../storage/guardrail-repo.js";
import type { Executor } from "../storage/schema.js";
import { findWorkspaceByDefaultGuardrail } from "../storage/workspace-repo.js";
import {
  type AuditChange,
  auditRow,
  inTransaction,
  isoNow,
  type Principal,
  recordAudit,
  rowLock,
  type ServiceDeps,
} from "./context.js";
import { resolveTargetWorkspace } from "./workspaces.js";

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

/** What a change to guardrails tells other instances: policies change, no key is revoked. */
const GUARDRAIL_NOTICE: ChangeNotice = { keys: false };

/**
 * Create without an Idempotency-Key, answered as createGuardrail answers. Where the database
 * writes a guardrail with its audit entry and notice in one statement (PostgreSQL), the target
 * workspace is taken as named, or as the default last read, and checked by that statement; when it
 * was wrong, or on SQLite, the change runs in a transaction of its own.
 */
export async function createGuardrailNow(
  deps: ServiceDeps,
  principal: Principal,
  body: GuardrailBody,
): Promise<Guardrail> {
  const atomic = deps.atomic;
  const workspaceId = body.workspace_id ?? deps.caches.defaultWorkspaces.get(principal.organizationId);
  if (atomic && workspaceId !== undefined) {
    const guardrail = newGuardrail(deps, principal, createPolicy(deps, body), workspaceId);
    const written = await atomic.insertGuardrail(
      guardrailToRow(guardrail),
      auditRow(deps, principal, auditOf(deps, "guardrail.create", undefined, guardrail)),
      {
        kind: body.workspace_id === undefined ? "default" : "named",
        organizationId: principal.organizationId,
        workspaceId,
      },
      GUARDRAIL_NOTICE,
    );
    if (written) {
      deps.changes.bump(GUARDRAIL_NOTICE);
      rememberWritten(deps, guardrail);
      return guardrail;
    }
  }
  return inTransaction(deps, (tx) => createGuardrail(deps, tx, principal, body));
}

/** The policy of a create body; its 400s come before anything is read. */
function createPolicy(deps: ServiceDeps, body: GuardrailBody): GuardrailPolicy {
  const name = body.name ?? "";
  return applyGuardrailBody(defaultPolicy(name, deps.catalog.familyIds()), body, deps.catalog, {
    isCreate: true,
  });
}

/** A new guardrail of `policy` in a workspace. */
function newGuardrail(
  deps: ServiceDeps,
  principal: Principal,
  policy: GuardrailPolicy,
  workspaceId: string,
): Guardrail {
  return {
    ...policy,
    id: newId(),
    organization_id: principal.organizationId,
    workspace_id: workspaceId,
    is_workspace_default: false,
    version: 1,
    created_at: isoNow(deps),
    updated_at: null,
  };
}

/** Most organizations whose default workspace is remembered; past it the guesses start over. */
const REMEMBERED_DEFAULTS = 10_000;

function rememberDefaultWorkspace(deps: ServiceDeps, organizationId: string, workspaceId: string): void {
  const known = deps.caches.defaultWorkspaces;
  if (known.get(organizationId) === workspaceId) return;
  if (known.size >= REMEMBERED_DEFAULTS) known.clear();
  known.set(organizationId, workspaceId);
}

/** A guardrail's next version after a PATCH body (its 400s), as updateGuardrail computes it. */
function nextVersion(deps: ServiceDeps, current: Guardrail, body: GuardrailBody, now: string): Guardrail {
  const fixedName = current.is_workspace_default ? current.name : undefined;
  const policy = applyGuardrailBody(current, body, deps.catalog, { isCreate: false, fixedName });
  return { ...current, ...policy, version: current.version + 1, updated_at: now };
}

/** Most guardrails remembered as written; past it the oldest is forgotten first. */
const REMEMBERED_GUARDRAILS = 10_000;

/** Remembers a guardrail as this instance wrote it (the one-statement update's guess). */
function rememberWritten(deps: ServiceDeps, guardrail: Guardrail): void {
  const known = deps.caches.writtenGuardrails;
  const key = `${guardrail.organization_id}/${guardrail.id}`;
  known.delete(key);
  if (known.size >= REMEMBERED_GUARDRAILS) known.delete(known.keys().next().value as string);
  known.set(key, guardrail);
}

/**
 * The PATCH over `current` in one statement, written only if `current` is still the stored version:
 * the new version, or undefined when another change came first (nothing written). Its 400s and a
 * stale If-Match throw, unless `current` is only a guess: then they too answer undefined, and a
 * fresh read decides. Failures of the write itself always throw (it may have been committed).
 */
async function updateOver(
  deps: ServiceDeps,
  atomic: AtomicWrites,
  principal: Principal,
  current: Guardrail,
  body: GuardrailBody,
  options: UpdateOptions,
  guess = false,
): Promise<Guardrail | undefined> {
  let next: Guardrail;
  try {
    if (options.ifMatch !== undefined && !ifMatchSatisfied(options.ifMatch, current)) {
      throw conflict("the guardrail changed since the entity tag in If-Match was read");
    }
    next = nextVersion(deps, current, body, isoNow(deps));
  } catch (err) {
    if (guess) return undefined;
    throw err;
  }
  const written = await atomic.updateGuardrail(
    guardrailToRow(next),
    { version: current.version, updatedAt: current.updated_at },
    auditRow(deps, principal, auditOf(deps, "guardrail.update", current, next)),
    GUARDRAIL_NOTICE,
  );
  if (!written) return undefined;
  deps.changes.bump(GUARDRAIL_NOTICE);
  rememberWritten(deps, next);
  return next;
}

export interface UpdateOptions {
  /** The If-Match header, when the caller sent one. */
  ifMatch?: string;
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
  const atomic = deps.atomic;
  if (atomic) {
    const remembered = `${principal.organizationId}/${id}`;
    const written = deps.caches.writtenGuardrails.get(remembered);
    if (written) {
      // As this instance last wrote it: one statement, written only if that is still the stored
      // version. Anything the guess decides (an error, a refusal) is decided again on a fresh read.
      const next = await updateOver(deps, atomic, principal, written, body, options, true);
      if (next) return next;
      deps.caches.writtenGuardrails.delete(remembered);
    }
    // One read, then one statement that writes only over the version read (else 409, as below).
    // Anything else (not found, a default to materialize, a stale If-Match) takes the general path.
    const current = await findGuardrail(deps.db, principal.organizationId, id);
    if (current && (options.ifMatch === undefined || ifMatchSatisfied(options.ifMatch, current))) {
      const next = await updateOver(deps, atomic, principal, current, body, options);
      if (!next) throw conflict("the guardrail was changed by another request at the same time");
      return next;
    }
  }
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
  deps.caches.writtenGuardrails.delete(`${principal.organizationId}/${id}`);
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
