/**
 * The mesh file: one JSON/YAML document describing a whole mesh — mesh-wide settings, node status
 * and every registry record — and the `Snapshot` it parses into.
 */
import { z } from "zod";
import { util } from "zod/v4/core";
import { formatPath, InputError, type InputIssue } from "../errors.js";
import { DEFAULT_NODE_IDENTITY, isServiceKey, isValidPort, nodeIdentityProblem, parseServiceKey, type ServiceKey, structuredSniProblem } from "../naming.js";
import { pushAll } from "../util/arrays.js";
import { deepFreeze } from "../util/freeze.js";
import { compositeKey } from "../util/keys.js";
import { compareByKey } from "../util/order.js";
import { sameData } from "../util/same-data.js";
import { clusterName, dnsSubdomain, ipAddress, trustDomain } from "./fields.js";
import { collectIssues, describeValue, unsafeInputIssues } from "./issues.js";
import { decodeServiceEndpoint, invalidUtf8Field, type ServiceEndpoint, serviceEndpoint } from "./registry.js";
import {
  crossCheck,
  type MeshParts,
  nodeListIssues,
  noTrustDomainIssue,
  portCountIssues,
  replacedServicePodIssues,
  SNAPSHOT_LIMITS,
  sameServiceKeys,
} from "./snapshot-checks.js";
import { usualServiceEndpoint } from "./usual-record.js";

export { SNAPSHOT_LIMITS } from "./snapshot-checks.js";

const PER_DOMAIN_BUNDLE_ERROR =
  "a bundle file per trust domain is read once and goes stale at CA rotation: give mesh.trust.bundles (a SPIFFE bundle map file, which Envoy watches), or this domain's bundle inline ({ inlineString: <PEM> })";

const bundleSource = z.union([
  z.strictObject({
    filename: z
      .string()
      .min(1)
      .max(4096)
      .regex(/^\/[^\0]*$/, { error: "not an absolute path" }),
  }),
  z.strictObject({ inlineString: z.string().min(1).max(1_048_576) }),
]);

/** One trust domain of the whole mesh, shared by every cluster. */
const sharedTrust = z.strictObject({
  mode: z.literal("shared"),
  trustDomain,
  /** SDS name of the CA bundle; SPIRE serves it as `spiffe://<trustDomain>`. */
  bundleSdsName: z.string().min(1).max(1024).optional(),
});

/**
 * SPIFFE federation: per-cluster trust domains. Their CA bundles come from a SPIFFE bundle map
 * (`bundles`: a file Envoy watches, so a CA rotation is picked up, or inline JSON), or inline per
 * domain (PEM, pushed with the config). A bundle file per domain is refused: Envoy reads it once.
 */
const federatedTrust = z.strictObject({
  mode: z.literal("federated"),
  bundles: bundleSource.optional(),
  trustDomains: z
    .array(
      z.strictObject({
        name: trustDomain,
        clusters: z.array(clusterName).min(1, { error: "a trust domain needs at least one cluster" }),
        bundle: z
          .union([
            z.strictObject({ inlineString: z.string().min(1).max(1_048_576) }),
            z.strictObject({ filename: z.string() }).superRefine((_, ctx) => ctx.addIssue({ code: "custom", message: PER_DOMAIN_BUNDLE_ERROR })),
          ])
          .optional(),
      }),
    )
    .min(1, { error: "federation needs at least one trust domain" }),
});

export const trustConfig = z.discriminatedUnion("mode", [sharedTrust, federatedTrust]);
export type TrustConfig = z.output<typeof trustConfig>;

export const POD_NETWORKS = ["isolated", "routable"] as const;
/** Whether pod IPs route between clusters (`mesh.podNetwork`). */
export type PodNetwork = (typeof POD_NETWORKS)[number];

/**
 * What the application speaks on a port: `http2` (h2c), `http` (HTTP/1.1), `tcp` (proxied as
 * bytes). An undeclared port is HTTP in whichever version the inbound connection used.
 */
const portProtocol = z.enum(["http2", "http", "tcp"], { error: 'port protocol must be "http2", "http" or "tcp"' });
export type PortProtocol = z.output<typeof portProtocol>;

/** A port's protocol as declared in the mesh file's `protocols`, else `undeclared` (HTTP, in the downstream's version). */
export function protocolOf(protocols: ReadonlyMap<number, PortProtocol> | undefined, port: number): PortProtocol | "undeclared" {
  return protocols?.get(port) ?? "undeclared";
}

const serviceKeyField = z.string().refine(isServiceKey, {
  error: 'not a service key "<namespace>/<service>" of two DNS-1123 labels',
});

/**
 * A record as the mesh file holds it: JSON, or the registry's binary protobuf (base64 or bytes).
 * Checked for its kind only, not copied (`parseRecords` parses each one into a new object).
 */
const registryRecord = z.union([z.instanceof(Uint8Array), z.string(), z.custom<Record<string, unknown>>(util.isPlainObject)]);

