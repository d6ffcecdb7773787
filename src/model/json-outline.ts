/**
 * Where a mesh file's parts are written, so that a file read again is parsed only where it
 * changed: the outline of its JSON text (`JsonOutline`, heard from the duplicate-key scan), the
 * check that the text around the parts is JSON's (`wellFormedAround`), and the outline of a new
 * version of a text found by scanning only the members that changed (`outlineAgain`).
 */
import { type ScanListener, scanKeys } from "./json-keys.js";

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
export class JsonOutline implements ScanListener {
  #member: { key: string; keyAt: number; start: number } | undefined = undefined;
  #service: { key: string; keyAt: number; start: number } | undefined = undefined;
  #inServices = false;

  /** Empty, for a scan of `text` to fill in (`firstDuplicateKey`), or made of members found before (`outlineAgain`). */
  constructor(
    readonly text: string,
    readonly members: OutlinedMember[] = [],
    /** Undefined unless the top-level `services` is an object. */
    public services: OutlinedMember[] | undefined = undefined,
  ) {}

  /** For a scan that starts inside the `services` object, at a key: it hears only services. */
  static insideServices(text: string): JsonOutline {
    const outline = new JsonOutline(text, [], []);
    outline.#inServices = true;
    return outline;
  }

  /** A member's text. */
  textOf(member: OutlinedMember): string {
    return this.text.slice(member.start, member.end);
  }

  keyRead(depth: number, key: string, keyAt: number, start: number): void {
    if (depth === 1) this.#member = { key, keyAt, start };
    else if (depth === 2 && this.#inServices) this.#service = { key, keyAt, start };
  }

  objectOpened(depth: number): void {
    if (depth !== 1 || this.#member?.key !== "services") return;
    this.#inServices = true;
    this.services = [];
  }

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
 * The outline of `text`, a new version of `previous.text`, where the two differ only inside the
 * members of the top-level object or of `services`: only the members the change spans are
 * scanned again (services, or top-level members other than `services`), the others kept, moved by
 * what the text grew or shrank. Undefined when the change reaches anything else (the braces of
 * either object, or from inside `services` to outside), when a key is written twice, or when the
 * text is not JSON around its members: the caller then outlines the whole text. On W1's 45 MB
 * file with one record changed: ~20–40 ms, where the whole scan takes ~160 ms.
 */
export function outlineAgain(previous: JsonOutline, text: string): JsonOutline | undefined {
  const { text: old, members, services } = previous;
  if (old === text) return previous;
  const holder = members.find((member) => member.key === "services");
  if (!services || !holder) return undefined;
  const prefix = commonPrefixLength(old, text);
  const change: Change = {
    prefix,
    oldEnd: old.length - commonSuffixLength(old, text, Math.min(old.length, text.length) - prefix),
    shift: text.length - old.length,
  };
  const inServices = change.prefix > holder.start && change.oldEnd < holder.end;
  const scanned = inServices
    ? membersAgain(text, services, change, JsonOutline.insideServices(text), 2)
    : membersAgain(text, members, change, new JsonOutline(text), 1);
  if (!scanned) return undefined;
  const moved = movedBy(change.shift);
  const next = inServices
    ? new JsonOutline(
        text,
        members.map((member) => (member.keyAt > holder.keyAt ? moved(member) : member === holder ? { ...member, end: member.end + change.shift } : member)),
        scanned,
      )
    : new JsonOutline(text, scanned, holder.keyAt < change.prefix ? services : services.map(moved));
  return wellFormedAround(next) ? next : undefined;
}

/** Where two versions of a text differ: from `prefix`, to `oldEnd` in the old one; `shift`: what the text grew by. */
interface Change {
  readonly prefix: number;
  readonly oldEnd: number;
  readonly shift: number;
}

/**
 * One object's members (the top level at `depth` 1, or services at 2) with those spanning the
 * change scanned again with `listener`, from the last whose key starts before it (its quote
 * unchanged) to the first ending after it (its comma or brace unchanged); the others kept, those
 * after it moved. Undefined where that is not a run of whole members, or a key is written twice.
 */
function membersAgain(text: string, list: readonly OutlinedMember[], change: Change, listener: JsonOutline, depth: 1 | 2): OutlinedMember[] | undefined {
  const first = list.findLastIndex((member) => member.keyAt < change.prefix);
  const last = list.findIndex((member) => member.end >= change.oldEnd);
  if (first < 0 || last < first) return undefined;
  const from = list[first]!.keyAt;
  const to = list[last]!.end + change.shift;
  const otherKeys = new Set(list.filter((_, i) => i < first || i > last).map((member) => member.key));
  const state = { objects: depth === 1 ? [otherKeys] : [new Set<string>(), otherKeys], expectKey: true, at: from };
  try {
    if (scanKeys(text, to, state, listener)) return undefined;
  } catch {
    return undefined; // an escaped key that does not decode
  }
  // Back inside the object, and no string running past the change: else the text is not JSON there.
  if (state.objects.length !== depth || state.at !== to) return undefined;
  listener.memberEnded(depth, to, false);
  const found = depth === 1 ? listener.members : listener.services!;
  // The top level's services are outlined only by a whole scan (or at depth 2): not scanned again here.
  if (depth === 1 && found.some((member) => member.key === "services")) return undefined;
  return [...list.slice(0, first), ...found, ...list.slice(last + 1).map(movedBy(change.shift))];
}

function movedBy(shift: number): (member: OutlinedMember) => OutlinedMember {
  return (member) => ({ ...member, keyAt: member.keyAt + shift, start: member.start + shift, end: member.end + shift });
}

/** Compared a block at a time: string equality of two slices is a copy-free compare. */
const BLOCK = 65_536;

function commonPrefixLength(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  let at = 0;
  while (at + BLOCK <= length && a.slice(at, at + BLOCK) === b.slice(at, at + BLOCK)) at += BLOCK;
  while (at < length && a.charCodeAt(at) === b.charCodeAt(at)) at++;
  return at;
}

/** The length of the longest common suffix, at most `limit` (so that it does not overlap the common prefix). */
function commonSuffixLength(a: string, b: string, limit: number): number {
  let length = 0;
  while (length + BLOCK <= limit && a.slice(a.length - length - BLOCK, a.length - length) === b.slice(b.length - length - BLOCK, b.length - length))
    length += BLOCK;
  while (length < limit && a.charCodeAt(a.length - length - 1) === b.charCodeAt(b.length - length - 1)) length++;
  return length;
}
