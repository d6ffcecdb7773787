/**
 * Text renderings of a compile result for people and golden files: every resource as Envoy's
 * canonical JSON with its `@type`, every nested Any unpacked, in a stable order.
 */
import { stringify as toYaml } from "yaml";
import type { Diagnostic } from "../diagnostics.js";
import { typeUrl } from "../envoy/any.js";
import { JsonWriter } from "./json-text.js";
import { NotWritable, planOf } from "./message-plan.js";
import { type JsonValue, renderTyped } from "./render.js";
import { blockYaml, Slot, YAML_OPTIONS, YamlWriter } from "./yaml-text.js";

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
 * `renderResult` as indented JSON text (`JSON.stringify(renderResult(result), null, 2)` and a
 * line break), written straight from the messages.
 */
export function renderJson(result: RenderableResult): string {
  const writer = new JsonWriter();
  const out = writer.out;
  try {
    out.text("{");
    for (const kind of RESOURCE_KINDS) {
      const typeName = RESOURCE_TYPES[kind];
      const url = typeUrl(typeName);
      const plan = planOf(typeName);
      out.text(kind === "clusters" ? '\n  "' : ',\n  "');
      out.text(kind);
      out.text('": [');
      const resources = result[kind];
      for (let i = 0; i < resources.length; i++) {
        out.text(i === 0 ? "\n    " : ",\n    ");
        writer.typed(url, plan, resources[i], 2);
      }
      out.text(resources.length === 0 ? "]" : "\n  ]");
    }
    // Plain values, which JSON.stringify prints natively faster than any writer here: the
    // result's last entry, `"diagnostics": [...]` and the closing brace, at the depth it prints them.
    out.text(",");
    out.text(JSON.stringify({ diagnostics: result.diagnostics.map(diagnosticValue) }, null, 2).slice(1));
    out.text("\n");
  } catch (error) {
    if (error instanceof NotWritable) return `${JSON.stringify(renderResult(result), null, 2)}\n`;
    throw error;
  }
  return out.finish();
}

const RESOURCE_KINDS: readonly ResourceKind[] = ["clusters", "endpoints", "listeners"];

/** A diagnostic as its copy in renderResult prints, without the copy unless something could tell them apart. */
function diagnosticValue(diagnostic: Diagnostic): unknown {
  return Object.getPrototypeOf(diagnostic) === Object.prototype && !Object.hasOwn(diagnostic, "toJSON") ? diagnostic : { ...diagnostic };
}

/** `renderResult` as YAML text, one value per line (the golden files' form). */
export function renderYaml(result: RenderableResult): string {
  const writer = new YamlWriter();
  const out = writer.out;
  try {
    for (const kind of RESOURCE_KINDS) {
      const typeName = RESOURCE_TYPES[kind];
      const url = typeUrl(typeName);
      const plan = planOf(typeName);
      const resources = result[kind];
      out.text(kind);
      out.text(resources.length === 0 ? ": []\n" : ":\n");
      for (const resource of resources) {
        out.text("  - ");
        writer.typed(url, plan, resource, 4);
      }
    }
    out.text("diagnostics:");
    writer.plain(result.diagnostics.map(diagnosticValue), Slot.AfterKey, 0);
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