const serviceRecords = z.record(serviceKeyField, z.array(registryRecord));
/** The same, accepting any key: records under a bad key are still checked (the key is reported once, above). */
const lenientServiceRecords = z.record(z.string(), z.array(registryRecord));

/** The mesh file. Its JSON Schema (`meshFileJsonSchema`) is generated from this object. */
const meshFile = z.strictObject({
  /** The JSON Schema the file is written against, for editors; ignored. */
  $schema: z.string().max(4096).optional(),
  mesh: z.strictObject({
    meshDomain: dnsSubdomain,
    trust: trustConfig,
    /**
     * Whether pod IPs route between clusters (`routable`) or only within their own (`isolated`,
     * e.g. clusters sharing a pod CIDR). With `isolated`, the waypoint-off mode cannot reach
     * another cluster's pods: each such direct endpoint is reported (and fails the mesh check).
     */
    podNetwork: z.enum(POD_NETWORKS).default("isolated"),
    /** Template of the node proxies' SPIFFE ID; placeholders `{trustDomain}`, `{cluster}`, `{node}`. */
    nodeIdentity: z
      .string()
      .min(1)
      .max(1024)
      .superRefine((template, ctx) => {
        const problem = nodeIdentityProblem(template);
        if (problem) ctx.addIssue({ code: "custom", message: problem });
      })
      .default(DEFAULT_NODE_IDENTITY),
  }),
  nodes: z
    .array(
      z.strictObject({
        cluster: clusterName,
        name: dnsSubdomain,
        ip: ipAddress,
        region: z.string().max(256).default(""),
        zone: z.string().max(256).default(""),
        ready: z.boolean().default(true),
      }),
    )
    .default([]),
  services: serviceRecords,
  exports: z.array(serviceKeyField).optional(),
  protocols: z
    .record(
      serviceKeyField,
      z.record(
        z
          .string()
          .regex(/^[1-9]\d{0,4}$/, { error: "not a port: must be an integer 1–65535" })
          .refine((key) => isValidPort(Number(key)), { error: "not a port: must be an integer 1–65535" }),
        portProtocol,
      ),
    )
    .default({}),
  dependencies: z.record(serviceKeyField, z.array(serviceKeyField)).optional(),
  /** Service VIPs (a clusterset VIP per service): pods' connections to VIP:port are captured and proxied. */
  vips: z.record(serviceKeyField, ipAddress).optional(),
});

/** A mesh file's document as `parseSnapshot` accepts it, with JSON or binary registry records. */
export type MeshFileInput = z.input<typeof meshFile>;

export interface NodeStatus {
  readonly cluster: string;
  readonly name: string;
  readonly ip: string;
  readonly region: string;
  readonly zone: string;
  readonly ready: boolean;
}

/** A validated mesh: settings, node status and registry records, keyed and sorted. */
export interface Snapshot {
  readonly mesh: {
    readonly meshDomain: string;
    readonly trust: TrustConfig;
    readonly nodeIdentity: string;
    readonly podNetwork: PodNetwork;
  };
  readonly nodes: readonly NodeStatus[];
  /** Registry records per service key, in input order. */
  readonly services: ReadonlyMap<ServiceKey, readonly ServiceEndpoint[]>;
  /** Exported services; undefined when the snapshot has no export data (everything is exported). */
  readonly exports: ReadonlySet<ServiceKey> | undefined;
  /** Declared port protocols; an undeclared port is HTTP in the downstream's version. */
  readonly protocols: ReadonlyMap<ServiceKey, ReadonlyMap<number, PortProtocol>>;
  /** Services each service calls; undefined when the snapshot has no dependency data. */
  readonly dependencies: ReadonlyMap<ServiceKey, readonly ServiceKey[]> | undefined;
  /** Each service's VIP, canonical; undefined when the snapshot has none (nothing is captured). */
  readonly vips: ReadonlyMap<ServiceKey, string> | undefined;
}

/**
 * Validates a mesh file (already parsed from JSON or YAML) and returns the snapshot, or throws one
 * `InputError` listing every problem with its path.
 */
export function parseSnapshot(input: unknown): Snapshot {
  return parsedDocument(input, undefined);
}

/**
 * The snapshot of a mesh file holding `settings` (a document without `services`) and `snapshot`'s
 * records, validated as `parseSnapshot` validates such a file — every check across settings and
 * records — without parsing the records again: they are `snapshot`'s objects. Only for deriving a
 * change of node list or relation parts from `snapshot` (`asRegistryUpdate`, which serves it only
 * under `snapshot`'s own mesh settings, as what was derived from a record may depend on them).
 */
export function withRecordsOf(snapshot: Snapshot, settings: Readonly<Record<string, unknown>>): Snapshot {
  requireValidated(snapshot);
  return parsedDocument({ ...settings, services: {} }, snapshot.services);
}

