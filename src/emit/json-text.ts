/**
 * Indented JSON as `JSON.stringify(value, null, 2)` prints it — byte for byte — written straight
 * from the messages into a text buffer with the field plans, so a full node's JSON needs no value
 * tree first. Each field's `"name": ` line start is made once per depth. Plain values (Structs,
 * diagnostics) are written as they are; one only `JSON.stringify` handles exactly (a `toJSON`, a
 * function, a class instance, an undefined item) throws `NotWritable`.
 */
import type { Any } from "../../gen/google/protobuf/any.js";
import { TextBytes } from "./text-bytes.js";
import { type FieldPlan, isDefault, Kind, NotWritable, planOf, Shape, unpacked } from "./text-walk.js";

export class JsonWriter {
  readonly out = new TextBytes();

  /** A message as an Any prints: `{"@type": url, ...fields}`, its entries at `depth` + 1. */
  typed(url: string, plan: readonly FieldPlan[], message: unknown, depth: number): void {
    const out = this.out;
    out.byte(0x7b);
    this.lineStart(depth + 1);
    out.text('"@type": ');
    out.jsonString(url);
    this.fields(plan, message as Record<string, unknown>, depth, 1);
    this.close(depth, 0x7d);
  }

  /** A plain JSON value (a Struct, a wrapper's or scalar's value, a diagnostic) at `depth`. */
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

  plainArray(items: readonly unknown[], depth: number): void {
    const out = this.out;
    out.byte(0x5b);
    const count = items.length;
    for (let i = 0; i < count; i++) {
      const item = items[i];
      if (item === undefined) throw new NotWritable();
      if (i > 0) out.byte(0x2c);
      this.lineStart(depth + 1);
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
      if (count++ > 0) out.byte(0x2c);
      this.lineStart(depth + 1);
      out.jsonString(key);
      out.byte(0x3a);
      out.byte(0x20);
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
          if (i > 0) out.byte(0x2c);
          this.lineStart(depth + 2);
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
          if (i > 0) out.byte(0x2c);
          this.lineStart(depth + 2);
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
    const at = 2 * depth + (index === 0 ? 1 : 0);
    this.out.text(field.jsonKeys[at] ?? makeJsonKeys(field, depth, at));
  }

  private lineStart(depth: number): void {
    this.out.byte(0x0a);
    this.out.spaces(2 * depth);
  }

  /** The closing bracket of a collection at `depth`: on its own line, or right after the opening one when it is empty. */
  private close(depth: number, bracket: number, count = 1): void {
    if (count > 0) this.lineStart(depth);
    this.out.byte(bracket);
  }
}

/** The field's key lines at `depth` (after an entry, then first), into its cache; the one at `at`. */
function makeJsonKeys(field: FieldPlan, depth: number, at: number): string {
  const line = `\n${" ".repeat(2 * (depth + 1))}${JSON.stringify(field.name)}: `;
  field.jsonKeys[2 * depth] = `,${line}`;
  field.jsonKeys[2 * depth + 1] = line;
  return field.jsonKeys[at]!;
}
