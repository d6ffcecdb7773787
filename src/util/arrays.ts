/** Helpers on arrays. */

/**
 * Appends every item to `list`. `list.push(...items)` passes each item as a call argument, and
 * V8 throws "Maximum call stack size exceeded" somewhere past 120,000 of them: use this wherever
 * the count grows with the mesh (issues, failures, endpoints).
 */
export function pushAll<T>(list: T[], items: Iterable<T>): void {
  for (const item of items) list.push(item);
}

/** Whether both lists hold the same items (`===`) in the same order. */
export function sameItems(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && a.every((item, i) => item === b[i]);
}

/** Whether both sets hold the same members, in any order. */
export function sameMembers<T>(a: ReadonlySet<T>, b: ReadonlySet<T>): boolean {
  return a.size === b.size && [...a].every((item) => b.has(item));
}

/** An empty list to share: one frozen array, where many results would each keep an empty one. */
export const NONE: readonly never[] = Object.freeze([]);

/** The list, or the shared empty one. */
export function orNone<T>(list: readonly T[]): readonly T[] {
  return list.length === 0 ? NONE : list;
}
