/**
 * Walks a compile result in `renderResult`'s order and form — the same fields, names, values and
 * omissions — and hands each piece to a text writer (JSON or YAML), so `renderJson` and
 * `renderYaml` print a full node without building its JSON value tree first. Each message type's
 * fields are planned once: a writer per field, enum names and nested plans looked up in advance.
 */
import type { Any } from "../../gen/google/protobuf/any.js";
import { enumValueNames, type FieldInfo, FieldType, lookupMessage, unpackAny } from "../envoy/schema.js";
import { formatDuration, RenderError } from "./render.js";

const UNWRAPPED_WRAPPERS: ReadonlySet<string> = new Set([
  "google.protobuf.BoolValue",
  "google.protobuf.StringValue",
  "google.protobuf.UInt32Value",
  "google.protobuf.Int32Value",
  "google.protobuf.DoubleValue",
  "google.protobuf.FloatValue",
]);
const UNWRAPPED_STRING_WRAPPERS: ReadonlySet<string> = new Set(["google.protobuf.UInt64Value", "google.protobuf.Int64Value"]);
const PLAIN_JSON: ReadonlySet<string> = new Set(["google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue"]);

/** Receives a document piece by piece: every value after a `key` (in an object) or an `item` (in an array). */
export interface TextSink {
  beginObject(): void;
  key(name: string): void;
  endObject(): void;
  beginArray(): void;
  item(): void;
  endArray(): void;
  string(value: string): void;
  number(value: number): void;
  boolean(value: boolean): void;
  null(): void;
  /** A value that is already JSON: a Struct, a wrapper's or scalar field's value, a diagnostic. */
  plain(value: unknown): void;
}

/** Thrown for a value only `renderResult`'s tree and its printer render exactly (e.g. with `toJSON`). */
export class NotWritable extends Error {}

type WriteValue = (value: unknown, sink: TextSink) => void;

enum Shape {
  Singular,
  List,
  Map,
}

interface FieldPlan {
  readonly name: string;
  readonly shape: Shape;
  /** Scalars and enums at their default value are not on the wire: omitted. */
  readonly omitDefault: boolean;
  readonly write: WriteValue;
}

const plans = new Map<string, readonly FieldPlan[]>();

function planOf(typeName: string): readonly FieldPlan[] {
  let plan = plans.get(typeName);
  if (!plan) {
    const info = lookupMessage(typeName);
    if (!info) throw new RenderError(`no descriptor for ${typeName}`);
    plan = info.fields.map(fieldPlan);
    plans.set(typeName, plan);
  }
  return plan;
}

function fieldPlan(field: FieldInfo): FieldPlan {
  const shape = field.mapValue ? Shape.Map : field.repeated ? Shape.List : Shape.Singular;
  return { name: field.name, shape, omitDefault: field.type !== FieldType.Message, write: valueWriter(field.mapValue ?? field) };
}

