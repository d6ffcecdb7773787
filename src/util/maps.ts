/** Small helpers on Map, WeakMap and plain records used as maps. */

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

/**
 * Stores `value` under `key` and returns it: `map.get(key) ?? remember(map, key, build())` makes
 * no closure, where `getOrInsert` takes one per call (it counts on paths run per record or path).
 */
export function remember<K, V>(store: KeyedStore<K, V>, key: K, value: V): V {
  store.set(key, value);
  return value;
}

/** A new empty map: a factory to pass by reference where a closure per call would cost (memo and slot builders). */
export function newMap<K, V>(): Map<K, V> {
  return new Map();
}

/** Adds one to the count stored under `key`. */
export function increment<K>(counts: Map<K, number>, key: K): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

/** `record[key] = value` as an ordinary own property, even for "__proto__" (which an assignment would take as the prototype). */
export function setOwn<V>(record: Record<string, V>, key: string, value: V): void {
  if (key === "__proto__") Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
  else record[key] = value;
}
