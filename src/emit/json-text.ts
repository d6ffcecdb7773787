/**
 * Indented JSON as `JSON.stringify(value, null, 2)` prints it — byte for byte — written straight
 * from the messages into a text buffer with the field plans, so a full node's JSON needs no value
 * tree first. Each field's `"name": ` line start is made once per depth. Plain values (Structs,
 * wrappers' and scalars' values) are written as they are; one only `JSON.stringify` handles
 * exactly (a `toJSON`, a function, a class instance, an undefined item) throws `NotWritable`.
 */
import type { Any } from "../../gen/google/protobuf/any.js";
import { type FieldPlan, isDefault, Kind, NotWritable, planOf, Shape, unpacked } from "./message-plan.js";
import { type RepeatedBytes, TextBytes } from "./text-bytes.js";
import { WrittenObjects } from "./written-objects.js";

export class JsonWriter {
  readonly out = new TextBytes();
  /** Entry starts of plain objects' keys (`keyLine`), by key. */
  private readonly plainKeys = new Map<string, Uint8Array[]>();
  /** `typeEntry`'s bytes, by type URL and depth. */
  private readonly typeEntries: RepeatedBytes = new Map();
  /** Messages and Anys written, by object: `opened` copies the text of one met again. */
  private readonly objects = new WrittenObjects();

  /** A message as an Any prints: `{"@type": url, ...fields}`, its entries at `depth` + 1. */
  typed(url: string, plan: readonly FieldPlan[], message: unknown, depth: number): void {
    this.out.byte(0x7b);
    this.typedEntries(url, plan, message, depth);
  }

  /** `typed` after its `{`. */
  private typedEntries(url: string, plan: readonly FieldPlan[], message: unknown, depth: number): void {
    const out = this.out;
    this.typeEntry(url, depth);
    this.fields(plan, message as Record<string, unknown>, depth, 1);
    out.chunk(closing(depth, "}"));
  }

  /**
   * `"@type": "<url>"`, the first entry of an Any's object at `depth`: written once per type and
   * depth, then copied (a node holds tens of thousands of Anys of a few types).
   */
  private typeEntry(url: string, depth: number): void {
    const out = this.out;
    out.repeated(this.typeEntries, url, depth, () => {
      out.chunk(keyLine(TYPE_KEYS, "@type", "", depth, 0));
      out.jsonString(url);
    });
  }

  /** A plain JSON value (a Struct, a wrapper's or scalar's value) at `depth`. */
  plain(value: unknown, depth: number): void {
    const out = this.out;
    if (typeof value === "string") out.jsonString(value);
    else if (typeof value === "number") out.text(Number.isFinite(value) ? String(value) : "null");
    else if (typeof value === "boolean") out.text(value ? "true" : "false");
    else if (value === null) out.text("null");
    else if (typeof value !== "object" || typeof (value as { toJSON?: unknown }).toJSON === "function") throw new NotWritable();
    else if (Array.isArray(value)) this.plainArray(value, depth);
    else this.plainObject(value, depth);
  }

  private plainArray(items: readonly unknown[], depth: number): void {
    const out = this.out;
    const count = items.length;
    if (count === 0) {
      out.text("[]");
      return;
    }
    out.byte(0x5b);
    for (let i = 0; i < count; i++) {
      const item = items[i];
      if (item === undefined) throw new NotWritable();
      out.chunk(lineStart(depth + 1, i, ""));
      this.plain(item, depth + 1);
    }
    out.chunk(closing(depth, "]"));
  }

  private plainObject(value: object, depth: number): void {
    const prototype = Object.getPrototypeOf(value);
    if (prototype !== Object.prototype && prototype !== null) throw new NotWritable();
    const out = this.out;
    out.byte(0x7b);
    const record = value as Record<string, unknown>;
    let count = 0;
    for (const key of Object.keys(record)) {
      const child = record[key];
      if (child === undefined) continue;
      let lines = this.plainKeys.get(key);
      if (lines === undefined) {
        lines = [];
        this.plainKeys.set(key, lines);
      }
      out.chunk(keyLine(lines, key, "", depth, count++));
      this.plain(child, depth + 1);
    }
    this.endObject(depth, count);
  }

