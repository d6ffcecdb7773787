/**
 * Typed, named caches. The compiler keeps reusable work in `SlotCache`s with one owner each:
 *
 * - a service version of the index (`IndexedService.caches`): dropped with that version of the service,
 *   except that the next version can read the entries of slots that carry over (`carryOverFrom`);
 * - a compile context (`NodePlan.context`): one of the `CACHED_CONTEXTS` most recently used;
 * - the index itself (`SnapshotIndex.caches`): lives as long as that index.
 *
 * Each kind of entry is a `CacheSlot`, declared beside the code that fills it, with the one
 * function that builds its key and the type of its values. A slot's entries live apart from the
 * other slots' inside the cache, so two slots never share a key. README "What is cached, and for
 * how long" lists every slot.
 */

/** One kind of cache entry: its name (for readers and tests), how its key is built, its value type. */
export class CacheSlot<Args extends readonly unknown[], Value> {
  /**
   * `carriesOver`: a new version of the cache's owner can read the entries the version before it
   * left (`SlotCache.carryOverFrom`, `earlier`), to reuse those still right for it.
   */
  constructor(
    readonly name: string,
    readonly keyOf: (...args: Args) => string,
    readonly carriesOver = false,
  ) {}

  /** The entry for `args` in `cache`, computed on first use. */
  get(cache: SlotCache, args: Args, compute: () => Value): Value {
    const entries = cache.entriesOf(this);
    const key = this.keyOf(...args);
    let value = entries.get(key) as Value | undefined;
    if (value === undefined) {
      value = compute();
      entries.set(key, value);
    }
    return value;
  }

  /** The entry for `args` the owner's previous version left (see `SlotCache.carryOverFrom`), if any. */
  earlier(cache: SlotCache, args: Args): Value | undefined {
    return cache.earlierEntriesOf(this)?.get(this.keyOf(...args)) as Value | undefined;
  }
}

/** A slot with one entry per cache (its value depends only on the cache's owner). */
export function singleEntrySlot<Value>(name: string): CacheSlot<[], Value> {
  return new CacheSlot<[], Value>(name, () => "");
}

/**
 * One slot's entries in one cache. Most slots of a service's cache hold one entry (one port, one
 * EDS view), and a Map with its table is ~180 bytes where this object is ~50: the first entry is
 * kept in fields, and a map is made from the second entry on.
 */
class SlotEntries {
  #firstKey: string | undefined;
  #firstValue: unknown;
  #more: Map<string, unknown> | undefined;

  get(key: string): unknown {
    if (this.#more !== undefined) return this.#more.get(key);
    return key === this.#firstKey ? this.#firstValue : undefined;
  }

  set(key: string, value: unknown): void {
    if (this.#more !== undefined) this.#more.set(key, value);
    else if (this.#firstKey === undefined || this.#firstKey === key) {
      this.#firstKey = key;
      this.#firstValue = value;
    } else {
      this.#more = new Map([
        [this.#firstKey, this.#firstValue],
        [key, value],
      ]);
      this.#firstKey = undefined;
      this.#firstValue = undefined;
    }
  }

  get size(): number {
    return this.#more?.size ?? (this.#firstKey === undefined ? 0 : 1);
  }
}

/** The entries of several slots, kept apart by slot. */
export class SlotCache {
  readonly #bySlot = new Map<CacheSlot<never, unknown>, SlotEntries>();
  /** Entries of slots that carry over, as the owner's previous version left them. */
  readonly #earlier = new Map<CacheSlot<never, unknown>, SlotEntries>();

  /**
   * Keeps `previous`'s entries of every slot that carries over readable here (`earlierEntriesOf`),
   * or those it was handed itself where it made none. Only maps of entries are kept, never
   * `previous`, so a chain of versions holds one generation back.
   */
  carryOverFrom(previous: SlotCache): void {
    for (const [slot, entries] of previous.#bySlot) if (slot.carriesOver) this.#earlier.set(slot, entries);
    for (const [slot, entries] of previous.#earlier) if (!this.#earlier.has(slot)) this.#earlier.set(slot, entries);
  }

  earlierEntriesOf(slot: CacheSlot<never, unknown>): Pick<SlotEntries, "get"> | undefined {
    return this.#earlier.get(slot);
  }

  entriesOf(slot: CacheSlot<never, unknown>): SlotEntries {
    let entries = this.#bySlot.get(slot);
    if (!entries) {
      entries = new SlotEntries();
      this.#bySlot.set(slot, entries);
    }
    return entries;
  }

  /** How many entries a slot holds (for tests). */
  sizeOf(slot: CacheSlot<never, unknown>): number {
    return this.#bySlot.get(slot)?.size ?? 0;
  }
}
