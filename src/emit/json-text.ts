/**
 * JSON text as `JSON.stringify(value, null, 2)` prints it, byte for byte, written piece by piece
 * from `writeResult` into bytes — without the value tree `JSON.stringify` needs.
 */
import { TextBytes } from "./text-bytes.js";
import { type TextSink, writePlain } from "./text-walk.js";

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

export class JsonText implements TextSink {
  private readonly out = new TextBytes();
  /** Per open object or array: how many entries it has so far. */
  private readonly counts: number[] = [];
  private depth = 0;

  /** The text, ending in a newline. */
  finish(): string {
    this.out.byte(0x0a);
    return this.out.finish();
  }

  beginObject(): void {
    this.open(0x7b);
  }

  key(name: string): void {
    this.item();
    this.quoted(name);
    this.out.byte(0x3a);
    this.out.byte(0x20);
  }

  endObject(): void {
    this.close(0x7d);
  }

  beginArray(): void {
    this.open(0x5b);
  }

  item(): void {
    if (this.counts[this.depth - 1]!++ > 0) this.out.byte(0x2c);
    this.out.byte(0x0a);
    this.out.spaces(this.depth * 2);
  }

  endArray(): void {
    this.close(0x5d);
  }

  string(value: string): void {
    this.quoted(value);
  }

  number(value: number): void {
    this.out.text(Number.isFinite(value) ? String(value) : "null");
  }

  boolean(value: boolean): void {
    this.out.text(value ? "true" : "false");
  }

  null(): void {
    this.out.text("null");
  }

  plain(value: unknown): void {
    writePlain(value, this);
  }

  private open(bracket: number): void {
    this.out.byte(bracket);
    this.counts[this.depth++] = 0;
  }

  private close(bracket: number): void {
    if (this.counts[--this.depth]! > 0) {
      this.out.byte(0x0a);
      this.out.spaces(this.depth * 2);
    }
    this.out.byte(bracket);
  }

  /** A JSON string: as is when nothing in it needs escaping, else as `JSON.stringify` escapes it. */
  private quoted(value: string): void {
    for (let i = 0; i < value.length; i++) {
      const code = value.charCodeAt(i);
      if (code < 0x20 || code === QUOTE || code === BACKSLASH || (code >= 0xd800 && code <= 0xdfff)) {
        this.out.text(JSON.stringify(value));
        return;
      }
    }
    this.out.byte(QUOTE);
    this.out.text(value);
    this.out.byte(QUOTE);
  }
}