/** `parseSnapshot`, or with `records` given (validated already) in place of the document's services. */
function parsedDocument(input: unknown, records: ReadonlyMap<ServiceKey, readonly ServiceEndpoint[]> | undefined): Snapshot {
  const oversized = sizeIssues(input);
  if (oversized.length > 0) throw new InputError("snapshot", oversized);
  const unsafe = unsafeInputIssues(input);
  if (unsafe.length > 0) throw new InputError("snapshot", unsafe);
  const file = meshFile.safeParse(input);
  const issues: InputIssue[] = file.success ? [] : collectIssues(file.error.issues, input);
  const services = records ? new Map(records) : documentServices(input, issues);
  pushAll(issues, crossCheck(file.success ? file.data : parsedSections(input), services, records !== undefined));
  if (!file.success || issues.length > 0) throw new InputError("snapshot", issues);
  const { mesh, nodes, exports, protocols, dependencies, vips } = file.data;
  const snapshot = {
    mesh,
    nodes,
    services,
    exports: exports && new Set(exports as ServiceKey[]),
    protocols: new Map(
      Object.entries(protocols).map(([key, ports]) => [key as ServiceKey, new Map(Object.entries(ports).map(([port, protocol]) => [Number(port), protocol]))]),
    ),
    dependencies: dependencies && new Map(Object.entries(dependencies).map(([key, deps]) => [key as ServiceKey, [...new Set(deps)].sort() as ServiceKey[]])),
    vips: vips && new Map(Object.entries(vips).sort(compareByKey) as [ServiceKey, string][]),
  };
  return validated(snapshot, records === undefined);
}

/**
 * The document's records, each service's validated one by one even when the rest of the file is
 * broken, and so is each section, so one run shows every problem, the cross-field ones included.
 */
function documentServices(input: unknown, issues: InputIssue[]): Map<ServiceKey, ServiceEndpoint[]> {
  const records = lenientServiceRecords.safeParse((input as { services?: unknown } | null)?.services);
  return records.success ? parseServices(records.data, issues) : new Map<ServiceKey, ServiceEndpoint[]>();
}

/** Snapshots made by `parseSnapshot`, `withServiceRecords` and `withNodes`: validated, and read-only. */
const validatedSnapshots = new WeakSet<object>();
/** A number per validated snapshot, for lineages to name it by. */
const serials = new WeakMap<Snapshot, number>();
let nextSerial = 0;
/** Maps and sets of validated snapshots: adding to or removing from them throws. */
const sealedCollections = new WeakSet<object>();

/** Whether `value` is a snapshot `parseSnapshot`, `withServiceRecords` or `withNodes` made (validated). */
export function isValidatedSnapshot(value: unknown): value is Snapshot {
  return typeof value === "object" && value !== null && validatedSnapshots.has(value);
}

/**
 * Freezes a snapshot just validated — its objects, arrays, maps and sets — so nothing can change
 * what was checked, and records it as validated.
 */
function validated(snapshot: Snapshot, newRecords = true): Snapshot {
  deepFreeze(snapshot.mesh);
  for (const node of snapshot.nodes) Object.freeze(node);
  Object.freeze(snapshot.nodes);
  if (newRecords) for (const endpoints of snapshot.services.values()) freezeRecords(endpoints);
  for (const collection of [snapshot.services, snapshot.exports, snapshot.protocols, snapshot.dependencies, snapshot.vips]) {
    if (collection) seal(collection);
  }
  for (const ports of snapshot.protocols.values()) seal(ports);
  for (const deps of snapshot.dependencies?.values() ?? []) Object.freeze(deps);
  return registered(snapshot);
}

/**
 * `validated` for a snapshot made from a validated one with some services' records replaced (the
 * `replaced` lists): everything else is shared with that one, already frozen, so only the new
 * records and services map are frozen (an update costs its records, not the mesh's).
 */
function validatedUpdate(snapshot: Snapshot, replaced: readonly (readonly ServiceEndpoint[])[]): Snapshot {
  for (const endpoints of replaced) freezeRecords(endpoints);
  seal(snapshot.services);
  return registered(snapshot);
}

/** The snapshot frozen, known as validated, with a serial. */
function registered(snapshot: Snapshot): Snapshot {
  validatedSnapshots.add(Object.freeze(snapshot));
  serials.set(snapshot, nextSerial++);
  return snapshot;
}

function freezeRecords(endpoints: readonly ServiceEndpoint[]): void {
  for (const endpoint of endpoints) deepFreeze(endpoint);
  Object.freeze(endpoints);
}

function seal(collection: ReadonlyMap<unknown, unknown> | ReadonlySet<unknown>): void {
  if (sealedCollections.has(collection)) return;
  sealedCollections.add(collection);
  const refuse = () => {
    throw new TypeError("a validated snapshot is read-only: derive a new one with withServiceRecords");
  };
  Object.defineProperties(collection, {
    set: { value: refuse },
    add: { value: refuse },
    delete: { value: refuse },
    clear: { value: refuse },
  });
  Object.freeze(collection);
}

