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

/**
 * A request's texts as they cross to a worker: one string and a few typed arrays instead of an
 * object per text, because the structured clone on the event loop costs per object (about 30 ms for
 * 40,000 tiny texts, against about 1 ms for the same characters as one string)
 * (docs/gateway.md#fair-share).
 */
export interface PackedTexts {
  /** Every text, one after another. */
  joined: string;
  /** Where each text ends in `joined`. */
  ends: Uint32Array;
  /** Each text's role, as an index into `roles` (a body carries fewer than 65,536 texts: MAX_TEXTS). */
  role: Uint16Array;
  roles: string[];
  /** 1 where the text is raw JSON (a label put into it must be JSON-escaped). */
  json: Uint8Array;
  /** Each text's message index, -1 outside the messages. */
  message: Int32Array;
  /** Each text's kind, as an index into KINDS. */
  kind: Uint8Array;
}

const KINDS: readonly ChatText["kind"][] = ["text", "name", "key"];

export function packTexts(texts: readonly JobText[]): PackedTexts {
  const ends = new Uint32Array(texts.length);
  const role = new Uint16Array(texts.length);
  const json = new Uint8Array(texts.length);
  const message = new Int32Array(texts.length);
  const kind = new Uint8Array(texts.length);
  const roles: string[] = [];
  const roleIndex = new Map<string, number>();
  const parts = new Array<string>(texts.length);
  let at = 0;
  for (let i = 0; i < texts.length; i++) {
    const t = texts[i] as JobText;
    parts[i] = t.text;
    at += t.text.length;
    ends[i] = at;
    let r = roleIndex.get(t.role);
    if (r === undefined) {
      r = roles.push(t.role) - 1;
      roleIndex.set(t.role, r);
    }
    role[i] = r;
    json[i] = t.json ? 1 : 0;
    message[i] = t.message ?? -1;
    kind[i] = KINDS.indexOf(t.kind);
  }
  return { joined: parts.join(""), ends, role, roles, json, message, kind };
}

export function unpackTexts(packed: PackedTexts): JobText[] {
  const out = new Array<JobText>(packed.ends.length);
  let start = 0;
  for (let i = 0; i < packed.ends.length; i++) {
    const end = packed.ends[i] as number;
    out[i] = {
      text: packed.joined.slice(start, end),
      role: packed.roles[packed.role[i] as number] as string,
      json: packed.json[i] === 1,
      message: packed.message[i] === -1 ? null : (packed.message[i] as number),
      kind: KINDS[packed.kind[i] as number] as ChatText["kind"],
    };
    start = end;
  }
  return out;
}

