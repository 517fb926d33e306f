import { availableParallelism } from "node:os";
import type { ChatText } from "../domain/chat-texts.js";
import type { ContentFilters, ScanResult } from "../domain/content-scan.js";
import { AppError } from "../domain/errors.js";
import type { AppliedGuardrail } from "../domain/policy.js";
import { type FilterSpec, type PoolStats, packTexts, ScanBusy, ScanPool, ScanTimeout } from "./scan-pool.js";

/** Where and how long a request's content scan may run (docs/configuration.md, docs/gateway.md#large-scans). */
export interface ScanSettings {
  /** Longest a worker scan may run, and longest it may wait for a free worker, in milliseconds. */
  timeoutMs: number;
  /** A request with at least this many characters of text scans in a worker (fewer under costly patterns). */
  workerChars: number;
  /** Worker threads for large scans. */
  workers: number;
  /**
   * Workers one organization may hold at once (default: all but one, at least one), so another
   * organization always finds one (docs/gateway.md#fair-share).
   */
  orgWorkers?: number;
  /** Characters of text one organization may have waiting for a worker (docs/gateway.md#fair-share). */
  orgQueuedChars?: number;
}

/** Workers one organization may hold by default: all but one, so another organization always finds one. */
export function defaultOrgWorkers(workers: number): number {
  return Math.max(1, workers - 1);
}

/** Four bodies of the default size limit waiting per organization; more would outwait the queue's time limit. */
export const DEFAULT_ORG_QUEUED_CHARS = 4 * 1024 * 1024;

export const DEFAULT_SCAN_SETTINGS: ScanSettings = {
  timeoutMs: 5_000,
  workerChars: 64 * 1024,
  // One core is the event loop's; the rest, at least two, scan (docs/configuration.md).
  workers: Math.max(2, Math.min(8, availableParallelism() - 1)),
};

/**
 * The builtin detectors' cost per character in pattern-cost units, for choosing where a scan runs:
 * measured, all nine scan 1 MiB of their worst text in about 0.2 s, as much as 16 positions of a
 * costly pattern. A text of `workerChars` under the builtins alone, or of workerChars × 16 / (16 +
 * cost) under custom patterns of that cost, goes to a worker, so the event loop never spends more
 * than about 30 ms on one request's scan (bench/scan-cost.ts).
 */
const BUILTIN_WEIGHT = 16;

/**
 * What one text costs the scan beyond its characters, in characters: each text is a round of every
 * filter (a detector call, an RE2 call per pattern, its spans and counts), measured at about 2.6 µs
 * under the nine builtins. The threshold is set on the builtins' worst text, about 0.2 µs a
 * character, so a text costs some 13 of them; 64 leaves room for texts that cost more and for the
 * work per text around the scan (collecting, packing for the worker). So a body of tens of
 * thousands of tiny texts, whose characters alone stay under the threshold, is scanned in a worker
 * too (docs/gateway.md#fair-share).
 */
export const TEXT_CHARS = 64;

/** A guardrail stored with a pattern that does not compile here: the request is refused, never scanned without it. */
function refuseBroken(filters: ContentFilters, applied: AppliedGuardrail[]): void {
  const broken = filters.broken[0];
  if (!broken) return;
  throw new AppError(
    "guardrail_refused",
    {
      reason: "content_filter_unavailable",
      filter: { type: "custom", pattern: broken.pattern },
      pattern_error: broken.error,
      guardrail_ids: applied
        .filter((a) => a.guardrail.content_filters?.some((f) => f.pattern === broken.pattern) === true)
        .map((a) => a.guardrail.id),
    },
    "Request refused: a content filter of this key's guardrails does not compile; the guardrail must be corrected",
  );
}

/**
 * Runs the content scan of large requests in a worker pool (scan-pool.ts) under a time budget; small
 * ones stay on the event loop, inside the decision, as fast as before.
 */
export class Scanner {
  private readonly pool: ScanPool;
  private readonly keys = new WeakMap<ContentFilters, string>();
  private nextKey = 1;

  /** `inProcess`: the detectors were substituted (tests), and workers only have the shipped ones. */
  constructor(
    readonly settings: ScanSettings,
    private readonly inProcess = false,
  ) {
    this.pool = new ScanPool({
      size: settings.workers,
      timeoutMs: settings.timeoutMs,
      orgWorkers: settings.orgWorkers ?? defaultOrgWorkers(settings.workers),
      orgQueuedChars: settings.orgQueuedChars ?? DEFAULT_ORG_QUEUED_CHARS,
    });
  }

  /** The pool's counters: where scans ran, how many timed out or were refused (tests, benches). */
  stats(): PoolStats {
    return this.pool.stats();
  }

  /**
   * Whether the scan goes to a worker: its characters and its texts, weighed by the policy's filters,
   * reach what the event loop may spend on one request (docs/gateway.md#fair-share).
   */
  offload(filters: ContentFilters, texts: ChatText[]): boolean {
    if (this.inProcess) return false;
    const weight = (filters.builtins.length > 0 ? BUILTIN_WEIGHT : 0) + filters.customCost;
    let chars = 0;
    let scanned = 0;
    for (const t of texts) {
      if (t.text.length === 0) continue;
      chars += t.text.length;
      scanned++;
    }
    return (
      weight > 0 &&
      chars > 0 &&
      (chars + scanned * TEXT_CHARS) * weight >= this.settings.workerChars * BUILTIN_WEIGHT
    );
  }

  /**
   * Refuses a request whose filters cannot all be compiled, then scans a large request in a
   * worker. Returns undefined when the scan is small enough for the decision to run it in place.
   * Fails closed: a scan over its time budget is a 413 and nothing is forwarded. `org` is the
   * organization whose key sent the request: its share of the workers (docs/gateway.md#fair-share).
   */
  async scanLarge(
    spec: FilterSpec,
    applied: AppliedGuardrail[],
    filters: ContentFilters,
    texts: ChatText[],
    org: string,
  ): Promise<ScanResult | undefined> {
    refuseBroken(filters, applied);
    if (!this.offload(filters, texts)) return undefined;
    let key = this.keys.get(filters);
    if (key === undefined) {
      key = `f${this.nextKey++}`;
      this.keys.set(filters, key);
    }
    const packed = packTexts(texts);
    let reply: Awaited<ReturnType<ScanPool["run"]>>;
    try {
      reply = await this.pool.run(org, key, spec, packed);
    } catch (err) {
      if (err instanceof ScanTimeout) {
        throw new AppError(
          "payload_too_large",
          {
            reason: "scan_time_exceeded",
            time_budget_ms: this.settings.timeoutMs,
            characters: packed.joined.length,
          },
          `Request too large to scan: this key's content filters did not finish within ${this.settings.timeoutMs} ms`,
        );
      }
      if (err instanceof ScanBusy) {
        if (err.share) {
          throw new AppError("scan_busy", {
            reason: "organization_share_full",
            queued_characters: err.share.queuedChars,
            queued_characters_limit: err.share.limitChars,
          });
        }
        throw new AppError("scan_busy", { reason: "scan_capacity", time_budget_ms: this.settings.timeoutMs });
      }
      throw err;
    }
    // A detector that fails refuses the request, as on the event loop (docs/gateway.md).
    if (!reply.ok) throw new Error(`content scan failed: ${reply.error}`);
    return {
      hits: reply.hits,
      block: reply.block,
      replacements: reply.replacements.map((r) => ({ text: texts[r.index] as ChatText, value: r.value })),
    };
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
