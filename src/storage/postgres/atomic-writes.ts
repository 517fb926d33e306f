import type pg from "pg";
import type { AuditEntryRow } from "../audit-repo.js";
import type { AtomicWrites, ChangeNotice, WorkspaceGuard } from "../ports.js";
import type { GuardrailTable } from "../schema.js";
import { Batcher } from "./batcher.js";
import { isDataError } from "./errors.js";
import { noticePayload } from "./notices.js";

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
 *
 * Writes that arrive together go together: the writes of one turn of the event loop (and those that
 * arrive while every batch slot is busy) of the same shape become one statement over arrays, each
 * row with its own precondition. One statement is one transaction, one commit and one notice flush
 * for the whole batch: PostgreSQL commits transactions that sent notices one at a time, so under
 * load this is where most of the time went. When a batch statement fails (a row breaks a
 * constraint), each of its writes is run again on its own, so one write's error never fails another.
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

/** `unnest($from::t1[], …) as i(<prefix>1, …)`: one array parameter per column, a row per write. */
function arrayColumns(
  columns: Columns,
  types: Map<string, string>,
  from: number,
  prefix: string,
): { args: string[]; names: string[] } {
  return {
    args: columns.map((c, i) => {
      const type = types.get(c);
      if (type === undefined) throw new Error(`column ${c} not found`);
      return `$${from + i}::${type}[]`;
    }),
    names: columns.map((_, i) => `${prefix}${i + 1}`),
  };
}

interface Prepared {
  name: string;
  text: string;
}

/** One write waiting for its batch. */
interface Pending {
  /** Writes of one shape share a statement. */
  shape: string;
  /** The guardrail written: a batch never holds two writes of one guardrail. */
  id: string;
  /**
   * This write's values, in the parameter order of both statements of its shape: one per array of
   * the batch statement, one per parameter of the single one (the channel comes last in both).
   */
  fields: unknown[];
  /** The batch statement of this shape. */
  batch: () => Prepared;
  /** The same write as a statement of its own. */
  single: () => Prepared;
  resolve: (written: boolean) => void;
  reject: (err: unknown) => void;
}

/** Most writes in one statement, and most batch statements running at once (each holds a connection). */
const MAX_BATCH = 64;
const MAX_IN_FLIGHT = 4;