/** The sections of a file that did not parse as a whole, each parsed alone: those that parse. */
function parsedSections(input: unknown): MeshParts {
  if (typeof input !== "object" || input === null) return {};
  const document = input as Record<string, unknown>;
  const section = <T>(schema: z.ZodType<T>, value: unknown): T | undefined => {
    const parsed = schema.safeParse(value);
    return parsed.success ? parsed.data : undefined;
  };
  const { shape } = meshFile;
  return {
    mesh: section(shape.mesh, document.mesh),
    nodes: section(shape.nodes, document.nodes),
    protocols: section(shape.protocols, document.protocols),
    dependencies: section(shape.dependencies, document.dependencies),
    vips: section(shape.vips, document.vips),
  };
}

function parseServices(raw: z.output<typeof lenientServiceRecords>, issues: InputIssue[]): Map<ServiceKey, ServiceEndpoint[]> {
  const services = new Map<ServiceKey, ServiceEndpoint[]>();
  for (const [key, records] of Object.entries(raw)) {
    if (isServiceKey(key)) services.set(key as ServiceKey, parseRecords(key as ServiceKey, records, issues));
  }
  return services;
}

/** Counts, not contents: a snapshot over the limits is refused before anything is parsed. */
function sizeIssues(input: unknown): InputIssue[] {
  const { services, nodes } = (typeof input === "object" && input !== null ? input : {}) as { services?: unknown; nodes?: unknown };
  const issues: InputIssue[] = [];
  const over = (path: string, count: number, limit: number, what: string) =>
    count > limit && issues.push({ path, message: `${count} ${what}, over the limit of ${limit}` });
  if (Array.isArray(nodes)) over("nodes", nodes.length, SNAPSHOT_LIMITS.nodes, "nodes");
  if (typeof services !== "object" || services === null) return issues;
  const lists = Object.entries(services as Record<string, unknown>);
  for (const [key, records] of lists) {
    const count = Array.isArray(records) ? records.length : 0;
    over(formatPath(["services", key]), count, SNAPSHOT_LIMITS.endpointsPerService, "endpoints");
  }
  return [...issues, ...totalSizeIssues(lists.map(([, records]) => records))];
}

/** The limits on services and on endpoints in all, over every service's records (a non-list counts none). */
function totalSizeIssues(lists: readonly unknown[]): InputIssue[] {
  let total = 0;
  for (const records of lists) total += Array.isArray(records) ? records.length : 0;
  const issues: InputIssue[] = [];
  if (lists.length > SNAPSHOT_LIMITS.services)
    issues.push({ path: "services", message: `${lists.length} services, over the limit of ${SNAPSHOT_LIMITS.services}` });
  if (total > SNAPSHOT_LIMITS.endpoints)
    issues.push({ path: "services", message: `${total} endpoints in all, over the limit of ${SNAPSHOT_LIMITS.endpoints}` });
  return issues;
}

/** Validates one service's records; the issues' paths are `services["<key>"][<i>]...`. */
function parseRecords(key: ServiceKey, records: readonly unknown[], issues: InputIssue[]): ServiceEndpoint[] {
  const endpoints: ServiceEndpoint[] = [];
  const seen = new Map<string, number>();
  const namespace = parseServiceKey(key)!.namespace;
  for (const [index, record] of records.entries()) {
    const path: PropertyKey[] = ["services", key, index];
    const json = recordJson(record);
    if ("problem" in json) {
      issues.push({ path: formatPath(path) + prefixed(json.path ?? ""), message: json.problem });
      continue;
    }
    // A binary record meets the checks its JSON form would have met before parsing.
    const unsafe = json.value === record ? [] : unsafeInputIssues(json.value);
    if (unsafe.length > 0) {
      issues.push(...unsafe.map((issue) => ({ ...issue, path: formatPath(path) + prefixed(issue.path) })));
      continue;
    }
    const parsed = usualServiceEndpoint(json.value) ?? bySchema(json.value, path, issues);
    if (!parsed) continue;
    const endpoint = withNamespace(parsed, key, namespace, path, issues);
    const identity = compositeKey(endpoint.clusterName, endpoint.ip);
    const first = seen.get(identity);
    if (first !== undefined) {
      issues.push({
        path: formatPath([...path, "ip"]),
        message: `duplicate endpoint (cluster ${endpoint.clusterName}, ip ${endpoint.ip}); first at index ${first}`,
      });
      continue;
    }
    seen.set(identity, index);
    endpoints.push(endpoint);
  }
  return endpoints;
}

/** A record the usual way does not take, parsed by the schema; undefined, its issues noted, when it does not parse. */
function bySchema(record: unknown, path: PropertyKey[], issues: InputIssue[]): ServiceEndpoint | undefined {
  const parsed = serviceEndpoint.safeParse(record);
  if (parsed.success) return parsed.data;
  issues.push(...collectIssues(parsed.error.issues, record, path));
  return undefined;
}

/** A path relative to a record, appended to the record's own path. */
function prefixed(path: string): string {
  return path === "" || path.startsWith("[") ? path : `.${path}`;
}

