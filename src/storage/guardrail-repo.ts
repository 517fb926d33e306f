import type { Region } from "../domain/catalog.js";
import type { BuiltinFilter, CustomFilter } from "../domain/content-filters.js";
import type { Guardrail, ResetInterval } from "../domain/guardrail.js";
import { type RowLock, withLock } from "./row-lock.js";
import type { Executor, GuardrailTable } from "./schema.js";
import { insertRow, runShaped } from "./shaped-query.js";

function json<T>(text: string | null): T | null {
  return text === null ? null : (JSON.parse(text) as T);
}

function text(value: unknown): string | null {
  return value === null ? null : JSON.stringify(value);
}

export function rowToGuardrail(r: GuardrailTable): Guardrail {
  return {
    id: r.id,
    organization_id: r.organization_id,
    workspace_id: r.workspace_id,
    name: r.name,
    description: r.description,
    allowed_data_regions: json<Region[]>(r.allowed_data_regions),
    allowed_models: json<string[]>(r.allowed_models),
    allowed_providers: json<string[]>(r.allowed_providers),
    ignored_models: json<string[]>(r.ignored_models),
    ignored_providers: json<string[]>(r.ignored_providers),
    content_filter_builtins: json<BuiltinFilter[]>(r.content_filter_builtins),
    content_filters: json<CustomFilter[]>(r.content_filters),
    enable_free_model_publication: r.enable_free_model_publication === 1,
    enable_free_model_training: r.enable_free_model_training === 1,
    enable_paid_model_training: r.enable_paid_model_training === 1,
    enforce_zdr: JSON.parse(r.enforce_zdr) as Record<string, boolean>,
    include_byok_in_budgets: r.include_byok_in_budgets === 1,
    limit_micros: r.limit_micros === null ? null : Number(r.limit_micros),
    reset_interval: r.reset_interval as ResetInterval | null,
    alert_thresholds: json<number[]>(r.alert_thresholds),
    is_workspace_default: r.is_workspace_default === 1,
    version: Number(r.version),
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export function guardrailToRow(g: Guardrail): GuardrailTable {
  return {
    id: g.id,
    organization_id: g.organization_id,
    workspace_id: g.workspace_id,
    name: g.name,
    description: g.description,
    allowed_data_regions: text(g.allowed_data_regions),
    allowed_models: text(g.allowed_models),
    allowed_providers: text(g.allowed_providers),
    ignored_models: text(g.ignored_models),
    ignored_providers: text(g.ignored_providers),
    content_filter_builtins: text(g.content_filter_builtins),
    content_filters: text(g.content_filters),
    enable_free_model_publication: g.enable_free_model_publication ? 1 : 0,
    enable_free_model_training: g.enable_free_model_training ? 1 : 0,
    enable_paid_model_training: g.enable_paid_model_training ? 1 : 0,
    enforce_zdr: JSON.stringify(g.enforce_zdr),
    include_byok_in_budgets: g.include_byok_in_budgets ? 1 : 0,
    limit_micros: g.limit_micros,
    reset_interval: g.reset_interval,
    alert_thresholds: text(g.alert_thresholds),
    is_workspace_default: g.is_workspace_default ? 1 : 0,
    version: g.version,
    created_at: g.created_at,
    updated_at: g.updated_at,
  };
}

export async function insertGuardrail(db: Executor, g: Guardrail): Promise<void> {
  await insertRow(db, "guardrails", guardrailToRow(g));
}

/** Every query names the organization: another organization's guardrail does not exist (docs/behaviour.md#organizations). */
export async function findGuardrail(
  db: Executor,
  organizationId: string,
  id: string,
  lock?: RowLock,
): Promise<Guardrail | undefined> {
  const result = await runShaped(db, `select:guardrails:by-id:${lock ?? "none"}`, [organizationId, id], () =>
    db
      .selectFrom("guardrails")
      .selectAll()
      .where("organization_id", "=", organizationId)
      .where("id", "=", id)
      .$call((q) => withLock(q, lock)),
  );
  const row = result.rows[0] as GuardrailTable | undefined;
  return row ? rowToGuardrail(row) : undefined;
}

/** The organization's guardrails among `ids`, by id (one query; unknown ids are left out). */
export async function findGuardrails(
  db: Executor,
  organizationId: string,
  ids: readonly string[],
): Promise<Map<string, Guardrail>> {
  const found = new Map<string, Guardrail>();
  if (ids.length === 0) return found;
  const rows = await db
    .selectFrom("guardrails")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where("id", "in", [...new Set(ids)])
    .execute();
  for (const row of rows) found.set(row.id, rowToGuardrail(row as GuardrailTable));
  return found;
}

export async function listGuardrails(
  db: Executor,
  organizationId: string,
  workspaceId: string,
  page: { offset: number; limit: number },
): Promise<{ items: Guardrail[]; total: number }> {
  const base = db
    .selectFrom("guardrails")
    .where("organization_id", "=", organizationId)
    .where("workspace_id", "=", workspaceId);
  const rows = await base
    .selectAll()
    .orderBy("created_at", "asc")
    .orderBy("id", "asc")
    .offset(page.offset)
    .limit(page.limit)
    .execute();
  const count = await base.select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
  return { items: rows.map(rowToGuardrail), total: Number(count.n) };
}

/**
 * Writes a new version only if the stored one is still the version the change was computed from:
 * the guard against lost updates between instances (docs/behaviour.md#concurrency). Returns false when another
 * writer got there first.
 */
export async function updateGuardrailIfVersion(
  db: Executor,
  g: Guardrail,
  expectedVersion: number,
): Promise<boolean> {
  const { id, organization_id, created_at, ...changes } = guardrailToRow(g);
  const columns = Object.keys(changes) as (keyof typeof changes)[];
  const result = await runShaped(
    db,
    `update:guardrails:${columns.join(",")}`,
    [...columns.map((c) => changes[c]), organization_id, id, expectedVersion],
    () =>
      db
        .updateTable("guardrails")
        .set(changes)
        .where("organization_id", "=", organization_id)
        .where("id", "=", id)
        .where("version", "=", expectedVersion),
  );
  return Number(result.numAffectedRows ?? 0) === 1;
}

export async function deleteGuardrail(db: Executor, organizationId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom("guardrails")
    .where("organization_id", "=", organizationId)
    .where("id", "=", id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

export async function deleteWorkspaceGuardrails(
  db: Executor,
  organizationId: string,
  workspaceId: string,
): Promise<void> {
  await db
    .deleteFrom("guardrails")
    .where("organization_id", "=", organizationId)
    .where("workspace_id", "=", workspaceId)
    .execute();
}
