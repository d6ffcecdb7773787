/**
 * Block YAML as the `yaml` package prints it with `toYamlText`'s settings — byte for byte — but
 * written directly, piece by piece, into bytes: the package's document model costs several times
 * the rendering itself on a full node. Each distinct scalar and key that is not a plain word is
 * still printed by the package (cached), so quoting follows its rules exactly; a value whose form
 * depends on its position in other ways than indentation (a folded or quoted multi-line string,
 * a very long key) hands the whole value back to the package.
 */
import { stringify } from "yaml";
import { TextBytes } from "./text-bytes.js";
import { NotWritable, type TextSink, writePlain } from "./text-walk.js";

/** `toYamlText`'s settings: no line folding, no anchors. */
export const YAML_OPTIONS = { lineWidth: 0, aliasDuplicateObjects: false } as const;

/** `value` as `stringify(value, YAML_OPTIONS)` prints it, or undefined when only the package can. */
export function blockYaml(value: unknown): string | undefined {
  const out = new YamlText();
  try {
    writePlain(value, out);
  } catch (error) {
    if (error instanceof NotWritable) return undefined;
    throw error;
  }
  return out.finish();
}

type Plain = string | number | boolean | null;

/**
 * Where the next value goes: the document itself, after `key:` of a mapping indented by `indent`,
 * or after the `- ` of a sequence item whose content is indented by `indent`.
 */
enum Slot {
  Document,
  AfterKey,
  Item,
}

enum Kind {
  Mapping,
  Sequence,
}

/**
 * The YAML sink. A mapping prints each entry as `key:` then its value; a sequence each item as
 * `- ` then the item. After a key, a collection starts on the next line, indented two more
 * (empty: ` {}` / ` []` on the key's line); after a dash, its first entry or nested dash stays on
 * the dash's line (`- a: 1`, `- - x`).
 */
export class YamlText implements TextSink {
  private readonly out = new TextBytes();
  private readonly values = new Map<Plain, string>();
  private readonly items = new Map<Plain, string>();
  private readonly keys = new Map<string, string>();
  /** Per open collection: its kind, its entries' indentation, whether it was opened after a key, its entry count. */
  private readonly kinds: Kind[] = [];
  private readonly indents: number[] = [];
  private readonly afterKey: boolean[] = [];
  private readonly counts: number[] = [];
  private depth = 0;

  finish(): string {
    return this.out.finish();
  }

  beginObject(): void {
    this.open(Kind.Mapping);
  }

  key(name: string): void {
    this.entry();
    if (isPlainWord(name)) this.out.text(name);
    else this.out.text(this.keyText(name));
    this.out.byte(0x3a);
  }

  endObject(): void {
    this.close("{}\n");
  }

  beginArray(): void {
    this.open(Kind.Sequence);
  }

  item(): void {
    this.entry();
    this.out.byte(0x2d);
    this.out.byte(0x20);
  }

  endArray(): void {
    this.close("[]\n");
  }

  string(value: string): void {
    const form = valueForm(value);
    if (form === Form.Plain) this.plainScalar(value);
    else if (form === Form.Quoted) this.quotedScalar(value);
    else this.scalar(value);
  }

  number(value: number): void {
    if (Number.isSafeInteger(value)) this.plainScalar(String(value));
    else this.scalar(value);
  }

  boolean(value: boolean): void {
    this.scalar(value);
  }

  null(): void {
    this.scalar(null);
  }

  private slot(): Slot {
    if (this.depth === 0) return Slot.Document;
    return this.kinds[this.depth - 1] === Kind.Mapping ? Slot.AfterKey : Slot.Item;
  }

  /** The indentation of the value in the current slot: the mapping's, or the item's content. */
  private slotIndent(): number {
    const top = this.depth - 1;
    return this.kinds[top] === Kind.Mapping ? this.indents[top]! : this.indents[top]! + 2;
  }

  private open(kind: Kind): void {
    const slot = this.slot();
    const indent = slot === Slot.Document ? 0 : slot === Slot.AfterKey ? this.slotIndent() + 2 : this.slotIndent();
    const at = this.depth++;
    this.kinds[at] = kind;
    this.indents[at] = indent;
    this.afterKey[at] = slot === Slot.AfterKey;
    this.counts[at] = 0;
  }

  /** Before each key or dash: the line break after a key, then the indentation (none for an item's first entry). */
  private entry(): void {
    const top = this.depth - 1;
    const first = this.counts[top] === 0;
    this.counts[top]!++;
    if (first && this.afterKey[top]) this.out.byte(0x0a);
    const inline = first && this.depth > 1 && this.kinds[top - 1] === Kind.Sequence;
    if (!inline) this.out.spaces(this.indents[top]!);
  }

