/**
 * The snapshot index: built once per snapshot and shared by every `compileNode` call. It sorts
 * each service's endpoints once, resolves ports, protocols, exports and trust domains, and keeps
 * the per-view EDS plans so nodes that see the mesh the same way share them.
 */
import { parseServiceKey, type ServiceKey, type ServiceRef } from "../naming.js";
import { pickNodeAddress } from "../model/node-address.js";
import { trustDomainOfCluster } from "../model/node.js";
import type { ServiceEndpoint } from "../model/registry.js";
import type { NodeStatus, PortProtocol, Snapshot } from "../model/snapshot.js";
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
}

export interface HostedEndpoint {
  readonly service: ServiceKey;
  readonly endpoint: ServiceEndpoint;
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
  /** Memo of per-view work (EDS plans), owned by the plan modules. */
  readonly memo: Map<string, Map<string, unknown>>;
}

const indexes = new WeakMap<Snapshot, SnapshotIndex>();

/** The index of a snapshot; built on first use and then reused for the same snapshot object. */
export function indexSnapshot(snapshot: Snapshot): SnapshotIndex {
  let index = indexes.get(snapshot);
  if (!index) {
    index = buildIndex(snapshot);
    indexes.set(snapshot, index);
  }
  return index;
}

export function nodeKey(cluster: string, node: string): string {
  return `${cluster}/${node}`;
}

function buildIndex(snapshot: Snapshot): SnapshotIndex {
  const services = new Map<ServiceKey, IndexedService>();
  for (const key of [...snapshot.services.keys()].sort(compareText)) services.set(key, indexService(snapshot, key));
  for (const [key, declared] of snapshot.protocols) {
    if (!services.has(key)) services.set(key, indexService(snapshot, key, declared));
  }
  const nodes = new Map(snapshot.nodes.map((node) => [nodeKey(node.cluster, node.name), node]));
  const hostedBy = hostedEndpoints(services);
  return {
    snapshot,
    services,
    serviceKeys: [...services.keys()].sort(compareText),
    nodes,
    nodeAddresses: nodeAddresses(nodes, hostedBy),
    clustersWithNodeList: new Set(snapshot.nodes.map((node) => node.cluster)),
    hostedBy,
    memo: new Map(),
  };
}

function indexService(snapshot: Snapshot, key: ServiceKey, declared = snapshot.protocols.get(key)): IndexedService {
  const endpoints = sortEndpoints(snapshot.services.get(key) ?? []);
  const protocols = declared ?? new Map<number, PortProtocol>();
  const ports = new Set<number>(protocols.keys());
  endpoints.forEach((endpoint) => endpoint.ports.forEach((port) => ports.add(port)));
  const trustDomains = new Set<string>();
  for (const cluster of new Set(endpoints.map((endpoint) => endpoint.clusterName))) {
    const domain = trustDomainOfCluster(snapshot.mesh.trust, cluster);
    if (domain) trustDomains.add(domain);
  }
  return {
    key,
    ref: parseServiceKey(key)!,
    endpoints,
    ports: [...ports].sort(compareNumbers),
    protocols,
    exported: snapshot.exports?.has(key) ?? true,
    trustDomains: [...trustDomains].sort(compareText),
  };
}

function sortEndpoints(endpoints: readonly ServiceEndpoint[]): ServiceEndpoint[] {
  return endpoints
    .map((endpoint) => ({ endpoint, key: `${endpoint.clusterName}\u0000${ipSortKey(endpoint.ip)}` }))
    .sort((a, b) => compareText(a.key, b.key))
    .map(({ endpoint }) => endpoint);
}

function hostedEndpoints(services: ReadonlyMap<ServiceKey, IndexedService>): Map<string, HostedEndpoint[]> {
  const hosted = new Map<string, HostedEndpoint[]>();
  for (const service of services.values()) {
    for (const endpoint of service.endpoints) {
      const node = endpoint.kubernetesMetadata.nodeName;
      if (!node) continue;
      const key = nodeKey(endpoint.clusterName, node);
      let list = hosted.get(key);
      if (!list) hosted.set(key, (list = []));
      list.push({ service: service.key, endpoint });
    }
  }
  for (const list of hosted.values()) {
    list.sort((a, b) => compareText(podSortKey(a), podSortKey(b)));
  }
  return hosted;
}

function nodeAddresses(nodes: ReadonlyMap<string, NodeStatus>, hostedBy: ReadonlyMap<string, readonly HostedEndpoint[]>): Map<string, string> {
  const addresses = new Map<string, string>();
  for (const key of new Set([...nodes.keys(), ...hostedBy.keys()])) {
    const ip = pickNodeAddress(nodes.get(key)?.ip, (hostedBy.get(key) ?? []).map(({ endpoint }) => endpoint.kubernetesMetadata.nodeIp));
    if (ip) addresses.set(key, ip);
  }
  return addresses;
}

function podSortKey({ service, endpoint }: HostedEndpoint): string {
  return `${endpoint.kubernetesMetadata.namespace}/${endpoint.kubernetesMetadata.podName}\u0000${service}\u0000${ipSortKey(endpoint.ip)}`;
}

/** A bounded memo table under `index.memo`: least recently created views are evicted first. */
export function memoTable<T>(index: SnapshotIndex, view: string, limit = 64): Map<string, T> {
  let table = index.memo.get(view);
  if (!table) {
    if (index.memo.size >= limit) index.memo.delete(index.memo.keys().next().value!);
    index.memo.set(view, (table = new Map()));
  }
  return table as Map<string, T>;
}
