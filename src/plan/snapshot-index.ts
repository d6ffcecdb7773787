/**
 * The snapshot index: built once per snapshot and shared by every `compileNode` call. It sorts
 * each service's endpoints once, resolves ports, protocols, exports, trust domains and node
 * addresses, and holds the caches that let nodes share work:
 *
 * - each service's EDS plans by view, on the service itself — reused by every node of the view,
 *   and by the next snapshot's index for as long as the service is unchanged;
 * - each compile context's clusters (a context is what a node's CDS depends on besides the
 *   services: its pods' identities and netns, and the options), kept for the most recent contexts.
 *
 * `indexSnapshot(next, previous)` builds the next index from the previous one: unchanged services
 * keep their entries and caches, so an endpoint change costs what it changes.
 */
import { parseServiceKey, type ServiceKey, type ServiceRef } from "../naming.js";
import { pickNodeAddress } from "../model/node-address.js";
import { trustDomainOfCluster } from "../model/node.js";
import type { ServiceEndpoint } from "../model/registry.js";
import { changesSince, type NodeStatus, type PortProtocol, type Snapshot } from "../model/snapshot.js";
import { compareNumbers, compareText, ipSortKey } from "../util/order.js";

export interface IndexedService {
  readonly key: ServiceKey;
  readonly ref: ServiceRef;
  /** Sorted by (cluster, IP). */
  readonly endpoints: readonly ServiceEndpoint[];
  /** Every port an endpoint serves or the snapshot declares, sorted. */
  readonly ports: readonly number[];
  readonly protocols: ReadonlyMap<number, PortProtocol>;
  /** Whether other clusters may reach it through a waypoint. */
  readonly exported: boolean;
  /** Trust domains of the clusters that run it, sorted: the destination identities to pin. */
  readonly trustDomains: readonly string[];
  /** Nodes running one of its endpoints, `"<cluster>/<node>"`. */
  readonly nodes: ReadonlySet<string>;
  /** Everything its outbound clusters depend on (not its endpoints' health or addresses). */
  readonly clusterSignature: string;
  /** Work derived from this service alone (its EDS by view); lives as long as the service is unchanged. */
  readonly memo: Map<string, unknown>;
  /** Unique to this version of the service: cache keys use it to notice a change. */
  readonly serial: number;
}

export interface HostedEndpoint {
  readonly service: ServiceKey;
  readonly endpoint: ServiceEndpoint;
  /** Namespace/pod, service, IP: the order of a node's list. */
  readonly sortKey: string;
}

export interface SnapshotIndex {
  readonly snapshot: Snapshot;
  readonly services: ReadonlyMap<ServiceKey, IndexedService>;
  /** Service keys, sorted. */
  readonly serviceKeys: readonly ServiceKey[];
  /** Listed node status by `"<cluster>/<node>"`. */
  readonly nodes: ReadonlyMap<string, NodeStatus>;
  /** Each node's one address by `"<cluster>/<node>"` (see `pickNodeAddress`). */
  readonly nodeAddresses: ReadonlyMap<string, string>;
  /** Clusters the snapshot lists nodes for: there, an unlisted node is gone. */
  readonly clustersWithNodeList: ReadonlySet<string>;
  /** Registry endpoints by the node running them, `"<cluster>/<node>"`, sorted by pod. */
  readonly hostedBy: ReadonlyMap<string, readonly HostedEndpoint[]>;
  /** Per compile context, its cached work; most recently used last. Shared with later indexes. */
  readonly contexts: Map<string, Map<string, unknown>>;
}

/** How many compile contexts (roughly: nodes) keep their clusters cached. */
export const CACHED_CONTEXTS = 4;

const indexes = new WeakMap<Snapshot, SnapshotIndex>();
let serials = 0;

/**
 * The index of a snapshot; built on first use and then reused for the same snapshot object. With
 * `previous` (the index of an earlier snapshot with the same mesh settings, node list, exports,
 * protocols and dependencies objects), every service whose records array is the same object
 * keeps its entry and caches: see `withServiceRecords`.
 */
export function indexSnapshot(snapshot: Snapshot, previous?: SnapshotIndex): SnapshotIndex {
  let index = indexes.get(snapshot);
  if (!index) {
    index = previous && sameMeshInputs(previous.snapshot, snapshot) ? updateIndex(previous, snapshot) : buildIndex(snapshot);
    indexes.set(snapshot, index);
  }
  return index;
}

