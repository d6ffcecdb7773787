import { endianness } from "node:os";

/**
 * A growing buffer of UTF-16 code units that text renderers write into and turn into one string
 * at the end. A full node's text is tens of megabytes in millions of small pieces: concatenating
 * strings keeps every piece alive as a rope until the end, while units cost one store each.
 *
 * Units, not UTF-8 bytes: a node's diagnostics hold thousands of `→`, so its text is a two-byte
 * string, and decoding 16 MB of UTF-8 into one costs several times the copy that UTF-16 units
 * take (Node makes a large `utf16le` or `latin1` string by one copy into an external string).
 */

/** Code units made ahead (a line start, a key), copied in one call. */
export type Units = Uint16Array;

/** Kept between calls (up to this many units) so a small render does not allocate a fresh buffer. */
const KEPT_UNITS = 1 << 19;
let kept: Uint16Array | undefined;
/** The last text's length: a larger buffer is allocated at that size once, not regrown by doubling. */
let lastLength = 0;

/** Node's `utf16le` reads little-endian units; a Uint16Array stores them in the machine's order. */
const BIG_ENDIAN = endianness() === "BE";

export class TextUnits {
  private units: Uint16Array;
  /** The same memory as bytes, for Buffer's native string writer. */
  private bytes: Buffer;
  length = 0;

  constructor() {
    if (lastLength > KEPT_UNITS) this.units = new Uint16Array(lastLength + (lastLength >> 4));
    else {
      this.units = kept ?? new Uint16Array(KEPT_UNITS);
      kept = undefined;
    }
    this.bytes = bytesOf(this.units);
  }

  /** The text written, as a string (one byte per character when every unit fits); the buffer goes back to be reused. */
  finish(): string {
    const written = this.units.subarray(0, this.length);
    const text = fitsOneByte(written) ? narrowed(written) : wide(written);
    if (this.units.length <= KEPT_UNITS) kept = this.units;
    lastLength = this.length;
    return text;
  }

  /**
   * What `write` writes for `key` at `level` (a depth or indentation), written once per `memo`
   * and copied from then on.
   */
  repeated(memo: RepeatedUnits, key: string, level: number, write: () => void): void {
    let levels = memo.get(key);
    if (levels === undefined) {
      levels = [];
      memo.set(key, levels);
    }
    const kept = levels[level];
    if (kept !== undefined) {
      this.chunk(kept);
      return;
    }
    const start = this.length;
    write();
    levels[level] = this.units.slice(start, this.length);
  }

  /** Drops what was written after `length`. */
  rewind(length: number): void {
    this.length = length;
  }

  /** One ASCII character, by code. */
  char(code: number): void {
    if (this.length === this.units.length) this.grow(1);
    this.units[this.length++] = code;
  }

  /** Units made ahead (`unitsOf`), copied in one call: much faster than a unit at a time. */
  chunk(units: Units): void {
    if (this.length + units.length > this.units.length) this.grow(units.length);
    this.units.set(units, this.length);
    this.length += units.length;
  }

  /** `count` spaces. */
  spaces(count: number): void {
    if (this.length + count > this.units.length) this.grow(count);
    const units = this.units;
    for (let i = 0; i < count; i++) units[this.length++] = 0x20;
  }

  /** Any string; a lone surrogate becomes U+FFFD, as a UTF-8 encoder writes it. */
  text(value: string): void {
    if (this.length + value.length > this.units.length) this.grow(value.length);
    if (value.length >= NATIVE_LENGTH && !hasSurrogate(value)) this.copy(value);
    else this.length = storeText(this.units, this.length, value);
  }

  /**
   * A string as JSON's string literal, quotes included: `"`, `\` and control characters escaped
   * (`\n`, `\u001f`), and so is a lone surrogate, as `JSON.stringify` does.
   */
  jsonString(value: string): void {
    const size = value.length;
    if (this.length + size + 2 > this.units.length) this.grow(size + 2);
    const units = this.units;
    let at = this.length;
    units[at++] = 0x22;
    if (size >= NATIVE_LENGTH && !needsJsonEscape(value)) {
      this.length = at;
      this.copy(value);
      at = this.length;
    } else {
      for (let i = 0; i < size; i++) {
        const code = value.charCodeAt(i);
        if (code < 0x20 || code === 0x22 || code === 0x5c || (code >= 0xd800 && code <= 0xdfff)) {
          this.length = at;
          this.jsonStringFrom(value, i);
          return;
        }
        units[at++] = code;
      }
    }
    units[at++] = 0x22;
    this.length = at;
  }

