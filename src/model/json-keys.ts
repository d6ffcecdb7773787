/**
 * JSON.parse keeps the last of two equal keys and says nothing; a mesh file with a duplicated key
 * is ambiguous, so it is refused. This scans text that JSON.parse already accepted.
 */

export interface DuplicateKey {
  readonly key: string;
  readonly line: number;
}

/**
 * The first key repeated within one object, or undefined. Linear, iterative: one pass of character
 * codes over the structure, each string skipped by searching for its closing quote, and a key read
 * as it is written unless it holds an escape (a mesh file has about a million keys).
 */
export function firstDuplicateKey(text: string): DuplicateKey | undefined {
  const objects: (Keys | undefined)[] = []; // one entry per open {...} or [...] (undefined for arrays)
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      const end = stringEnd(text, i);
      const keys = objects[objects.length - 1];
      if (expectKey && keys) {
        const written = text.slice(i + 1, end);
        const key = written.includes("\\") ? (JSON.parse(text.slice(i, end + 1)) as string) : written;
        if (!added(keys, key)) return { key, line: lineOf(text, i) };
        if (Array.isArray(keys) && keys.length > MAX_LISTED_KEYS) objects[objects.length - 1] = new Set(keys);
        expectKey = false;
      }
      i = end;
    } else if (code === OPEN_OBJECT) {
      objects.push([]);
      expectKey = true;
    } else if (code === OPEN_ARRAY) objects.push(undefined);
    else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) objects.pop();
    else if (code === COMMA) expectKey = objects[objects.length - 1] !== undefined;
  }
  return undefined;
}

/**
 * One object's keys so far: a list while it is short (most objects have a few keys, and a `Set`
 * apiece cost as much as the rest of the scan), a `Set` once it is longer.
 */
type Keys = string[] | Set<string>;

const MAX_LISTED_KEYS = 16;

/** Adds `key` to `keys`; false when it was there already. */
function added(keys: Keys, key: string): boolean {
  if (Array.isArray(keys)) {
    if (keys.includes(key)) return false;
    keys.push(key);
    return true;
  }
  if (keys.has(key)) return false;
  keys.add(key);
  return true;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/** Index of the quote closing the string that starts at `start`: the next quote not escaped (after an even run of backslashes). */
function stringEnd(text: string, start: number): number {
  for (let at = text.indexOf('"', start + 1); at !== -1; at = text.indexOf('"', at + 1)) {
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
  return text.length - 1;
}

/** The line of `index`: one more than the line breaks before it (JSON strings hold none unescaped). */
function lineOf(text: string, index: number): number {
  let line = 1;
  for (let at = text.indexOf("\n"); at !== -1 && at < index; at = text.indexOf("\n", at + 1)) line++;
  return line;
}