function recordJson(record: unknown): { value: unknown } | { problem: string; path?: string } {
  if (typeof record !== "string" && !(record instanceof Uint8Array)) return { value: record };
  const bytes = typeof record === "string" ? decodeBase64(record) : record;
  if (!bytes) return { problem: "a string record must be a base64 binary ServiceEndpoint" };
  try {
    const invalid = invalidUtf8Field(bytes);
    if (invalid !== undefined) return { problem: "not valid UTF-8", path: invalid };
    return { value: decodeServiceEndpoint(bytes) };
  } catch (error) {
    return { problem: `not a binary ServiceEndpoint record (${(error as Error).message})` };
  }
}

/** Standard base64 with padding (the length is a multiple of 4, checked apart). */
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function decodeBase64(text: string): Uint8Array | undefined {
  if (!BASE64.test(text) || text.length % 4 !== 0) return undefined;
  return Buffer.from(text, "base64");
}

/** The record's Kubernetes namespace defaults to, and must agree with, its service key's (`namespace`). */
function withNamespace(endpoint: ServiceEndpoint, key: ServiceKey, namespace: string, path: PropertyKey[], issues: InputIssue[]) {
  const declared = endpoint.kubernetesMetadata.namespace;
  if (declared !== "" && declared !== namespace) {
    issues.push({
      path: formatPath([...path, "kubernetesMetadata", "namespace"]),
      message: `namespace "${declared}" does not match service key "${key}"`,
    });
  }
  return plainRecord(endpoint, namespace);
}

/**
 * The record rebuilt as object literals, every field spelled out in one order. Not a spread: V8
 * gives a frozen copy made by `{...x}` a hidden class of its own, so after `deepFreeze` every
 * record had its own and each read of a record field went megamorphic (walking W1's records took
 * 20× longer).
 */
function plainRecord(endpoint: ServiceEndpoint, namespace: string): ServiceEndpoint {
  const { locality, containerMetadata, kubernetesMetadata } = endpoint;
  return {
    ip: endpoint.ip,
    clusterName: endpoint.clusterName,
    port: endpoint.port,
    ports: endpoint.ports,
    weight: endpoint.weight,
    locality: { region: locality.region, zone: locality.zone },
    metadata: endpoint.metadata,
    containerMetadata: { containerId: containerMetadata.containerId, networkNamespace: containerMetadata.networkNamespace },
    kubernetesMetadata: { namespace, podName: kubernetesMetadata.podName, nodeName: kubernetesMetadata.nodeName, nodeIp: kubernetesMetadata.nodeIp },
    health: endpoint.health,
    healthCheckMode: endpoint.healthCheckMode,
  };
}

/**
 * How a snapshot made by `withServiceRecords` came from another: the services it replaced, that
 * snapshot by its serial, and that one's own lineage. No snapshot is referenced (not even weakly:
 * a WeakRef keeps its target alive to the end of the job, and an update loop is one job): a
 * registry watch chains updates without end, and holding earlier snapshots — or the first one,
 * with every record it ever had — would keep them alive with their indexes.
 */
interface Lineage {
  readonly parent: number;
  readonly changed: readonly ServiceKey[];
  /** Cut after `MAX_LINEAGE_STEPS`, so a chain holds that many small records at most. */
  readonly previous: Lineage | undefined;
  readonly steps: number;
}

/** Steps `changesSince` can walk back; past them the index compares every service's records (pointers only). */
const MAX_LINEAGE_STEPS = 1_000;

const lineages = new WeakMap<Snapshot, Lineage>();

/**
 * A new snapshot with one service's records replaced (an empty list keeps the service with no
 * endpoints), validated like `parseSnapshot` validates them; everything else is shared. Index it
 * with `indexSnapshot(next, previousIndex)`: only the changed services are redone, which is what
 * makes recompiling after an endpoint change cheap.
 *
 * With a map of service key → records, every service in it at once: validated together (a pod
 * may move from one service to another in the same update), all or nothing, and the services map
 * copied once. Its cost is one copy of that map plus the new records, where one call per service
 * copies the map once per service (W1's 5,000 services: ~0.6 ms a copy). A key mapped to
 * `undefined` removes that service (one the snapshot does not have is left alone), as a mesh file
 * without it would. An update that changes nothing (an empty map, or only removals of services
 * the snapshot does not have) returns `snapshot` itself.
 */
export function withServiceRecords(snapshot: Snapshot, key: string, records: readonly unknown[]): Snapshot;
export function withServiceRecords(snapshot: Snapshot, updates: ReadonlyMap<string, readonly unknown[] | undefined>): Snapshot;
export function withServiceRecords(
  snapshot: Snapshot,
  keyOrUpdates: string | ReadonlyMap<string, readonly unknown[] | undefined>,
  records?: readonly unknown[],
): Snapshot {
  requireValidated(snapshot);
  const update = servicesUpdate(snapshot, parseUpdates(updatesOf(keyOrUpdates, records)));
  if (!update) return snapshot;
  const oversized = totalSizeIssues([...update.services.values()]);
  if (oversized.length > 0) throw new InputError("snapshot", oversized);
  const issues = [...crossIssuesByService(snapshot, update).values()].flat();
  if (issues.length > 0) throw new InputError("snapshot", issues);
  return updated(snapshot, update);
}

