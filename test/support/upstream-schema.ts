/**
 * The independent schema check. Our proto subset in `proto/` is authored by us; this checks what we
 * emit against Envoy's OWN `.proto` files as shipped in `@grpc/grpc-js-xds` (an older upstream
 * copy), decoded with protobufjs, never with our generated code:
 *
 *  (a) the upstream decoding, rendered canonically, equals our rendering of the same message;
 *  (b) no field is unknown to upstream, except the explicit list in `NEWER_THAN_COPY` below;
 *  (c) the protoc-gen-validate rules annotated upstream hold (lengths, ranges, required messages
 *      and oneofs, repeated/map sizes, defined enums).
 */

import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, isAbsolute, join } from "node:path";
import stableStringify from "fast-json-stable-stringify";
import protobuf from "protobufjs";
import { formatDuration, renderMessage } from "../../src/emit/render.js";
import { lookupMessage } from "../../src/envoy/schema.js";

const require = createRequire(import.meta.url);
const XDS_PACKAGE_DIR = dirname(require.resolve("@grpc/grpc-js-xds/package.json"));
const PROTOBUFJS_DIR = dirname(require.resolve("protobufjs/package.json"));
const INCLUDE_DIRS = [
  join(XDS_PACKAGE_DIR, "deps/envoy-api"),
  join(XDS_PACKAGE_DIR, "deps/xds"),
  join(XDS_PACKAGE_DIR, "deps/protoc-gen-validate"),
  join(XDS_PACKAGE_DIR, "deps/googleapis"),
  PROTOBUFJS_DIR,
];

/** Upstream files whose types (and their imports) we emit, or speak on the ADS stream. */
const UPSTREAM_ENTRY_FILES = [
  "envoy/config/bootstrap/v3/bootstrap.proto",
  "envoy/config/cluster/v3/cluster.proto",
  "envoy/config/endpoint/v3/endpoint.proto",
  "envoy/config/listener/v3/listener.proto",
  "envoy/extensions/access_loggers/grpc/v3/als.proto",
  "envoy/extensions/access_loggers/stream/v3/stream.proto",
  "envoy/extensions/clusters/aggregate/v3/cluster.proto",
  "envoy/extensions/filters/http/router/v3/router.proto",
  "envoy/extensions/filters/listener/original_dst/v3/original_dst.proto",
  "envoy/extensions/filters/listener/tls_inspector/v3/tls_inspector.proto",
  "envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.proto",
  "envoy/extensions/filters/network/set_filter_state/v3/set_filter_state.proto",
  "envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy.proto",
  "envoy/extensions/transport_sockets/tls/v3/tls.proto",
  "envoy/extensions/transport_sockets/tls/v3/tls_spiffe_validator_config.proto",
  "envoy/extensions/upstreams/http/v3/http_protocol_options.proto",
  "envoy/service/discovery/v3/ads.proto",
  "xds/type/matcher/v3/matcher.proto",
];

/**
 * What aether-xds emits that is newer than the upstream copy (Envoy 1.37 API), with the upstream
 * field numbers and validation rules (checked against envoyproxy/data-plane-api). Nothing else
 * may be unknown to the copy.
 */
