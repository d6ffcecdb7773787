/**
 * The usual registry record, parsed without the schema. A mesh file or a registry holds up to
 * millions of records and the zod schema (`serviceEndpoint`) spends ~15 µs on each: most of
 * `parseSnapshot`. Records are nearly always plain objects of IPv4 addresses, names, a netns path
 * and health enums (binary records decode into the same), which this checks directly. Anything
 * else — an IPv6 address, an object that is not plain, a mistake to report — is not "usual": the
 * schema parses it (and words its errors), so the two can never disagree on what is accepted.
 */
import { isDnsLabel, isDnsSubdomain, isValidPort } from "../naming.js";
import { isPlainObject } from "../util/same-data.js";
import { CLUSTER_NAME_PATTERN, normalizeNetns } from "./fields.js";
import { DEFAULT_ENDPOINT_WEIGHT, HEALTH_CHECK_MODES, HEALTH_STATUSES, MAX_PORTS_PER_RECORD, METADATA_KEY_PATTERN, type ServiceEndpoint } from "./registry.js";

type Fields = Record<string, unknown>;

/**
 * What `serviceEndpoint` parses `value` into — the same fields, values and key order — when
 * `value` is a usual record; undefined otherwise (then only the schema knows).
 */
export function usualServiceEndpoint(value: unknown): ServiceEndpoint | undefined {
  if (!isPlainObject(value) || !hasOnly(value, RECORD_KEYS)) return undefined;
  const { ip, clusterName, port = 0, ports = NO_PORTS, weight = 0 } = value;
  if (!isUsualIpv4(ip) || !isClusterName(clusterName) || !isPortOrUnset(port) || !isPortList(ports) || !isUint32(weight)) return undefined;
  const locality = usualLocality(value.locality);
  const metadata = usualMetadata(value.metadata);
  const containerMetadata = usualContainerMetadata(value.containerMetadata);
  const kubernetesMetadata = usualKubernetesMetadata(value.kubernetesMetadata);
  const health = enumName(HEALTH_STATUSES, "HEALTH_STATUS_", value.health);
  const healthCheckMode = enumName(HEALTH_CHECK_MODES, "HEALTH_CHECK_MODE_", value.healthCheckMode);
  if (!locality || !metadata || !containerMetadata || !kubernetesMetadata || !health || !healthCheckMode) return undefined;
  if (port === 0 && ports.length === 0) return undefined; // an error: the schema reports it
  return {
    ip,
    clusterName,
    port,
    ports: servedPorts(port, ports),
    weight: weight === 0 ? DEFAULT_ENDPOINT_WEIGHT : weight,
    locality,
    metadata,
    containerMetadata,
    kubernetesMetadata,
    health,
    healthCheckMode,
  };
}

const RECORD_KEYS: ReadonlySet<string> = new Set([
  "ip",
  "clusterName",
  "port",
  "ports",
  "weight",
  "locality",
  "metadata",
  "containerMetadata",
  "kubernetesMetadata",
  "health",
  "healthCheckMode",
]);
const LOCALITY_KEYS: ReadonlySet<string> = new Set(["region", "zone"]);
const CONTAINER_KEYS: ReadonlySet<string> = new Set(["containerId", "networkNamespace"]);
const KUBERNETES_KEYS: ReadonlySet<string> = new Set(["namespace", "podName", "nodeName", "nodeIp"]);
const NO_PORTS: readonly number[] = [];

/**
 * Whether every enumerable key is one of `keys` (a key holding `undefined` is one left out, to
 * the schema and here). Inherited keys count too: only a polluted `Object.prototype` has any, and
 * then the schema decides.
 */
function hasOnly(fields: Fields, keys: ReadonlySet<string>): boolean {
  for (const key in fields) if (!keys.has(key)) return false;
  return true;
}

