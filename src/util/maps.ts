/** Small helpers on Map and WeakMap. */

interface KeyedStore<K, V> {
  get(key: K): V | undefined;
  set(key: K, value: V): unknown;
}

/** The value stored under `key`, created by `create` and stored on first use. */
export function getOrInsert<K, V>(store: KeyedStore<K, V>, key: K, create: () => V): V {
  let value = store.get(key);
  if (value === undefined) {
    value = create();
    store.set(key, value);
  }
  return value;
}

/** Adds one to the count stored under `key`. */
export function increment<K>(counts: Map<K, number>, key: K): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}
