/**
 * The descriptors of every message aether-xds emits, so that renderers can walk any resource by
 * field number, name and type — and unpack its Anys. Field descriptors come from
 * gen/descriptors.ts (`buf build` of proto/), codecs from the generated code's `protoMetadata`.
 */
import { fromBinary } from "@bufbuild/protobuf";
import { type BinaryReader, type BinaryWriter, base64Decode } from "@bufbuild/protobuf/wire";
import { type DescriptorProto, type EnumDescriptorProto, FieldDescriptorProto_Label, FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { protoMetadata as registry } from "../../gen/aether/registry/v1/endpoint.js";
import { FILE_DESCRIPTORS } from "../../gen/descriptors.js";
import { protoMetadata as bootstrap } from "../../gen/envoy/config/bootstrap/v3/bootstrap.js";
import { protoMetadata as grpcAccessLog } from "../../gen/envoy/extensions/access_loggers/grpc/v3/als.js";
import { protoMetadata as stdoutAccessLog } from "../../gen/envoy/extensions/access_loggers/stream/v3/stream.js";
import { protoMetadata as aggregate } from "../../gen/envoy/extensions/clusters/aggregate/v3/cluster.js";
import { protoMetadata as router } from "../../gen/envoy/extensions/filters/http/router/v3/router.js";
import { protoMetadata as originalDst } from "../../gen/envoy/extensions/filters/listener/original_dst/v3/original_dst.js";
import { protoMetadata as tlsInspector } from "../../gen/envoy/extensions/filters/listener/tls_inspector/v3/tls_inspector.js";
import { protoMetadata as httpConnectionManager } from "../../gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.js";
import { protoMetadata as setFilterState } from "../../gen/envoy/extensions/filters/network/set_filter_state/v3/set_filter_state.js";
import { protoMetadata as tcpProxy } from "../../gen/envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy.js";
import { protoMetadata as transportSocketInputs } from "../../gen/envoy/extensions/matching/common_inputs/transport_socket/v3/transport_socket_inputs.js";
import { protoMetadata as filterStateOverride } from "../../gen/envoy/extensions/transport_sockets/tls/cert_mappers/filter_state_override/v3/config.js";
import { protoMetadata as onDemandSecret } from "../../gen/envoy/extensions/transport_sockets/tls/cert_selectors/on_demand_secret/v3/config.js";
import { protoMetadata as tls } from "../../gen/envoy/extensions/transport_sockets/tls/v3/tls.js";
import { protoMetadata as spiffeValidator } from "../../gen/envoy/extensions/transport_sockets/tls/v3/tls_spiffe_validator_config.js";
import { protoMetadata as httpProtocolOptions } from "../../gen/envoy/extensions/upstreams/http/v3/http_protocol_options.js";
import type { Any } from "../../gen/google/protobuf/any.js";
import { packedMessage, typeNameOfUrl } from "./any.js";

/** protobuf `FieldDescriptorProto.Type` values the renderers distinguish. */
export enum FieldType {
  Double = 1,
  Float = 2,
  Int64 = 3,
  Uint64 = 4,
  Int32 = 5,
  Fixed64 = 6,
  Fixed32 = 7,
  Bool = 8,
  String = 9,
  Message = 11,
  Bytes = 12,
  Uint32 = 13,
  Enum = 14,
  Sfixed32 = 15,
  Sfixed64 = 16,
  Sint32 = 17,
  Sint64 = 18,
}

export interface FieldInfo {
  readonly name: string;
  readonly number: number;
  readonly type: FieldType;
  /** Fully-qualified message or enum name, without the leading dot. */
  readonly typeName: string;
  readonly repeated: boolean;
  /** For map fields: the entry's value field (keys are always rendered as strings). */
  readonly mapValue?: FieldInfo;
}

export interface MessageInfo {
  readonly typeName: string;
  /** Sorted by field number, the order Envoy's own JSON printer uses. */
  readonly fields: readonly FieldInfo[];
  /** The generated codec; absent only for descriptors without generated code. */
  readonly codec?: {
    encode(message: unknown): BinaryWriter;
    decode(input: BinaryReader | Uint8Array, length?: number): unknown;
  };
}

/** What ts-proto's `protoMetadata` holds: each generated type by `.<fully-qualified name>`. */
interface FileMetadata {
  readonly references: { readonly [typeName: string]: unknown };
  readonly dependencies?: readonly FileMetadata[];
}

/** The generated files whose codecs (with their dependencies') render and unpack resources. */
const ROOT_FILES: readonly FileMetadata[] = [
  bootstrap,
  grpcAccessLog,
  stdoutAccessLog,
  aggregate,
  router,
  tlsInspector,
  originalDst,
  httpConnectionManager,
  setFilterState,
  tcpProxy,
  transportSocketInputs,
  spiffeValidator,
  tls,
  onDemandSecret,
  filterStateOverride,
  httpProtocolOptions,
  registry,
];

interface Registry {
  readonly messages: Map<string, MessageInfo>;
  readonly enums: Map<string, Map<number, string>>;
}

let registryCache: Registry | undefined;

function loadRegistry(): Registry {
  if (registryCache) return registryCache;
  const raw = new Map<string, DescriptorProto>();
  const enums = new Map<string, Map<number, string>>();
  for (const encoded of FILE_DESCRIPTORS) {
    const file = fromBinary(FileDescriptorProtoSchema, base64Decode(encoded));
    collect(file.package, file.messageType, file.enumType, raw, enums);
  }
  const codecs = generatedCodecs();
  const messages = new Map<string, MessageInfo>();
  for (const [typeName, descriptor] of raw) messages.set(typeName, messageInfo(typeName, descriptor, codecs.get(typeName), raw));
  registryCache = { messages, enums };
  return registryCache;
}

/** Every generated type reachable from `ROOT_FILES`, by fully-qualified name (no leading dot). */
function generatedCodecs(): Map<string, unknown> {
  const codecs = new Map<string, unknown>();
  const seen = new Set<FileMetadata>();
  const visit = (file: FileMetadata) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const [name, reference] of Object.entries(file.references)) codecs.set(name.replace(/^\./, ""), reference);
    file.dependencies?.forEach(visit);
  };
  ROOT_FILES.forEach(visit);
  return codecs;
}

