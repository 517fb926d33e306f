import type { SelectQueryBuilder } from "kysely";

/**
 * How a read locks the rows it returns until its transaction ends, on PostgreSQL, where transactions
 * run side by side (on SQLite they run one at a time, and callers pass none). A write that puts
 * something under a parent (a guardrail or key in a workspace, a membership, an assignment) reads
 * the parent with `key share`; the parent's deletion reads it with `update` before anything else.
 * So neither runs between the other's read and commit: the child either commits first and is
 * deleted with its parent, or waits and then finds no parent. Nothing is left pointing at a row
 * that is gone.
 */
export type RowLock = "key share" | "update";

/** `q` with the locking clause of `lock`, if any. */
export function withLock<DB, TB extends keyof DB, O>(
  q: SelectQueryBuilder<DB, TB, O>,
  lock: RowLock | undefined,
): SelectQueryBuilder<DB, TB, O> {
  if (lock === "key share") return q.forKeyShare();
  if (lock === "update") return q.forUpdate();
  return q;
}
