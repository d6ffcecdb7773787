/**
 * A read-only map made of a base map and a few changes on top, so that deriving the next
 * snapshot's index costs what changed instead of a copy of every entry. Iteration follows the
 * base's order (changed values in place, removed keys skipped), then keys new to the base in the
 * order they were set. Layers are flattened into a plain Map once they get deep or large, which
 * keeps lookups O(1) and the cost of a flatten amortized over the updates it absorbs; a map read
 * many times (every node compiled on one index) copies itself flat as well.
 */
const MAX_DEPTH = 8;

/** Layer probes per entry after which a layered map copies itself flat. */
const FLATTEN_AFTER_READS = 4;

export class LayeredMap<K, V> implements ReadonlyMap<K, V> {
  readonly size: number;
  #reads = 0;
  #flat: Map<K, V> | undefined;

  private constructor(
    private readonly base: ReadonlyMap<K, V>,
    /** Value per changed key; `undefined` removes the key. */
    private readonly changes: ReadonlyMap<K, V | undefined>,
    private readonly depth: number,
  ) {
    let size = base.size;
    for (const [key, value] of changes) {
      if (base.has(key)) size -= value === undefined ? 1 : 0;
      else size += value === undefined ? 0 : 1;
    }
    this.size = size;
  }

  /** `base` with `changes` applied (`undefined` removes a key); `base` itself is left as it is. */
  static of<K, V>(base: ReadonlyMap<K, V>, changes: ReadonlyMap<K, V | undefined>): ReadonlyMap<K, V> {
    if (changes.size === 0) return base;
    const depth = base instanceof LayeredMap ? base.depth + 1 : 1;
    const layered = new LayeredMap(base, changes, depth);
    return depth > MAX_DEPTH || changes.size * 8 > base.size ? layered.#flattened() : layered;
  }

  /**
   * A plain Map of the same entries in the same order: the nearest plain map below copied (a
   * native copy), then each layer's changes applied from the bottom up — `set` keeps a changed key
   * in place and appends a new one, `delete` drops one, which is the order `entries` walks.
   * Iterating `entries` instead cost a generator step per entry and layer.
   */
  #flattened(): Map<K, V> {
    const layers: ReadonlyMap<K, V | undefined>[] = [];
    let below: ReadonlyMap<K, V> = this;
    while (below instanceof LayeredMap && below.#flat === undefined) {
      layers.push(below.changes);
      below = below.base;
    }
    const flat = new Map(below instanceof LayeredMap ? below.#flat : below);
    for (let i = layers.length - 1; i >= 0; i--) {
      for (const [key, value] of layers[i]!) {
        if (value === undefined) flat.delete(key);
        else flat.set(key, value);
      }
    }
    return flat;
  }

  /**
   * The keys whose values may differ between `a` and `b`, when one is layered directly on the
   * other or both directly on one base (the next index's map from the last one's, or two derived
   * from one); undefined when they are not related that closely.
   */
  static keysChangedBetween<K, V>(a: ReadonlyMap<K, V>, b: ReadonlyMap<K, V>): readonly K[] | undefined {
    if (a === b) return [];
    const layerA = a instanceof LayeredMap ? (a as LayeredMap<K, V>) : undefined;
    const layerB = b instanceof LayeredMap ? (b as LayeredMap<K, V>) : undefined;
    if (layerB?.base === a) return [...layerB.changes.keys()];
    if (layerA?.base === b) return [...layerA.changes.keys()];
    if (layerA && layerB && layerA.base === layerB.base) return [...layerA.changes.keys(), ...layerB.changes.keys()];
    return undefined;
  }

  get(key: K): V | undefined {
    const flat = this.#flatWhenRead();
    if (flat) return flat.get(key);
    return this.changes.has(key) ? this.changes.get(key) : this.base.get(key);
  }

  has(key: K): boolean {
    const flat = this.#flatWhenRead();
    if (flat) return flat.has(key);
    return this.changes.has(key) ? this.changes.get(key) !== undefined : this.base.has(key);
  }

  /**
   * A plain copy once lookups through the layers have cost about what copying costs (many nodes
   * compiled on one index): from then on a lookup is one hash probe, however deep the layers.
   */
  #flatWhenRead(): Map<K, V> | undefined {
    if (this.#flat) return this.#flat;
    this.#reads += this.depth;
    if (this.#reads > FLATTEN_AFTER_READS * this.size) this.#flat = this.#flattened();
    return this.#flat;
  }

  *entries(): MapIterator<[K, V]> {
    for (const [key, value] of this.base) {
      const current = this.changes.has(key) ? this.changes.get(key) : value;
      if (current !== undefined) yield [key, current];
    }
    for (const [key, value] of this.changes) if (value !== undefined && !this.base.has(key)) yield [key, value];
  }

  *keys(): MapIterator<K> {
    for (const [key] of this.entries()) yield key;
  }

  *values(): MapIterator<V> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.entries();
  }

  forEach(callback: (value: V, key: K, map: ReadonlyMap<K, V>) => void, thisArg?: unknown): void {
    for (const [key, value] of this.entries()) callback.call(thisArg, value, key, this);
  }
}
