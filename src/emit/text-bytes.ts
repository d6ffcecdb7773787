import { getOrInsert } from "../util/maps.js";

/**
 * A growing byte buffer that text renderers write into and turn into one string at the end. A
 * full node's text is tens of megabytes in millions of small pieces: concatenating strings keeps
 * every piece alive as a rope until the end, while bytes cost one copy per character.
 */

/** Kept between calls (up to this size) so a small render does not allocate a fresh buffer. */
const KEPT_BYTES = 1 << 20;
let kept: Buffer | undefined;
/**
 * The last larger buffer, kept weakly: the next large render reuses it unless a GC took it back.
 * Each fresh one is tens of megabytes of external memory, and V8 answers external memory growing
 * by 64 MB with a full GC: a fresh buffer per render meant one every few renders (renderJson
 * after renderYaml took 1.5x as long).
 */
let keptLarge: WeakRef<Buffer> | undefined;
/** The last text's size: a larger buffer is allocated at that size once, not regrown by doubling. */
let lastLength = 0;

export class TextBytes {
  private buffer: Buffer;
  length = 0;

  constructor() {
    if (lastLength > KEPT_BYTES) this.buffer = largeBuffer(lastLength);
    else {
      this.buffer = kept ?? Buffer.allocUnsafe(KEPT_BYTES);
      kept = undefined;
    }
  }

  /**
   * The text written, as a string; the buffer goes back to be reused. Decoded as UTF-8 even when
   * ASCII: V8 copies ASCII as fast as latin1 does, into its own heap, while Node makes a latin1
   * string of over ~1M characters an external one, and external memory forces a full GC every
   * 64 MB (a full node's renders would add one every few renders).
   */
  finish(): string {
    const text = this.buffer.toString("utf8", 0, this.length);
    if (this.buffer.length <= KEPT_BYTES) kept = this.buffer;
    else keptLarge = new WeakRef(this.buffer);
    lastLength = this.length;
    return text;
  }

  /** A copy of what was written from `start` on: bytes to `chunk` again. */
  copyFrom(start: number): Uint8Array {
    return new Uint8Array(this.buffer.subarray(start, this.length));
  }

  /**
   * What `write` writes for `key` at `level` (a depth or indentation), written once per `memo`
   * and copied from then on.
   */
  repeated(memo: RepeatedBytes, key: string, level: number, write: () => void): void {
    const levels = getOrInsert(memo, key, newLevels);
    const kept = levels[level];
    if (kept !== undefined) {
      this.chunk(kept);
      return;
    }
    const start = this.length;
    write();
    levels[level] = this.copyFrom(start);
  }

  /** The bytes written so far (and spare room after them): valid until the next write, which may move them. */
  get bytes(): Uint8Array {
    return this.buffer;
  }

  /** `code`, an ASCII character, put in at `at`, the bytes written from there on moved up by one. */
  insertByte(at: number, code: number): void {
    if (this.length === this.buffer.length) this.grow(1);
    this.buffer.copyWithin(at + 1, at, this.length);
    this.buffer[at] = code;
    this.length++;
  }

  /** A copy of what was written from `start` to `end`, written again. */
  again(start: number, end: number): void {
    const size = end - start;
    if (this.length + size > this.buffer.length) this.grow(size);
    this.buffer.copyWithin(this.length, start, end);
    this.length += size;
  }

  /** Drops what was written after `length`. */
  rewind(length: number): void {
    this.length = length;
  }

  /** One ASCII character, by code. */
  byte(code: number): void {
    if (this.length === this.buffer.length) this.grow(1);
    this.buffer[this.length++] = code;
  }

  /** Bytes made ahead (a line start, a key), copied in one call: much faster than a byte at a time. */
  chunk(bytes: Uint8Array): void {
    if (this.length + bytes.length > this.buffer.length) this.grow(bytes.length);
    this.buffer.set(bytes, this.length);
    this.length += bytes.length;
  }

  /** `count` spaces. */
  spaces(count: number): void {
    if (this.length + count > this.buffer.length) this.grow(count);
    const buffer = this.buffer;
    for (let i = 0; i < count; i++) buffer[this.length++] = 0x20;
  }

  /** Any string, as UTF-8. */
  text(value: string): void {
    const size = value.length;
    if (size >= NATIVE_LENGTH) {
      this.encoded(value);
      return;
    }
    if (this.length + size > this.buffer.length) this.grow(size);
    const buffer = this.buffer;
    let at = this.length;
    for (let i = 0; i < size; i++) {
      const code = value.charCodeAt(i);
      if (code >= 0x80) {
        this.length = at;
        this.textFrom(value, i);
        return;
      }
      buffer[at++] = code;
    }
    this.length = at;
  }

