import { CompiledQuery } from "kysely";
import type { Db, Executor } from "./schema.js";

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
 * Group commit for the embedded database, used with synchronous=FULL. SQLite runs one write
 * transaction at a time, and with FULL each COMMIT waits for an fsync, which costs more than the
 * rest of a typical change. Changes
 * that arrive while a commit is under way are run one after another inside one transaction, each in
 * its own savepoint (a change that fails is rolled back alone), and committed together. Every caller
 * is answered only after the shared COMMIT, so an answered change is as durable as before. An idle
 * server commits a lone change at once: batching adds no latency, it only shares the cost under load.
 */
export class GroupCommitter {
  private readonly queue: Pending[] = [];
  private draining = false;

  constructor(private readonly db: Db) {}

  run<T>(work: (tx: Executor) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (!this.draining) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.draining = true;
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
