/**
 * Block YAML as the `yaml` package prints it with `toYamlText`'s settings — byte for byte — but
 * written directly into a text buffer: the package's document model costs several times the
 * rendering itself on a full node. Messages are written with the field plans (each field's
 * `    name:` made once per indentation), plain values as they are. Each distinct scalar and key
 * that is not a plain word is still printed by the package (cached), so quoting follows its rules
 * exactly; a value whose form depends on its position in other ways than indentation (a folded or
 * quoted multi-line string, a very long key) throws `NotWritable`, and the whole value goes to
 * the package.
 */
import { stringify } from "yaml";
import type { Any } from "../../gen/google/protobuf/any.js";
import { BoundedCache } from "../util/bounded-cache.js";
import { type FieldPlan, isDefault, Kind, NotWritable, planOf, Shape, unpacked } from "./message-plan.js";
import { type RepeatedBytes, TextBytes } from "./text-bytes.js";
import { WrittenObjects } from "./written-objects.js";

/** `toYamlText`'s settings: no line folding, no anchors. */
export const YAML_OPTIONS = { lineWidth: 0, aliasDuplicateObjects: false } as const;

/** `value` as `stringify(value, YAML_OPTIONS)` prints it, or undefined when only the package can. */
export function blockYaml(value: unknown): string | undefined {
  const writer = new YamlWriter();
  try {
    writer.plain(value, Slot.Document, 0);
  } catch (error) {
    if (error instanceof NotWritable) return undefined;
    throw error;
  }
  return writer.out.finish();
}

type Plain = string | number | boolean | null;

/**
 * Where a value goes: the document itself, after `key:` of a mapping, or after the `- ` of a
 * sequence item. Each writer takes the indentation of that mapping's keys or of that dash.
 */
export enum Slot {
  Document,
  AfterKey,
  Item,
}

/**
 * A plain key's line starts (`keyLine`, by indentation) and, while its string values repeat, each
 * value's whole entry by place (a diagnostic's code, resource, service and pod cluster repeat across
 * thousands; its message never does).
 */
class PlainKey {
  readonly lines: Uint8Array[] = [];
  private readonly entries: Map<string, Uint8Array>[] = [];
  looked = 0;
  found = 0;

  /** The entries kept at `place` (an indentation, and whether on a dash's line), by value. */
  entriesAt(place: number): Map<string, Uint8Array> {
    let entries = this.entries[place];
    if (entries === undefined) {
      entries = new Map();
      this.entries[place] = entries;
    }
    return entries;
  }

  /**
   * Whether entries are still kept: for the first `ENTRY_PROBES` values, then while three in four
   * were met before. Keeping a value no entry repeats costs more than writing it (a copy and a
   * map entry), and a key that stops keeping stops for the render.
   */
  keepsEntries(): boolean {
    return this.looked < ENTRY_PROBES || 4 * this.found >= 3 * this.looked;
  }
}

const ENTRY_PROBES = 64;

/**
 * The YAML writer. A mapping prints each entry as `key:` then its value; a sequence each item as
 * `- ` then the item. After a key, a collection starts on the next line, indented two more
 * (empty: ` {}` / ` []` on the key's line); after a dash, its first entry or nested dash stays on
 * the dash's line (`- a: 1`, `- - x`). Every value ends its last line.
 */
export class YamlWriter {
  readonly out = new TextBytes();
  /** What is kept of maps' and plain objects' keys, by key. */
  private readonly plainKeys = new Map<string, PlainKey>();
  /** `typeEntry`'s bytes, by type URL and indentation. */
  private readonly typeEntries: RepeatedBytes = new Map();
  /** Messages and Anys written, by object: one met again at the same place is copied. */
  private readonly objects = new WrittenObjects();

  /** A message as an Any prints, as a mapping at `indent` whose first key, `"@type"`, is already placed. */
  typed(url: string, plan: readonly FieldPlan[], message: unknown, indent: number): void {
    this.typeEntry(url, indent);
    this.fields(plan, message as Record<string, unknown>, indent, false);
  }

  /**
   * `"@type": <url>` and its line break, in a mapping at `indent`: written once per type and
   * indentation, then copied (a node holds tens of thousands of Anys of a few types).
   */
  private typeEntry(url: string, indent: number): void {
    const out = this.out;
    out.repeated(this.typeEntries, url, indent, () => {
      out.text(this.keyName("@type", indent));
      out.byte(0x3a);
      this.string(url, Slot.AfterKey, indent);
    });
  }