/**
 * As `withServiceRecords` with a map, but service by service: a service whose update is refused
 * is left as it was (its last good records; a new one stays absent, a removed one stays), and the
 * others are applied in one update. For a registry source applying a batch that one bad record
 * would otherwise refuse whole: one update per service instead copies the services map once per
 * service (W1's 5,000 with one refused: ~5.5 s, against ~1.2–1.8 s here).
 * - Records that do not parse refuse their service alone.
 * - Two services claiming one pod in the result are both refused (neither is known to be right),
 *   and so is a service claiming a pod that a refused one keeps.
 * - Totals over `SNAPSHOT_LIMITS` refuse every service the update adds or grows.
 * The result does not depend on the order of `updates`.
 */
export function withValidServiceRecords(
  snapshot: Snapshot,
  updates: ReadonlyMap<string, readonly unknown[] | undefined>,
): { readonly snapshot: Snapshot; readonly refused: ReadonlyMap<string, InputError> } {
  requireValidated(snapshot);
  const refused = new Map<string, InputError>();
  const parsed = new Map<ServiceKey, ServiceEndpoint[] | undefined>();
  for (const [key, records] of updatesOf(updates, undefined)) {
    const issues: InputIssue[] = [];
    const endpoints = parseServiceUpdate(key, records, issues);
    if (issues.length > 0) refused.set(String(key), new InputError("snapshot", issues));
    else parsed.set(key as ServiceKey, endpoints);
  }
  const refuse = (key: ServiceKey, issues: InputIssue[]) => {
    parsed.delete(key);
    refused.set(key, new InputError("snapshot", issues));
  };
  // Each round refuses at least one service, or applies the update.
  for (;;) {
    const update = servicesUpdate(snapshot, parsed);
    if (!update) return { snapshot, refused };
    const oversized = totalSizeIssues([...update.services.values()]);
    if (oversized.length > 0) {
      const growing = update.changed.filter((key) => (update.services.get(key)?.length ?? 0) > (snapshot.services.get(key)?.length ?? -1));
      for (const key of growing.length > 0 ? growing : update.changed) refuse(key, oversized);
      continue;
    }
    const issues = crossIssuesByService(snapshot, update);
    if (issues.size === 0) return { snapshot: updated(snapshot, update), refused };
    for (const [key, serviceIssues] of issues) refuse(key, serviceIssues);
  }
}

/** The services map with parsed updates applied, before it is checked as a whole. */
interface ServicesUpdate {
  /** The services whose records are replaced, added or removed. */
  readonly changed: readonly ServiceKey[];
  readonly services: Map<ServiceKey, readonly ServiceEndpoint[]>;
  /** The new record lists (to be frozen). */
  readonly replaced: readonly ServiceEndpoint[][];
}

/** `snapshot`'s services with the parsed updates applied; undefined when they change nothing. */
function servicesUpdate(snapshot: Snapshot, parsed: ReadonlyMap<ServiceKey, ServiceEndpoint[] | undefined>): ServicesUpdate | undefined {
  const changed = [...parsed].filter(([key, endpoints]) => endpoints !== undefined || snapshot.services.has(key)).map(([key]) => key);
  if (changed.length === 0) return undefined;
  const services = new Map(snapshot.services);
  const replaced: ServiceEndpoint[][] = [];
  for (const key of changed) {
    const endpoints = parsed.get(key);
    if (endpoints === undefined) services.delete(key);
    else {
      const kept = keptWhereUnchanged(snapshot.services.get(key) ?? [], endpoints);
      services.set(key, kept);
      replaced.push(kept);
    }
  }
  // No service added or removed: the services' index by namespace is shared.
  if (changed.every((key) => services.has(key) && snapshot.services.has(key))) sameServiceKeys(snapshot.services, services);
  return { changed, services, replaced };
}

/** What each changed service's records must agree on with the rest, by service (those with issues only). */
function crossIssuesByService(snapshot: Snapshot, { changed, services }: ServicesUpdate): Map<ServiceKey, InputIssue[]> {
  const issues = new Map<ServiceKey, InputIssue[]>();
  for (const key of changed) {
    const found = services.has(key) ? recordCrossIssues(snapshot, services, key) : [];
    if (found.length > 0) issues.set(key, found);
  }
  return issues;
}

/** The update applied: the new snapshot, noted as derived from `snapshot` (for `changesSince`). */
function updated(snapshot: Snapshot, { changed, services, replaced }: ServicesUpdate): Snapshot {
  return descended(snapshot, validatedUpdate({ ...snapshot, services }, replaced), changed);
}

/**
 * The (key, records) pairs of either form: a key and its records, or a map of them (a `Map`, or
 * any object with `entries`), where records may be `undefined` (the service removed). A plain
 * object or a list of pairs, likely mistaken for a map, is refused.
 */