/** Dotted-decimal IPv4 without leading zeros: its canonical text, as `ipAddress` returns it. */
const IPV4 = /^(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/** IPv4 that an endpoint can have: not in 0.0.0.0/8, multicast, reserved or broadcast (`ipAddressProblem`). */
function isUsualIpv4(value: unknown): value is string {
  if (typeof value !== "string" || !IPV4.test(value)) return false;
  let first = 0;
  for (let i = 0; value.charCodeAt(i) !== 0x2e; i++) first = 10 * first + value.charCodeAt(i) - 0x30;
  return first >= 1 && first <= 223;
}

function isClusterName(value: unknown): value is string {
  return typeof value === "string" && value.length <= 253 && CLUSTER_NAME_PATTERN.test(value);
}

function isPortOrUnset(value: unknown): value is number {
  return typeof value === "number" && (value === 0 || isValidPort(value));
}

function isPortList(value: unknown): value is readonly number[] {
  if (!Array.isArray(value) || value.length > MAX_PORTS_PER_RECORD) return false;
  for (let i = 0; i < value.length; i++) if (typeof value[i] !== "number" || !isValidPort(value[i])) return false;
  return true;
}

function isUint32(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= 0 && value <= 0xffffffff;
}

/** `port` and `ports` as one sorted list without repeats. */
function servedPorts(port: number, ports: readonly number[]): number[] {
  const served = new Set(ports);
  if (port !== 0) served.add(port);
  return [...served].sort((a, b) => a - b);
}

/** A string of at most `max` characters, `""` when unset; undefined when it is not one. */
function text(value: unknown, max: number): string | undefined {
  if (value === undefined) return "";
  return typeof value === "string" && value.length <= max ? value : undefined;
}

function usualLocality(value: unknown): ServiceEndpoint["locality"] | undefined {
  if (value === undefined) return { region: "", zone: "" };
  if (!isPlainObject(value) || !hasOnly(value, LOCALITY_KEYS)) return undefined;
  const region = text(value.region, 256);
  const zone = text(value.zone, 256);
  return region === undefined || zone === undefined ? undefined : { region, zone };
}

/**
 * Metadata as the schema's record copies it: its own enumerable keys, in their order. One with a
 * symbol key is left to the schema, which rejects it.
 */
function usualMetadata(value: unknown): Record<string, string> | undefined {
  if (value === undefined) return {};
  if (!isPlainObject(value) || Object.getOwnPropertySymbols(value).length > 0) return undefined;
  const metadata: Record<string, string> = {};
  for (const key of Object.keys(value)) {
    const entry = value[key];
    if (key.length > 256 || !METADATA_KEY_PATTERN.test(key) || typeof entry !== "string" || entry.length > 4096) return undefined;
    metadata[key] = entry;
  }
  return metadata;
}

function usualContainerMetadata(value: unknown): ServiceEndpoint["containerMetadata"] | undefined {
  if (value === undefined) return { containerId: "", networkNamespace: "" };
  if (!isPlainObject(value) || !hasOnly(value, CONTAINER_KEYS)) return undefined;
  const containerId = text(value.containerId, 256);
  const netns = text(value.networkNamespace, 4096);
  if (containerId === undefined || netns === undefined) return undefined;
  if (netns !== "" && (netns[0] !== "/" || netns.includes("\0"))) return undefined;
  return { containerId, networkNamespace: netns === "" ? "" : normalizeNetns(netns) };
}

function usualKubernetesMetadata(value: unknown): ServiceEndpoint["kubernetesMetadata"] | undefined {
  if (value === undefined) return { namespace: "", podName: "", nodeName: "", nodeIp: "" };
  if (!isPlainObject(value) || !hasOnly(value, KUBERNETES_KEYS)) return undefined;
  const namespace = text(value.namespace, 63);
  const podName = text(value.podName, 253);
  const nodeName = text(value.nodeName, 253);
  const nodeIp = text(value.nodeIp, 64);
  if (namespace === undefined || podName === undefined || nodeName === undefined || nodeIp === undefined) return undefined;
  if (!orEmpty(namespace, isDnsLabel) || !orEmpty(podName, isDnsSubdomain) || !orEmpty(nodeName, isDnsSubdomain) || !orEmpty(nodeIp, isUsualIpv4))
    return undefined;
  return { namespace, podName, nodeName, nodeIp };
}

function orEmpty(value: string, valid: (value: string) => boolean): boolean {
  return value === "" || valid(value);
}

/**
 * A health enum as the schema reads it: by name (`"HEALTHY"`), proto enum name
 * (`"HEALTH_STATUS_HEALTHY"`) or wire number (as decoded binary records give it); `names[0]` when
 * unset, undefined when it is none of these.
 */
function enumName<const T extends readonly string[]>(names: T, protoPrefix: string, value: unknown): T[number] | undefined {
  if (value === undefined) return names[0];
  const name = typeof value === "number" ? names[value] : typeof value === "string" && value.startsWith(protoPrefix) ? value.slice(protoPrefix.length) : value;
  return typeof name === "string" && names.includes(name) ? name : undefined;
}