  /** A message's fields as entries of a mapping at `indent`, the first on a dash's line when `inline`; how many. */
  private fields(plan: readonly FieldPlan[], record: Record<string, unknown>, indent: number, inline: boolean): number {
    const out = this.out;
    let count = 0;
    for (const field of plan) {
      const value = record[field.name];
      if (value === undefined || value === null) continue;
      if (field.shape === Shape.Singular) {
        if (field.omitDefault && isDefault(value)) continue;
        this.out.chunk(this.keyLine(field.yamlKeys, field.name, indent, inline && count === 0));
        count++;
        this.afterKey(field, value, indent);
      } else if (field.shape === Shape.List) {
        const items = value as readonly unknown[];
        if (items.length === 0) continue;
        this.out.chunk(this.keyLine(field.yamlKeys, field.name, indent, inline && count === 0));
        count++;
        out.byte(0x0a);
        for (const item of items) {
          out.chunk(dashAt(indent + 2));
          this.afterDash(field, item, indent + 2);
        }
      } else {
        const entries = value as Record<string, unknown>;
        const keys = Object.keys(entries);
        if (keys.length === 0) continue;
        this.out.chunk(this.keyLine(field.yamlKeys, field.name, indent, inline && count === 0));
        count++;
        out.byte(0x0a);
        for (const key of keys) {
          out.chunk(this.keyLine(this.plainKey(key).lines, key, indent + 2, false));
          this.afterKey(field, entries[key], indent + 2);
        }
      }
    }
    return count;
  }

  /** A leaf field's value (a scalar) in `slot`. */
  private leaf(field: FieldPlan, value: unknown, slot: Slot, indent: number): void {
    const leaf = field.leaf(value);
    if (typeof leaf === "string") this.string(leaf, slot, indent);
    else this.plain(leaf, slot, indent);
  }

  /** A field's value after its key, in a mapping at `indent`. */
  private afterKey(field: FieldPlan, value: unknown, indent: number): void {
    if (field.kind === Kind.Leaf) this.leaf(field, value, Slot.AfterKey, indent);
    // Places: even after a key, odd after a dash (the first entry goes on the dash's line).
    else this.objects.write(this.out, field, value as object, 2 * indent, this.objectAfterKey);
  }

  /** A message or Any after its key (`place`: twice the mapping's indentation). */
  private readonly objectAfterKey = (field: FieldPlan, value: object, place: number): void => {
    const indent = place >> 1;
    if (field.kind === Kind.Any) {
      const { typeName, message } = unpacked(value as Any);
      this.out.byte(0x0a);
      this.out.spaces(indent + 2);
      this.typed((value as Any).type_url ?? "", planOf(typeName), message, indent + 2);
    } else {
      field.nested ??= planOf(field.typeName);
      const start = this.out.length;
      this.out.byte(0x0a);
      if (this.fields(field.nested, value as Record<string, unknown>, indent + 2, false) === 0) {
        this.out.rewind(start);
        this.out.text(" {}\n");
      }
    }
  };

  /** A field's value after the dash at `dash`. */
  private afterDash(field: FieldPlan, value: unknown, dash: number): void {
    if (field.kind === Kind.Leaf) this.leaf(field, value, Slot.Item, dash);
    else this.objects.write(this.out, field, value as object, 2 * dash + 1, this.objectAfterDash);
  }

  /** A message or Any after its dash (`place`: twice the dash's indentation, plus one). */
  private readonly objectAfterDash = (field: FieldPlan, value: object, place: number): void => {
    const dash = place >> 1;
    if (field.kind === Kind.Any) {
      const { typeName, message } = unpacked(value as Any);
      this.typed((value as Any).type_url ?? "", planOf(typeName), message, dash + 2);
    } else {
      field.nested ??= planOf(field.typeName);
      if (this.fields(field.nested, value as Record<string, unknown>, dash + 2, true) === 0) this.out.text("{}\n");
    }
  };

  /**
   * `    key:` in a mapping at `indent`, or `key:` on a dash's line when `inline`, as UTF-8 from
   * `lines` (a field's or a plain key's, by indentation), made on first use.
   */
  private keyLine(lines: Uint8Array[], key: string, indent: number, inline: boolean): Uint8Array {
    const at = inline ? 0 : (indent >> 1) + 1;
    let line = lines[at];
    if (line === undefined) {
      line = Buffer.from(inline ? `${this.keyName(key, indent)}:` : `${" ".repeat(indent)}${this.keyName(key, indent)}:`);
      lines[at] = line;
    }
    return line;
  }

  private plainKey(key: string): PlainKey {
    let plainKey = this.plainKeys.get(key);
    if (plainKey === undefined) {
      plainKey = new PlainKey();
      this.plainKeys.set(key, plainKey);
    }
    return plainKey;
  }

