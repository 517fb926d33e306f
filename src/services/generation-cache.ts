/**
 * A cache of data derived from management state. An entry is valid only while the change
 * generation it was computed at is current, so any committed change is seen by the very next
 * lookup. The generation is read before the computation starts: a change committed meanwhile makes
 * the fresh entry invalid at once instead of pinning old data.
 */
export class GenerationCache<V> {
  private readonly entries = new Map<string, { generation: number; value: V }>();

  constructor(
    /** The change generation this cache depends on; undefined while no cached entry may be trusted. */
    private readonly generation: () => number | undefined,
    private readonly maxEntries = 10_000,
  ) {}

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    const generation = this.generation();
    return entry && generation !== undefined && entry.generation === generation ? entry.value : undefined;
  }

  /** `keep` decides what is worth keeping (e.g. not the misses a caller could spray to flush the cache). */
  async getOrCompute(
    key: string,
    compute: () => Promise<V>,
    keep: (value: V) => boolean = () => true,
  ): Promise<V> {
    const hit = this.get(key);
    if (hit !== undefined) return hit;
    const generation = this.generation();
    const value = await compute();
    if (generation === undefined || !keep(value)) return value;
    // Bounded: when full, start over rather than track recency on the hot path.
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    this.entries.set(key, { generation, value });
    return value;
  }
}