export const NEWER_THAN_COPY = {
  fields: [
    // Cluster.transport_socket_matcher: per-endpoint / per-connection socket choice (1.37).
    { message: "envoy.config.cluster.v3.Cluster", name: "transport_socket_matcher", id: 59, type: "xds.type.matcher.v3.Matcher" },
    // SocketAddress.network_namespace_filepath: bind a listener inside a netns (1.36).
    { message: "envoy.config.core.v3.SocketAddress", name: "network_namespace_filepath", id: 7, type: "string" },
    // CommonTlsContext.custom_tls_certificate_selector: the client certificate chosen per connection (1.38).
    {
      message: "envoy.extensions.transport_sockets.tls.v3.CommonTlsContext",
      name: "custom_tls_certificate_selector",
      id: 16,
      type: "envoy.config.core.v3.TypedExtensionConfig",
    },
    // SPIFFECertValidatorConfig.trust_bundles: a watched SPIFFE bundle map.
    { message: "envoy.extensions.transport_sockets.tls.v3.SPIFFECertValidatorConfig", name: "trust_bundles", id: 2, type: "envoy.config.core.v3.DataSource" },
    // CustomTag.value: a tag whose value is a substitution format (command operators), for the gRPC access log (1.37).
    { message: "envoy.type.tracing.v3.CustomTag", name: "value", id: 6, type: "string", oneof: "type" },
  ],
  /** Packages the copy does not have: one source each. */
  sources: [
    /** The transport-socket matching inputs and action (1.37). */
    `
    syntax = "proto3";
    package envoy.extensions.matching.common_inputs.transport_socket.v3;
    import "validate/validate.proto";
    message EndpointMetadataInput {
      message PathSegment {
        oneof segment {
          option (validate.required) = true;
          string key = 1 [(validate.rules).string = {min_len: 1}];
        }
      }
      string filter = 1;
      repeated PathSegment path = 2 [(validate.rules).repeated = {min_items: 1}];
    }
    message FilterStateInput {
      string key = 1 [(validate.rules).string = {min_len: 1}];
    }
    message TransportSocketNameAction {
      string name = 1 [(validate.rules).string = {min_len: 1}];
    }
  `,
    /** The on-demand certificate selector (1.38). */
    `
    syntax = "proto3";
    package envoy.extensions.transport_sockets.tls.cert_selectors.on_demand_secret.v3;
    import "envoy/config/core/v3/config_source.proto";
    import "envoy/config/core/v3/extension.proto";
    import "validate/validate.proto";
    message Config {
      envoy.config.core.v3.ConfigSource config_source = 1 [(validate.rules).message = {required: true}];
      envoy.config.core.v3.TypedExtensionConfig certificate_mapper = 2 [(validate.rules).message = {required: true}];
      repeated string prefetch_secret_names = 3;
    }
  `,
    /** The filter-state certificate mapper (1.38). */
    `
    syntax = "proto3";
    package envoy.extensions.transport_sockets.tls.cert_mappers.filter_state_override.v3;
    import "validate/validate.proto";
    message Config {
      string default_value = 1 [(validate.rules).string = {min_len: 1}];
    }
  `,
  ],
};

let rootCache: protobuf.Root | undefined;

/** The upstream copy's types, plus exactly the `NEWER_THAN_COPY` additions. */
export function upstreamRoot(): protobuf.Root {
  if (rootCache) return rootCache;
  const root = new protobuf.Root();
  root.resolvePath = (origin, target) => {
    if (isAbsolute(target)) return target;
    const found = INCLUDE_DIRS.map((dir) => join(dir, target)).find((candidate) => existsSync(candidate));
    return found ?? protobuf.util.path.resolve(origin, target);
  };
  root.loadSync(UPSTREAM_ENTRY_FILES, { keepCase: true });
  for (const source of NEWER_THAN_COPY.sources) protobuf.parse(source, root, { keepCase: true });
  for (const field of NEWER_THAN_COPY.fields) {
    const type = root.lookupType(field.message);
    const added = new protobuf.Field(field.name, field.id, field.type);
    type.add(added);
    const oneof = "oneof" in field ? field.oneof : undefined;
    if (oneof) type.oneofs[oneof]!.add(added);
  }
  root.resolveAll();
  rootCache = root;
  return root;
}

export interface UpstreamReport {
  /** The upstream decoding in canonical JSON (same conventions as our renderer). */
  readonly json: Record<string, unknown>;
  /** Fields or Any types the upstream schema does not know. */
  readonly unknown: string[];
  /** Broken protoc-gen-validate rules. */
  readonly violations: string[];
}

/** Decodes `bytes` as upstream `typeName`, collecting unknown fields and rule violations. */
export function decodeUpstream(typeName: string, bytes: Uint8Array): UpstreamReport {
  const report = { unknown: [] as string[], violations: [] as string[] };
  const json = decodeMessage(upstreamRoot().lookupType(typeName), bytes, typeName, report);
  return { json: json as Record<string, unknown>, ...report };
}

type Sink = Pick<UpstreamReport, "unknown" | "violations">;
type Json = unknown;

