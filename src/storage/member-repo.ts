import { type RowLock, withLock } from "./row-lock.js";
import type { Executor, MemberTable } from "./schema.js";

export type Member = MemberTable & { workspace_ids: string[] };

async function workspacesOf(
  db: Executor,
  organizationId: string,
  userIds: string[],
): Promise<Map<string, string[]>> {
  const map = new Map<string, string[]>();
  if (userIds.length === 0) return map;
  const rows = await db
    .selectFrom("member_workspaces")
    .select(["user_id", "workspace_id"])
    .where("organization_id", "=", organizationId)
    .where("user_id", "in", userIds)
    .orderBy("workspace_id")
    .execute();
  for (const r of rows) map.set(r.user_id, [...(map.get(r.user_id) ?? []), r.workspace_id]);
  return map;
}

export async function insertMember(db: Executor, member: MemberTable, workspaceIds: string[]): Promise<void> {
  await db.insertInto("members").values(member).execute();
  await setMemberWorkspaces(db, member.organization_id, member.user_id, workspaceIds);
}

export async function setMemberWorkspaces(
  db: Executor,
  organizationId: string,
  userId: string,
  workspaceIds: string[],
): Promise<void> {
  await db
    .deleteFrom("member_workspaces")
    .where("organization_id", "=", organizationId)
    .where("user_id", "=", userId)
    .execute();
  if (workspaceIds.length === 0) return;
  await db
    .insertInto("member_workspaces")
    .values(
      workspaceIds.map((workspace_id) => ({
        organization_id: organizationId,
        user_id: userId,
        workspace_id,
      })),
    )
    .execute();
}

export async function updateMemberFields(
  db: Executor,
  organizationId: string,
  userId: string,
  fields: Partial<MemberTable>,
): Promise<void> {
  await db
    .updateTable("members")
    .set(fields)
    .where("organization_id", "=", organizationId)
    .where("user_id", "=", userId)
    .execute();
}

export async function findMember(
  db: Executor,
  organizationId: string,
  userId: string,
  /** Locks the member's row (its memberships are read after the lock is held). */
  lock?: RowLock,
): Promise<Member | undefined> {
  const row = await db
    .selectFrom("members")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where("user_id", "=", userId)
    .$call((q) => withLock(q, lock))
    .executeTakeFirst();
  if (!row) return undefined;
  const ws = await workspacesOf(db, organizationId, [userId]);
  return { ...row, workspace_ids: ws.get(userId) ?? [] };
}

export async function findMembers(
  db: Executor,
  organizationId: string,
  userIds: string[],
  /** Locks the members' rows (their memberships are read after the locks are held). */
  lock?: RowLock,
): Promise<Member[]> {
  if (userIds.length === 0) return [];
  const rows = await db
    .selectFrom("members")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where("user_id", "in", userIds)
    // One order for every transaction that locks several members, so two never wait on each other.
    .orderBy("user_id")
    .$call((q) => withLock(q, lock))
    .execute();
  const ws = await workspacesOf(db, organizationId, userIds);
  return rows.map((r) => ({ ...r, workspace_ids: ws.get(r.user_id) ?? [] }));
}

export async function listMembers(
  db: Executor,
  organizationId: string,
  page: { offset: number; limit: number },
): Promise<{ items: Member[]; total: number }> {
  const base = db.selectFrom("members").where("organization_id", "=", organizationId);
  const rows = await base
    .selectAll()
    .orderBy("created_at")
    .orderBy("user_id")
    .offset(page.offset)
    .limit(page.limit)
    .execute();
  const count = await base.select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
  const ws = await workspacesOf(
    db,
    organizationId,
    rows.map((r) => r.user_id),
  );
  return {
    items: rows.map((r) => ({ ...r, workspace_ids: ws.get(r.user_id) ?? [] })),
    total: Number(count.n),
  };
}

export async function deleteMember(db: Executor, organizationId: string, userId: string): Promise<void> {
  await db
    .deleteFrom("member_workspaces")
    .where("organization_id", "=", organizationId)
    .where("user_id", "=", userId)
    .execute();
  await db
    .deleteFrom("members")
    .where("organization_id", "=", organizationId)
    .where("user_id", "=", userId)
    .execute();
}

export async function removeWorkspaceFromMembers(
  db: Executor,
  organizationId: string,
  workspaceId: string,
): Promise<void> {
  await db
    .deleteFrom("member_workspaces")
    .where("organization_id", "=", organizationId)
    .where("workspace_id", "=", workspaceId)
    .execute();
}

/** The members of one workspace, oldest first. */
export async function listWorkspaceMembers(
  db: Executor,
  organizationId: string,
  workspaceId: string,
  page: { offset: number; limit: number },
): Promise<{ items: MemberTable[]; total: number }> {
  const base = db
    .selectFrom("member_workspaces")
    .innerJoin("members", (j) =>
      j
        .onRef("members.organization_id", "=", "member_workspaces.organization_id")
        .onRef("members.user_id", "=", "member_workspaces.user_id"),
    )
    .where("member_workspaces.organization_id", "=", organizationId)
    .where("member_workspaces.workspace_id", "=", workspaceId);
  const items = await base
    .selectAll("members")
    .orderBy("members.created_at")
    .orderBy("members.user_id")
    .offset(page.offset)
    .limit(page.limit)
    .execute();
  const count = await base.select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
  return { items, total: Number(count.n) };
}