  /**
   * `key: value` in a plain object's mapping at `indent` (on a dash's line when `inline`): the
   * bytes written for the same value there before, copied while the key's values repeat.
   */
  private stringEntry(plainKey: PlainKey, key: string, value: string, indent: number, inline: boolean): void {
    const out = this.out;
    if (!plainKey.keepsEntries()) {
      out.chunk(this.keyLine(plainKey.lines, key, indent, inline));
      this.string(value, Slot.AfterKey, indent);
      return;
    }
    // By indentation too when inline: a block scalar's lines are indented by where its key is.
    const entries = plainKey.entriesAt(2 * indent + (inline ? 1 : 0));
    const kept = entries.get(value);
    plainKey.looked++;
    if (kept !== undefined) {
      plainKey.found++;
      out.chunk(kept);
      return;
    }
    const start = out.length;
    out.chunk(this.keyLine(plainKey.lines, key, indent, inline));
    this.string(value, Slot.AfterKey, indent);
    entries.set(value, out.copyFrom(start));
  }

  /** A plain value (a Struct, a wrapper's or scalar's value, a diagnostic) in `slot`. */
  plain(value: unknown, slot: Slot, indent: number): void {
    if (typeof value === "string") this.string(value, slot, indent);
    else if (typeof value === "number") {
      if (Number.isSafeInteger(value)) this.plainScalar(String(value), slot);
      else this.scalar(value, slot, indent);
    } else if (typeof value === "boolean" || value === null) this.scalar(value, slot, indent);
    else if (Array.isArray(value)) this.plainArray(value, slot, indent);
    else if (typeof value === "object") this.plainObject(value, slot, indent);
    else throw new NotWritable();
  }

  private plainArray(items: readonly unknown[], slot: Slot, indent: number): void {
    const out = this.out;
    if (items.length === 0) {
      out.text(slot === Slot.AfterKey ? " []\n" : "[]\n");
      return;
    }
    if (slot === Slot.AfterKey) out.byte(0x0a);
    const dash = slot === Slot.Document ? 0 : indent + 2;
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      if (item === undefined) throw new NotWritable();
      // The first item after a dash goes on that dash's line (`- - x`).
      out.chunk(dashAt(i > 0 || slot !== Slot.Item ? dash : 0));
      this.plain(item, Slot.Item, dash);
    }
  }

  private plainObject(value: object, slot: Slot, indent: number): void {
    const prototype = Object.getPrototypeOf(value);
    if (prototype !== Object.prototype && prototype !== null) throw new NotWritable();
    const out = this.out;
    const start = out.length;
    if (slot === Slot.AfterKey) out.byte(0x0a);
    const entries = slot === Slot.Document ? 0 : indent + 2;
    const record = value as Record<string, unknown>;
    let count = 0;
    for (const key of Object.keys(record)) {
      const child = record[key];
      if (child === undefined) continue;
      const inline = count++ === 0 && slot === Slot.Item;
      const plainKey = this.plainKey(key);
      if (typeof child === "string") this.stringEntry(plainKey, key, child, entries, inline);
      else {
        out.chunk(this.keyLine(plainKey.lines, key, entries, inline));
        this.plain(child, Slot.AfterKey, entries);
      }
    }
    if (count === 0) {
      out.rewind(start);
      out.text(slot === Slot.AfterKey ? " {}\n" : "{}\n");
    }
  }

  /**
   * A string in `slot`: plain or double-quoted when that is certain, else as the package prints it.
   * Written first and its form read from the bytes written (a pass over bytes is faster than one
   * over characters): a quote goes in front of a quoted one, and one only the package prints is
   * taken back.
   */
  private string(value: string, slot: Slot, indent: number): void {
    if (slot === Slot.Document) throw new NotWritable();
    const out = this.out;
    const start = out.length;
    if (slot === Slot.AfterKey) out.byte(0x20);
    const text = out.length;
    out.text(value);
    const form = valueForm(out.bytes, text, out.length, value);
    if (form === Form.Plain) out.byte(0x0a);
    else if (form === Form.Quoted) {
      out.insertByte(text, 0x22);
      out.byte(0x22);
      out.byte(0x0a);
    } else {
      out.rewind(start);
      this.scalar(value, slot, indent);
    }
  }

  /** A scalar every printer leaves as is. */
  private plainScalar(text: string, slot: Slot): void {
    if (slot === Slot.Document) throw new NotWritable();
    if (slot === Slot.AfterKey) this.out.byte(0x20);
    this.out.text(text);
    this.out.byte(0x0a);
  }

  /**
   * The package's own form of a scalar after a key or dash. A block scalar (`|`) is printed
   * after a key or dash at column 0, so its lines are moved right by the key's or dash's
   * indentation.
   */
  private scalar(value: Plain, slot: Slot, indent: number): void {
    if (slot === Slot.Document) throw new NotWritable();
    const afterKey = slot === Slot.AfterKey;
    let text = printedForm(afterKey ? PRINTED.afterKey : PRINTED.item, value, () => {
      const printed = stringify(afterKey ? new Map([["k", value]]) : [value], YAML_OPTIONS).slice(afterKey ? 3 : 2, -1);
      if (printed.includes("\n") && !/^\|[0-9+-]*\n/.test(printed)) throw new NotWritable();
      return printed;
    });
    // Blank lines of a block scalar carry no indentation.
    if (indent > 0 && text.includes("\n")) text = text.replace(/\n(?=[^\n])/g, `\n${" ".repeat(indent)}`);
    if (afterKey) this.out.byte(0x20);
    this.out.text(text);
    this.out.byte(0x0a);
  }

  /**
   * A key as the package prints it in a mapping at `indent`: as it is when a plain word. Only at
   * column 0 can a key read as a document marker (`---`), so keys there are printed on their own.
   */
  keyName(key: string, indent: number): string {
    if (isPlainWord(key)) return key;
    return printedForm(indent === 0 ? PRINTED.documentKey : PRINTED.nestedKey, key, () => {
      const printed = stringify(indent === 0 ? new Map([[key, 0]]) : new Map([["k", new Map([[key, 0]])]]), YAML_OPTIONS);
      const prefix = indent === 0 ? "" : "k:\n  ";
      if (!printed.startsWith(prefix) || !printed.endsWith(": 0\n") || printed.startsWith("? ", prefix.length)) throw new NotWritable();
      const text = printed.slice(prefix.length, -4);
      if (text.includes("\n")) throw new NotWritable();
      return text;
    });
  }
}

