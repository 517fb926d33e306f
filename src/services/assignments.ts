import { invalidRequest, notFound } from "../domain/errors.js";
import type { Guardrail } from "../domain/guardrail.js";
import { isUuid, newId } from "../domain/ids.js";
import {
  deleteKeyAssignments,
  deleteMemberAssignments,
  listKeyAssignments,
  listMemberAssignments,
  upsertKeyAssignment,
  upsertMemberAssignment,
} from "../storage/assignment-repo.js";
import { findGuardrail } from "../storage/guardrail-repo.js";
import { findMembers } from "../storage/member-repo.js";
import { withLock } from "../storage/row-lock.js";
import type { Executor } from "../storage/schema.js";
import { findWorkspace } from "../storage/workspace-repo.js";
import { inTransaction, isoNow, type Principal, recordAudit, rowLock, type ServiceDeps } from "./context.js";

/** The guardrail an assignment call names: it must exist in the caller's organization. */
async function targetGuardrail(db: Executor, principal: Principal, id: string): Promise<Guardrail> {
  const g = isUuid(id) ? await findGuardrail(db, principal.organizationId, id) : undefined;
  if (!g) throw notFound();
  return g;
}

/**
 * The guardrail an assignment is made to, its workspace and then itself locked until the commit
 * (PostgreSQL; storage/row-lock.ts), in the order a workspace's deletion takes them: a deletion of
 * either that is under way finishes first, and then the guardrail is not found.
 */
async function lockedTarget(
  deps: ServiceDeps,
  db: Executor,
  principal: Principal,
  id: string,
): Promise<Guardrail> {
  const g = await targetGuardrail(db, principal, id);
  const lock = rowLock(deps, "key share");
  if (!lock) return g;
  await findWorkspace(db, principal.organizationId, g.workspace_id, lock);
  const locked = await findGuardrail(db, principal.organizationId, id, lock);
  if (!locked) throw notFound();
  return locked;
}

function assignable(g: Guardrail): void {
  if (g.is_workspace_default) {
    throw invalidRequest([
      {
        path: "/id",
        message: "a workspace default guardrail applies to the whole workspace and cannot be assigned",
      },
    ]);
  }
}

/**
 * Assigns a guardrail to keys (docs/behaviour.md#key-assignments): a key holds one guardrail, so assigning moves it;
 * unknown hashes are skipped and not counted; a key of another workspace is a 400.
 */
export async function assignKeys(
  deps: ServiceDeps,
  principal: Principal,
  id: string,
  hashes: string[],
): Promise<number> {
  const org = principal.organizationId;
  return inTransaction(deps, async (tx) => {
    const g = await lockedTarget(deps, tx, principal, id);
    assignable(g);
    const unique = [...new Set(hashes)];
    const keys = unique.length
      ? await tx
          .selectFrom("keys")
          .select(["hash", "workspace_id"])
          .where("organization_id", "=", org)
          .where("kind", "=", "inference")
          .where("hash", "in", unique)
          // Locked in one order (a key deleted meanwhile is deleted first, then skipped as unknown).
          .orderBy("hash")
          .$call((q) => withLock(q, rowLock(deps, "key share")))
          .execute()
      : [];
    const foreign = keys.filter((k) => k.workspace_id !== g.workspace_id).map((k) => k.hash);
    if (foreign.length > 0) {
      throw invalidRequest(
        foreign.map((h) => ({
          path: `/key_hashes/${hashes.indexOf(h)}`,
          message: "the key belongs to another workspace",
        })),
      );
    }
    let count = 0;
    const now = isoNow(deps);
    for (const k of keys) {
      const row = {
        id: newId(),
        organization_id: org,
        key_hash: k.hash,
        guardrail_id: id,
        assigned_by: principal.keyHash,
        created_at: now,
      };
      if (await upsertKeyAssignment(tx, row)) count++;
    }
    await recordAudit(deps, tx, principal, {
      action: "guardrail.assign_keys",
      resource_type: "guardrail",
      resource_id: id,
      before: null,
      after: { key_hashes: keys.map((k) => k.hash), assigned_count: count },
    });
    return count;
  });
}

