import { availableParallelism } from "node:os";
import type { ChatText } from "../domain/chat-texts.js";
import type { ContentFilters, ScanResult } from "../domain/content-scan.js";
import { AppError } from "../domain/errors.js";
import type { AppliedGuardrail } from "../domain/policy.js";
import { type FilterSpec, ScanBusy, ScanPool, ScanTimeout } from "./scan-pool.js";

/** Where and how long a request's content scan may run (docs/configuration.md, docs/gateway.md#large-scans). */
export interface ScanSettings {
  /** Longest a worker scan may run, and longest it may wait for a free worker, in milliseconds. */
  timeoutMs: number;
  /** A request with at least this many characters of text scans in a worker (fewer under costly patterns). */
  workerChars: number;
  /** Worker threads for large scans. */
  workers: number;
}

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
    this.pool = new ScanPool(settings.workers, settings.timeoutMs);
  }

  private offload(filters: ContentFilters, texts: ChatText[]): boolean {
    if (this.inProcess) return false;
    const weight = (filters.builtins.length > 0 ? BUILTIN_WEIGHT : 0) + filters.customCost;
    let chars = 0;
    for (const t of texts) chars += t.text.length;
    return weight > 0 && chars > 0 && chars * weight >= this.settings.workerChars * BUILTIN_WEIGHT;
  }

  /**
   * Refuses a request whose filters cannot all be compiled, then scans a large request in a
   * worker. Returns undefined when the scan is small enough for the decision to run it in place.
   * Fails closed: a scan over its time budget is a 413 and nothing is forwarded.
   */
  async scanLarge(
    spec: FilterSpec,
    applied: AppliedGuardrail[],
    filters: ContentFilters,
    texts: ChatText[],
  ): Promise<ScanResult | undefined> {
    refuseBroken(filters, applied);
    if (!this.offload(filters, texts)) return undefined;
    let key = this.keys.get(filters);
    if (key === undefined) {
      key = `f${this.nextKey++}`;
      this.keys.set(filters, key);
    }
    const jobTexts = texts.map((t) => ({
      text: t.text,
      role: t.role,
      json: t.json,
      message: t.message,
      kind: t.kind,
    }));
    let reply: Awaited<ReturnType<ScanPool["run"]>>;
    try {
      reply = await this.pool.run(key, spec, jobTexts);
    } catch (err) {
      if (err instanceof ScanTimeout) {
        throw new AppError(
          "payload_too_large",
          {
            reason: "scan_time_exceeded",
            time_budget_ms: this.settings.timeoutMs,
            characters: jobTexts.reduce((n, t) => n + t.text.length, 0),
          },
          `Request too large to scan: this key's content filters did not finish within ${this.settings.timeoutMs} ms`,
        );
      }
      if (err instanceof ScanBusy) {
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