function decodeMessage(type: protobuf.Type, bytes: Uint8Array, path: string, sink: Sink): Json {
  const reader = protobuf.Reader.create(bytes);
  const present = new Map<string, Json>();
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    const id = tag >>> 3;
    const wireType = tag & 7;
    const field = type.fieldsById[id];
    if (!field) {
      sink.unknown.push(`${path}: field ${id} is unknown to upstream ${type.fullName.slice(1)}`);
      reader.skipType(wireType);
      continue;
    }
    field.resolve();
    const at = `${path}.${field.name}`;
    if (!wireTypeFits(field, wireType)) {
      sink.unknown.push(`${at}: wire type ${wireType} does not fit upstream's ${field.type} field ${id}`);
      reader.skipType(wireType);
      continue;
    }
    if (field.map) {
      const [key, value] = decodeMapEntry(field as unknown as protobuf.MapField, reader.bytes(), at, sink);
      const map = (present.get(field.name) as Record<string, Json> | undefined) ?? {};
      map[key] = value;
      present.set(field.name, map);
    } else if (field.repeated) {
      const list = (present.get(field.name) as Json[] | undefined) ?? [];
      const packed = wireType === 2 && isPackable(field);
      const end = packed ? reader.uint32() + reader.pos : reader.pos;
      do list.push(readValue(field, reader, `${at}[${list.length}]`, sink));
      while (packed && reader.pos < end);
      present.set(field.name, list);
    } else {
      present.set(field.name, readValue(field, reader, at, sink));
    }
  }
  checkRules(type, present, path, sink);
  return canonical(type, present, path, sink);
}

const VARINT_TYPES = new Set(["int32", "uint32", "sint32", "int64", "uint64", "sint64", "bool"]);
const FIXED64_TYPES = new Set(["fixed64", "sfixed64", "double"]);
const FIXED32_TYPES = new Set(["fixed32", "sfixed32", "float"]);

/** The wire type upstream's declaration implies (repeated scalars may also come packed). */
function wireTypeFits(field: protobuf.Field, wireType: number): boolean {
  if (field.repeated && wireType === 2 && isPackable(field)) return true;
  if (field.map || field.resolvedType instanceof protobuf.Type) return wireType === 2;
  if (field.resolvedType instanceof protobuf.Enum || VARINT_TYPES.has(field.type)) return wireType === 0;
  if (FIXED64_TYPES.has(field.type)) return wireType === 1;
  if (FIXED32_TYPES.has(field.type)) return wireType === 5;
  return wireType === 2; // string, bytes
}

function isPackable(field: protobuf.Field): boolean {
  return field.resolvedType instanceof protobuf.Enum || field.type in protobuf.types.packed;
}

function decodeMapEntry(field: protobuf.MapField, bytes: Uint8Array, path: string, sink: Sink): [string, Json] {
  const reader = protobuf.Reader.create(bytes);
  let key = "";
  let value: Json;
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    if (tag >>> 3 === 1) key = String(readScalar(field.keyType, reader));
    else if (tag >>> 3 === 2) value = readValue(field, reader, `${path}["${key}"]`, sink);
    else reader.skipType(tag & 7);
  }
  return [key, value ?? defaultScalar(field)];
}

function readValue(field: protobuf.FieldBase, reader: protobuf.Reader, path: string, sink: Sink): Json {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Type) return decodeMessage(resolved, reader.bytes(), path, sink);
  if (resolved instanceof protobuf.Enum) {
    const number = reader.int32();
    return resolved.valuesById[number] ?? number;
  }
  return readScalar(field.type, reader);
}

function readScalar(type: string, reader: protobuf.Reader): Json {
  switch (type) {
    case "string":
      return reader.string();
    case "bytes":
      return Buffer.from(reader.bytes()).toString("base64");
    case "bool":
      return reader.bool();
    case "double":
      return reader.double();
    case "float":
      return reader.float();
    case "int32":
      return reader.int32();
    case "uint32":
      return reader.uint32();
    case "sint32":
      return reader.sint32();
    case "fixed32":
      return reader.fixed32();
    case "sfixed32":
      return reader.sfixed32();
    case "int64":
      return String(reader.int64());
    case "uint64":
      return String(reader.uint64());
    case "sint64":
      return String(reader.sint64());
    case "fixed64":
      return String(reader.fixed64());
    case "sfixed64":
      return String(reader.sfixed64());
    default:
      throw new Error(`unsupported scalar type ${type}`);
  }
}

