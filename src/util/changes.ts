/** What differs between two maps or two sets: registry updates compare settings with these. */
import { isDeepStrictEqual } from "node:util";

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
