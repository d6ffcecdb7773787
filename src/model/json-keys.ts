/**
 * JSON.parse keeps the last of two equal keys and says nothing; a mesh file with a duplicated key
 * is ambiguous, so it is refused. This scans text that JSON.parse already accepted, or (a mesh
 * file read again, `outlineAgain`) text whose every part is checked otherwise.
 */

export interface DuplicateKey {
  readonly key: string;
  readonly line: number;
}

/** Hears the structure a scan passes: what outlines a document (`JsonOutline`). */
export interface ScanListener {
  /** A key read in the object at `depth` (1: the top level): its opening quote at `keyAt`, its member's text starting at `start`. */
  keyRead(depth: number, key: string, keyAt: number, start: number): void;
  /** An object opened inside the object or array at `depth`. */
  objectOpened(depth: number): void;
  /** A comma or a closing bracket at `at`, inside the object or array at `depth`. */
  memberEnded(depth: number, at: number, closing: boolean): void;
}

/**
 * One object's keys so far: a list while it is short (most objects have a few keys, and a `Set`
 * apiece cost as much as the rest of the scan), a `Set` once it is longer.
 */
export type Keys = string[] | Set<string>;

/**
 * The first key repeated within one object, or undefined. Linear, iterative: one pass of character
 * codes over the structure, each string skipped by searching for its closing quote, and a key read
 * as it is written unless it holds an escape (a mesh file has about a million keys). A `listener`
 * hears the structure the same pass goes through.
 */
export function firstDuplicateKey(text: string, listener?: ScanListener): DuplicateKey | undefined {
  return scanKeys(text, text.length, { objects: [], expectKey: false, at: 0 }, listener);
}

/** Where a scan is: inside which objects and arrays, whether a key comes next, at which character. */
export interface ScanState {
  /** One entry per open {...} (its keys so far) or [...] (undefined). */
  readonly objects: (Keys | undefined)[];
  expectKey: boolean;
  /** Where the scan goes on; after it, where it stopped (past its end when a string ran beyond it). */
  at: number;
}

/** `firstDuplicateKey` from `state` to `to`, leaving `state` where the scan stopped. */
export function scanKeys(text: string, to: number, state: ScanState, listener?: ScanListener): DuplicateKey | undefined {
  const { objects } = state;
  let expectKey = state.expectKey;
  let i = state.at;
  for (; i < to; i++) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      const end = stringEnd(text, i);
      const keys = objects[objects.length - 1];
      if (expectKey && keys) {
        const written = text.slice(i + 1, end);
        const key = written.includes("\\") ? (JSON.parse(text.slice(i, end + 1)) as string) : written;
        if (!added(keys, key)) return { key, line: lineOf(text, i) };
        if (Array.isArray(keys) && keys.length > MAX_LISTED_KEYS) objects[objects.length - 1] = new Set(keys);
        listener?.keyRead(objects.length, key, i, end + 1);
        expectKey = false;
      }
      i = end;
    } else if (code === OPEN_OBJECT) {
      listener?.objectOpened(objects.length);
      objects.push([]);
      expectKey = true;
    } else if (code === OPEN_ARRAY) objects.push(undefined);
    else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) {
      listener?.memberEnded(objects.length, i, true);
      objects.pop();
    } else if (code === COMMA) {
      listener?.memberEnded(objects.length, i, false);
      expectKey = objects[objects.length - 1] !== undefined;
    }
  }
  state.expectKey = expectKey;
  state.at = i;
  return undefined;
}

/**
 * `text` without JSON's whitespace outside strings, but for one space between two characters that
 * are neither structural nor quotes (`1 2` is not `12`). Two texts equal so are the same tokens
 * in the same order, whatever their layout: one of them JSON, both are, with one value.
 */
export function withoutJsonSpaces(text: string): string {
  let out = "";
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      i = stringEnd(text, i);
      continue;
    }
    if (!isJsonSpace(code)) continue;
    let end = i + 1;
    while (end < text.length && isJsonSpace(text.charCodeAt(end))) end++;
    const between = i > 0 && end < text.length && isWordCharacter(text.charCodeAt(i - 1)) && isWordCharacter(text.charCodeAt(end));
    out += text.slice(from, i) + (between ? " " : "");
    from = end;
    i = end - 1;
  }
  return from === 0 ? text : out + text.slice(from);
}

function isJsonSpace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;
}

/** Part of a number or a literal (or of something that is not JSON): not structural, a quote or a space. */
function isWordCharacter(code: number): boolean {
  return (
    code !== QUOTE &&
    code !== COMMA &&
    code !== OPEN_OBJECT &&
    code !== CLOSE_OBJECT &&
    code !== OPEN_ARRAY &&
    code !== CLOSE_ARRAY &&
    code !== COLON &&
    !isJsonSpace(code)
  );
}

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
const COLON = 0x3a;
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