function updatesOf(keyOrUpdates: unknown, records: unknown): (readonly [unknown, unknown])[] {
  if (typeof keyOrUpdates !== "object" || keyOrUpdates === null) {
    if (records !== undefined) return [[keyOrUpdates, records]];
    const message = "expected a list of records, found undefined (to remove the service, give a Map of its key → undefined)";
    throw new InputError("snapshot", [{ path: formatPath(["services", String(keyOrUpdates)]), message }]);
  }
  if (!Array.isArray(keyOrUpdates) && typeof (keyOrUpdates as ReadonlyMap<unknown, unknown>).entries === "function")
    return [...(keyOrUpdates as ReadonlyMap<unknown, unknown>).entries()];
  const message = `expected a service key and its records, or a Map of service key → records; found ${describeValue(keyOrUpdates)}`;
  throw new InputError("snapshot", [{ path: "services", message }]);
}

/**
 * Each update's records parsed (undefined: the service removed), by its service key; throws with
 * every issue of every update.
 */
function parseUpdates(updates: readonly (readonly [unknown, unknown])[]): Map<ServiceKey, ServiceEndpoint[] | undefined> {
  const issues: InputIssue[] = [];
  const parsed = new Map<ServiceKey, ServiceEndpoint[] | undefined>();
  for (const [key, records] of updates) {
    const before = issues.length;
    const endpoints = parseServiceUpdate(key, records, issues);
    if (issues.length === before) parsed.set(key as ServiceKey, endpoints);
  }
  if (issues.length > 0) throw new InputError("snapshot", issues);
  return parsed;
}

/** One service's records parsed; undefined when they are undefined (the service removed). */
function parseServiceUpdate(key: unknown, records: unknown, issues: InputIssue[]): ServiceEndpoint[] | undefined {
  const path = formatPath(["services", String(key)]);
  if (records !== undefined && !Array.isArray(records)) {
    issues.push({ path, message: `expected a list of records, found ${describeValue(records)}` });
    return undefined;
  }
  if (typeof key !== "string" || !isServiceKey(key)) {
    issues.push({ path: formatPath(["services", key as PropertyKey]), message: 'not a service key "<namespace>/<service>" of two DNS-1123 labels' });
    return undefined;
  }
  if (records === undefined) return undefined;
  if (records.length > SNAPSHOT_LIMITS.endpointsPerService) {
    issues.push({ path, message: `${records.length} endpoints, over the limit of ${SNAPSHOT_LIMITS.endpointsPerService}` });
    return [];
  }
  const unsafe = unsafeInputIssues(records);
  if (unsafe.length > 0) {
    pushAll(
      issues,
      unsafe.map((issue) => ({ ...issue, path: path + issue.path })),
    );
    return [];
  }
  return parseRecords(key, records, issues);
}

/**
 * A new snapshot with another node list (the mesh file's `nodes`: a node turned (not) ready,
 * moved to another zone, added or gone), validated like `parseSnapshot` validates it; everything
 * else is shared, and each status equal to one the snapshot has is that one. Index it with
 * `indexSnapshot(next, previousIndex)`: only the services with pods on the nodes whose status
 * changed are redone, and a server recompiles only the nodes those reach. A list with the same
 * statuses in the same order returns `snapshot` itself.
 */
export function withNodes(snapshot: Snapshot, nodes: readonly unknown[]): Snapshot {
  requireValidated(snapshot);
  const unsafe = [...sizeIssues({ nodes }), ...unsafeInputIssues({ nodes })];
  if (unsafe.length > 0) throw new InputError("snapshot", unsafe);
  const parsed = meshFile.shape.nodes.safeParse(nodes);
  if (!parsed.success) throw new InputError("snapshot", collectIssues(parsed.error.issues, nodes, ["nodes"]));
  const issues = nodeListIssues(snapshot.mesh, parsed.data, snapshot.services);
  if (issues.length > 0) throw new InputError("snapshot", issues);
  const statuses = nodesAsBefore(snapshot.nodes, parsed.data);
  if (statuses === snapshot.nodes) return snapshot;
  for (const node of statuses) Object.freeze(node);
  return withRelations(snapshot, { nodes: statuses });
}

/**
 * `before` when `after` holds the same statuses in the same order; else `after`, each status
 * equal to one in `before` being that one, so what was derived from it is kept.
 */
export function nodesAsBefore(before: readonly NodeStatus[], after: readonly NodeStatus[]): readonly NodeStatus[] {
  if (before.length === after.length && before.every((node, i) => sameData(node, after[i]))) return before;
  return keptWhereEqual(before, after, (node) => compositeKey(node.cluster, node.name));
}

function requireValidated(snapshot: Snapshot): void {
  if (!isValidatedSnapshot(snapshot)) {
    throw new InputError("snapshot", [{ path: "", message: "not a snapshot from parseSnapshot, parseMeshFile, withServiceRecords or withNodes" }]);
  }
}

/** The parts besides records and mesh settings that a registry read afresh may change as an update. */
export type RelationParts = Pick<Snapshot, "nodes" | "dependencies" | "vips" | "protocols" | "exports">;

