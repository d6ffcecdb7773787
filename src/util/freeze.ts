/** Freezing validated values, so nothing can change what was checked. */

/** Freezes `value` and every object and array reachable from it; returns it. */
export function deepFreeze<T extends object>(value: T): T {
  Object.freeze(value);
  for (const child of Object.values(value)) if (typeof child === "object" && child !== null && !Object.isFrozen(child)) deepFreeze(child);
  return value;
}
