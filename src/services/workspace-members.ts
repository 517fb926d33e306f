import { invalidRequest, notFound } from "../domain/errors.js";
import { isUuid } from "../domain/ids.js";
import { deleteMemberAssignments } from "../storage/assignment-repo.js";
import { findMembers, listWorkspaceMembers, setMemberWorkspaces } from "../storage/member-repo.js";
import type { Executor, MemberTable } from "../storage/schema.js";
import { findWorkspace, findWorkspaceBySlug, type Workspace } from "../storage/workspace-repo.js";
import { inTransaction, type Principal, recordAudit, rowLock, type ServiceDeps } from "./context.js";

/**
 * A membership as the reference SDK reads it (docs/api.md#workspace-members). Every member has the
 * role `member` (this service has no workspace administrators: management keys administer), and
 * `created_at` is when the member was created, as the time of joining a workspace is not recorded.
 */
export function presentMembership(workspaceId: string, m: Pick<MemberTable, "user_id" | "created_at">) {
  return {
    id: `${workspaceId}:${m.user_id}`,
    workspace_id: workspaceId,
    user_id: m.user_id,
    role: "member" as const,
    created_at: m.created_at,
  };
}

async function workspaceOf(
  db: Executor,
  principal: Principal,
  idOrSlug: string,
  lock?: "key share",
): Promise<Workspace> {
  const ws = isUuid(idOrSlug)
    ? await findWorkspace(db, principal.organizationId, idOrSlug, lock)
    : await findWorkspaceBySlug(db, principal.organizationId, idOrSlug);
  if (!ws) throw notFound();
  return ws;
}

export async function listMembersOfWorkspace(
  deps: ServiceDeps,
  principal: Principal,
  idOrSlug: string,
  page: { offset: number; limit: number },
) {
  const ws = await workspaceOf(deps.db, principal, idOrSlug);
  const result = await listWorkspaceMembers(deps.db, principal.organizationId, ws.id, page);
  return { items: result.items.map((m) => presentMembership(ws.id, m)), total: result.total };
}

/**
 * Adds existing members to a workspace, in one transaction. Unknown user ids are skipped and a
 * member already there is not counted, as with assignments (docs/behaviour.md#assignment-counts).
 */
export async function addWorkspaceMembers(
  deps: ServiceDeps,
  principal: Principal,
  idOrSlug: string,
  userIds: string[],
) {
  const org = principal.organizationId;
  return inTransaction(deps, async (tx) => {
    const ws = await workspaceOf(tx, principal, idOrSlug, rowLock(deps, "key share"));
    const members = await findMembers(tx, org, [...new Set(userIds)], rowLock(deps, "update"));
    const added = [];
    for (const m of members) {
      if (m.workspace_ids.includes(ws.id)) continue;
      const next = [...m.workspace_ids, ws.id].sort();
      await setMemberWorkspaces(tx, org, m.user_id, next);
      await recordAudit(deps, tx, principal, {
        action: "member.update",
        resource_type: "member",
        resource_id: m.user_id,
        before: { workspace_ids: m.workspace_ids },
        after: { workspace_ids: next },
      });
      added.push(presentMembership(ws.id, m));
    }
    return added;
  });
}

/**
 * Removes members from a workspace, in one transaction, under the rules of a member update: not from
 * the default workspace, and not while the member owns keys there (400, and nobody is removed).
 */
export async function removeWorkspaceMembers(
  deps: ServiceDeps,
  principal: Principal,
  idOrSlug: string,
  userIds: string[],
): Promise<number> {
  const org = principal.organizationId;
  return inTransaction(deps, async (tx) => {
    const ws = await workspaceOf(tx, principal, idOrSlug, rowLock(deps, "key share"));
    const members = await findMembers(tx, org, [...new Set(userIds)], rowLock(deps, "update"));
    const leaving = members.filter((m) => m.workspace_ids.includes(ws.id));
    if (leaving.length > 0 && ws.is_default === 1) {
      throw invalidRequest([
        { path: "/user_ids", message: "members always belong to the default workspace while it exists" },
      ]);
    }
    for (const m of leaving) {
      const owned = await tx
        .selectFrom("keys")
        .select("hash")
        .where("organization_id", "=", org)
        .where("workspace_id", "=", ws.id)
        .where("member_user_id", "=", m.user_id)
        .executeTakeFirst();
      if (owned) {
        throw invalidRequest([
          {
            path: `/user_ids/${userIds.indexOf(m.user_id)}`,
            message: `member ${m.user_id} still owns keys in this workspace; delete them first`,
          },
        ]);
      }
    }
    for (const m of leaving) {
      const next = m.workspace_ids.filter((w) => w !== ws.id);
      await deleteMemberAssignments(tx, org, { userIds: [m.user_id], workspaceId: ws.id });
      await setMemberWorkspaces(tx, org, m.user_id, next);
      await recordAudit(deps, tx, principal, {
        action: "member.update",
        resource_type: "member",
        resource_id: m.user_id,
        before: { workspace_ids: m.workspace_ids },
        after: { workspace_ids: next },
      });
    }
    return leaving.length;
  });
}
