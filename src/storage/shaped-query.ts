import { type Compilable, CompiledQuery } from "kysely";
import type { Database, Executor } from "./schema.js";

/**
 * SQL text by statement shape, one table per SQL dialect (the adapter's class: one process can hold
 * a SQLite and a PostgreSQL database); undefined marks a shape whose parameters did not come in our
 * order.
 */
const compiledByDialect = new WeakMap<object, Map<string, string | undefined>>();

function compiledFor(db: Executor): Map<string, string | undefined> {
  const dialect = db.getExecutor().adapter.constructor;
  let table = compiledByDialect.get(dialect);
  if (!table) {
    table = new Map();
    compiledByDialect.set(dialect, table);
  }
  return table;
}

/**
 * Runs a statement of a fixed shape, building it with Kysely only the first time. Building and
 * compiling a statement of twenty columns costs Kysely more than SQLite spends running it. Kysely
 * still writes the SQL (so it stays right for each dialect); the first compile also checks that its
 * parameters are exactly `parameters` in that order, otherwise the shape is never reused.
 */
export async function runShaped(
  db: Executor,
  shape: string,
  parameters: unknown[],
  build: () => Compilable,
): Promise<{ numAffectedRows?: bigint; rows: unknown[] }> {
  const compiled = compiledFor(db);
  const known = compiled.get(shape);
  if (known !== undefined) return db.executeQuery(CompiledQuery.raw(known, parameters));
  const query = build().compile();
  if (!compiled.has(shape)) {
    const sameOrder =
      query.parameters.length === parameters.length && query.parameters.every((p, i) => p === parameters[i]);
    compiled.set(shape, sameOrder ? query.sql : undefined);
  }
  return db.executeQuery(query);
}

/** Inserts a row whose keys always come in the same order (rows made by one mapping function). */
export async function insertRow<T extends keyof Database>(
  db: Executor,
  table: T,
  row: Database[T],
): Promise<void> {
  const values = row as unknown as Record<string, unknown>;
  const columns = Object.keys(values);
  await runShaped(
    db,
    `insert:${table}:${columns.join(",")}`,
    columns.map((c) => values[c]),
    // biome-ignore lint/suspicious/noExplicitAny: the row type is checked by the signature; Kysely's insert overloads cannot follow a generic table name.
    () => db.insertInto(table).values(row as any),
  );
}
