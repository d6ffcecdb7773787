/**
 * Whether two JSON-like values (plain objects, arrays, strings, numbers, booleans, null) hold the
 * same data: arrays item by item, objects key by key in the same order.
 */
export function sameData(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => sameData(item, b[i]));
  const keys = Object.keys(a);
  const otherKeys = Object.keys(b);
  const [x, y] = [a as Record<string, unknown>, b as Record<string, unknown>];
  return keys.length === otherKeys.length && keys.every((key, i) => key === otherKeys[i] && sameData(x[key], y[key]));
}

/** An object as JSON or YAML parsing makes it: not an array, not an instance of a class. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && Object.getPrototypeOf(value) === Object.prototype;
}