function defaultScalar(field: protobuf.FieldBase): Json {
  if (field.resolvedType instanceof protobuf.Type) return {};
  if (field.resolvedType instanceof protobuf.Enum) return field.resolvedType.valuesById[0];
  if (field.type === "string" || field.type === "bytes") return "";
  return field.type === "bool" ? false : 0;
}

// ---- canonical JSON: the conventions of src/emit/render.ts -----------------------------------

const WRAPPERS = new Set(["Bool", "String", "UInt32", "Int32", "Double", "Float", "UInt64", "Int64", "Bytes"].map((w) => `.google.protobuf.${w}Value`));

function canonical(type: protobuf.Type, present: Map<string, Json>, path: string, sink: Sink): Json {
  const name = type.fullName;
  if (WRAPPERS.has(name)) return present.get("value") ?? defaultScalar(type.fields.value!);
  if (name === ".google.protobuf.Duration") return formatDuration(Number(present.get("seconds") ?? 0), Number(present.get("nanos") ?? 0));
  if (name === ".google.protobuf.Struct") return present.get("fields") ?? {};
  if (name === ".google.protobuf.ListValue") return present.get("values") ?? [];
  if (name === ".google.protobuf.Value") return structValue(present);
  if (name === ".google.protobuf.Any") return unpackAny(present, path, sink);
  const out: Record<string, Json> = {};
  for (const field of type.fieldsArray) {
    if (!present.has(field.name)) continue;
    const value = present.get(field.name);
    if (!field.repeated && !field.partOf && isDefault(field, value)) continue;
    out[field.name] = value;
  }
  return out;
}

function isDefault(field: protobuf.Field, value: Json): boolean {
  if (field.resolvedType instanceof protobuf.Type) return false;
  if (field.resolvedType instanceof protobuf.Enum) return value === field.resolvedType.valuesById[0];
  return value === "" || value === 0 || value === false || value === "0";
}

/** A Value is a oneof: the one kind present (protobufjs names these fields in camelCase). */
function structValue(present: Map<string, Json>): Json {
  if (present.has("nullValue") || present.has("null_value")) return null;
  const [value] = present.values();
  return value ?? null;
}

function unpackAny(present: Map<string, Json>, path: string, sink: Sink): Json {
  const url = String(present.get("type_url") ?? "");
  const bytes = Buffer.from(String(present.get("value") ?? ""), "base64");
  let type: protobuf.Type;
  try {
    type = upstreamRoot().lookupType(url.slice(url.lastIndexOf("/") + 1));
  } catch {
    sink.unknown.push(`${path}: Any type ${url} is unknown to upstream`);
    return { "@type": url };
  }
  return { "@type": url, ...(decodeMessage(type, bytes, `${path}<${type.name}>`, sink) as object) };
}

// ---- protoc-gen-validate rules ---------------------------------------------------------------

type Rules = Record<string, Record<string, unknown>>;

function fieldRules(field: protobuf.Field): Rules | undefined {
  const parsed = (field.parsedOptions ?? []) as Record<string, unknown>[];
  return parsed.find((option) => "(validate.rules)" in option)?.["(validate.rules)"] as Rules | undefined;
}

function checkRules(type: protobuf.Type, present: Map<string, Json>, path: string, sink: Sink): void {
  for (const oneof of type.oneofsArray) {
    const required = ((oneof.parsedOptions ?? []) as Record<string, unknown>[]).some((o) => o["(validate.required)"] === true);
    if (required && !oneof.oneof.some((member) => present.has(member))) {
      sink.violations.push(`${path}: one of ${oneof.oneof.join(", ")} is required`);
    }
  }
  for (const field of type.fieldsArray) {
    const rules = fieldRules(field);
    // A oneof member's rules apply only when that member is the one set.
    if (!rules || (field.partOf && !present.has(field.name))) continue;
    const at = `${path}.${field.name}`;
    const value = present.has(field.name) ? present.get(field.name) : absentValue(field);
    sink.violations.push(...violationsOf(rules, value, field, at));
  }
}

/** What PGV sees for an unset field: proto3 defaults for scalars, "absent" for messages. */
function absentValue(field: protobuf.Field): Json {
  if (field.map) return {};
  if (field.repeated) return [];
  if (field.resolvedType instanceof protobuf.Type) return undefined;
  if (field.resolvedType instanceof protobuf.Enum) return field.resolvedType.valuesById[0];
  return defaultScalar(field);
}