function valueWriter(field: FieldInfo): WriteValue {
  switch (field.type) {
    case FieldType.Message:
      return messageWriter(field.typeName);
    case FieldType.Enum: {
      const names = enumValueNames(field.typeName);
      return (value, sink) => {
        const name = names?.get(value as number);
        if (name === undefined) sink.plain(value);
        else sink.string(name);
      };
    }
    case FieldType.Bytes:
      return (value, sink) => {
        const bytes = value as Uint8Array;
        sink.string(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64"));
      };
    case FieldType.Int64:
    case FieldType.Uint64:
    case FieldType.Fixed64:
    case FieldType.Sfixed64:
    case FieldType.Sint64:
      return (value, sink) => sink.string(String(value));
    default:
      return writePlainField;
  }
}

function messageWriter(typeName: string): WriteValue {
  if (typeName === "google.protobuf.Any") return (value, sink) => writeAny(value as Any, sink);
  if (typeName === "google.protobuf.Duration") {
    return (value, sink) => {
      const duration = value as { seconds?: number; nanos?: number };
      sink.string(formatDuration(duration.seconds ?? 0, duration.nanos ?? 0));
    };
  }
  if (UNWRAPPED_WRAPPERS.has(typeName) || PLAIN_JSON.has(typeName)) return writePlainField;
  if (UNWRAPPED_STRING_WRAPPERS.has(typeName)) return (value, sink) => sink.string(String(value));
  // Planned on first use: message types nest recursively.
  let plan: readonly FieldPlan[] | undefined;
  return (value, sink) => {
    plan ??= planOf(typeName);
    sink.beginObject();
    writeFields(plan, value as Record<string, unknown>, sink);
    sink.endObject();
  };
}

export function writeAny(any: Any, sink: TextSink): void {
  const unpacked = unpackAny(any);
  if (!unpacked) throw new RenderError(`cannot unpack Any of unknown type ${any.type_url}`);
  writeMessage(unpacked.typeName, unpacked.message, sink, any.type_url ?? "");
}

function writeFields(plan: readonly FieldPlan[], record: Record<string, unknown>, sink: TextSink): void {
  for (const field of plan) {
    const value = record[field.name];
    if (value === undefined || value === null) continue;
    if (field.shape === Shape.Singular) {
      if (field.omitDefault && isDefault(value)) continue;
      sink.key(field.name);
      field.write(value, sink);
    } else if (field.shape === Shape.List) {
      const items = value as readonly unknown[];
      if (items.length === 0) continue;
      sink.key(field.name);
      sink.beginArray();
      for (const item of items) {
        sink.item();
        field.write(item, sink);
      }
      sink.endArray();
    } else {
      const entries = value as Record<string, unknown>;
      const keys = Object.keys(entries);
      if (keys.length === 0) continue;
      sink.key(field.name);
      sink.beginObject();
      for (const key of keys) {
        sink.key(key);
        field.write(entries[key], sink);
      }
      sink.endObject();
    }
  }
}

const writePlainField: WriteValue = (value, sink) => sink.plain(value);

function isDefault(value: unknown): boolean {
  return value === "" || value === 0 || value === false || (value instanceof Uint8Array && value.length === 0);
}

/**
 * A value that is already JSON, piece by piece: text sinks' `plain`. Plain data only: anything a
 * printer treats specially (`toJSON`, class instances, undefined in an array) is left to
 * `renderResult` and the printer.
 */
export function writePlain(value: unknown, sink: TextSink): void {
  if (typeof value === "string") sink.string(value);
  else if (typeof value === "number") sink.number(value);
  else if (typeof value === "boolean") sink.boolean(value);
  else if (value === null) sink.null();
  else if (Array.isArray(value)) writePlainArray(value, sink);
  else if (typeof value === "object") writePlainObject(value, sink);
  else throw new NotWritable();
}

export function writePlainArray(items: readonly unknown[], sink: TextSink): void {
  sink.beginArray();
  for (const item of items) {
    if (item === undefined) throw new NotWritable();
    sink.item();
    writePlain(item, sink);
  }
  sink.endArray();
}

function writePlainObject(value: object, sink: TextSink): void {
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) throw new NotWritable();
  if (typeof (value as { toJSON?: unknown }).toJSON === "function") throw new NotWritable();
  sink.beginObject();
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    const child = record[key];
    if (child === undefined) continue;
    sink.key(key);
    writePlain(child, sink);
  }
  sink.endObject();
}

/** One message of the given fully-qualified type; with `url`, as an Any: `{"@type": url, ...}`. */
export function writeMessage(typeName: string, message: unknown, sink: TextSink, url?: string): void {
  const plan = planOf(typeName);
  sink.beginObject();
  if (url !== undefined) {
    sink.key("@type");
    sink.string(url);
  }
  writeFields(plan, message as Record<string, unknown>, sink);
  sink.endObject();
}
