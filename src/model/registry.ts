/**
 * The mesh registry's `ServiceEndpoint` record (`aether.registry.v1`), in its JSON form (proto3
 * JSON names) and its binary protobuf form as the registry stores it. Both parse into the same
 * normalized `ServiceEndpoint`.
 */
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";
import { z } from "zod";
import {
  ServiceEndpoint_MetadataEntry,
  HealthCheckMode as WireHealthCheckMode,
  HealthStatus as WireHealthStatus,
  ServiceEndpoint as WireServiceEndpoint,
} from "../../gen/aether/registry/v1/endpoint.js";
import { setOwn } from "../util/maps.js";
import { clusterName, dnsLabel, dnsSubdomain, ipAddress, locality, netnsPath, orEmpty, port, uint32 } from "./fields.js";

export const DEFAULT_ENDPOINT_WEIGHT = 1024;

/** The most ports one record may list (`SNAPSHOT_LIMITS.portsPerRecord`). */
export const MAX_PORTS_PER_RECORD = 64;

export const HEALTH_STATUSES = ["UNSPECIFIED", "HEALTHY", "UNHEALTHY", "DRAINING"] as const;
export type RegistryHealth = (typeof HEALTH_STATUSES)[number];
export const HEALTH_CHECK_MODES = ["UNSPECIFIED", "ACTIVE", "EDS"] as const;
export type HealthCheckMode = (typeof HEALTH_CHECK_MODES)[number];

/** Accepts `"HEALTHY"`, the proto enum name `"HEALTH_STATUS_HEALTHY"` or the wire number. */
function registryEnum<const T extends readonly string[]>(names: T, protoPrefix: string) {
  return z.union([z.string(), z.number()]).transform((value, ctx): T[number] => {
    const name = typeof value === "number" ? names[value] : value.startsWith(protoPrefix) ? value.slice(protoPrefix.length) : value;
    if (name !== undefined && names.includes(name)) return name;
    ctx.addIssue({ code: "custom", message: `not one of ${names.join(", ")}` });
    return z.NEVER;
  });
}

const PORT_ERROR = "not a port: must be an integer 1–65535";

/** What a metadata key may hold: printable ASCII without spaces. */
export const METADATA_KEY_PATTERN = /^[\x21-\x7e]+$/;

const metadataKey = z
  .string()
  .min(1, { error: "metadata keys must not be empty" })
  .max(256, { error: "metadata key longer than 256 characters" })
  .regex(METADATA_KEY_PATTERN, { error: "metadata keys are printable ASCII without spaces" });

const endpointJson = z.strictObject({
  ip: ipAddress,
  clusterName: clusterName,
  /** 0: unset (the record's ports are in `ports`). */
  port: z.number().int({ error: PORT_ERROR }).min(0, { error: PORT_ERROR }).max(65535, { error: PORT_ERROR }).default(0),
  ports: z
    .array(port)
    .max(MAX_PORTS_PER_RECORD, { error: `more than ${MAX_PORTS_PER_RECORD} ports (the limit per record)` })
    .default([]),
  weight: uint32.default(0),
  locality: locality.default({ region: "", zone: "" }),
  metadata: z.record(metadataKey, z.string().max(4096, { error: "longer than 4096 characters" })).default({}),
  containerMetadata: z
    .strictObject({
      containerId: z.string().max(256).default(""),
      networkNamespace: orEmpty(netnsPath).default(""),
    })
    .default({ containerId: "", networkNamespace: "" }),
  kubernetesMetadata: z
    .strictObject({
      namespace: orEmpty(dnsLabel).default(""),
      podName: orEmpty(dnsSubdomain).default(""),
      nodeName: orEmpty(dnsSubdomain).default(""),
      nodeIp: orEmpty(ipAddress).default(""),
    })
    .default({ namespace: "", podName: "", nodeName: "", nodeIp: "" }),
  health: registryEnum(HEALTH_STATUSES, "HEALTH_STATUS_").default("UNSPECIFIED"),
  healthCheckMode: registryEnum(HEALTH_CHECK_MODES, "HEALTH_CHECK_MODE_").default("UNSPECIFIED"),
});

/** A registry record after validation, with defaults applied and the served ports resolved. */
export const serviceEndpoint = endpointJson.transform((raw, ctx) => {
  if (raw.port === 0 && raw.ports.length === 0) {
    ctx.addIssue({ code: "custom", path: ["port"], message: "an endpoint needs a port or a non-empty ports list" });
    return z.NEVER;
  }
  const served = new Set(raw.ports);
  if (raw.port !== 0) served.add(raw.port);
  return {
    ...raw,
    ports: [...served].sort((a, b) => a - b),
    weight: raw.weight === 0 ? DEFAULT_ENDPOINT_WEIGHT : raw.weight,
  };
});

/**
 * The pod name a record stands for: its own, or one made from its IP (`ip-10-244-0-5`,
 * `ip-fd00--5`) so its listeners still have a stable name. Injective over canonical IPs; a `0` ends
 * a name that would end in `-` (an IPv6 address ending in `::`), which no canonical address does.
 */
export function podNameOf(endpoint: ServiceEndpoint): string {
  if (endpoint.kubernetesMetadata.podName) return endpoint.kubernetesMetadata.podName;
  const name = `ip-${endpoint.ip.replace(/[.:]/g, "-")}`;
  return name.endsWith("-") ? `${name}0` : name;
}