function violationsOf(rules: Rules, value: Json, field: protobuf.Field, at: string): string[] {
  const problems: string[] = [];
  for (const [kind, rule] of Object.entries(rules)) {
    if (kind === "message") {
      if (rule.required && value === undefined) problems.push(`${at}: required`);
      continue;
    }
    if (kind === "repeated") {
      problems.push(...sizeViolations(value as Json[], rule, at, "items"));
      if (rule.items) {
        for (const [i, item] of (value as Json[]).entries()) problems.push(...violationsOf(rule.items as Rules, item, field, `${at}[${i}]`));
      }
      continue;
    }
    if (kind === "map") {
      problems.push(...sizeViolations(Object.keys(value as object), rule, at, "pairs"));
      continue;
    }
    if (value === undefined) {
      if (rule.required) problems.push(`${at}: required`);
      continue;
    }
    problems.push(...scalarViolations(kind, rule, value, field, at));
  }
  return problems;
}

function sizeViolations(items: readonly unknown[], rule: Record<string, unknown>, at: string, unit: "items" | "pairs"): string[] {
  const problems: string[] = [];
  const min = rule[`min_${unit}`];
  const max = rule[`max_${unit}`];
  const known = new Set([`min_${unit}`, `max_${unit}`, "items", "keys", "values", "ignore_empty"]);
  if (min !== undefined && items.length < Number(min)) problems.push(`${at}: needs at least ${min} ${unit}`);
  if (max !== undefined && items.length > Number(max)) problems.push(`${at}: allows at most ${max} ${unit}`);
  for (const key of Object.keys(rule)) if (!known.has(key)) problems.push(`${at}: unsupported rule ${key} (teach the checker)`);
  return problems;
}

function scalarViolations(kind: string, rule: Record<string, unknown>, value: Json, field: protobuf.Field, at: string): string[] {
  switch (kind) {
    case "string":
      return stringViolations(rule, String(value), at);
    case "enum":
      return enumViolations(rule, value, field, at);
    case "duration":
      return durationViolations(rule, value, at);
    case "any":
      return rule.required && value === undefined ? [`${at}: required`] : [];
    case "uint32":
    case "uint64":
    case "int32":
    case "int64":
    case "double":
    case "float":
      return numberViolations(rule, Number(value), at);
    default:
      return [`${at}: unsupported rule kind ${kind} (teach the checker)`];
  }
}