  /** A string without lone surrogates, by Buffer's native writer (room for it is there). */
  private copy(value: string): void {
    const start = 2 * this.length;
    const end = start + this.bytes.write(value, start, "utf16le");
    if (BIG_ENDIAN) this.bytes.subarray(start, end).swap16();
    this.length = end >> 1;
  }

  /** The rest of `jsonString` from `start` on, which holds a character to escape or a surrogate. */
  private jsonStringFrom(value: string, start: number): void {
    const size = value.length;
    for (let i = start; i < size; i++) {
      const code = value.charCodeAt(i);
      if (code >= 0x20 && code !== 0x22 && code !== 0x5c && (code < 0xd800 || code > 0xdfff)) this.char(code);
      else if (code >= 0xd800 && code <= 0xdbff && i + 1 < size && isLowSurrogate(value.charCodeAt(i + 1))) {
        this.char(code);
        this.char(value.charCodeAt(++i));
      } else this.text(escapeOf(code));
    }
    this.char(0x22);
  }

  private grow(needed: number): void {
    const grown = new Uint16Array(Math.max(this.units.length * 2, this.length + needed));
    grown.set(this.units.subarray(0, this.length));
    this.units = grown;
    this.bytes = bytesOf(grown);
  }
}

/** `text` as units made ahead, to `chunk` (lone surrogates as U+FFFD, as `text` writes them). */
export function unitsOf(text: string): Units {
  const units = new Uint16Array(text.length);
  storeText(units, 0, text);
  return units;
}

/**
 * From this length on, a string is checked first and then copied by Buffer's native writer
 * (`copy`): one read-only pass and a native copy beat the loop that stores a unit per
 * character; below it the call costs more than the loop.
 */
const NATIVE_LENGTH = 32;

/** Stores `value`'s units at `at` (room for them is there), a lone surrogate as U+FFFD; the position after them. */
function storeText(units: Uint16Array, at: number, value: string): number {
  const size = value.length;
  for (let i = 0; i < size; i++) {
    let code = value.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdfff) {
      const low = code <= 0xdbff && i + 1 < size ? value.charCodeAt(i + 1) : 0;
      if (isLowSurrogate(low)) {
        units[at++] = code;
        code = low;
        i++;
      } else code = 0xfffd;
    }
    units[at++] = code;
  }
  return at;
}

function bytesOf(units: Uint16Array): Buffer {
  return Buffer.from(units.buffer, units.byteOffset, units.byteLength);
}

/** Whether JSON prints `value` other than as it is between quotes: a control character, a quote, a backslash or any surrogate (pairs too, to stay simple). */
function needsJsonEscape(value: string): boolean {
  const size = value.length;
  for (let i = 0; i < size; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x20 || code === 0x22 || code === 0x5c || (code >= 0xd800 && code <= 0xdfff)) return true;
  }
  return false;
}

function hasSurrogate(value: string): boolean {
  const size = value.length;
  for (let i = 0; i < size; i++) {
    const code = value.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdfff) return true;
  }
  return false;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/**
 * Whether every unit is at most U+00FF. Searched from the end: a node's text ends with its
 * diagnostics, whose messages hold `→`, so a two-byte text is found at once.
 */
function fitsOneByte(units: Uint16Array): boolean {
  for (let i = units.length - 1; i >= 0; i--) {
    if (units[i]! > 0xff) return false;
  }
  return true;
}

/** Units that all fit one byte, as a one-byte string (latin1: each byte is its character). */
function narrowed(units: Uint16Array): string {
  const bytes = Buffer.allocUnsafe(units.length);
  bytes.set(units);
  return bytes.toString("latin1");
}

/** Units as a two-byte string. */
function wide(units: Uint16Array): string {
  const bytes = bytesOf(units);
  if (BIG_ENDIAN) bytes.swap16();
  return bytes.toString("utf16le");
}

const SHORT_ESCAPES: Readonly<Record<number, string>> = { 8: "\\b", 9: "\\t", 10: "\\n", 12: "\\f", 13: "\\r", 34: '\\"', 92: "\\\\" };

/** JSON's escape of a character it does not print as is. */
function escapeOf(code: number): string {
  return SHORT_ESCAPES[code] ?? `\\u${code.toString(16).padStart(4, "0")}`;
}

/** `TextUnits.repeated`'s memo: units by key, then level. Keep one per render, so nothing outlives it. */
export type RepeatedUnits = Map<string, Uint16Array[]>;
