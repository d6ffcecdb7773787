/**
 * A cache of at most `2 × limit` entries that keeps what is in use: entries live in a current and
 * a previous generation; a hit in the previous one moves the entry to the current one, and when
 * the current one reaches `limit` entries it becomes the previous one (dropping the old previous).
 * Anything not used for a whole generation is dropped — the cost of a miss is a recomputation.
 */
export class BoundedCache<K, V> {
  private current = new Map<K, V>();
  private previous = new Map<K, V>();

  constructor(readonly limit: number) {}

  /** The value under `key`, computed and kept on a miss. */
  get(key: K, compute: () => V): V {
    const hit = this.current.get(key);
    if (hit !== undefined) return hit;
    const value = this.previous.get(key) ?? compute();
    if (this.current.size >= this.limit) {
      this.previous = this.current;
      this.current = new Map();
    }
    this.current.set(key, value);
    return value;
  }

  /** Entries held, both generations (for tests and the bounded-cache contract). */
  get size(): number {
    return this.current.size + this.previous.size;
  }
}
