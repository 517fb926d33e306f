import { CompiledQuery } from "kysely";
import type { Database, Executor } from "./schema.js";

const compiled = new Map<string, string>();

/**
 * Inserts a row whose keys always come in the same order (rows made by one mapping function).
 * Building and compiling an insert of twenty columns costs Kysely more than SQLite spends running
 * it, so the SQL is compiled once per table and column list, by Kysely itself (it stays correct for
 * each dialect), and reused with the new values.
 */
export async function insertRow<T extends keyof Database>(
  db: Executor,
  table: T,
  row: Database[T],
): Promise<void> {
  const values = row as unknown as Record<string, unknown>;
  const columns = Object.keys(values);
  const cacheKey = `${table}:${columns.join(",")}`;
  let sqlText = compiled.get(cacheKey);
  if (sqlText === undefined) {
    // biome-ignore lint/suspicious/noExplicitAny: the row type is checked by the signature; Kysely's insert overloads cannot follow a generic table name.
    sqlText = db
      .insertInto(table)
      .values(row as any)
      .compile().sql;
    compiled.set(cacheKey, sqlText);
  }
  await db.executeQuery(
    CompiledQuery.raw(
      sqlText,
      columns.map((c) => values[c]),
    ),
  );
}
