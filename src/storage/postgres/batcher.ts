/**
 * Gathers writes into batches for PostgreSQL, where a statement costs a round trip: the writes that
 * arrive in one turn of the event loop, and those that arrive while every batch slot is busy, are
 * run together by `run`, in arrival order. At most `maxInFlight` batches run at once (each holds a
 * pooled connection), each of at most `maxBatch` writes; `fits` may keep a write out of a batch (it
 * then waits for the next one, keeping its place ahead of later writes).
 */
export class Batcher<T> {
  private queue: T[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly run: (batch: T[]) => Promise<void>,
    private readonly options: {
      maxBatch: number;
      maxInFlight: number;
      fits?: (batch: readonly T[], item: T) => boolean;
    },
  ) {}

  add(item: T): void {
    this.queue.push(item);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.pump());
    }
  }

  /** The next batch: in arrival order, every write that fits. */
  private take(): T[] {
    const { maxBatch, fits } = this.options;
    if (!fits) return this.queue.splice(0, maxBatch);
    const batch: T[] = [];
    const rest: T[] = [];
    for (const item of this.queue) {
      if (batch.length < maxBatch && (batch.length === 0 || fits(batch, item))) batch.push(item);
      else rest.push(item);
    }
    this.queue = rest;
    return batch;
  }

  private pump(): void {
    this.scheduled = false;
    while (this.inFlight < this.options.maxInFlight && this.queue.length > 0) {
      const batch = this.take();
      this.inFlight++;
      // `run` answers every write of its batch itself; a rejection here would be a bug in it.
      void this.run(batch).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }
}