export function nodeKey(cluster: string, node: string): string {
  return `${cluster}/${node}`;
}

function sameMeshInputs(a: Snapshot, b: Snapshot): boolean {
  return a.mesh === b.mesh && a.nodes === b.nodes && a.exports === b.exports && a.protocols === b.protocols && a.dependencies === b.dependencies;
}

function buildIndex(snapshot: Snapshot): SnapshotIndex {
  const services = new Map<ServiceKey, IndexedService>();
  for (const key of serviceKeysOf(snapshot)) services.set(key, indexService(snapshot, key));
  const nodes = new Map(snapshot.nodes.map((node) => [nodeKey(node.cluster, node.name), node]));
  const hostedBy = hostedEndpoints(services.values());
  return {
    snapshot,
    services,
    serviceKeys: [...services.keys()],
    nodes,
    nodeAddresses: nodeAddresses(nodes, hostedBy, new Set([...nodes.keys(), ...hostedBy.keys()]), new Map()),
    clustersWithNodeList: new Set(snapshot.nodes.map((node) => node.cluster)),
    hostedBy,
    contexts: new Map(),
  };
}

/** Services with records, and services known only from declared protocols; sorted. */
function serviceKeysOf(snapshot: Snapshot): ServiceKey[] {
  return [...new Set([...snapshot.services.keys(), ...snapshot.protocols.keys()])].sort(compareText);
}

/**
 * The previous index, with only the changed services (and the nodes they run on) redone. The
 * changed services are known when the snapshot came from `withServiceRecords`; otherwise each
 * service's records array is compared with the previous one.
 */
function updateIndex(previous: SnapshotIndex, snapshot: Snapshot): SnapshotIndex {
  const known = changesSince(snapshot, previous.snapshot);
  const sameKeys = known ? [...known].every((key) => previous.services.has(key)) : sameServiceKeys(previous.snapshot, snapshot);
  const keys = sameKeys ? previous.serviceKeys : serviceKeysOf(snapshot);
  const services = new Map(previous.services);
  const candidates = known ?? keys.filter((key) => snapshot.services.get(key) !== previous.snapshot.services.get(key) || !previous.services.has(key));
  const changed = [...candidates].map((key) => indexService(snapshot, key));
  changed.forEach((service) => services.set(service.key, service));
  const removed = sameKeys ? [] : previous.serviceKeys.filter((key) => !snapshot.services.has(key) && !snapshot.protocols.has(key)).map((key) => previous.services.get(key)!);
  removed.forEach((service) => services.delete(service.key));
  const sorted = sameKeys ? services : new Map(keys.map((key) => [key, services.get(key)!]));
  const oldVersions = changed.map((service) => previous.services.get(service.key)).filter((service) => service !== undefined);
  const touchedNodes = new Set([...changed, ...removed, ...oldVersions].flatMap((service) => [...service.nodes]));
  const changedKeys = new Set([...changed, ...removed].map((service) => service.key));
  const hostedBy = new Map(previous.hostedBy);
  const hostedByChanged = hostedEndpoints(changed);
  for (const node of touchedNodes) {
    const kept = (previous.hostedBy.get(node) ?? []).filter((hosted) => !changedKeys.has(hosted.service));
    const added = hostedByChanged.get(node) ?? [];
    if (kept.length + added.length === 0) hostedBy.delete(node);
    else hostedBy.set(node, sortHosted([...kept, ...added]));
  }
  return {
    ...previous,
    snapshot,
    services: sorted,
    serviceKeys: keys,
    nodeAddresses: nodeAddresses(previous.nodes, hostedBy, touchedNodes, previous.nodeAddresses),
    hostedBy,
  };
}

function sameServiceKeys(a: Snapshot, b: Snapshot): boolean {
  return a.services.size === b.services.size && [...b.services.keys()].every((key) => a.services.has(key));
}

