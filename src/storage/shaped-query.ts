import { type Compilable, CompiledQuery } from "kysely";
import type { Database, Executor } from "./schema.js";

/** SQL text by statement shape; undefined marks a shape whose parameters did not come in our order. */
const compiled = new Map<string, string | undefined>();

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
