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
 * as it is written unless it holds an escape (a mesh file has about a million keys). Given an
 * `outline`, the same pass fills it in.
 */
export function firstDuplicateKey(text: string, outline?: JsonOutline): DuplicateKey | undefined {
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
        outline?.keyRead(objects.length, key, end + 1);
        expectKey = false;
      }
      i = end;
    } else if (code === OPEN_OBJECT) {
      outline?.objectOpened(objects.length);
      objects.push([]);
      expectKey = true;
    } else if (code === OPEN_ARRAY) objects.push(undefined);
    else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) {
      outline?.memberEnded(text, objects.length, i, true);
      objects.pop();
    } else if (code === COMMA) {
      outline?.memberEnded(text, objects.length, i, false);
      expectKey = objects[objects.length - 1] !== undefined;
    }
  }
  return undefined;
}

/**
 * Where a JSON document's parts are written, as text: each member of its top-level object, and
 * each member of the top-level `services` object. A member's text is what follows its key — the
 * colon, the value, the spaces around them — so two reads of a file can tell which parts changed
 * by comparing texts (slices of the document's text, which they keep).
 */
export class JsonOutline {
  readonly members = new Map<string, string>();
  /** Undefined unless the top-level `services` is an object. */
  services: Map<string, string> | undefined = undefined;
  #member: string | undefined = undefined;
  #memberStart = 0;
  #service: string | undefined = undefined;
  #serviceStart = 0;
  #inServices = false;

  /** A key read in the object at `depth` (1: the top level), its member's text starting at `start`. */
  keyRead(depth: number, key: string, start: number): void {
    if (depth === 1) {
      this.#member = key;
      this.#memberStart = start;
    } else if (depth === 2 && this.#inServices) {
      this.#service = key;
      this.#serviceStart = start;
    }
  }

  /** An object opened inside the object or array at `depth`. */
  objectOpened(depth: number): void {
    if (depth !== 1 || this.#member !== "services") return;
    this.#inServices = true;
    this.services = new Map();
  }

  /** A comma or a closing bracket at `at`, inside the object or array at `depth`. */
  memberEnded(text: string, depth: number, at: number, closing: boolean): void {
    if (depth === 1 && this.#member !== undefined) {
      this.members.set(this.#member, text.slice(this.#memberStart, at));
      this.#member = undefined;
    } else if (depth === 2 && this.#inServices) {
      if (this.#service !== undefined) this.services!.set(this.#service, text.slice(this.#serviceStart, at));
      this.#service = undefined;
      if (closing) this.#inServices = false;
    }
  }
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
