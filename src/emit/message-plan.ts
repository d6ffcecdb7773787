/**
 * Envoy's canonical JSON form of generated messages, planned once per message type: each field's
 * name, omission rule and value conversion (enum names, base64, Durations, unwrapped wrappers)
 * resolved ahead, and nested plans on first use. The JSON values (`renderMessage`, `renderResult`)
 * are built here; the text writers (json-text.ts, yaml-text.ts) walk the same plans and print a
 * full node without building its value tree first.
 */
import type { Any } from "../../gen/google/protobuf/any.js";
import { enumValueNames, type FieldInfo, FieldType, lookupMessage, unpackAny } from "../envoy/schema.js";
import { setOwn } from "../util/maps.js";
import { formatDuration, type JsonValue, RenderError } from "./render.js";

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

/** Thrown for a value only `renderResult`'s tree and its printer render exactly (e.g. a class instance). */
export class NotWritable extends Error {}

/** A scalar, enum or well-known type as its JSON value. */
type Leaf = (value: unknown) => unknown;

export enum Kind {
  Leaf,
  Message,
  Any,
}

export enum Shape {
  Singular,
  List,
  Map,
}

export interface FieldPlan {
  readonly name: string;
  readonly shape: Shape;
  /** Scalars and enums at their default value are not on the wire: omitted. */
  readonly omitDefault: boolean;
  /** The field's values (a map's: its entries' values). */
  readonly kind: Kind;
  readonly leaf: Leaf;
  readonly typeName: string;
  /** A Message field's type plan, on first use (message types nest recursively). */
  nested: readonly FieldPlan[] | undefined;
  /** JSON's `\n    "name": ` (first entry) and `,\n    "name": ` (a later one) at each depth as UTF-8, made on first use. */
  readonly jsonKeys: Uint8Array[];
  /** YAML's `name:` on a dash's line, then `    name:` at each indentation / 2 as UTF-8, made on first use. */
  readonly yamlKeys: Uint8Array[];
}

const plans = new Map<string, readonly FieldPlan[]>();

export function planOf(typeName: string): readonly FieldPlan[] {
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
  const values = field.mapValue ?? field;
  const kind =
    values.type !== FieldType.Message
      ? Kind.Leaf
      : values.typeName === "google.protobuf.Any"
        ? Kind.Any
        : messageLeaf(values.typeName)
          ? Kind.Leaf
          : Kind.Message;
  const leaf = (values.type === FieldType.Message ? messageLeaf(values.typeName) : scalarLeaf(values)) ?? same;
  return {
    name: field.name,
    shape,
    omitDefault: field.type !== FieldType.Message,
    kind,
    leaf,
    typeName: values.typeName,
    nested: undefined,
    jsonKeys: [],
    yamlKeys: [],
  };
}

const same: Leaf = (value) => value;
const decimal: Leaf = (value) => String(value);

function scalarLeaf(field: FieldInfo): Leaf {
  switch (field.type) {
    case FieldType.Enum: {
      const names = enumValueNames(field.typeName);
      return (value) => names?.get(value as number) ?? value;
    }
    case FieldType.Bytes:
      return (value) => {
        const bytes = value as Uint8Array;
        return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
      };
    case FieldType.Int64:
    case FieldType.Uint64:
    case FieldType.Fixed64:
    case FieldType.Sfixed64:
    case FieldType.Sint64:
      return decimal;
    default:
      return same;
  }
}

/** Well-known message types rendered as one value, or undefined for a message rendered field by field. */
function messageLeaf(typeName: string): Leaf | undefined {
  if (typeName === "google.protobuf.Duration") {
    return (value) => {
      const duration = value as { seconds?: number; nanos?: number };
      return formatDuration(duration.seconds ?? 0, duration.nanos ?? 0);
    };
  }
  if (UNWRAPPED_WRAPPERS.has(typeName) || PLAIN_JSON.has(typeName)) return same;
  if (UNWRAPPED_STRING_WRAPPERS.has(typeName)) return decimal;
  return undefined;
}

export function unpacked(any: Any): { typeName: string; message: unknown } {
  const result = unpackAny(any);
  if (!result) throw new RenderError(`cannot unpack Any of unknown type ${any.type_url}`);
  return result;
}

// ---- JSON values ------------------------------------------------------------------------------

/** One message's fields as a JSON object, after `out`'s own entries (an Any's `@type`). */
export function renderFields(typeName: string, message: unknown, out: { [key: string]: JsonValue }): { [key: string]: JsonValue } {
  return renderPlanned(planOf(typeName), message as Record<string, unknown>, out);
}

/** An Any as `{"@type": url, ...fields}`. */
export function renderAnyValue(any: Any): { [key: string]: JsonValue } {
  const { typeName, message } = unpacked(any);
  return renderFields(typeName, message, { "@type": any.type_url ?? "" });
}

function renderPlanned(plan: readonly FieldPlan[], record: Record<string, unknown>, out: { [key: string]: JsonValue }): { [key: string]: JsonValue } {
  for (const field of plan) {
    const value = record[field.name];
    if (value === undefined || value === null) continue;
    if (field.shape === Shape.Singular) {
      if (field.omitDefault && isDefault(value)) continue;
      out[field.name] = renderValue(field, value);
    } else if (field.shape === Shape.List) {
      const items = value as readonly unknown[];
      if (items.length > 0) out[field.name] = items.map((item) => renderValue(field, item));
    } else {
      const entries = value as Record<string, unknown>;
      const keys = Object.keys(entries);
      if (keys.length === 0) continue;
      const map: { [key: string]: JsonValue } = {};
      for (const key of keys) setOwn(map, key, renderValue(field, entries[key]));
      out[field.name] = map;
    }
  }
  return out;
}

function renderValue(field: FieldPlan, value: unknown): JsonValue {
  if (field.kind === Kind.Leaf) return field.leaf(value) as JsonValue;
  if (field.kind === Kind.Any) return renderAnyValue(value as Any);
  field.nested ??= planOf(field.typeName);
  return renderPlanned(field.nested, value as Record<string, unknown>, {});
}

export function isDefault(value: unknown): boolean {
  return value === "" || value === 0 || value === false || (value instanceof Uint8Array && value.length === 0);
}
