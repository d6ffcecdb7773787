/**
 * Text renderings of a compile result for people and golden files: every resource as Envoy's
 * canonical JSON with its `@type`, every nested Any unpacked, in a stable order.
 */
import { stringify as toYaml } from "yaml";
import type { Diagnostic } from "../diagnostics.js";
import { typeUrl } from "../envoy/any.js";
import { type JsonValue, renderTyped } from "./render.js";
import { NotWritable, type TextSink, writeMessage, writePlainArray } from "./text-walk.js";
import { blockYaml, YAML_OPTIONS, YamlText } from "./yaml-text.js";

export const RESOURCE_TYPES = {
  clusters: "envoy.config.cluster.v3.Cluster",
  endpoints: "envoy.config.endpoint.v3.ClusterLoadAssignment",
  listeners: "envoy.config.listener.v3.Listener",
} as const;

export type ResourceKind = keyof typeof RESOURCE_TYPES;

export interface RenderableResult {
  readonly clusters: readonly unknown[];
  readonly endpoints: readonly unknown[];
  readonly listeners: readonly unknown[];
  readonly diagnostics: readonly Diagnostic[];
}

/** A compile result as Envoy's canonical JSON: each resource with its `@type`, every Any unpacked. */
export interface RenderedResult {
  readonly clusters: JsonValue[];
  readonly endpoints: JsonValue[];
  readonly listeners: JsonValue[];
  readonly diagnostics: JsonValue[];
}

/** One resource as `{"@type": ..., ...fields}`. */
export function renderResource(kind: ResourceKind, resource: unknown): { [key: string]: JsonValue } {
  const typeName = RESOURCE_TYPES[kind];
  return renderTyped(typeUrl(typeName), typeName, resource);
}

/**
 * A compile result as Envoy's canonical JSON values: snake_case fields in field-number order,
 * enums by name, every Any unpacked to `{"@type": ..., ...}`, defaults omitted.
 */
export function renderResult(result: RenderableResult): RenderedResult {
  return {
    clusters: result.clusters.map((r) => renderResource("clusters", r)),
    endpoints: result.endpoints.map((r) => renderResource("endpoints", r)),
    listeners: result.listeners.map((r) => renderResource("listeners", r)),
    diagnostics: result.diagnostics.map((d) => ({ ...d }) as unknown as JsonValue),
  };
}

/**
 * `renderResult` as indented JSON text. Printed a batch of values at a time, so each batch's
 * values die young instead of the whole node's tree outliving several garbage collections; the
 * pieces are joined once.
 */
export function renderJson(result: RenderableResult): string {
  const text = ["{\n"];
  for (const kind of RESOURCE_KINDS) {
    jsonMember(text, kind, result[kind], (resource) => renderResource(kind, resource));
    text.push(",\n");
  }
  jsonMember(text, "diagnostics", result.diagnostics, diagnosticValue);
  text.push("\n}\n");
  return text.join("");
}

const RESOURCE_KINDS: readonly ResourceKind[] = ["clusters", "endpoints", "listeners"];
const JSON_BATCH = 64;

/** Appends `  "name": [items]` as `JSON.stringify(..., null, 2)` prints a member of the top-level object. */
function jsonMember<T>(text: string[], name: string, items: readonly T[], render: (item: T) => unknown): void {
  text.push(`  ${JSON.stringify(name)}: [`);
  if (items.length === 0) {
    text.push("]");
    return;
  }
  for (let start = 0; start < items.length; start += JSON_BATCH) {
    const batch = items.slice(start, start + JSON_BATCH).map(render);
    // Nested one level, a batch's items are indented as the member's items are: "[\n  [\n" + items + "\n  ]\n]".
    text.push(start === 0 ? "\n" : ",\n", JSON.stringify([batch], null, 2).slice(6, -6));
  }
  text.push("\n  ]");
}

/** A diagnostic prints as its copy in renderResult does, unless something could tell them apart. */
function diagnosticValue(diagnostic: Diagnostic): unknown {
  return Object.getPrototypeOf(diagnostic) === Object.prototype && !Object.hasOwn(diagnostic, "toJSON") ? diagnostic : { ...diagnostic };
}

/** `renderResult` as YAML text, one value per line (the golden files' form). */
export function renderYaml(result: RenderableResult): string {
  const out = new YamlText();
  try {
    writeResult(result, out);
  } catch (error) {
    if (error instanceof NotWritable) return toYamlText(renderResult(result));
    throw error;
  }
  return out.finish();
}

/**
 * YAML without line folding or anchors, so each value stays on one greppable line. Written
 * directly for block collections (`blockYaml`, the same bytes), by the `yaml` package otherwise.
 */
export function toYamlText(value: unknown): string {
  return blockYaml(value) ?? toYaml(value, YAML_OPTIONS);
}

/** `renderResult(result)`, piece by piece. */
function writeResult(result: RenderableResult, sink: TextSink): void {
  sink.beginObject();
  for (const kind of ["clusters", "endpoints", "listeners"] as const) {
    const typeName = RESOURCE_TYPES[kind];
    const url = typeUrl(typeName);
    sink.key(kind);
    sink.beginArray();
    for (const resource of result[kind]) {
      sink.item();
      writeMessage(typeName, resource, sink, url);
    }
    sink.endArray();
  }
  sink.key("diagnostics");
  writePlainArray(result.diagnostics, sink);
  sink.endObject();
}
