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
        outline?.keyRead(objects.length, key, i, end + 1);
        expectKey = false;
      }
      i = end;
    } else if (code === OPEN_OBJECT) {
      outline?.objectOpened(objects.length);
      objects.push([]);
      expectKey = true;
    } else if (code === OPEN_ARRAY) objects.push(undefined);
    else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) {
      outline?.memberEnded(objects.length, i, true);
      objects.pop();
    } else if (code === COMMA) {
      outline?.memberEnded(objects.length, i, false);
      expectKey = objects[objects.length - 1] !== undefined;
    }
  }
  return undefined;
}

/** A member of an object as written: its key, where the key's opening quote is, and its text. */
export interface OutlinedMember {
  readonly key: string;
  readonly keyAt: number;
  /** The member's text: what follows its key (the colon, the value, spaces around them), [start, end). */
  readonly start: number;
  readonly end: number;
}

/**
 * Where a JSON document's parts are written: each member of its top-level object, and each
 * member of the top-level `services` object. Two reads of a file can tell which parts changed by
 * comparing the members' texts, and (`wellFormedAround`) read a text whose members they have
 * seen without parsing them again.
 */
export class JsonOutline {
  readonly members: OutlinedMember[] = [];
  /** Undefined unless the top-level `services` is an object. */
  services: OutlinedMember[] | undefined = undefined;
  #member: { key: string; keyAt: number; start: number } | undefined = undefined;
  #service: { key: string; keyAt: number; start: number } | undefined = undefined;
  #inServices = false;

  constructor(readonly text: string) {}

  /** A member's text. */
  textOf(member: OutlinedMember): string {
    return this.text.slice(member.start, member.end);
  }

  /** A key read in the object at `depth` (1: the top level): its opening quote at `keyAt`, its text starting at `start`. */
  keyRead(depth: number, key: string, keyAt: number, start: number): void {
    if (depth === 1) this.#member = { key, keyAt, start };
    else if (depth === 2 && this.#inServices) this.#service = { key, keyAt, start };
  }

  /** An object opened inside the object or array at `depth`. */
  objectOpened(depth: number): void {
    if (depth !== 1 || this.#member?.key !== "services") return;
    this.#inServices = true;
    this.services = [];
  }

  /** A comma or a closing bracket at `at`, inside the object or array at `depth`. */
  memberEnded(depth: number, at: number, closing: boolean): void {
    if (depth === 1 && this.#member !== undefined) {
      this.members.push({ ...this.#member, end: at });
      this.#member = undefined;
    } else if (depth === 2 && this.#inServices) {
      if (this.#service !== undefined) this.services!.push({ ...this.#service, end: at });
      this.#service = undefined;
      if (closing) this.#inServices = false;
    }
  }
}

/**
 * Whether the text around the outlined members is what JSON puts there, so that the document is
 * JSON as soon as each member's text is a colon and a JSON value: the top-level object's braces,
 * the commas between members, each key a JSON string, each member's text starting with its colon,
 * and the same inside `services` (whose own text is only that object). For text `JSON.parse` has
 * not read: the outline of text that is not JSON may be anything, and this tells.
 */
export function wellFormedAround(outline: JsonOutline): boolean {
  const { text, members, services } = outline;
  if (!objectWellFormed(text, members, 0, text.length, TOP_OPENING)) return false;
  if (services === undefined) return true;
  const holder = members.find((member) => member.key === "services");
  return holder !== undefined && objectWellFormed(text, services, holder.start, holder.end, SERVICES_OPENING);
}

// JSON's whitespace is these four characters only; `y`: each matches exactly at `lastIndex`.
const TOP_OPENING = /[ \t\n\r]*\{[ \t\n\r]*/y;
const SERVICES_OPENING = /[ \t\n\r]*:[ \t\n\r]*\{[ \t\n\r]*/y;
const BETWEEN = /,[ \t\n\r]*/y;
const CLOSING = /\}[ \t\n\r]*/y;
const COLON = /[ \t\n\r]*:/y;

/** Whether text[from, to) is `opening`, the members with commas between, then `}` and spaces. */
function objectWellFormed(text: string, members: readonly OutlinedMember[], from: number, to: number, opening: RegExp): boolean {
  let at = matchedTo(opening, text, from);
  for (const [i, member] of members.entries()) {
    if (i > 0) at = matchedTo(BETWEEN, text, at);
    if (at !== member.keyAt || !isJsonString(text.slice(member.keyAt, member.start))) return false;
    if (matchedTo(COLON, text, member.start) < 0) return false;
    at = member.end;
  }
  return matchedTo(CLOSING, text, at) === to;
}

/** Where `pattern` (sticky) ends when it matches at `at`; -1 when it does not. */
function matchedTo(pattern: RegExp, text: string, at: number): number {
  if (at < 0) return -1;
  pattern.lastIndex = at;
  return pattern.test(text) ? pattern.lastIndex : -1;
}

/** Whether a quoted string (the scan found its closing quote) is a JSON string: escapes and control characters decide. */
function isJsonString(quoted: string): boolean {
  try {
    JSON.parse(quoted);
    return true;
  } catch {
    return false;
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
