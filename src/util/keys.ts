/**
 * Composite keys. A key made by joining strings with a separator is ambiguous as soon as a part
 * may contain the separator (`"a|b" + "c"` and `"a" + "b|c"`); a JSON array of the parts is not:
 * two keys are equal exactly when their parts are. Every identity and cache key built from more
 * than one value uses this (a property test checks injectivity over adversarial strings).
 */
export function compositeKey(...parts: readonly (string | number)[]): string {
  return compositeKeyOf(parts);
}

/** `compositeKey` of a list of any length: spread into a call, more than ~120,000 parts overflow the stack. */
export function compositeKeyOf(parts: readonly (string | number)[]): string {
  return JSON.stringify(parts);
}