  /**
   * A string as JSON's string literal, quotes included: `"`, `\` and control characters escaped
   * (`\n`, `\u001f`), and so is a lone surrogate, as `JSON.stringify` does.
   */
  jsonString(value: string): void {
    const size = value.length;
    if (size >= NATIVE_LENGTH && !MAY_NEED_JSON_ESCAPE.test(value)) {
      this.byte(0x22);
      this.encoded(value);
      this.byte(0x22);
      return;
    }
    if (this.length + size + 2 > this.buffer.length) this.grow(size + 2);
    const buffer = this.buffer;
    let at = this.length;
    buffer[at++] = 0x22;
    for (let i = 0; i < size; i++) {
      const code = value.charCodeAt(i);
      if (code < 0x20 || code === 0x22 || code === 0x5c || code >= 0x80) {
        this.length = at;
        this.jsonStringFrom(value, i);
        return;
      }
      buffer[at++] = code;
    }
    buffer[at++] = 0x22;
    this.length = at;
  }

  /** The rest of `jsonString` from `start` on: runs that need no escape as they are, escapes between them. */
  private jsonStringFrom(value: string, start: number): void {
    const size = value.length;
    let run = start;
    for (let i = start; i < size; i++) {
      const code = value.charCodeAt(i);
      if (code >= 0x20 && code !== 0x22 && code !== 0x5c && (code < 0xd800 || code > 0xdfff)) continue;
      if (code >= 0xd800 && code <= 0xdbff && i + 1 < size && isLowSurrogate(value.charCodeAt(i + 1))) {
        i++;
        continue;
      }
      if (run < i) this.text(value.slice(run, i));
      this.text(escapeOf(code));
      run = i + 1;
    }
    if (run < size) this.text(run === 0 ? value : value.slice(run));
    this.byte(0x22);
  }

  /** The rest of `value` from `start` on, which holds non-ASCII characters. */
  private textFrom(value: string, start: number): void {
    const size = value.length;
    // At most three bytes per UTF-16 unit (a surrogate pair's four bytes are two units).
    if (this.length + 3 * (size - start) > this.buffer.length) this.grow(3 * (size - start));
    const buffer = this.buffer;
    let at = this.length;
    for (let i = start; i < size; i++) {
      let code = value.charCodeAt(i);
      if (code < 0x80) buffer[at++] = code;
      else if (code < 0x800) {
        buffer[at++] = 0xc0 | (code >> 6);
        buffer[at++] = 0x80 | (code & 0x3f);
      } else {
        if (code >= 0xd800 && code <= 0xdfff) {
          const low = code <= 0xdbff && i + 1 < size ? value.charCodeAt(i + 1) : 0;
          if (isLowSurrogate(low)) {
            code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
            i++;
            buffer[at++] = 0xf0 | (code >> 18);
            buffer[at++] = 0x80 | ((code >> 12) & 0x3f);
            buffer[at++] = 0x80 | ((code >> 6) & 0x3f);
            buffer[at++] = 0x80 | (code & 0x3f);
            continue;
          }
          // A lone surrogate has no UTF-8 form: U+FFFD, as Buffer's encoder writes it.
          code = 0xfffd;
        }
        buffer[at++] = 0xe0 | (code >> 12);
        buffer[at++] = 0x80 | ((code >> 6) & 0x3f);
        buffer[at++] = 0x80 | (code & 0x3f);
      }
    }
    this.length = at;
  }

  /** A long string by Buffer's own UTF-8 encoder (a lone surrogate becomes U+FFFD there too, as in `textFrom`). */
  private encoded(value: string): void {
    const most = 3 * value.length;
    if (this.length + most > this.buffer.length) this.grow(most);
    this.length += this.buffer.write(value, this.length, "utf8");
  }

  private grow(needed: number): void {
    const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.length + needed));
    this.buffer.copy(grown, 0, 0, this.length);
    this.buffer = grown;
  }
}

/** A buffer for a text of about `expected` bytes: the kept one when it is still there and large enough. */
function largeBuffer(expected: number): Buffer {
  const reused = keptLarge?.deref();
  keptLarge = undefined;
  return reused !== undefined && reused.length >= expected ? reused : Buffer.allocUnsafe(expected + (expected >> 4));
}

/**
 * From this length on, a string is copied by Buffer's native encoder (`encoded`), and a JSON
 * string is checked for escapes by a regular expression first: a native copy and a native scan
 * beat the loop that reads and stores a character at a time; below it the calls cost more.
 */
const NATIVE_LENGTH = 32;

/**
 * Whether a string may print other than as it is in a JSON string: any character but those that
 * always print as they are, so a control character, a quote, a backslash, or a surrogate (JSON
 * escapes a lone one; a pair is checked again by character).
 */
const MAY_NEED_JSON_ESCAPE = /[^\u0020\u0021\u0023-\u005b\u005d-\ud7ff\ue000-\uffff]/;

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

const SHORT_ESCAPES: Readonly<Record<number, string>> = { 8: "\\b", 9: "\\t", 10: "\\n", 12: "\\f", 13: "\\r", 34: '\\"', 92: "\\\\" };

/** JSON's escape of a character it does not print as is. */
function escapeOf(code: number): string {
  return SHORT_ESCAPES[code] ?? `\\u${code.toString(16).padStart(4, "0")}`;
}

function newLevels(): Uint8Array[] {
  return [];
}

/** `TextBytes.repeated`'s memo: bytes by key, then level. Keep one per render, so nothing outlives it. */
export type RepeatedBytes = Map<string, Uint8Array[]>;