export function postgresAtomicWrites(
  pool: pg.Pool,
  channel: string,
  options: { maxBatch?: number; maxInFlight?: number } = {},
): AtomicWrites {
  const maxBatch = options.maxBatch ?? MAX_BATCH;
  const maxInFlight = options.maxInFlight ?? MAX_IN_FLIGHT;
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

  /** The tail every single write shares: the audit entry and the notice, each only if the write happened. */
  const tail = (changed: string, audit: Columns, auditTypes: Map<string, string>, from: number): string => `,
    audit as (
      insert into audit_log (${columnList(audit)})
      select ${castParameters(audit, auditTypes, from)} from ${changed}
    ),
    notice as (
      select pg_notify($${from + audit.length + 1}::text, $${from + audit.length}::text) from ${changed}
    )
    select (select count(*) from ${changed}) as written, (select count(*) from notice) as notified`;

  /**
   * The tail of a batch statement: for each row of `input` whose guardrail was written (its id among
   * `written`), its audit entry and its notice (PostgreSQL sends identical notices of one transaction
   * once). Answers the ids written.
   */
  const batchTail = (idName: string, audit: Columns, auditNames: string[], channelAt: number): string => `,
    audit as (
      insert into audit_log (${columnList(audit)})
      select ${auditNames.join(", ")} from input join written on written.id = input.${idName}
    ),
    notice as (
      select pg_notify($${channelAt}::text, input.notice) from input join written on written.id = input.${idName}
    )
    select (select array_agg(id) from written) as ids, (select count(*) from notice) as notified`;

  const runAlone = async (op: Pending): Promise<boolean> => {
    const result = await pool.query<{ written: number; notified: number }>({
      ...op.single(),
      values: [...op.fields, channel],
    });
    return Number(result.rows[0]?.written ?? 0) === 1;
  };

  const runBatch = async (batch: Pending[]): Promise<void> => {
    const first = batch[0] as Pending;
    if (batch.length > 1) {
      try {
        // Column i of the batch statement is the array of every write's i-th value.
        const values = first.fields.map((_, i) => batch.map((op) => op.fields[i]));
        const result = await pool.query<{ ids: string[] | null }>({
          ...first.batch(),
          values: [...values, channel],
        });
        const written = new Set(result.rows[0]?.ids ?? []);
        for (const op of batch) op.resolve(written.has(op.id));
        return;
      } catch (err) {
        // A row broke a constraint or held a value out of range: nothing was written, and each
        // write on its own below finds out whose it was. Any other failure (the connection) may
        // have come after the commit, so it is every write's answer, as it would have been alone.
        if (!isDataError(err)) {
          for (const op of batch) op.reject(err);
          return;
        }
      }
    }
    await Promise.all(batch.map((op) => runAlone(op).then(op.resolve, op.reject)));
  };

  /** A batch holds writes of the first one's shape, in arrival order, one write per guardrail. */
  const batcher = new Batcher<Pending>(runBatch, {
    maxBatch,
    maxInFlight,
    fits: (batch, op) => op.shape === (batch[0] as Pending).shape && !batch.some((b) => b.id === op.id),
  });
  const enqueue = (op: Omit<Pending, "resolve" | "reject">): Promise<boolean> =>
    new Promise<boolean>((resolve, reject) => batcher.add({ ...op, resolve, reject }));

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
      const payload = noticePayload(notice);
      // The workspace, as the general path resolves it: the organization's default, or the named one.
      // The workspace row is locked (key share) until the commit, as the transactional path locks
      // it: a workspace deletion under way makes this wait, then find no workspace.
      const exists = (org: string, ws: string) =>
        guard.kind === "default"
          ? `select 1 from organizations o join workspaces w on w.id = o.default_workspace_id
              where o.id = ${org} and o.default_workspace_id = ${ws} for key share of w`
          : `select 1 from workspaces where organization_id = ${org} and id = ${ws} for key share`;
      return enqueue({
        shape,
        id: row.id,
        fields: [
          ...Object.values(row),
          guard.organizationId,
          guard.workspaceId,
          ...Object.values(audit),
          payload,
        ],
        batch: () =>
          statement(`batch:${shape}`, () => {
            const r = arrayColumns(columns, t.guardrails, 1, "r");
            const a = arrayColumns(auditColumns, t.audit, n + 3, "a");
            const idName = r.names[columns.indexOf("id")];
            return `with
    input as (
      select * from unnest(${[...r.args, `$${n + 1}::text[]`, `$${n + 2}::text[]`, ...a.args, `$${n + 3 + auditColumns.length}::text[]`].join(", ")})
        as i(${[...r.names, "guard_org", "guard_ws", ...a.names, "notice"].join(", ")})
    ),
    written as (
      insert into guardrails (${columnList(columns)})
      select ${r.names.join(", ")} from input where exists (${exists("input.guard_org", "input.guard_ws")})
      returning id
    )${batchTail(idName as string, auditColumns, a.names, n + 4 + auditColumns.length)}`;
          }),
        single: () =>
          statement(
            shape,
            () => `with
  written as (
    insert into guardrails (${columnList(columns)})
    select ${castParameters(columns, t.guardrails, 1)} where exists (${exists(`$${n + 1}::text`, `$${n + 2}::text`)})
    returning 1
  )${tail("written", auditColumns, t.audit, n + 3)}`,
          ),
      });
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
      const payload = noticePayload(notice);
      // The version and the time of the change read: a row deleted and made again (a workspace's
      // default guardrail keeps its id) restarts at version 1, but not at the same instant.
      return enqueue({
        shape,
        id,
        fields: [
          ...Object.values(changes),
          organization_id,
          id,
          expected.version,
          expected.updatedAt,
          ...Object.values(audit),
          payload,
        ],
        batch: () =>
          statement(`batch:${shape}`, () => {
            const r = arrayColumns(columns, t.guardrails, 1, "r");
            const e = arrayColumns(
              ["organization_id", "id", "version", "updated_at"],
              t.guardrails,
              n + 1,
              "e",
            );
            const a = arrayColumns(auditColumns, t.audit, n + 5, "a");
            const [org, key, version, updatedAt] = e.names as [string, string, string, string];
            return `with
    input as (
      select * from unnest(${[...r.args, ...e.args, ...a.args, `$${n + 5 + auditColumns.length}::text[]`].join(", ")})
        as i(${[...r.names, ...e.names, ...a.names, "notice"].join(", ")})
    ),
    written as (
      update guardrails set ${columns.map((c, i) => `"${c}" = input.${r.names[i]}`).join(", ")}
        from input
       where guardrails.organization_id = input.${org} and guardrails.id = input.${key}
         and guardrails.version = input.${version}
         and guardrails.updated_at is not distinct from input.${updatedAt}
      returning guardrails.id
    )${batchTail(key, auditColumns, a.names, n + 6 + auditColumns.length)}`;
          }),
        single: () =>
          statement(
            shape,
            () => `with
  written as (
    update guardrails set ${columns.map((c, i) => `"${c}" = $${i + 1}`).join(", ")}
     where organization_id = $${n + 1} and id = $${n + 2} and version = $${n + 3}
       and updated_at is not distinct from $${n + 4}::text
    returning 1
  )${tail("written", auditColumns, t.audit, n + 5)}`,
          ),
      });
    },
  };
}
