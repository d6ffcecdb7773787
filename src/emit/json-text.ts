/**
 * Envoy's canonical JSON (see render.ts) written straight to text, as `JSON.stringify(value, null,
 * 2)` would print the rendered value — byte for byte — without building the value first: a full
 * node renders tens of megabytes, and the intermediate objects cost more than the text.
 */
import type { Any } from "../../gen/google/protobuf/any.js";
import { enumValueName, type FieldInfo, FieldType, lookupMessage, unpackAny } from "../envoy/schema.js";
import { formatDuration, PLAIN_JSON, RenderError, UNWRAPPED_STRING_WRAPPERS, UNWRAPPED_WRAPPERS } from "./render.js";

/** Collects text pieces; `newline(depth)` is a line break and the indent of that depth. */
export class JsonText {
  private readonly parts: string[] = [];
  private readonly indents: string[] = ["\n"];

  push(text: string): void {
    this.parts.push(text);
  }

  newline(depth: number): void {
    while (this.indents.length <= depth) this.indents.push(`${this.indents[this.indents.length - 1]}  `);
    this.parts.push(this.indents[depth]!);
  }

  /** A plain JSON value (already in its final shape), indented for `depth`. */
  plain(value: unknown, depth: number): void {
    const text = JSON.stringify(value, null, 2) ?? "null";
    this.parts.push(depth === 0 || !text.includes("\n") ? text : text.replaceAll("\n", this.indentOf(depth)));
  }

  private indentOf(depth: number): string {
    this.newline(depth);
    return this.parts.pop()!;
  }

  text(): string {
    return this.parts.join("");
  }
}

/** Writes a message of a fully-qualified type as a JSON object at `depth`, after `prefix` members (e.g. `@type`). */
export function writeMessage(out: JsonText, typeName: string, message: unknown, depth: number, prefix?: readonly [string, string]): void {
  const info = lookupMessage(typeName);
  if (!info) throw new RenderError(`no descriptor for ${typeName}`);
  const record = message as Record<string, unknown>;
  out.push("{");
  let members = 0;
  if (prefix) {
    out.newline(depth + 1);
    out.push(`${JSON.stringify(prefix[0])}: ${JSON.stringify(prefix[1])}`);
    members++;
  }
  for (const field of info.fields) {
    const value = record[field.name];
    if (value === undefined || value === null || omitted(field, value)) continue;
    if (members++ > 0) out.push(",");
    out.newline(depth + 1);
    out.push(`"${field.name}": `);
    if (field.repeated) writeRepeated(out, field, value, depth + 1);
    else writeValue(out, field, value, depth + 1);
  }
  if (members > 0) out.newline(depth);
  out.push("}");
}

/** An Any as `{"@type": url, ...fields}`. */
export function writeAny(out: JsonText, any: Any, depth: number): void {
  const unpacked = unpackAny(any);
  if (!unpacked) throw new RenderError(`cannot unpack Any of unknown type ${any.type_url}`);
  writeMessage(out, unpacked.typeName, unpacked.message, depth, ["@type", any.type_url ?? ""]);
}

/** Empty repeated fields and maps, and singular scalars at their proto3 default, are not rendered. */
function omitted(field: FieldInfo, value: unknown): boolean {
  if (field.mapValue) return Object.keys(value as object).length === 0;
  if (field.repeated) return (value as unknown[]).length === 0;
  return field.type !== FieldType.Message && (value === "" || value === 0 || value === false || (value instanceof Uint8Array && value.length === 0));
}

function writeRepeated(out: JsonText, field: FieldInfo, value: unknown, depth: number): void {
  if (field.mapValue) {
    out.push("{");
    let first = true;
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
      if (!first) out.push(",");
      first = false;
      out.newline(depth + 1);
      out.push(`${JSON.stringify(key)}: `);
      writeValue(out, field.mapValue, item, depth + 1);
    }
    out.newline(depth);
    out.push("}");
    return;
  }
  out.push("[");
  const items = value as unknown[];
  for (let i = 0; i < items.length; i++) {
    if (i > 0) out.push(",");
    out.newline(depth + 1);
    writeValue(out, field, items[i], depth + 1);
  }
  out.newline(depth);
  out.push("]");
}

function writeValue(out: JsonText, field: FieldInfo, value: unknown, depth: number): void {
  switch (field.type) {
    case FieldType.Message:
      return writeEmbedded(out, field.typeName, value, depth);
    case FieldType.Enum: {
      const name = enumValueName(field.typeName, value as number);
      return out.push(name === undefined ? number(value as number) : JSON.stringify(name));
    }
    case FieldType.Bytes:
      return out.push(JSON.stringify(Buffer.from(value as Uint8Array).toString("base64")));
    case FieldType.Int64:
    case FieldType.Uint64:
    case FieldType.Fixed64:
    case FieldType.Sfixed64:
    case FieldType.Sint64:
      return out.push(JSON.stringify(String(value)));
    case FieldType.String:
      return out.push(JSON.stringify(value));
    default:
      return typeof value === "number" ? out.push(number(value)) : out.plain(value, depth);
  }
}

function writeEmbedded(out: JsonText, typeName: string, value: unknown, depth: number): void {
  if (typeName === "google.protobuf.Any") return writeAny(out, value as Any, depth);
  if (typeName === "google.protobuf.Duration") {
    const { seconds, nanos } = value as { seconds?: number; nanos?: number };
    return out.push(`"${formatDuration(seconds ?? 0, nanos ?? 0)}"`);
  }
  if (UNWRAPPED_STRING_WRAPPERS.has(typeName)) return out.push(JSON.stringify(String(value)));
  if (UNWRAPPED_WRAPPERS.has(typeName) || PLAIN_JSON.has(typeName)) return out.plain(value, depth);
  writeMessage(out, typeName, value, depth);
}

/** A number as JSON.stringify prints it (non-finite: null). */
function number(value: number): string {
  return Number.isFinite(value) ? String(value) : "null";
}