function indexService(snapshot: Snapshot, key: ServiceKey): IndexedService {
  const endpoints = sortEndpoints(snapshot.services.get(key) ?? []);
  const protocols = snapshot.protocols.get(key) ?? new Map<number, PortProtocol>();
  const ports = new Set<number>(protocols.keys());
  endpoints.forEach((endpoint) => endpoint.ports.forEach((port) => ports.add(port)));
  const trustDomains = new Set<string>();
  for (const cluster of new Set(endpoints.map((endpoint) => endpoint.clusterName))) {
    const domain = trustDomainOfCluster(snapshot.mesh.trust, cluster);
    if (domain) trustDomains.add(domain);
  }
  const sortedPorts = [...ports].sort(compareNumbers);
  const sortedDomains = [...trustDomains].sort(compareText);
  const protocolList = sortedPorts.map((port) => `${port}/${protocols.get(port) ?? "http2"}`);
  return {
    key,
    ref: parseServiceKey(key)!,
    endpoints,
    ports: sortedPorts,
    protocols,
    exported: snapshot.exports?.has(key) ?? true,
    trustDomains: sortedDomains,
    nodes: new Set(endpoints.filter((e) => e.kubernetesMetadata.nodeName).map((e) => nodeKey(e.clusterName, e.kubernetesMetadata.nodeName))),
    clusterSignature: `${key}|${protocolList.join(",")}|${sortedDomains.join(",")}`,
    memo: new Map(),
    serial: ++serials,
  };
}

function sortEndpoints(endpoints: readonly ServiceEndpoint[]): ServiceEndpoint[] {
  return endpoints
    .map((endpoint) => ({ endpoint, key: `${endpoint.clusterName}\u0000${ipSortKey(endpoint.ip)}` }))
    .sort((a, b) => compareText(a.key, b.key))
    .map(({ endpoint }) => endpoint);
}

function hostedEndpoints(services: Iterable<IndexedService>): Map<string, HostedEndpoint[]> {
  const hosted = new Map<string, HostedEndpoint[]>();
  for (const service of services) {
    for (const endpoint of service.endpoints) {
      const node = endpoint.kubernetesMetadata.nodeName;
      if (!node) continue;
      const key = nodeKey(endpoint.clusterName, node);
      let list = hosted.get(key);
      if (!list) hosted.set(key, (list = []));
      list.push({ service: service.key, endpoint, sortKey: podSortKey(service.key, endpoint) });
    }
  }
  for (const [key, list] of hosted) hosted.set(key, sortHosted(list));
  return hosted;
}

function sortHosted(list: HostedEndpoint[]): HostedEndpoint[] {
  return list.sort((a, b) => compareText(a.sortKey, b.sortKey));
}

/** `previous` with the addresses of `touched` nodes recomputed. */
function nodeAddresses(
  nodes: ReadonlyMap<string, NodeStatus>,
  hostedBy: ReadonlyMap<string, readonly HostedEndpoint[]>,
  touched: Iterable<string>,
  previous: ReadonlyMap<string, string>,
): Map<string, string> {
  const addresses = new Map(previous);
  for (const key of touched) {
    const ip = pickNodeAddress(nodes.get(key)?.ip, (hostedBy.get(key) ?? []).map(({ endpoint }) => endpoint.kubernetesMetadata.nodeIp));
    if (ip) addresses.set(key, ip);
    else addresses.delete(key);
  }
  return addresses;
}

function podSortKey(service: ServiceKey, endpoint: ServiceEndpoint): string {
  return `${endpoint.kubernetesMetadata.namespace}/${endpoint.kubernetesMetadata.podName}\u0000${service}\u0000${ipSortKey(endpoint.ip)}`;
}

/** A service's memo entry, computed on first use. */
export function memoized<T>(service: IndexedService, key: string, compute: () => T): T {
  let value = service.memo.get(key) as T | undefined;
  if (value === undefined) {
    value = compute();
    service.memo.set(key, value);
  }
  return value;
}

/** A compile context's cache (see `SnapshotIndex.contexts`); the least recently used is evicted. */
export function contextCache(index: SnapshotIndex, context: string): Map<string, unknown> {
  let cache = index.contexts.get(context);
  if (cache) index.contexts.delete(context);
  else cache = new Map();
  index.contexts.set(context, cache);
  while (index.contexts.size > CACHED_CONTEXTS) index.contexts.delete(index.contexts.keys().next().value!);
  return cache;
}
