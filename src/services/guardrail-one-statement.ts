import { conflict } from "../domain/errors.js";
import { type Guardrail, type GuardrailBody, ifMatchSatisfied } from "../domain/guardrail.js";
import { findGuardrail, guardrailToRow } from "../storage/guardrail-repo.js";
import type { AtomicWrites, ChangeNotice } from "../storage/ports.js";
import { auditRow, isoNow, type Principal, type ServiceDeps } from "./context.js";
import { auditOf, createPolicy, newGuardrail, nextVersion, type UpdateOptions } from "./guardrail-changes.js";

/**
 * The one-statement guardrail writes, where the database offers them (`deps.atomic`, PostgreSQL):
 * the row, its audit entry and its change notice in one statement, so a create or an update is one
 * round trip instead of six. Each function here answers the guardrail written, or undefined when it
 * wrote nothing and the caller's transactional path must decide (no atomic writes here, a guess that
 * was wrong, a precondition that no longer holds). They are shortcuts only: every answer they give
 * is one the transactional path in guardrails.ts would give, and what they cannot decide they leave
 * to it.
 */

/** What a change to guardrails tells other instances: policies change, no key is revoked. */
const GUARDRAIL_NOTICE: ChangeNotice = { keys: false };

/**
 * A create in one statement: the target workspace is taken as named, or as the default last read
 * (rememberDefaultWorkspace), and checked by that statement. Undefined, with nothing written, when
 * there are no one-statement writes, no default is remembered yet, or the workspace was wrong.
 */
export async function createInOneStatement(
  deps: ServiceDeps,
  principal: Principal,
  body: GuardrailBody,
): Promise<Guardrail | undefined> {
  const atomic = deps.atomic;
  const workspaceId = body.workspace_id ?? deps.caches.defaultWorkspaces.get(principal.organizationId);
  if (!atomic || workspaceId === undefined) return undefined;
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
  if (!written) return undefined;
  deps.changes.bump(GUARDRAIL_NOTICE);
  rememberWritten(deps, guardrail);
  return guardrail;
}

/**
 * An update in one statement, written only over the version it was computed from. First over the
 * guardrail as this instance last wrote it, needing no read; then over one fresh read. Undefined,
 * with nothing written, when there are no one-statement writes or the fresh read leaves the
 * decision to the transactional path (not found, a workspace default to materialize, a stale
 * If-Match); a conflict when another change came between that read and the write.
 */
export async function updateInOneStatement(
  deps: ServiceDeps,
  principal: Principal,
  id: string,
  body: GuardrailBody,
  options: UpdateOptions,
): Promise<Guardrail | undefined> {
  const atomic = deps.atomic;
  if (!atomic) return undefined;
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
  return undefined;
}

/** Forgets a guardrail as written (it is being deleted), so no update guesses from it. */
export function forgetWritten(deps: ServiceDeps, organizationId: string, id: string): void {
  deps.caches.writtenGuardrails.delete(`${organizationId}/${id}`);
}

/** Most organizations whose default workspace is remembered; past it the guesses start over. */
const REMEMBERED_DEFAULTS = 10_000;

/** Remembers an organization's default workspace as read (the one-statement create's guess). */
export function rememberDefaultWorkspace(
  deps: ServiceDeps,
  organizationId: string,
  workspaceId: string,
): void {
  const known = deps.caches.defaultWorkspaces;
  if (known.get(organizationId) === workspaceId) return;
  if (known.size >= REMEMBERED_DEFAULTS) known.clear();
  known.set(organizationId, workspaceId);
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