/** `- ` after `indent` spaces, made on first use. */
function dashAt(indent: number): Uint8Array {
  let dash = DASHES[indent];
  if (dash === undefined) {
    dash = Buffer.from(`${" ".repeat(indent)}- `);
    DASHES[indent] = dash;
  }
  return dash;
}

const DASHES: Uint8Array[] = [];

/**
 * The package's forms of the scalars and keys it prints (about 300 distinct in a full node, the
 * same from one render to the next), kept across renders: short texts only, two generations of at
 * most 4,096 each.
 */
const PRINTED = {
  afterKey: new BoundedCache<Plain, string>(4096),
  item: new BoundedCache<Plain, string>(4096),
  documentKey: new BoundedCache<string, string>(4096),
  nestedKey: new BoundedCache<string, string>(4096),
};
const PRINTED_LENGTH = 256;

function printedForm<K>(cache: BoundedCache<K, string>, key: K, print: () => string): string {
  return typeof key === "string" && key.length > PRINTED_LENGTH ? print() : cache.get(key, print);
}

const RESERVED_WORDS = new Set(
  ["true", "false", "null", "yes", "no", "on", "off", "y", "n"].flatMap((word) => [word, word.toUpperCase(), word[0]!.toUpperCase() + word.slice(1)]),
);

/**
 * Strings any YAML printer leaves plain: a letter or underscore, then letters, digits and `_./:-`,
 * not ending in `:`, and no word a YAML 1.1 or 1.2 schema reads as a boolean or null. Anything
 * else is printed by the package.
 */
function isPlainWord(text: string): boolean {
  const length = text.length;
  if (length === 0 || !isWordStart(text.charCodeAt(0))) return false;
  for (let i = 1; i < length; i++) {
    if (!isWordChar(text.charCodeAt(i))) return false;
  }
  return (length === 1 || text.charCodeAt(length - 1) !== 0x3a) && !(length <= 5 && RESERVED_WORDS.has(text));
}

enum Form {
  /** Only the package knows. */
  Unknown,
  /** As is. */
  Plain,
  /** In double quotes, nothing escaped. */
  Quoted,
}

/**
 * How the package prints a string value, decided without it where that is certain, from its UTF-8
 * bytes (`text` itself only for YAML's reserved words). Only one line of printable characters
 * without `"` or `\` qualifies (so quoting means double quotes, nothing escaped); one starting with
 * `-`, `?`, `.` or `%` (document markers, directives) is left to the package. Quoted: a YAML
 * indicator first, `: ` or ` #` inside, a space or colon last, or only digits (an integer). Plain:
 * a plain word, or a letter, digit or underscore first and no reason to quote, with a space or two
 * dots — every YAML 1.2 form of null, a boolean or a number has neither (so an address such as
 * `10.0.0.1:8080` stays plain).
 */
