import { Worker } from "node:worker_threads";
import type { ChatText } from "../domain/chat-texts.js";
import type { FilterHit } from "../domain/content-scan.js";
import type { EffectivePolicy } from "../domain/policy.js";

/** What a worker needs to compile a policy's filters: plain data, since functions cannot cross threads. */
export type FilterSpec = Pick<EffectivePolicy, "content_filter_builtins" | "content_filters">;

/** The parts of a request text a scan reads. */
export interface JobText {
  text: string;
  role: string;
  json: boolean;
  /** Which texts are read across their seam (docs/behaviour.md#split-values): those of the messages. */
  message: number | null;
  /** A name or property name, which a redaction never rewrites. */
  kind: ChatText["kind"];
}

export interface ScanJob {
  id: number;
  /** Names the spec, so a worker compiles each policy's filters once and reuses them. */
  key: string;
  spec: FilterSpec;
  texts: JobText[];
}

export type ScanReply =
  | {
      id: number;
      ok: true;
      hits: FilterHit[];
      block: FilterHit | null;
      /** Redacted texts, by index into the job's texts. */
      replacements: { index: number; value: string }[];
    }
  | { id: number; ok: false; error: string };

/** The scan ran longer than its time budget; its worker was stopped. */
export class ScanTimeout extends Error {}
/** No worker became free while the scan waited (see waitLimitMs). */
export class ScanBusy extends Error {}

/** The longest a job waits for a free worker: the time budget, but never less than this. */
export const MIN_WAIT_MS = 10_000;
/**
 * What a worker may spend compiling a policy's filters before its scan starts. Compiling is bounded
 * by the pattern limits checked at write time (docs/detectors.md); it is not the scan, and a worker
 * that was just replaced compiles again, so it does not count against the scan's time budget.
 */
export const COMPILE_ALLOWANCE_MS = 5_000;

/** A worker's message that the job's filters are compiled and its scan starts now. */
export interface ScanStarted {
  id: number;
  started: true;
}

interface Slot {
  worker: Worker;
  job: Pending | null;
  /** The worker has loaded its code: a job's time budget counts from when it reaches a ready worker. */
  ready: boolean;
}

interface Pending {
  job: ScanJob;
  resolve(reply: ScanReply): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

/**
 * The workers' entry, next to this file. Built, it is plain JavaScript. Run from source (tests,
 * benches under tsx), a worker does not inherit tsx's loader, so a one-line module registers it
 * first and then imports the TypeScript entry.
 */
function workerEntry(): URL {
  if (!import.meta.url.endsWith(".ts")) return new URL("./scan-worker.js", import.meta.url);
  const entry = new URL("./scan-worker.ts", import.meta.url).href;
  const tsx = import.meta.resolve("tsx/esm/api");
  const code = `import { register } from ${JSON.stringify(tsx)}; register(); await import(${JSON.stringify(entry)});`;
  return new URL(`data:text/javascript,${encodeURIComponent(code)}`);
}

/**
 * A few worker threads that scan large texts, so one costly scan never holds the event loop that
 * every other request (and /healthz) needs. Jobs wait in order; a job that waits longer than the
 * time budget (at least MIN_WAIT_MS, so a starting worker is waited for) fails with ScanBusy, and
 * one that runs longer than its budget fails with ScanTimeout and takes its worker down with it (a
 * fresh one replaces it on the next job), so nothing queued behind it waits on the stuck scan.
 * Workers start on first use and do not keep the process alive; close() stops them.
 */
export class ScanPool {
  private readonly slots = new Set<Slot>();
  private readonly queue: Pending[] = [];
  /** Workers dropped on a time-out that may still be inside the regex engine. */
  private readonly stopping = new Set<Promise<number>>();
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly size: number,
    private readonly timeoutMs: number,
  ) {}

