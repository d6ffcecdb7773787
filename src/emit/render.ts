/**
 * Renders generated messages as Envoy's canonical JSON: snake_case field names in field-number
 * order, enums by name, wrappers and Struct unwrapped, Durations as `"1.5s"`, 64-bit integers as
 * strings, bytes as base64, and every `google.protobuf.Any` unpacked to `{"@type": ..., ...}`.
 * Default values are omitted, as Envoy's config dump does. The rules live in message-plan.ts, which
 * the YAML writer shares.
 */
import type { Any } from "../../gen/google/protobuf/any.js";
import { renderAnyValue, renderFields } from "./message-plan.js";

/** A JSON value, as the renderers produce it. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export class RenderError extends Error {
  override readonly name = "RenderError";
}

/** Renders one message of the given fully-qualified type. */
export function renderMessage(typeName: string, message: unknown): { [key: string]: JsonValue } {
  return renderFields(typeName, message, {});
}

/** Renders an Any as `{"@type": url, ...fields}`. */
export function renderAny(any: Any): { [key: string]: JsonValue } {
  return renderAnyValue(any);
}

/** Renders one message as an Any of type `url` renders: `{"@type": url, ...fields}`. */
export function renderTyped(url: string, typeName: string, message: unknown): { [key: string]: JsonValue } {
  return renderFields(typeName, message, { "@type": url });
}

/** Proto3 JSON form of a Duration: integer seconds and up to nine fractional digits, no float rounding. */
export function formatDuration(seconds: number, nanos: number): string {
  const negative = seconds < 0 || nanos < 0;
  const [whole, fraction] = [Math.abs(seconds), Math.abs(nanos)];
  const digits = fraction === 0 ? "" : `.${String(fraction).padStart(9, "0").replace(/0+$/, "")}`;
  return `${negative ? "-" : ""}${whole}${digits}s`;
}
