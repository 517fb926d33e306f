/**
 * Counts failures per client in fixed windows, to refuse a client that fails too often (guessing
 * keys) before its next attempt costs a database read. Pure: the time is passed in.
 */
export class FailureWindow {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(
    /** Failures a client may have within one window. */
    readonly limit: number,
    readonly windowMs: number,
    /** Clients tracked at once; when full, counting starts over rather than grow without bound. */
    private readonly maxClients = 10_000,
  ) {}

  /** Milliseconds until the client may try again; 0 when it may now. */
  retryAfterMs(client: string, nowMs: number): number {
    const window = this.windows.get(client);
    if (!window || nowMs - window.start >= this.windowMs) return 0;
    return window.count >= this.limit ? window.start + this.windowMs - nowMs : 0;
  }

  record(client: string, nowMs: number): void {
    const window = this.windows.get(client);
    if (window && nowMs - window.start < this.windowMs) {
      window.count++;
      return;
    }
    if (this.windows.size >= this.maxClients) this.windows.clear();
    this.windows.set(client, { start: nowMs, count: 1 });
  }
}
