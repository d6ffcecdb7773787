/**
 * Renders generated messages as Envoy's canonical JSON: snake_case field names in field-number
 * order, enums by name, wrappers and Struct unwrapped, Durations as `"1.5s"`, 64-bit integers as
 * strings, bytes as base64, and every `google.protobuf.Any` unpacked to `{"@type": ..., ...}`.
 * Default values are omitted, as Envoy's config dump does.
 */
import type { Any } from "../../gen/google/protobuf/any.js";
import { enumValueName, type FieldInfo, FieldType, lookupMessage, unpackAny } from "../envoy/schema.js";

/** A JSON value, as the renderers produce it. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

const UNWRAPPED_WRAPPERS = new Set([
  "google.protobuf.BoolValue",
  "google.protobuf.StringValue",
  "google.protobuf.UInt32Value",
  "google.protobuf.Int32Value",
  "google.protobuf.DoubleValue",
  "google.protobuf.FloatValue",
]);
const UNWRAPPED_STRING_WRAPPERS = new Set(["google.protobuf.UInt64Value", "google.protobuf.Int64Value"]);
const PLAIN_JSON = new Set(["google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue"]);

export class RenderError extends Error {
  override readonly name = "RenderError";
}

/** Renders one message of the given fully-qualified type. */
export function renderMessage(typeName: string, message: unknown): { [key: string]: JsonValue } {
  const info = lookupMessage(typeName);
  if (!info) throw new RenderError(`no descriptor for ${typeName}`);
  const out: { [key: string]: JsonValue } = {};
  const record = message as Record<string, unknown>;
  for (const field of info.fields) {
    const value = record[field.name];
    if (value === undefined || value === null) continue;
    const rendered = field.repeated ? renderRepeated(field, value) : renderSingular(field, value);
    if (rendered !== undefined) out[field.name] = rendered;
  }
  return out;
}

/** Renders an Any as `{"@type": url, ...fields}`. */
export function renderAny(any: Any): { [key: string]: JsonValue } {
  const unpacked = unpackAny(any);
  if (!unpacked) throw new RenderError(`cannot unpack Any of unknown type ${any.type_url}`);
  return { "@type": any.type_url ?? "", ...renderMessage(unpacked.typeName, unpacked.message) };
}

function renderRepeated(field: FieldInfo, value: unknown): JsonValue | undefined {
  if (field.mapValue) {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 0) return undefined;
    const out: { [key: string]: JsonValue } = {};
    for (const [key, item] of entries) {
      // defineProperty: a map key such as "__proto__" stays an ordinary key.
      Object.defineProperty(out, key, { value: renderValue(field.mapValue, item), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  const items = value as unknown[];
  return items.length === 0 ? undefined : items.map((item) => renderValue(field, item));
}

/** Singular proto3 scalars and enums at their default value are not on the wire: omit them. */
function renderSingular(field: FieldInfo, value: unknown): JsonValue | undefined {
  const isDefault = field.type !== FieldType.Message && (value === "" || value === 0 || value === false || (value instanceof Uint8Array && value.length === 0));
  return isDefault ? undefined : renderValue(field, value);
}

function renderValue(field: FieldInfo, value: unknown): JsonValue {
  switch (field.type) {
    case FieldType.Message:
      return renderEmbedded(field.typeName, value);
    case FieldType.Enum:
      return enumValueName(field.typeName, value as number) ?? (value as number);
    case FieldType.Bytes:
      return Buffer.from(value as Uint8Array).toString("base64");
    case FieldType.Int64:
    case FieldType.Uint64:
    case FieldType.Fixed64:
    case FieldType.Sfixed64:
    case FieldType.Sint64:
      return String(value);
    default:
      return value as JsonValue;
  }
}

function renderEmbedded(typeName: string, value: unknown): JsonValue {
  if (typeName === "google.protobuf.Any") return renderAny(value as Any);
  if (typeName === "google.protobuf.Duration") return renderDuration(value as { seconds?: number; nanos?: number });
  if (UNWRAPPED_WRAPPERS.has(typeName)) return value as JsonValue;
  if (UNWRAPPED_STRING_WRAPPERS.has(typeName)) return String(value);
  if (PLAIN_JSON.has(typeName)) return value as JsonValue;
  return renderMessage(typeName, value);
}

/** Proto3 JSON form of a Duration: integer seconds and up to nine fractional digits, no float rounding. */
export function formatDuration(seconds: number, nanos: number): string {
  const negative = seconds < 0 || nanos < 0;
  const [whole, fraction] = [Math.abs(seconds), Math.abs(nanos)];
  const digits = fraction === 0 ? "" : `.${String(fraction).padStart(9, "0").replace(/0+$/, "")}`;
  return `${negative ? "-" : ""}${whole}${digits}s`;
}

function renderDuration(duration: { seconds?: number; nanos?: number }): string {
  return formatDuration(duration.seconds ?? 0, duration.nanos ?? 0);
}