export async function unassignKeys(
  deps: ServiceDeps,
  principal: Principal,
  id: string,
  hashes: string[],
): Promise<number> {
  return inTransaction(deps, async (tx) => {
    await targetGuardrail(tx, principal, id);
    const unique = [...new Set(hashes)];
    const count = await deleteKeyAssignments(tx, principal.organizationId, {
      guardrailId: id,
      keyHashes: unique,
    });
    await recordAudit(deps, tx, principal, {
      action: "guardrail.unassign_keys",
      resource_type: "guardrail",
      resource_id: id,
      before: { key_hashes: unique },
      after: { unassigned_count: count },
    });
    return count;
  });
}

/**
 * Assigns a guardrail to members (docs/behaviour.md#member-assignments): one guardrail per member per workspace, so
 * assigning replaces the member's guardrail in the guardrail's workspace; unknown ids are skipped;
 * a member outside the guardrail's workspace is a 400.
 */
export async function assignMembers(
  deps: ServiceDeps,
  principal: Principal,
  id: string,
  userIds: string[],
): Promise<number> {
  const org = principal.organizationId;
  return inTransaction(deps, async (tx) => {
    const g = await lockedTarget(deps, tx, principal, id);
    assignable(g);
    const members = await findMembers(tx, org, [...new Set(userIds)], rowLock(deps, "key share"));
    const outside = members.filter((m) => !m.workspace_ids.includes(g.workspace_id)).map((m) => m.user_id);
    if (outside.length > 0) {
      throw invalidRequest(
        outside.map((u) => ({
          path: `/member_user_ids/${userIds.indexOf(u)}`,
          message: "the member is not in the guardrail's workspace",
        })),
      );
    }
    let count = 0;
    const now = isoNow(deps);
    for (const m of members) {
      const row = {
        id: newId(),
        organization_id: org,
        user_id: m.user_id,
        workspace_id: g.workspace_id,
        guardrail_id: id,
        assigned_by: principal.keyHash,
        created_at: now,
      };
      if (await upsertMemberAssignment(tx, row)) count++;
    }
    await recordAudit(deps, tx, principal, {
      action: "guardrail.assign_members",
      resource_type: "guardrail",
      resource_id: id,
      before: null,
      after: { member_user_ids: members.map((m) => m.user_id), assigned_count: count },
    });
    return count;
  });
}

export async function unassignMembers(
  deps: ServiceDeps,
  principal: Principal,
  id: string,
  userIds: string[],
): Promise<number> {
  return inTransaction(deps, async (tx) => {
    await targetGuardrail(tx, principal, id);
    const unique = [...new Set(userIds)];
    const count = await deleteMemberAssignments(tx, principal.organizationId, {
      guardrailId: id,
      userIds: unique,
    });
    await recordAudit(deps, tx, principal, {
      action: "guardrail.unassign_members",
      resource_type: "guardrail",
      resource_id: id,
      before: { member_user_ids: unique },
      after: { unassigned_count: count },
    });
    return count;
  });
}

export async function keyAssignments(
  deps: ServiceDeps,
  principal: Principal,
  page: { offset: number; limit: number },
  id?: string,
) {
  if (id !== undefined) await targetGuardrail(deps.db, principal, id);
  return listKeyAssignments(deps.db, principal.organizationId, {
    ...page,
    ...(id !== undefined ? { guardrailId: id } : {}),
  });
}

export async function memberAssignments(
  deps: ServiceDeps,
  principal: Principal,
  page: { offset: number; limit: number },
  id?: string,
) {
  if (id !== undefined) await targetGuardrail(deps.db, principal, id);
  return listMemberAssignments(deps.db, principal.organizationId, {
    ...page,
    ...(id !== undefined ? { guardrailId: id } : {}),
  });
}