  run(key: string, spec: FilterSpec, texts: JobText[]): Promise<ScanReply> {
    if (this.closed) return Promise.reject(new Error("the scan pool is closed"));
    return new Promise<ScanReply>((resolve, reject) => {
      const pending: Pending = {
        job: { id: this.nextId++, key, spec, texts },
        resolve,
        reject,
        timer: setTimeout(
          () => {
            const at = this.queue.indexOf(pending);
            if (at >= 0) this.queue.splice(at, 1);
            reject(new ScanBusy("no scan worker became free in time"));
          },
          Math.max(MIN_WAIT_MS, this.timeoutMs),
        ),
      };
      this.queue.push(pending);
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      const slot = [...this.slots].find((s) => s.ready && s.job === null);
      if (!slot) {
        // Start workers for the waiting jobs that no starting worker will take; they dispatch when ready.
        const starting = [...this.slots].filter((s) => !s.ready).length;
        for (let n = starting; n < this.queue.length && this.slots.size < this.size; n++) this.spawn();
        return;
      }
      const pending = this.queue.shift() as Pending;
      clearTimeout(pending.timer);
      this.start(slot, pending);
    }
  }

  private start(slot: Slot, pending: Pending): void {
    slot.job = pending;
    // Until the worker says its scan started, only the compile allowance runs (see ScanStarted).
    pending.timer = setTimeout(() => this.expire(slot, pending), this.timeoutMs + COMPILE_ALLOWANCE_MS);
    slot.worker.postMessage(pending.job);
  }

  private expire(slot: Slot, pending: Pending): void {
    if (slot.job !== pending) return;
    // The scan may be inside the regex engine, where it cannot be interrupted: the worker is
    // dropped now and stops when it returns; a new one takes its place for the next job.
    this.drop(slot);
    pending.reject(new ScanTimeout(`the scan did not finish within ${this.timeoutMs} ms`));
    this.dispatch();
  }

  private spawn(): void {
    const worker = new Worker(workerEntry());
    worker.unref();
    const slot: Slot = { worker, job: null, ready: false };
    worker.on("message", (reply: ScanReply | ScanStarted | "ready") => {
      if (reply === "ready") {
        slot.ready = true;
        this.dispatch();
        return;
      }
      const pending = slot.job;
      if (!pending || pending.job.id !== reply.id) return;
      if ("started" in reply) {
        // The time budget counts from here: the scan itself, not the compiling before it.
        clearTimeout(pending.timer);
        pending.timer = setTimeout(() => this.expire(slot, pending), this.timeoutMs);
        return;
      }
      clearTimeout(pending.timer);
      slot.job = null;
      pending.resolve(reply);
      this.dispatch();
    });
    const fail = (err: Error) => {
      if (!this.slots.has(slot)) return;
      const pending = slot.job;
      this.drop(slot);
      if (pending) {
        clearTimeout(pending.timer);
        pending.reject(err);
      }
      // A worker that could not even start would fail again: the waiting jobs fail now instead.
      if (!slot.ready) {
        for (const waiting of this.queue.splice(0)) {
          clearTimeout(waiting.timer);
          waiting.reject(err);
        }
      }
      this.dispatch();
    };
    worker.on("error", fail);
    worker.on("exit", (code) => fail(new Error(`scan worker exited with code ${code}`)));
    this.slots.add(slot);
  }

  private drop(slot: Slot): void {
    this.slots.delete(slot);
    slot.job = null;
    const stopped = slot.worker.terminate();
    this.stopping.add(stopped);
    void stopped.finally(() => this.stopping.delete(stopped));
  }

  /** Fails every waiting job and stops every worker, waiting until their threads are gone. */
  async close(): Promise<void> {
    this.closed = true;
    for (const pending of this.queue.splice(0)) {
      clearTimeout(pending.timer);
      pending.reject(new Error("the scan pool is closed"));
    }
    const stopping: Promise<number>[] = [];
    for (const slot of [...this.slots]) {
      const pending = slot.job;
      this.slots.delete(slot);
      if (pending) {
        clearTimeout(pending.timer);
        pending.reject(new Error("the scan pool is closed"));
      }
      stopping.push(slot.worker.terminate());
    }
    await Promise.all([...stopping, ...this.stopping]);
  }
}
