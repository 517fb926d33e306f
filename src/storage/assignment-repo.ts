import type { Executor, KeyAssignmentTable, MemberAssignmentTable } from "./schema.js";

export type KeyAssignment = KeyAssignmentTable & { key_name: string; key_label: string };
export type MemberAssignment = MemberAssignmentTable;

/** A key holds at most one guardrail: assigning replaces the key's previous assignment (docs/behaviour.md#key-assignments). */
export async function upsertKeyAssignment(db: Executor, row: KeyAssignmentTable): Promise<boolean> {
  const existing = await db
    .selectFrom("key_assignments")
    .select(["guardrail_id"])
    .where("organization_id", "=", row.organization_id)
    .where("key_hash", "=", row.key_hash)
    .executeTakeFirst();
  if (existing?.guardrail_id === row.guardrail_id) return false;
  await db.deleteFrom("key_assignments").where("key_hash", "=", row.key_hash).execute();
  await db.insertInto("key_assignments").values(row).execute();
  return true;
}

/** A member holds at most one guardrail per workspace (docs/behaviour.md#member-assignments). */
export async function upsertMemberAssignment(db: Executor, row: MemberAssignmentTable): Promise<boolean> {
  const existing = await db
    .selectFrom("member_assignments")
    .select(["guardrail_id"])
    .where("organization_id", "=", row.organization_id)
    .where("user_id", "=", row.user_id)
    .where("workspace_id", "=", row.workspace_id)
    .executeTakeFirst();
  if (existing?.guardrail_id === row.guardrail_id) return false;
  await db
    .deleteFrom("member_assignments")
    .where("organization_id", "=", row.organization_id)
    .where("user_id", "=", row.user_id)
    .where("workspace_id", "=", row.workspace_id)
    .execute();
  await db.insertInto("member_assignments").values(row).execute();
  return true;
}

export async function deleteKeyAssignments(
  db: Executor,
  organizationId: string,
  where: { guardrailId?: string; keyHashes?: string[]; workspaceId?: string },
): Promise<number> {
  let q = db.deleteFrom("key_assignments").where("organization_id", "=", organizationId);
  if (where.guardrailId !== undefined) q = q.where("guardrail_id", "=", where.guardrailId);
  if (where.keyHashes !== undefined) {
    if (where.keyHashes.length === 0) return 0;
    q = q.where("key_hash", "in", where.keyHashes);
  }
  if (where.workspaceId !== undefined) {
    const ws = where.workspaceId;
    q = q.where("key_hash", "in", (eb) =>
      eb
        .selectFrom("keys")
        .select("hash")
        .where("organization_id", "=", organizationId)
        .where("workspace_id", "=", ws),
    );
  }
  const result = await q.executeTakeFirst();
  return Number(result.numDeletedRows);
}

export async function deleteMemberAssignments(
  db: Executor,
  organizationId: string,
  where: { guardrailId?: string; userIds?: string[]; workspaceId?: string },
): Promise<number> {
  let q = db.deleteFrom("member_assignments").where("organization_id", "=", organizationId);
  if (where.guardrailId !== undefined) q = q.where("guardrail_id", "=", where.guardrailId);
  if (where.userIds !== undefined) {
    if (where.userIds.length === 0) return 0;
    q = q.where("user_id", "in", where.userIds);
  }
  if (where.workspaceId !== undefined) q = q.where("workspace_id", "=", where.workspaceId);
  const result = await q.executeTakeFirst();
  return Number(result.numDeletedRows);
}

export async function listKeyAssignments(
  db: Executor,
  organizationId: string,
  page: { offset: number; limit: number; guardrailId?: string },
): Promise<{ items: KeyAssignment[]; total: number }> {
  let base = db
    .selectFrom("key_assignments as a")
    .innerJoin("keys as k", "k.hash", "a.key_hash")
    .where("a.organization_id", "=", organizationId);
  if (page.guardrailId !== undefined) base = base.where("a.guardrail_id", "=", page.guardrailId);
  const items = await base
    .selectAll("a")
    .select(["k.name as key_name", "k.label as key_label"])
    .orderBy("a.created_at")
    .orderBy("a.id")
    .offset(page.offset)
    .limit(page.limit)
    .execute();
  const count = await base.select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
  return { items, total: Number(count.n) };
}

export async function listMemberAssignments(
  db: Executor,
  organizationId: string,
  page: { offset: number; limit: number; guardrailId?: string },
): Promise<{ items: MemberAssignment[]; total: number }> {
  let base = db.selectFrom("member_assignments").where("organization_id", "=", organizationId);
  if (page.guardrailId !== undefined) base = base.where("guardrail_id", "=", page.guardrailId);
  const items = await base
    .selectAll()
    .orderBy("created_at")
    .orderBy("id")
    .offset(page.offset)
    .limit(page.limit)
    .execute();
  const count = await base.select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
  return { items, total: Number(count.n) };
}

/**
 * The guardrails assigned to each of `keys` and to the keys' members, in two queries whatever the
 * number of keys: by key hash, and by memberSlot.
 */
export async function findKeysGuardrailIds(
  db: Executor,
  organizationId: string,
  keys: readonly { hash: string; memberUserId: string | null }[],
): Promise<{ byKey: Map<string, string>; byMember: Map<string, string> }> {
  const byKey = new Map<string, string>();
  if (keys.length === 0) return { byKey, byMember: new Map() };
  const keyRows = await db
    .selectFrom("key_assignments")
    .select(["key_hash", "guardrail_id"])
    .where("organization_id", "=", organizationId)
    .where(
      "key_hash",
      "in",
      keys.map((k) => k.hash),
    )
    .execute();
  for (const r of keyRows) byKey.set(r.key_hash, r.guardrail_id);
  const byMember = await findMembersGuardrailIds(
    db,
    organizationId,
    keys.flatMap((k) => (k.memberUserId === null ? [] : [k.memberUserId])),
  );
  return { byKey, byMember };
}

/** A member's place in one workspace, as findKeysGuardrailIds names it. */
export const memberSlot = (workspaceId: string, userId: string) => `${workspaceId}:${userId}`;

/** The guardrails assigned to each of `userIds` in each workspace, by memberSlot (one query). */
export async function findMembersGuardrailIds(
  db: Executor,
  organizationId: string,
  userIds: readonly string[],
): Promise<Map<string, string>> {
  const bySlot = new Map<string, string>();
  if (userIds.length === 0) return bySlot;
  const rows = await db
    .selectFrom("member_assignments")
    .select(["user_id", "workspace_id", "guardrail_id"])
    .where("organization_id", "=", organizationId)
    .where("user_id", "in", [...new Set(userIds)])
    .execute();
  for (const r of rows) bySlot.set(memberSlot(r.workspace_id, r.user_id), r.guardrail_id);
  return bySlot;
}
