import { CompiledQuery } from "kysely";
import type { Db, Executor } from "../schema.js";

const SAVEPOINT = CompiledQuery.raw("savepoint change");
const RELEASE = CompiledQuery.raw("release savepoint change");
const ROLLBACK_TO = CompiledQuery.raw("rollback to savepoint change");

interface Pending {
  work: (tx: Executor) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (reason: unknown) => void;
}

/** How many changes one commit may carry; bounds the time a batch holds the database. */
const MAX_BATCH = 64;

/**
 * Group commit for the embedded database. SQLite runs one write transaction at a time, and a COMMIT
 * writes every page the transaction dirtied to the WAL (and with synchronous=FULL waits for an
 * fsync), which costs more than the rest of a typical change. So a change is not run at once: it
 * waits for the end of the current turn of the event loop (setImmediate), and every change that
 * arrived in that turn runs, one after another, inside one transaction, each in its own savepoint (a
 * change that fails is rolled back alone), and they are committed together. Pages that several
 * changes touch (the same table leaf, index and audit pages) are written once.
 *
 * Every caller is answered only after the shared COMMIT, so an answered change is as durable as
 * with a transaction of its own. Reads outside a transaction wait for the shared one to end (one
 * connection, Kysely's connection lock), so nothing uncommitted is ever read. An idle server commits
 * a lone change in the turn it arrived in, without savepoints: the wait adds no measurable latency.
 */
export class GroupCommitter {
  private readonly queue: Pending[] = [];
  private draining = false;

  constructor(private readonly db: Db) {}

  run<T>(work: (tx: Executor) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (!this.draining) {
        // Changes that arrive before the end of this turn join the same batch.
        this.draining = true;
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) await this.commitBatch(this.queue.splice(0, MAX_BATCH));
    } finally {
      this.draining = false;
    }
  }

  private async commitBatch(batch: Pending[]): Promise<void> {
    if (batch.length === 1) {
      // Nothing to share: a plain transaction, without savepoints.
      const [only] = batch as [Pending];
      try {
        only.resolve(await this.db.transaction().execute(only.work));
      } catch (err) {
        only.reject(err);
      }
      return;
    }
    const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
    try {
      const trx = await this.db.startTransaction().execute();
      try {
        for (const item of batch) {
          // Plain SQL savepoints: one name serves every change, each released before the next.
          await trx.executeQuery(SAVEPOINT);
          try {
            const value = await item.work(trx);
            await trx.executeQuery(RELEASE);
            outcomes.push({ ok: true, value });
          } catch (error) {
            await trx.executeQuery(ROLLBACK_TO);
            await trx.executeQuery(RELEASE);
            outcomes.push({ ok: false, error });
          }
        }
        await trx.commit().execute();
      } catch (err) {
        await trx
          .rollback()
          .execute()
          .catch(() => undefined);
        throw err;
      }
    } catch (err) {
      // The shared transaction failed: nothing of the batch was committed.
      for (const item of batch) item.reject(err);
      return;
    }
    outcomes.forEach((o, i) => {
      const item = batch[i] as Pending;
      if (o.ok) item.resolve(o.value);
      else item.reject(o.error);
    });
  }
}
