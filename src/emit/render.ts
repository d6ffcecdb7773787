/**
 * Renders generated messages as Envoy's canonical JSON: snake_case field names in field-number
 * order, enums by name, wrappers and Struct unwrapped, Durations as `"1.5s"`, 64-bit integers as
 * strings, bytes as base64, and every `google.protobuf.Any` unpacked to `{"@type": ..., ...}`.
 * Default values are omitted, as Envoy's config dump does. The rules live in text-walk.ts, which
 * the JSON and YAML text writers share; here the walk builds JSON values.
 */
import type { Any } from "../../gen/google/protobuf/any.js";
import { type TextSink, writeAny, writeMessage } from "./text-walk.js";

/** A JSON value, as the renderers produce it. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export class RenderError extends Error {
  override readonly name = "RenderError";
}

/** Renders one message of the given fully-qualified type. */
export function renderMessage(typeName: string, message: unknown): { [key: string]: JsonValue } {
  const tree = new JsonTree();
  writeMessage(typeName, message, tree);
  return tree.value as { [key: string]: JsonValue };
}

/** Renders an Any as `{"@type": url, ...fields}`. */
export function renderAny(any: Any): { [key: string]: JsonValue } {
  const tree = new JsonTree();
  writeAny(any, tree);
  return tree.value as { [key: string]: JsonValue };
}

/** Renders one message as an Any of type `url` would render: `{"@type": url, ...fields}`. */
export function renderTyped(url: string, typeName: string, message: unknown): { [key: string]: JsonValue } {
  const tree = new JsonTree();
  writeMessage(typeName, message, tree, url);
  return tree.value as { [key: string]: JsonValue };
}

/** Builds the JSON value the walk describes. */
class JsonTree implements TextSink {
  value: JsonValue = null;
  /** The open objects and arrays, innermost last, and the key each next value goes under. */
  private readonly open: (JsonValue[] | { [key: string]: JsonValue })[] = [];
  private pendingKey = "";

  beginObject(): void {
    this.begin({});
  }

  key(name: string): void {
    this.pendingKey = name;
  }

  endObject(): void {
    this.open.pop();
  }

  beginArray(): void {
    this.begin([]);
  }

  item(): void {}

  endArray(): void {
    this.open.pop();
  }

  string(value: string): void {
    this.add(value);
  }

  number(value: number): void {
    this.add(value);
  }

  boolean(value: boolean): void {
    this.add(value);
  }

  null(): void {
    this.add(null);
  }

  plain(value: unknown): void {
    this.add(value as JsonValue);
  }

  private begin(container: JsonValue[] | { [key: string]: JsonValue }): void {
    this.add(container);
    this.open.push(container);
  }

  private add(value: JsonValue): void {
    const parent = this.open[this.open.length - 1];
    if (parent === undefined) this.value = value;
    else if (Array.isArray(parent)) parent.push(value);
    else if (this.pendingKey === "__proto__") {
      // defineProperty: a map key such as "__proto__" stays an ordinary key.
      Object.defineProperty(parent, this.pendingKey, { value, enumerable: true, writable: true, configurable: true });
    } else parent[this.pendingKey] = value;
  }
}

/** Proto3 JSON form of a Duration: integer seconds and up to nine fractional digits, no float rounding. */
export function formatDuration(seconds: number, nanos: number): string {
  const negative = seconds < 0 || nanos < 0;
  const [whole, fraction] = [Math.abs(seconds), Math.abs(nanos)];
  const digits = fraction === 0 ? "" : `.${String(fraction).padStart(9, "0").replace(/0+$/, "")}`;
  return `${negative ? "-" : ""}${whole}${digits}s`;
}