/**
 * `snapshot` with some of another node list, dependencies, VIPs, protocols and exports, those of a
 * validated snapshot whose records the result is then given (`asRegistryUpdate` does, with
 * `withServiceRecords`): only for deriving that snapshot's content from `snapshot`. Its lineage
 * says no service's records changed (the index compares protocols and exports itself).
 */
export function withRelations(snapshot: Snapshot, parts: Partial<RelationParts>): Snapshot {
  return descended(snapshot, registered({ ...snapshot, ...parts, nodes: Object.freeze(parts.nodes ?? snapshot.nodes) }), []);
}

/** `next`, noted as `snapshot` with the records of `changed` replaced (for `changesSince`). */
function descended(snapshot: Snapshot, next: Snapshot, changed: readonly ServiceKey[]): Snapshot {
  const lineage = lineages.get(snapshot);
  const previous = lineage !== undefined && lineage.steps < MAX_LINEAGE_STEPS ? lineage : undefined;
  lineages.set(next, { parent: serials.get(snapshot)!, changed, previous, steps: (previous?.steps ?? 0) + 1 });
  return next;
}

/**
 * `records` with each one equal to the service's previous record at its cluster and IP replaced
 * by that record: a registry watch sends every record of a service when one pod changes, and the
 * previous record object keeps what the index and compiles derived from it, so only the changed
 * pods' work is redone.
 */
function keptWhereUnchanged(previous: readonly ServiceEndpoint[], records: readonly ServiceEndpoint[]): ServiceEndpoint[] {
  return keptWhereEqual(previous, records, (record) => compositeKey(record.clusterName, record.ip));
}

/** `next` with each item deep-equal to the item of `previous` under the same key replaced by that one. */
function keptWhereEqual<T>(previous: readonly T[], next: readonly T[], keyOf: (item: T) => string): T[] {
  const byKey = new Map(previous.map((item) => [keyOf(item), item]));
  return next.map((item) => {
    const before = byKey.get(keyOf(item));
    return before !== undefined && sameData(before, item) ? before : item;
  });
}

/**
 * The services changed since `base`, when `snapshot` was derived from it by `withServiceRecords`
 * calls (walked back one at a time); undefined when that cannot be told (another derivation, or
 * more than `MAX_LINEAGE_STEPS` steps).
 */
export function changesSince(snapshot: Snapshot, base: Snapshot): ReadonlySet<ServiceKey> | undefined {
  const target = serials.get(base);
  if (target === undefined) return undefined;
  const changed = new Set<ServiceKey>();
  for (let lineage = lineages.get(snapshot); lineage !== undefined; lineage = lineage.previous) {
    for (const key of lineage.changed) changed.add(key);
    if (lineage.parent === target) return changed;
  }
  return undefined;
}

/** What a service's new records must agree on with the rest of the snapshot, `services` being the updated map. */
function recordCrossIssues(snapshot: Snapshot, services: ReadonlyMap<ServiceKey, readonly ServiceEndpoint[]>, key: ServiceKey): InputIssue[] {
  const endpoints = services.get(key)!;
  const sni = structuredSniProblem(snapshot.mesh.meshDomain, parseServiceKey(key)!);
  if (sni) return [{ path: formatPath(["services", key]), message: sni }];
  const ports = portCountIssues(key, endpoints, [...(snapshot.protocols.get(key)?.keys() ?? [])]);
  if (ports.length > 0) return ports;
  const pods = replacedServicePodIssues(services, key, endpoints);
  if (pods.length > 0) return pods;
  const trust = snapshot.mesh.trust;
  if (trust.mode !== "federated") return [];
  const mapped = new Set(trust.trustDomains.flatMap((domain) => domain.clusters));
  return endpoints.flatMap((endpoint, index) =>
    mapped.has(endpoint.clusterName) ? [] : [noTrustDomainIssue(endpoint.clusterName, ["services", key, index, "clusterName"])],
  );
}

/**
 * The mesh file's JSON Schema (draft 2020-12), so editors validate mesh files as users type:
 * generated from `meshFile` itself, so a field added there is in the schema (scripts/mesh-file-schema.ts
 * writes the shipped file; a test fails while it is stale). Records appear in the two forms a file
 * holds them, proto3 JSON or the binary record in base64. What JSON Schema cannot express (IP
 * syntax, DNS labels, cross-references) is left to `parseSnapshot`.
 */
export function meshFileJsonSchema(): Record<string, unknown> {
  const base64Record = z.string().regex(BASE64).describe("a binary aether.registry.v1.ServiceEndpoint, base64-encoded");
  const asWritten = meshFile.extend({ services: z.record(serviceKeyField, z.array(z.union([serviceEndpoint, base64Record]))) }).meta({
    title: "aether-xds mesh file",
    description: "One mesh: settings, node status, registry records per service, exports, protocols and dependencies. See docs/contract.md.",
  });
  return z.toJSONSchema(asWritten, { io: "input" });
}
