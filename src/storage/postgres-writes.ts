import type pg from "pg";
import type { AuditEntryRow } from "./audit-repo.js";
import type { AtomicWrites, ChangeNotice, WorkspaceGuard } from "./database.js";
import type { GuardrailTable } from "./schema.js";

/**
 * Guardrail writes on PostgreSQL in one statement each: the row, its audit entry and the change
 * notice travel together in one data-modifying WITH query, so a write is one round trip instead of
 * six (BEGIN, read, write, audit, notify, COMMIT). One statement is one transaction: either all of
 * it is committed or none, and the notice is delivered only if it is. Each statement is prepared
 * once per connection (a named statement), so PostgreSQL does not parse and plan it every time.
 *
 * A write runs only when its precondition still holds in the same snapshot (the workspace exists, or
 * the version read is still the stored one); otherwise it writes nothing and says so, and the
 * caller takes the general path, which answers exactly as before (400, 404 or 409).
 */

/** The column order of the rows we write (guardrailToRow and the audit row build them in this order). */
type Columns = readonly string[];

/** `"a", "b"`: identifiers are our own column names (checked to be plain), quoted anyway. */
function columnList(columns: Columns): string {
  for (const c of columns) if (!/^[a-z_][a-z0-9_]*$/.test(c)) throw new Error(`unexpected column name ${c}`);
  return columns.map((c) => `"${c}"`).join(", ");
}

/**
 * The SQL type of each column of a table, read from the catalog: in INSERT … SELECT the parameters
 * are not typed by their target columns (as they are in VALUES), so each one is cast explicitly.
 */
async function columnTypes(pool: pg.Pool, table: string): Promise<Map<string, string>> {
  const result = await pool.query<{ name: string; type: string }>(
    `select attname as name, format_type(atttypid, atttypmod) as type
       from pg_attribute
      where attrelid = to_regclass($1) and attnum > 0 and not attisdropped`,
    [table],
  );
  if (result.rows.length === 0) throw new Error(`table ${table} not found`);
  return new Map(result.rows.map((r) => [r.name, r.type]));
}

function castParameters(columns: Columns, types: Map<string, string>, from: number): string {
  return columns
    .map((c, i) => {
      const type = types.get(c);
      if (type === undefined) throw new Error(`column ${c} not found`);
      return `$${from + i}::${type}`;
    })
    .join(", ");
}

interface Prepared {
  name: string;
  text: string;
}

export function postgresAtomicWrites(pool: pg.Pool, channel: string): AtomicWrites {
  let types: Promise<{ guardrails: Map<string, string>; audit: Map<string, string> }> | undefined;
  const typesOf = () => {
    if (!types) {
      types = (async () => ({
        guardrails: await columnTypes(pool, "guardrails"),
        audit: await columnTypes(pool, "audit_log"),
      }))();
      // A failure (a lost connection) is not remembered: the next write asks again.
      types.catch(() => {
        types = undefined;
      });
    }
    return types;
  };
  /** Statements by shape (the column lists), built once; their names identify them on every connection. */
  const statements = new Map<string, Prepared>();
  const statement = (shape: string, build: () => string): Prepared => {
    let found = statements.get(shape);
    if (!found) {
      found = { name: `guardrails_atomic_${statements.size + 1}`, text: build() };
      statements.set(shape, found);
    }
    return found;
  };

  /** The tail every write shares: the audit entry and the notice, each only if the write happened. */
  const tail = (changed: string, audit: Columns, auditTypes: Map<string, string>, from: number): string => `,
    audit as (
      insert into audit_log (${columnList(audit)})
      select ${castParameters(audit, auditTypes, from)} from ${changed}
    ),
    notice as (
      select pg_notify($${from + audit.length}::text, $${from + audit.length + 1}::text) from ${changed}
    )
    select (select count(*) from ${changed}) as written, (select count(*) from notice) as notified`;

  const run = async (prepared: Prepared, values: unknown[]): Promise<boolean> => {
    const result = await pool.query<{ written: number; notified: number }>({ ...prepared, values });
    return Number(result.rows[0]?.written ?? 0) === 1;
  };

  return {
    async insertGuardrail(
      row: GuardrailTable,
      audit: AuditEntryRow,
      guard: WorkspaceGuard,
      notice: ChangeNotice,
    ): Promise<boolean> {
      const t = await typesOf();
      const columns = Object.keys(row);
      const auditColumns = Object.keys(audit);
      const shape = `insert:${guard.kind}:${columns.join(",")}:${auditColumns.join(",")}`;
      const n = columns.length;
      // The workspace, as the general path resolves it: the organization's default, or the named one.
      const exists =
        guard.kind === "default"
          ? `select 1 from organizations where id = $${n + 1}::text and default_workspace_id = $${n + 2}::text`
          : `select 1 from workspaces where organization_id = $${n + 1}::text and id = $${n + 2}::text`;
      const prepared = statement(
        shape,
        () => `with
    written as (
      insert into guardrails (${columnList(columns)})
      select ${castParameters(columns, t.guardrails, 1)} where exists (${exists})
      returning 1
    )${tail("written", auditColumns, t.audit, n + 3)}`,
      );
      return run(prepared, [
        ...Object.values(row),
        guard.organizationId,
        guard.workspaceId,
        ...Object.values(audit),
        channel,
        JSON.stringify(notice),
      ]);
    },

    async updateGuardrail(
      row: GuardrailTable,
      expected: { version: number; updatedAt: string | null },
      audit: AuditEntryRow,
      notice: ChangeNotice,
    ): Promise<boolean> {
      const t = await typesOf();
      const { id, organization_id, created_at, ...changes } = row;
      const columns = Object.keys(changes);
      const auditColumns = Object.keys(audit);
      const shape = `update:${columns.join(",")}:${auditColumns.join(",")}`;
      const n = columns.length;
      // The version and the time of the change read: a row deleted and made again (a workspace's
      // default guardrail keeps its id) restarts at version 1, but not at the same instant.
      const prepared = statement(
        shape,
        () => `with
    written as (
      update guardrails set ${columns.map((c, i) => `"${c}" = $${i + 1}`).join(", ")}
       where organization_id = $${n + 1} and id = $${n + 2} and version = $${n + 3}
         and updated_at is not distinct from $${n + 4}::text
      returning 1
    )${tail("written", auditColumns, t.audit, n + 5)}`,
      );
      return run(prepared, [
        ...Object.values(changes),
        organization_id,
        id,
        expected.version,
        expected.updatedAt,
        ...Object.values(audit),
        channel,
        JSON.stringify(notice),
      ]);
    },
  };
}
