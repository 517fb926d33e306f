import { invalidRequest, notFound } from "../domain/errors.js";
import { deleteKeyAssignments, deleteMemberAssignments } from "../storage/assignment-repo.js";
import {
  deleteMember,
  findMember,
  insertMember,
  listMembers,
  type Member,
  setMemberWorkspaces,
  updateMemberFields,
} from "../storage/member-repo.js";
import { withLock } from "../storage/row-lock.js";
import type { Executor } from "../storage/schema.js";
import { findDefaultWorkspace, findWorkspace } from "../storage/workspace-repo.js";
import { inTransaction, isoNow, type Principal, recordAudit, rowLock, type ServiceDeps } from "./context.js";

export type { Member };

export interface MemberInput {
  user_id: string;
  name?: string | null;
  email?: string | null;
  workspace_ids?: string[];
}

export interface MemberPatch {
  name?: string | null;
  email?: string | null;
  workspace_ids?: string[];
}

export function presentMember(m: Member) {
  return {
    user_id: m.user_id,
    organization_id: m.organization_id,
    name: m.name,
    email: m.email,
    workspace_ids: m.workspace_ids,
    created_at: m.created_at,
    updated_at: m.updated_at,
  };
}

/**
 * The workspaces a member belongs to: those asked for, checked to exist in the organization, plus
 * the default workspace while it exists (docs/behaviour.md#members).
 */
async function memberWorkspaces(
  deps: ServiceDeps,
  db: Executor,
  principal: Principal,
  requested: string[] | undefined,
): Promise<string[]> {
  // Each locked until the commit: a workspace deleted meanwhile is deleted first or found gone.
  const lock = rowLock(deps, "key share");
  const ids = new Set<string>();
  for (const [i, id] of (requested ?? []).entries()) {
    if (!(await findWorkspace(db, principal.organizationId, id, lock))) {
      throw invalidRequest([{ path: `/workspace_ids/${i}`, message: "no such workspace" }]);
    }
    ids.add(id);
  }
  const fallback = await findDefaultWorkspace(db, principal.organizationId, lock);
  if (fallback) ids.add(fallback.id);
  return [...ids].sort();
}

export async function createMember(
  deps: ServiceDeps,
  db: Executor,
  principal: Principal,
  input: MemberInput,
): Promise<Member> {
  if (await findMember(db, principal.organizationId, input.user_id)) {
    throw invalidRequest([{ path: "/user_id", message: "a member with this user_id exists already" }]);
  }
  const workspaceIds = await memberWorkspaces(deps, db, principal, input.workspace_ids);
  const row = {
    organization_id: principal.organizationId,
    user_id: input.user_id,
    name: input.name ?? null,
    email: input.email ?? null,
    created_at: isoNow(deps),
    updated_at: null,
  };
  await insertMember(db, row, workspaceIds);
  const member = { ...row, workspace_ids: workspaceIds };
  await recordAudit(deps, db, principal, {
    action: "member.create",
    resource_type: "member",
    resource_id: input.user_id,
    before: null,
    after: presentMember(member),
  });
  return member;
}

export async function getMember(deps: ServiceDeps, principal: Principal, userId: string): Promise<Member> {
  const member = await findMember(deps.db, principal.organizationId, userId);
  if (!member) throw notFound();
  return member;
}

export async function listOrganizationMembers(
  deps: ServiceDeps,
  principal: Principal,
  page: { offset: number; limit: number },
) {
  return listMembers(deps.db, principal.organizationId, page);
}

/**
 * Updates a member. Leaving a workspace drops the member's guardrail assignment there; a member
 * who still owns keys in a workspace cannot leave it (the keys would escape the member's guardrail).
 */
export async function updateMember(
  deps: ServiceDeps,
  principal: Principal,
  userId: string,
  patch: MemberPatch,
): Promise<Member> {
  const org = principal.organizationId;
  return inTransaction(deps, async (tx) => {
    // Locked first: an assignment or key made for the member meanwhile sees the new memberships.
    const current = await findMember(tx, org, userId, rowLock(deps, "update"));
    if (!current) throw notFound();
    let workspaceIds = current.workspace_ids;
    if (patch.workspace_ids !== undefined) {
      workspaceIds = await memberWorkspaces(deps, tx, principal, patch.workspace_ids);
      const leaving = current.workspace_ids.filter((w) => !workspaceIds.includes(w));
      for (const ws of leaving) {
        const owned = await tx
          .selectFrom("keys")
          .select("hash")
          .where("organization_id", "=", org)
          .where("workspace_id", "=", ws)
          .where("member_user_id", "=", userId)
          .executeTakeFirst();
        if (owned) {
          throw invalidRequest([
            {
              path: "/workspace_ids",
              message: `the member still owns keys in workspace ${ws}; delete them first`,
            },
          ]);
        }
        await deleteMemberAssignments(tx, org, { userIds: [userId], workspaceId: ws });
      }
      await setMemberWorkspaces(tx, org, userId, workspaceIds);
    }
    const fields = {
      ...(patch.name !== undefined ? { name: patch.name } : {}),
      ...(patch.email !== undefined ? { email: patch.email } : {}),
      updated_at: isoNow(deps),
    };
    await updateMemberFields(tx, org, userId, fields);
    const next: Member = { ...current, ...fields, workspace_ids: workspaceIds };
    await recordAudit(deps, tx, principal, {
      action: "member.update",
      resource_type: "member",
      resource_id: userId,
      before: presentMember(current),
      after: presentMember(next),
    });
    return next;
  });
}

/**
 * Deletes a member with the keys the member owns and every assignment hanging on either, in one
 * transaction: a departed member's keys must stop working, not escape the member's guardrail.
 */
export async function removeMember(deps: ServiceDeps, principal: Principal, userId: string): Promise<void> {
  const org = principal.organizationId;
  await inTransaction(
    deps,
    async (tx) => {
      // Locked first: a key or assignment made for the member meanwhile is deleted too, or finds no member.
      const current = await findMember(tx, org, userId, rowLock(deps, "update"));
      if (!current) throw notFound();
      // Its keys locked too, before their assignments are deleted: an assignment of one of them
      // under way commits first (and is deleted below) or waits and then finds the key gone.
      const keys = await tx
        .selectFrom("keys")
        .select("hash")
        .where("organization_id", "=", org)
        .where("member_user_id", "=", userId)
        .orderBy("hash")
        .$call((q) => withLock(q, rowLock(deps, "update")))
        .execute();
      const hashes = keys.map((k) => k.hash);
      await deleteKeyAssignments(tx, org, { keyHashes: hashes });
      if (hashes.length > 0)
        await tx.deleteFrom("keys").where("organization_id", "=", org).where("hash", "in", hashes).execute();
      await deleteMemberAssignments(tx, org, { userIds: [userId] });
      await deleteMember(tx, org, userId);
      await recordAudit(deps, tx, principal, {
        action: "member.delete",
        resource_type: "member",
        resource_id: userId,
        before: { ...presentMember(current), deleted_key_hashes: hashes },
        after: null,
      });
    },
    { revokesKeys: true },
  );
}