/** A registry record in its JSON form (proto3 JSON names), before validation and defaults. */
export type ServiceEndpointInput = z.input<typeof endpointJson>;
/** One registry endpoint: a pod of a service. `ports` holds every served port, sorted. */
export type ServiceEndpoint = z.output<typeof serviceEndpoint>;

/**
 * The metadata entries of a binary record, as they are on the wire. Decoding into an object would
 * drop a `__proto__` key silently; kept as own properties, it meets the checks a JSON record meets.
 */
function wireMetadata(bytes: Uint8Array): Record<string, string> {
  const metadata: Record<string, string> = {};
  const reader = new BinaryReader(bytes);
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (field !== METADATA_FIELD || wireType !== WireType.LengthDelimited) {
      reader.skip(wireType);
      continue;
    }
    const entry = ServiceEndpoint_MetadataEntry.decode(reader.bytes());
    setOwn(metadata, entry.key, entry.value);
  }
  return metadata;
}

/** `map<string, string> metadata = 6;` in aether/registry/v1/endpoint.proto. */
const METADATA_FIELD = 6;

/** The string fields of the binary record by field number, with their JSON names; nested messages with theirs. */
type StringFields = { readonly [field: number]: string | readonly [name: string, fields: StringFields] };
const STRING_FIELDS: StringFields = {
  1: "ip",
  2: "clusterName",
  5: ["locality", { 1: "region", 2: "zone" }],
  6: ["metadata", { 1: "(a key)", 2: "(a value)" }],
  7: ["containerMetadata", { 1: "containerId", 2: "networkNamespace" }],
  8: ["kubernetesMetadata", { 1: "namespace", 2: "podName", 3: "nodeName", 5: "nodeIp" }],
};

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * The JSON path of the first string field of a binary record that is not valid UTF-8, if any. The
 * protobuf decoder replaces invalid sequences with U+FFFD, so a record would silently name
 * something other than what its bytes say; this reads the raw bytes of each string field first.
 */
export function invalidUtf8Field(bytes: Uint8Array, fields: StringFields = STRING_FIELDS, prefix = ""): string | undefined {
  const reader = new BinaryReader(bytes);
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    const spec = fields[field];
    if (spec === undefined || wireType !== WireType.LengthDelimited) {
      reader.skip(wireType);
      continue;
    }
    const value = reader.bytes();
    if (typeof spec !== "string") {
      const [name, nested] = spec;
      const found = invalidUtf8Field(value, nested, `${prefix}${name}${name === "metadata" ? " " : "."}`);
      if (found !== undefined) return found;
      continue;
    }
    try {
      strictUtf8.decode(value);
    } catch {
      return `${prefix}${spec}`;
    }
  }
  return undefined;
}

/** Decodes a binary `aether.registry.v1.ServiceEndpoint` into its JSON form (not yet validated). */
export function decodeServiceEndpoint(bytes: Uint8Array): ServiceEndpointInput {
  const wire = WireServiceEndpoint.decode(bytes);
  return {
    ip: wire.ip ?? "",
    clusterName: wire.cluster_name ?? "",
    port: wire.port ?? 0,
    ports: wire.ports ?? [],
    weight: wire.weight ?? 0,
    locality: { region: wire.locality?.region ?? "", zone: wire.locality?.zone ?? "" },
    metadata: wireMetadata(bytes),
    containerMetadata: {
      containerId: wire.container_metadata?.container_id ?? "",
      networkNamespace: wire.container_metadata?.network_namespace ?? "",
    },
    kubernetesMetadata: {
      namespace: wire.kubernetes_metadata?.namespace ?? "",
      podName: wire.kubernetes_metadata?.pod_name ?? "",
      nodeName: wire.kubernetes_metadata?.node_name ?? "",
      nodeIp: wire.kubernetes_metadata?.node_ip ?? "",
    },
    health: wire.health ?? WireHealthStatus.HEALTH_STATUS_UNSPECIFIED,
    healthCheckMode: wire.health_check_mode ?? WireHealthCheckMode.HEALTH_CHECK_MODE_UNSPECIFIED,
  };
}

/** Encodes a validated endpoint as the registry's binary record (the inverse of `decodeServiceEndpoint`). */
export function encodeServiceEndpoint(endpoint: ServiceEndpoint): Uint8Array {
  return WireServiceEndpoint.encode({
    ip: endpoint.ip,
    cluster_name: endpoint.clusterName,
    port: endpoint.port,
    ports: endpoint.ports,
    weight: endpoint.weight,
    locality: endpoint.locality,
    metadata: endpoint.metadata,
    container_metadata: {
      container_id: endpoint.containerMetadata.containerId,
      network_namespace: endpoint.containerMetadata.networkNamespace,
    },
    kubernetes_metadata: {
      namespace: endpoint.kubernetesMetadata.namespace,
      pod_name: endpoint.kubernetesMetadata.podName,
      node_name: endpoint.kubernetesMetadata.nodeName,
      node_ip: endpoint.kubernetesMetadata.nodeIp,
    },
    health: HEALTH_STATUSES.indexOf(endpoint.health),
    health_check_mode: HEALTH_CHECK_MODES.indexOf(endpoint.healthCheckMode),
  }).finish();
}