  private close(empty: string): void {
    const top = --this.depth;
    if (this.counts[top] === 0) {
      if (this.afterKey[top]) this.out.byte(0x20);
      this.out.text(empty);
    }
  }

  /** A scalar every printer leaves as is. */
  private plainScalar(text: string): void {
    const slot = this.slot();
    if (slot === Slot.Document) throw new NotWritable();
    if (slot === Slot.AfterKey) this.out.byte(0x20);
    this.out.text(text);
    this.out.byte(0x0a);
  }

  private quotedScalar(text: string): void {
    const slot = this.slot();
    if (slot === Slot.Document) throw new NotWritable();
    if (slot === Slot.AfterKey) this.out.byte(0x20);
    this.out.byte(0x22);
    this.out.text(text);
    this.out.byte(0x22);
    this.out.byte(0x0a);
  }

  /**
   * The package's own form of a scalar after a key or dash. A block scalar (`|`) is printed
   * after a key or dash at column 0, so its lines are moved right by the slot's indentation.
   */
  private scalar(value: Plain): void {
    const slot = this.slot();
    if (slot === Slot.Document) throw new NotWritable();
    const afterKey = slot === Slot.AfterKey;
    const cache = afterKey ? this.values : this.items;
    let text = cache.get(value);
    if (text === undefined) {
      const printed = stringify(afterKey ? new Map([["k", value]]) : [value], YAML_OPTIONS);
      text = printed.slice(afterKey ? 3 : 2, -1);
      if (text.includes("\n") && !/^\|[0-9+-]*\n/.test(text)) throw new NotWritable();
      cache.set(value, text);
    }
    const base = afterKey ? this.slotIndent() : this.slotIndent() - 2;
    // Blank lines of a block scalar carry no indentation.
    if (base > 0 && text.includes("\n")) text = text.replace(/\n(?=[^\n])/g, `\n${" ".repeat(base)}`);
    if (afterKey) this.out.byte(0x20);
    this.out.text(text);
    this.out.byte(0x0a);
  }

  private keyText(key: string): string {
    let text = this.keys.get(key);
    if (text === undefined) {
      const printed = stringify(new Map([[key, 0]]), YAML_OPTIONS);
      if (!printed.endsWith(": 0\n") || printed.startsWith("? ")) throw new NotWritable();
      text = printed.slice(0, -4);
      if (text.includes("\n")) throw new NotWritable();
      this.keys.set(key, text);
    }
    return text;
  }
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
 * How the package prints a string value, decided without it where that is certain. Only one line
 * of printable characters without `"` or `\` qualifies (so quoting means double quotes, nothing
 * escaped); one starting with `-`, `?`, `.` or `%` (document markers, directives) is left to the
 * package. Quoted: a YAML indicator first, `: ` or ` #` inside, a space or colon last, or only
 * digits (an integer). Plain: a plain word, or a letter, digit or underscore first and no reason
 * to quote, with a space or two dots — every YAML 1.2 form of null, a boolean or a number has
 * neither (so an address such as `10.0.0.1:8080` stays plain).
 */
function valueForm(text: string): Form {
  if (isPlainWord(text)) return Form.Plain;
  const length = text.length;
  if (length === 0) return Form.Unknown;
  const first = text.charCodeAt(0);
  if (first === 0x2d || first === 0x3f || first === 0x2e || first === 0x25) return Form.Unknown;
  let spaces = 0;
  let dots = 0;
  let digits = 0;
  let indicator = isIndicator(first);
  let previous = 0;
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i);
    if (!isPrintable(code) || code === 0x22 || code === 0x5c) return Form.Unknown;
    if (code === 0x20) {
      if (previous === 0x3a) indicator = true;
      spaces++;
    } else if (code === 0x23) {
      if (previous === 0x20) indicator = true;
    } else if (code === 0x2e) dots++;
    else if (isDigit(code)) digits++;
    previous = code;
  }
  if (indicator || previous === 0x20 || previous === 0x3a || digits === length) return Form.Quoted;
  if (!isWordStart(first) && !isDigit(first)) return Form.Unknown;
  return spaces > 0 || dots > 1 ? Form.Plain : Form.Unknown;
}

/** A character that YAML reads as an indicator when a plain scalar starts with it. */
function isIndicator(code: number): boolean {
  return INDICATORS.has(code);
}

const INDICATORS: ReadonlySet<number> = new Set(Array.from(" ,[]{}#&*!|>'@`", (char) => char.charCodeAt(0)));

/** Characters the package prints as they are, in any style (no control, line-separator or lone surrogate). */
function isPrintable(code: number): boolean {
  return code >= 0x20 && (code < 0x7f || code > 0xa0) && (code < 0xd800 || code > 0xdfff) && code !== 0x2028 && code !== 0x2029 && code !== 0xfeff;
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
