/** Small helpers on Map, WeakMap and plain records used as maps. */
import { isDeepStrictEqual } from "node:util";

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

/** The keys whose values are not deep-equal in two maps, an absent map being empty. */
export function changedKeys<K, V>(a: ReadonlyMap<K, V> | undefined, b: ReadonlyMap<K, V> | undefined): Set<K> {
  const changed = new Set<K>();
  if (a === b) return changed;
  for (const [key, value] of a ?? []) if (!isDeepStrictEqual(value, b?.get(key))) changed.add(key);
  for (const key of b?.keys() ?? []) if (!a?.has(key)) changed.add(key);
  return changed;
}

/** The members of one set but not of the other. */
export function changedMembers<T>(a: ReadonlySet<T>, b: ReadonlySet<T>): Set<T> {
  const changed = new Set<T>();
  if (a === b) return changed;
  for (const member of a) if (!b.has(member)) changed.add(member);
  for (const member of b) if (!a.has(member)) changed.add(member);
  return changed;
}
