/**
 * Indented JSON as `JSON.stringify(value, null, 2)` prints it — byte for byte — written straight
 * from the messages into a text buffer with the field plans, so a full node's JSON needs no value
 * tree first. Each field's `"name": ` line start is made once per depth. Plain values (Structs,
 * wrappers' and scalars' values) are written as they are; one only `JSON.stringify` handles
 * exactly (a `toJSON`, a function, a class instance, an undefined item) throws `NotWritable`.
 */
import type { Any } from "../../gen/google/protobuf/any.js";
import { type FieldPlan, isDefault, Kind, NotWritable, planOf, Shape, unpacked } from "./message-plan.js";
import { TextBytes } from "./text-bytes.js";

export class JsonWriter {
  readonly out = new TextBytes();
  /** Entry starts of plain objects' keys (`keyLine`), by key. */
  private readonly plainKeys = new Map<string, Uint8Array[]>();

  /** A message as an Any prints: `{"@type": url, ...fields}`, its entries at `depth` + 1. */
  typed(url: string, plan: readonly FieldPlan[], message: unknown, depth: number): void {
    const out = this.out;
    out.byte(0x7b);
    out.chunk(keyLine(TYPE_KEYS, "@type", depth, 0));
    out.jsonString(url);
    this.fields(plan, message as Record<string, unknown>, depth, 1);
    this.close(depth, 0x7d);
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
    out.byte(0x5b);
    const count = items.length;
    for (let i = 0; i < count; i++) {
      const item = items[i];
      if (item === undefined) throw new NotWritable();
      out.chunk(lineStart(depth + 1, i));
      this.plain(item, depth + 1);
    }
    this.close(depth, 0x5d, count);
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
      out.chunk(keyLine(lines, key, depth, count++));
      this.plain(child, depth + 1);
    }
    this.close(depth, 0x7d, count);
  }

  /** A message's fields as entries of the object at `depth`, after `count` entries; the new count. */
  private fields(plan: readonly FieldPlan[], record: Record<string, unknown>, depth: number, count: number): number {
    const out = this.out;
    for (const field of plan) {
      const value = record[field.name];
      if (value === undefined || value === null) continue;
      if (field.shape === Shape.Singular) {
        if (field.omitDefault && isDefault(value)) continue;
        this.key(field, depth, count++);
        this.value(field, value, depth + 1);
      } else if (field.shape === Shape.List) {
        const items = value as readonly unknown[];
        if (items.length === 0) continue;
        this.key(field, depth, count++);
        out.byte(0x5b);
        for (let i = 0; i < items.length; i++) {
          out.chunk(lineStart(depth + 2, i));
          this.value(field, items[i], depth + 2);
        }
        this.close(depth + 1, 0x5d);
      } else {
        const entries = value as Record<string, unknown>;
        const keys = Object.keys(entries);
        if (keys.length === 0) continue;
        this.key(field, depth, count++);
        out.byte(0x7b);
        for (let i = 0; i < keys.length; i++) {
          out.chunk(lineStart(depth + 2, i));
          out.jsonString(keys[i]!);
          out.byte(0x3a);
          out.byte(0x20);
          this.value(field, entries[keys[i]!], depth + 2);
        }
        this.close(depth + 1, 0x7d);
      }
    }
    return count;
  }

  private value(field: FieldPlan, value: unknown, depth: number): void {
    if (field.kind === Kind.Leaf) {
      const leaf = field.leaf(value);
      if (typeof leaf === "string") this.out.jsonString(leaf);
      else this.plain(leaf, depth);
    } else if (field.kind === Kind.Any) {
      const { typeName, message } = unpacked(value as Any);
      this.typed((value as Any).type_url ?? "", planOf(typeName), message, depth);
    } else {
      field.nested ??= planOf(field.typeName);
      this.out.byte(0x7b);
      this.close(depth, 0x7d, this.fields(field.nested, value as Record<string, unknown>, depth, 0));
    }
  }

  /** `,` after an earlier entry, then the line break, indentation and `"name": ` of an entry of the object at `depth`. */
  private key(field: FieldPlan, depth: number, index: number): void {
    this.out.chunk(keyLine(field.jsonKeys, field.name, depth, index));
  }

  /** The closing bracket of a collection at `depth`: on its own line, or right after the opening one when it is empty. */
  private close(depth: number, bracket: number, count = 1): void {
    if (count > 0) this.out.chunk(lineStart(depth, 0));
    this.out.byte(bracket);
  }
}

/**
 * From `lines` (a field's or a plain key's, made on first use): the UTF-8 start of entry `index`
 * of an object at `depth` — `,` after an earlier entry, the line break and indentation, `"name": `.
 */
function keyLine(lines: Uint8Array[], name: string, depth: number, index: number): Uint8Array {
  const at = 2 * depth + (index === 0 ? 1 : 0);
  let line = lines[at];
  if (line === undefined) {
    line = Buffer.from(`${index === 0 ? "" : ","}\n${" ".repeat(2 * depth + 2)}${JSON.stringify(name)}: `);
    lines[at] = line;
  }
  return line;
}

/** `,` after an earlier item (`index` > 0), then a line break and the indentation of `depth`. */
function lineStart(depth: number, index: number): Uint8Array {
  const at = 2 * depth + (index === 0 ? 1 : 0);
  let line = LINE_STARTS[at];
  if (line === undefined) {
    line = Buffer.from(`${index === 0 ? "" : ","}\n${" ".repeat(2 * depth)}`);
    LINE_STARTS[at] = line;
  }
  return line;
}

const LINE_STARTS: Uint8Array[] = [];
/** An Any's first entry, `"@type": `, at each depth. */
const TYPE_KEYS: Uint8Array[] = [];