export interface ScanJob {
  id: number;
  /** Names the spec, so a worker compiles each policy's filters once and reuses them. */
  key: string;
  spec: FilterSpec;
  texts: PackedTexts;
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
/**
 * No worker became free while the scan waited (see MIN_WAIT_MS), or, with `share`, the
 * organization's own share of the queue was full and the scan was refused at once
 * (docs/gateway.md#fair-share).
 */
export class ScanBusy extends Error {
  constructor(
    message: string,
    readonly share?: { queuedChars: number; limitChars: number },
  ) {
    super(message);
  }
}

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

/** How the pool shares its workers (docs/gateway.md#fair-share). */
export interface PoolLimits {
  /** Worker threads at most, counting those still stopping after a time-out. */
  size: number;
  /** A scan's time budget, in milliseconds. */
  timeoutMs: number;
  /** Workers one organization may hold at once, running or stopping (at most `size`). */
  orgWorkers: number;
  /** Characters of text one organization may have waiting; a job past it is refused at once. */
  orgQueuedChars: number;
}

/** What the pool holds now and has done, for tests, benches and metrics. */
export interface PoolStats {
  /** Live worker threads (starting, idle or busy). */
  workers: number;
  /** Threads stopped for a time-out that have not ended yet. */
  stopping: number;
  /** Workers started and free for a job. */
  idle: number;
  busy: number;
  queued: number;
  /** Jobs handed to a worker since the pool started. */
  started: number;
  timedOut: number;
  /** Jobs refused at once because their organization's queue share was full. */
  refusedShare: number;
}

interface Slot {
  worker: Worker;
  job: Pending | null;
  /** The worker has loaded its code: a job's time budget counts from when it reaches a ready worker. */
  ready: boolean;
}

/** One organization's place in the pool: its waiting jobs and the workers it holds. */
interface Share {
  org: string;
  queue: Pending[];
  queuedChars: number;
  /** Workers running its jobs or still stopping after one of its jobs timed out. */
  held: number;
  /** When it was last given a worker (a dispatch count): the longest unserved goes first. */
  served: number;
}

interface Pending {
  job: ScanJob;
  share: Share;
  chars: number;
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
 * every other request (and /healthz) needs. Each organization has its own queue, and a freed worker
 * takes the next job of the organization served longest ago, so one organization's backlog never
 * stands in front of another's request; an organization holds at most `orgWorkers` workers and
 * queues at most `orgQueuedChars` characters (docs/gateway.md#fair-share). A job that waits longer
 * than the time budget (at least MIN_WAIT_MS, so a starting worker is waited for) fails with
 * ScanBusy, and one that runs longer than its budget fails with ScanTimeout and takes its worker
 * down with it. A stopped worker counts against the pool's size and its organization's share until
 * its thread has ended, so time-outs never grow the thread count. Workers start on first use and do
 * not keep the process alive; close() stops them.
 */
export class ScanPool {
  private readonly slots = new Set<Slot>();
  private readonly shares = new Map<string, Share>();
  /** Workers dropped on a time-out that may still be inside the regex engine. */
  private readonly stopping = new Set<Promise<number>>();
  private readonly limits: PoolLimits;
  private nextId = 1;
  private dispatched = 0;
  private timedOut = 0;
  private refusedShare = 0;
  private closed = false;

  constructor(limits: PoolLimits) {
    this.limits = { ...limits, orgWorkers: Math.max(1, Math.min(limits.orgWorkers, limits.size)) };
  }

  stats(): PoolStats {
    let busy = 0;
    let idle = 0;
    for (const s of this.slots) {
      if (s.job) busy++;
      else if (s.ready) idle++;
    }
    let queued = 0;
    for (const s of this.shares.values()) queued += s.queue.length;
    return {
      workers: this.slots.size,
      stopping: this.stopping.size,
      idle,
      busy,
      queued,
      started: this.dispatched,
      timedOut: this.timedOut,
      refusedShare: this.refusedShare,
    };
  }

  run(org: string, key: string, spec: FilterSpec, texts: PackedTexts): Promise<ScanReply> {
    if (this.closed) return Promise.reject(new Error("the scan pool is closed"));
    let share = this.shares.get(org);
    if (!share) {
      share = { org, queue: [], queuedChars: 0, held: 0, served: 0 };
      this.shares.set(org, share);
    }
    const chars = texts.joined.length;
    // A job alone is always let in, so a share smaller than one request never refuses everything.
    if (share.queue.length > 0 && share.queuedChars + chars > this.limits.orgQueuedChars) {
      this.refusedShare++;
      return Promise.reject(
        new ScanBusy("this organization's share of the scan queue is full", {
          queuedChars: share.queuedChars,
          limitChars: this.limits.orgQueuedChars,
        }),
      );
    }
    const owner = share;
    return new Promise<ScanReply>((resolve, reject) => {
      const pending: Pending = {
        job: { id: this.nextId++, key, spec, texts },
        share: owner,
        chars,
        resolve,
        reject,
        timer: setTimeout(
          () => {
            this.unqueue(pending);
            reject(new ScanBusy("no scan worker became free in time"));
          },
          Math.max(MIN_WAIT_MS, this.limits.timeoutMs),
        ),
      };
      owner.queue.push(pending);
      owner.queuedChars += chars;
      this.dispatch();
    });
  }

  private unqueue(pending: Pending): void {
    const share = pending.share;
    const at = share.queue.indexOf(pending);
    if (at < 0) return;
    share.queue.splice(at, 1);
    share.queuedChars -= pending.chars;
    this.forget(share);
  }

  /** An organization with nothing waiting and nothing held leaves the map, which stays as small as the load. */
  private forget(share: Share): void {
    if (share.queue.length === 0 && share.held === 0) this.shares.delete(share.org);
  }

  /** The waiting organization served longest ago that may take one more worker. */
  private nextShare(): Share | undefined {
    let next: Share | undefined;
    for (const share of this.shares.values()) {
      if (share.queue.length === 0 || share.held >= this.limits.orgWorkers) continue;
      if (!next || share.served < next.served) next = share;
    }
    return next;
  }

  private dispatch(): void {
    for (;;) {
      const share = this.nextShare();
      if (!share) return;
      let slot: Slot | undefined;
      for (const s of this.slots) {
        if (s.ready && s.job === null) {
          slot = s;
          break;
        }
      }
      if (!slot) {
        this.spawnForWaiting();
        return;
      }
      const pending = share.queue.shift() as Pending;
      share.queuedChars -= pending.chars;
      share.held++;
      share.served = ++this.dispatched;
      clearTimeout(pending.timer);
      this.start(slot, pending);
    }
  }

  /**
   * Starts workers for the waiting jobs that may run now and that no starting worker will take;
   * they dispatch when ready. Stopping threads count against the size: a time-out never adds one.
   */
  private spawnForWaiting(): void {
    let runnable = 0;
    for (const share of this.shares.values())
      runnable += Math.min(share.queue.length, Math.max(0, this.limits.orgWorkers - share.held));
    let starting = 0;
    for (const s of this.slots) if (!s.ready) starting++;
    while (starting < runnable && this.slots.size + this.stopping.size < this.limits.size) {
      this.spawn();
      starting++;
    }
  }

  private start(slot: Slot, pending: Pending): void {
    slot.job = pending;
    // Until the worker says its scan started, only the compile allowance runs (see ScanStarted).
    pending.timer = setTimeout(
      () => this.expire(slot, pending),
      this.limits.timeoutMs + COMPILE_ALLOWANCE_MS,
    );
    slot.worker.postMessage(pending.job);
  }

  /** The job left its worker: the organization holds one worker fewer. */
  private release(pending: Pending): void {
    pending.share.held--;
    this.forget(pending.share);
  }

  private expire(slot: Slot, pending: Pending): void {
    if (slot.job !== pending) return;
    this.timedOut++;
    // The scan may be inside the regex engine, where it cannot be interrupted: terminate() ends the
    // thread as soon as that call returns. Until then the thread still counts against the pool and
    // against the organization whose job it ran.
    this.drop(slot, pending);
    pending.reject(new ScanTimeout(`the scan did not finish within ${this.limits.timeoutMs} ms`));
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
        pending.timer = setTimeout(() => this.expire(slot, pending), this.limits.timeoutMs);
        return;
      }
      clearTimeout(pending.timer);
      slot.job = null;
      this.release(pending);
      pending.resolve(reply);
      this.dispatch();
    });
    const fail = (err: Error) => {
      if (!this.slots.has(slot)) return;
      const pending = slot.job;
      if (pending) clearTimeout(pending.timer);
      this.drop(slot, pending);
      pending?.reject(err);
      // A worker that could not even start would fail again: the waiting jobs fail now instead.
      if (!slot.ready) {
        for (const share of [...this.shares.values()]) {
          for (const waiting of share.queue.splice(0)) {
            clearTimeout(waiting.timer);
            waiting.reject(err);
          }
          share.queuedChars = 0;
          this.forget(share);
        }
      }
      this.dispatch();
    };
    worker.on("error", fail);
    worker.on("exit", (code) => fail(new Error(`scan worker exited with code ${code}`)));
    this.slots.add(slot);
  }

  /** Stops a worker; it keeps its place in the pool's count (and its job's share) until its thread ends. */
  private drop(slot: Slot, pending: Pending | null): void {
    this.slots.delete(slot);
    slot.job = null;
    const stopped = slot.worker.terminate();
    this.stopping.add(stopped);
    void stopped.finally(() => {
      this.stopping.delete(stopped);
      if (pending) this.release(pending);
      if (!this.closed) this.dispatch();
    });
  }

  /** Fails every waiting job and stops every worker, waiting until their threads are gone. */
  async close(): Promise<void> {
    this.closed = true;
    for (const share of this.shares.values()) {
      for (const pending of share.queue.splice(0)) {
        clearTimeout(pending.timer);
        pending.reject(new Error("the scan pool is closed"));
      }
    }
    this.shares.clear();
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