function valueForm(bytes: Uint8Array, start: number, end: number, text: string): Form {
  const length = end - start;
  if (length === 0) return Form.Unknown;
  const first = bytes[start]!;
  if (first === 0x2d || first === 0x3f || first === 0x2e || first === 0x25) return Form.Unknown;
  // One pass, a table lookup per byte: whether it is a plain word (`isPlainWord`), and the counts
  // the other rules need.
  let word = isWordStart(first);
  let spaces = 0;
  let dots = 0;
  let digits = 0;
  let indicator = isIndicator(first);
  let previous = 0;
  for (let i = start; i < end; i++) {
    const byte = bytes[i]!;
    const kind = byte < 0x80 ? CHARS[byte]! : nonAsciiKind(bytes, i);
    if (kind === Char.Dot) dots++;
    else if (kind === Char.Digit) digits++;
    else if (kind !== Char.Word) {
      if (kind === Char.Unsafe) return Form.Unknown;
      word = false;
      if (kind === Char.Space) {
        if (previous === 0x3a) indicator = true;
        spaces++;
      } else if (kind === Char.Hash && previous === 0x20) indicator = true;
    }
    previous = byte;
  }
  if (word && (length === 1 || previous !== 0x3a) && !(length <= 5 && RESERVED_WORDS.has(text))) return Form.Plain;
  if (indicator || previous === 0x20 || previous === 0x3a || digits === length) return Form.Quoted;
  if (!isWordStart(first) && !isDigit(first)) return Form.Unknown;
  return spaces > 0 || dots > 1 ? Form.Plain : Form.Unknown;
}

/**
 * `Char` of a byte of a non-ASCII character (a lead or continuation byte): printable text, unless
 * its lead byte starts a range holding characters a YAML printer may escape or quote — U+0080–U+00BF
 * (C1 controls), U+2000–U+203F (the line and paragraph separators), U+D000–U+DFFF, U+F000–U+FFFF
 * (the byte-order mark; U+FFFD, which Buffer's encoder writes for a lone surrogate) and every
 * character beyond U+FFFF (a surrogate pair in the string). Those, printable or not, are left to
 * the package.
 */
function nonAsciiKind(bytes: Uint8Array, at: number): Char {
  const byte = bytes[at]!;
  return byte === 0xc2 || byte === 0xed || byte >= 0xef || (byte === 0xe2 && bytes[at + 1] === 0x80) ? Char.Unsafe : Char.Text;
}

/** What `valueForm` tells apart in a character. */
enum Char {
  /** A word character (`isWordChar`) other than a dot or digit. */
  Word,
  Dot,
  Digit,
  Space,
  Hash,
  /** Any other printable character, without `"` or `\`. */
  Text,
  /** A character only the package prints (not printable, `"` or `\`). */
  Unsafe,
}

/** `Char` of each ASCII character. */
const CHARS = Uint8Array.from({ length: 0x80 }, (_, code) => {
  if (code === 0x2e) return Char.Dot;
  if (isDigit(code)) return Char.Digit;
  if (isWordChar(code)) return Char.Word;
  if (code === 0x20) return Char.Space;
  if (code === 0x23) return Char.Hash;
  return isPrintable(code) && code !== 0x22 && code !== 0x5c ? Char.Text : Char.Unsafe;
});

/** A character that YAML reads as an indicator when a plain scalar starts with it. */
function isIndicator(code: number): boolean {
  return code < 0x80 && INDICATORS[code] === 1;
}

/** 1 at the code of each indicator character (a table: this runs once per string written). */
const INDICATORS = Uint8Array.from({ length: 0x80 }, (_, code) => (" ,[]{}#&*!|>'@`".includes(String.fromCharCode(code)) ? 1 : 0));

/** ASCII characters the package prints as they are, in any style (no control character). */
function isPrintable(code: number): boolean {
  return code >= 0x20 && code < 0x7f;
}

function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

/** `[A-Za-z_]` */
function isWordStart(code: number): boolean {
  return (code >= 0x61 && code <= 0x7a) || (code >= 0x41 && code <= 0x5a) || code === 0x5f;
}

/** `[A-Za-z0-9_./:-]` */
function isWordChar(code: number): boolean {
  return isWordStart(code) || (code >= 0x2d && code <= 0x3a);
}