function stringViolations(rule: Record<string, unknown>, value: string, at: string): string[] {
  if (rule.ignore_empty && value === "") return [];
  const bytes = Buffer.byteLength(value, "utf8");
  const chars = [...value].length;
  const checks: [string, boolean][] = [
    [`shorter than ${rule.min_len} characters`, rule.min_len !== undefined && chars < Number(rule.min_len)],
    [`longer than ${rule.max_len} characters`, rule.max_len !== undefined && chars > Number(rule.max_len)],
    [`shorter than ${rule.min_bytes} bytes`, rule.min_bytes !== undefined && bytes < Number(rule.min_bytes)],
    [`longer than ${rule.max_bytes} bytes`, rule.max_bytes !== undefined && bytes > Number(rule.max_bytes)],
    [`does not start with ${rule.prefix}`, rule.prefix !== undefined && !value.startsWith(String(rule.prefix))],
    [`is not a valid header name`, rule.well_known_regex === "HTTP_HEADER_NAME" && !/^:?[0-9a-zA-Z!#$%&'*+\-.^_|~`]+$/.test(value)],
    [`is not a valid header value`, rule.well_known_regex === "HTTP_HEADER_VALUE" && /[\0\r\n]/.test(value)],
  ];
  const known = new Set(["min_len", "max_len", "min_bytes", "max_bytes", "prefix", "well_known_regex", "strict", "ignore_empty"]);
  return [
    ...checks.filter(([, broken]) => broken).map(([problem]) => `${at}: ${JSON.stringify(value)} ${problem}`),
    ...Object.keys(rule)
      .filter((key) => !known.has(key))
      .map((key) => `${at}: unsupported string rule ${key} (teach the checker)`),
  ];
}

function enumViolations(rule: Record<string, unknown>, value: Json, field: protobuf.Field, at: string): string[] {
  const problems: string[] = [];
  const values = (field.resolvedType as protobuf.Enum).values;
  const number = typeof value === "string" ? values[value] : Number(value);
  if (rule.defined_only && typeof value !== "string") problems.push(`${at}: ${value} is not a defined enum value`);
  const notIn = ([] as unknown[]).concat(rule.not_in ?? []);
  if (notIn.map(Number).includes(Number(number))) problems.push(`${at}: ${value} is not allowed`);
  const known = new Set(["defined_only", "not_in"]);
  for (const key of Object.keys(rule)) if (!known.has(key)) problems.push(`${at}: unsupported enum rule ${key} (teach the checker)`);
  return problems;
}

function numberViolations(rule: Record<string, unknown>, value: number, at: string): string[] {
  const checks: [string, boolean][] = [
    [`must be > ${rule.gt}`, rule.gt !== undefined && !(value > Number(rule.gt))],
    [`must be ≥ ${rule.gte}`, rule.gte !== undefined && !(value >= Number(rule.gte))],
    [`must be < ${rule.lt}`, rule.lt !== undefined && !(value < Number(rule.lt))],
    [`must be ≤ ${rule.lte}`, rule.lte !== undefined && !(value <= Number(rule.lte))],
  ];
  const known = new Set(["gt", "gte", "lt", "lte"]);
  return [
    ...checks.filter(([, broken]) => broken).map(([problem]) => `${at}: ${value} ${problem}`),
    ...Object.keys(rule)
      .filter((key) => !known.has(key))
      .map((key) => `${at}: unsupported number rule ${key} (teach the checker)`),
  ];
}

function durationViolations(rule: Record<string, unknown>, value: Json, at: string): string[] {
  const seconds = Number(String(value).replace(/s$/, ""));
  const problems: string[] = [];
  if (rule.gt !== undefined && !(seconds > durationSeconds(rule.gt))) problems.push(`${at}: ${value} must be > ${durationSeconds(rule.gt)}s`);
  if (rule.gte !== undefined && !(seconds >= durationSeconds(rule.gte))) problems.push(`${at}: ${value} must be ≥ ${durationSeconds(rule.gte)}s`);
  if (rule.lt !== undefined && !(seconds < durationSeconds(rule.lt))) problems.push(`${at}: ${value} must be < ${durationSeconds(rule.lt)}s`);
  for (const key of Object.keys(rule))
    if (!["gt", "gte", "lt", "required"].includes(key)) problems.push(`${at}: unsupported duration rule ${key} (teach the checker)`);
  return problems;
}

function durationSeconds(bound: unknown): number {
  const { seconds = 0, nanos = 0 } = (bound ?? {}) as { seconds?: number; nanos?: number };
  return Number(seconds) + Number(nanos) / 1e9;
}

export interface ResourceCheck extends UpstreamReport {
  /** Our own rendering of the message (src/emit/render.ts). */
  readonly ours: Record<string, unknown>;
}

/**
 * Encodes `message` with our generated code, decodes the bytes with the upstream schema and
 * returns both renderings plus what upstream found wrong.
 */
export function checkAgainstUpstream(typeName: string, message: unknown): ResourceCheck {
  const info = lookupMessage(typeName);
  if (!info?.codec) throw new Error(`no generated codec for ${typeName}`);
  const bytes = info.codec.encode(message).finish();
  return { ...decodeUpstream(typeName, bytes), ours: renderMessage(typeName, message) };
}

/** Problems with `message` as upstream Envoy sees it; empty when it is valid and decodes identically. */
export function upstreamProblems(typeName: string, message: unknown): string[] {
  const check = checkAgainstUpstream(typeName, message);
  const mismatch = renderingMismatch(typeName, check.ours, check.json);
  return [...check.unknown, ...check.violations, ...(mismatch ? [mismatch] : [])];
}

/** Describes how our rendering differs from the upstream decoding, or undefined when they agree. */
export function renderingMismatch(typeName: string, ours: unknown, upstream: unknown): string | undefined {
  const [mine, theirs] = [stableStringify(ours), stableStringify(upstream)];
  return mine === theirs ? undefined : `${typeName}: upstream decodes\n  ${theirs}\nbut we rendered\n  ${mine}`;
}
