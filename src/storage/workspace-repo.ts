import { type RowLock, withLock } from "./row-lock.js";
import type { Executor, OrganizationTable, WorkspaceTable } from "./schema.js";
import { runShaped } from "./shaped-query.js";

export type Workspace = WorkspaceTable;
export type Organization = OrganizationTable;

export async function insertOrganization(db: Executor, org: Organization): Promise<void> {
  await db.insertInto("organizations").values(org).execute();
}

export async function findOrganization(db: Executor, id: string): Promise<Organization | undefined> {
  return db.selectFrom("organizations").selectAll().where("id", "=", id).executeTakeFirst();
}

export async function firstOrganization(db: Executor): Promise<Organization | undefined> {
  return db.selectFrom("organizations").selectAll().orderBy("created_at", "asc").limit(1).executeTakeFirst();
}

export async function setDefaultWorkspace(
  db: Executor,
  organizationId: string,
  workspaceId: string | null,
): Promise<void> {
  await db
    .updateTable("organizations")
    .set({ default_workspace_id: workspaceId })
    .where("id", "=", organizationId)
    .execute();
}

export async function insertWorkspace(db: Executor, ws: Workspace): Promise<void> {
  await db.insertInto("workspaces").values(ws).execute();
}

export async function findWorkspace(
  db: Executor,
  organizationId: string,
  id: string,
  lock?: RowLock,
): Promise<Workspace | undefined> {
  return db
    .selectFrom("workspaces")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where("id", "=", id)
    .$call((q) => withLock(q, lock))
    .executeTakeFirst();
}

/** The organization's default workspace, if it still exists, in one statement. */
export async function findDefaultWorkspace(
  db: Executor,
  organizationId: string,
  lock?: "key share",
): Promise<Workspace | undefined> {
  const result = await runShaped(db, `select:workspaces:default:${lock ?? "none"}`, [organizationId], () =>
    db
      .selectFrom("workspaces")
      .innerJoin("organizations", "organizations.default_workspace_id", "workspaces.id")
      .selectAll("workspaces")
      .where("organizations.id", "=", organizationId)
      .$if(lock === "key share", (q) => q.forKeyShare("workspaces")),
  );
  return result.rows[0] as Workspace | undefined;
}

export async function findWorkspaceByDefaultGuardrail(
  db: Executor,
  organizationId: string,
  guardrailId: string,
): Promise<Workspace | undefined> {
  return db
    .selectFrom("workspaces")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where("default_guardrail_id", "=", guardrailId)
    .executeTakeFirst();
}

export async function listWorkspaces(
  db: Executor,
  organizationId: string,
  page: { offset: number; limit: number },
): Promise<{ items: Workspace[]; total: number }> {
  const base = db.selectFrom("workspaces").where("organization_id", "=", organizationId);
  const items = await base
    .selectAll()
    .orderBy("created_at", "asc")
    .orderBy("id", "asc")
    .offset(page.offset)
    .limit(page.limit)
    .execute();
  const count = await base.select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
  return { items, total: Number(count.n) };
}

export async function deleteWorkspace(db: Executor, organizationId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom("workspaces")
    .where("organization_id", "=", organizationId)
    .where("id", "=", id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

export async function findWorkspaceBySlug(
  db: Executor,
  organizationId: string,
  slug: string,
): Promise<Workspace | undefined> {
  return db
    .selectFrom("workspaces")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where("slug", "=", slug)
    .executeTakeFirst();
}

/** Writes a workspace's editable fields. */
export async function updateWorkspaceRow(db: Executor, ws: Workspace): Promise<void> {
  await db
    .updateTable("workspaces")
    .set({ name: ws.name, slug: ws.slug, description: ws.description, updated_at: ws.updated_at })
    .where("organization_id", "=", ws.organization_id)
    .where("id", "=", ws.id)
    .execute();
}