function collect(
  scope: string,
  messageTypes: readonly DescriptorProto[],
  enumTypes: readonly EnumDescriptorProto[],
  raw: Map<string, DescriptorProto>,
  enums: Map<string, Map<number, string>>,
): void {
  for (const enumType of enumTypes) {
    enums.set(`${scope}.${enumType.name}`, new Map(enumType.value.map((value) => [value.number, value.name])));
  }
  for (const message of messageTypes) {
    const typeName = `${scope}.${message.name}`;
    raw.set(typeName, message);
    collect(typeName, message.nestedType, message.enumType, raw, enums);
  }
}

function messageInfo(typeName: string, descriptor: DescriptorProto, reference: unknown, raw: ReadonlyMap<string, DescriptorProto>): MessageInfo {
  const fields = descriptor.field
    .map((field): FieldInfo => {
      const entryType = field.typeName.replace(/^\./, "");
      const entry = raw.get(entryType);
      const base = {
        name: field.name,
        number: field.number,
        type: field.type as number as FieldType,
        typeName: entryType,
        repeated: field.label === FieldDescriptorProto_Label.REPEATED,
      };
      if (!entry?.options?.mapEntry) return base;
      const value = entry.field.find((f) => f.number === 2)!;
      return {
        ...base,
        mapValue: { name: "value", number: 2, type: value.type as number as FieldType, typeName: value.typeName.replace(/^\./, ""), repeated: false },
      };
    })
    .sort((a, b) => a.number - b.number);
  const codec = reference as MessageInfo["codec"];
  return codec?.encode ? { typeName, fields, codec } : { typeName, fields };
}

/** The message inside an Any: the original one when `pack` built it, else decoded. */
export function unpackAny(any: Any): { typeName: string; message: unknown } | undefined {
  const typeName = typeNameOfUrl(any.type_url ?? "");
  const packed = packedMessage(any);
  if (packed !== undefined) return { typeName, message: packed };
  const codec = lookupMessage(typeName)?.codec;
  return codec ? { typeName, message: codec.decode(any.value ?? new Uint8Array()) } : undefined;
}

export function lookupMessage(typeName: string): MessageInfo | undefined {
  return loadRegistry().messages.get(typeName);
}

export function enumValueName(typeName: string, value: number): string | undefined {
  return enumValueNames(typeName)?.get(value);
}

/** Every value name of an enum, by number. */
export function enumValueNames(typeName: string): ReadonlyMap<number, string> | undefined {
  return loadRegistry().enums.get(typeName);
}