  /**
   * A message's fields as entries of the object at `depth`, after `count` entries; the new count.
   * A field's key line ends with the bracket its value opens (`"name": {`, `"name": [`), and so
   * does a list item's line start: one copy instead of two.
   */
  private fields(plan: readonly FieldPlan[], record: Record<string, unknown>, depth: number, count: number): number {
    const out = this.out;
    for (const field of plan) {
      const value = record[field.name];
      if (value === undefined || value === null) continue;
      if (field.shape === Shape.Singular) {
        if (field.omitDefault && isDefault(value)) continue;
        out.chunk(keyLine(field.jsonKeys, field.name, opening(field), depth, count++));
        this.opened(field, value, depth + 1);
      } else if (field.shape === Shape.List) {
        const items = value as readonly unknown[];
        if (items.length === 0) continue;
        out.chunk(keyLine(field.jsonKeys, field.name, "[", depth, count++));
        const open = opening(field);
        for (let i = 0; i < items.length; i++) {
          out.chunk(lineStart(depth + 2, i, open));
          this.opened(field, items[i], depth + 2);
        }
        out.chunk(closing(depth + 1, "]"));
      } else {
        const entries = value as Record<string, unknown>;
        const keys = Object.keys(entries);
        if (keys.length === 0) continue;
        out.chunk(keyLine(field.jsonKeys, field.name, "{", depth, count++));
        for (let i = 0; i < keys.length; i++) {
          out.chunk(lineStart(depth + 2, i, ""));
          out.jsonString(keys[i]!);
          out.text(field.kind === Kind.Leaf ? ": " : ": {");
          this.opened(field, entries[keys[i]!], depth + 2);
        }
        out.chunk(closing(depth + 1, "}"));
      }
    }
    return count;
  }

  /** A field's value at `depth`; a message's or Any's `{` is already written. */
  private opened(field: FieldPlan, value: unknown, depth: number): void {
    if (field.kind === Kind.Leaf) {
      const leaf = field.leaf(value);
      if (typeof leaf === "string") this.out.jsonString(leaf);
      else this.plain(leaf, depth);
      return;
    }
    this.objects.write(this.out, field, value as object, depth, this.object);
  }

  /** A message's or Any's object after its `{`, at `depth`. */
  private readonly object = (field: FieldPlan, value: object, depth: number): void => {
    if (field.kind === Kind.Any) {
      const { typeName, message } = unpacked(value as Any);
      this.typedEntries((value as Any).type_url ?? "", planOf(typeName), message, depth);
    } else {
      field.nested ??= planOf(field.typeName);
      this.endObject(depth, this.fields(field.nested, value as Record<string, unknown>, depth, 0));
    }
  };

  /** The `}` of an object at `depth` with `count` entries: right after its `{` when it has none. */
  private endObject(depth: number, count: number): void {
    if (count === 0) this.out.byte(0x7d);
    else this.out.chunk(closing(depth, "}"));
  }
}

/** What a singular field's value opens with: `{` for a message or an Any, nothing for a leaf. */
function opening(field: FieldPlan): "" | "{" {
  return field.kind === Kind.Leaf ? "" : "{";
}

/**
 * From `lines` (a field's or a plain key's, made on first use): the UTF-8 start of entry `index`
 * of an object at `depth` — `,` after an earlier entry, the line break and indentation,
 * `"name": ` — then `open`, the bracket the value opens with (the same for every use of `lines`).
 */
function keyLine(lines: Uint8Array[], name: string, open: string, depth: number, index: number): Uint8Array {
  const at = 2 * depth + (index === 0 ? 1 : 0);
  let line = lines[at];
  if (line === undefined) {
    line = Buffer.from(`${index === 0 ? "" : ","}\n${" ".repeat(2 * depth + 2)}${JSON.stringify(name)}: ${open}`);
    lines[at] = line;
  }
  return line;
}

/** `,` after an earlier item (`index` > 0), a line break, the indentation of `depth`, then `open` (`{` or nothing). */
function lineStart(depth: number, index: number, open: "" | "{"): Uint8Array {
  const starts = open === "" ? LINE_STARTS : OPENING_LINE_STARTS;
  const at = 2 * depth + (index === 0 ? 1 : 0);
  let line = starts[at];
  if (line === undefined) {
    line = Buffer.from(`${index === 0 ? "" : ","}\n${" ".repeat(2 * depth)}${open}`);
    starts[at] = line;
  }
  return line;
}

/** A line break, the indentation of `depth` and `bracket`: the end of a collection that is not empty. */
function closing(depth: number, bracket: "}" | "]"): Uint8Array {
  const closings = bracket === "}" ? OBJECT_CLOSINGS : ARRAY_CLOSINGS;
  let line = closings[depth];
  if (line === undefined) {
    line = Buffer.from(`\n${" ".repeat(2 * depth)}${bracket}`);
    closings[depth] = line;
  }
  return line;
}

const LINE_STARTS: Uint8Array[] = [];
const OPENING_LINE_STARTS: Uint8Array[] = [];
const OBJECT_CLOSINGS: Uint8Array[] = [];
const ARRAY_CLOSINGS: Uint8Array[] = [];
/** An Any's first entry, `"@type": `, at each depth. */
const TYPE_KEYS: Uint8Array[] = [];
