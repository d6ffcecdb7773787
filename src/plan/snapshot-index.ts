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

import { type LocalNode, localNodeOf, trustDomainOfCluster } from "../model/node.js";
import { pickNodeAddress } from "../model/node-address.js";
import type { ServiceEndpoint } from "../model/registry.js";
import { changesSince, type NodeStatus, type PortProtocol, protocolOf, type Snapshot } from "../model/snapshot.js";
import { parseServiceKey, type ServiceKey, type ServiceRef } from "../naming.js";
import { sameMembers } from "../util/arrays.js";
import { changedKeys, changedMembers } from "../util/changes.js";
import { LayeredMap } from "../util/layered-map.js";
import { getOrInsert, remember } from "../util/maps.js";
import { compareNumbers, compareText, ipSortKey } from "../util/order.js";
import { SlotCache } from "./cache-slots.js";

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
  /** Work derived from this service alone (its EDS by view); lives as long as this version of the service. */
  readonly caches: SlotCache;
  /** Unique to this version of the service: cache keys use it to notice a change. */
  readonly serial: number;
}

export interface HostedEndpoint {
  readonly service: ServiceKey;
  readonly endpoint: ServiceEndpoint;
  /** Namespace/pod, service, IP: the order of a node's list. */
  readonly sortKey: string;
  /** The record's network namespace ("" when it has none). */
  readonly netns: string;
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
  readonly contexts: Map<string, SlotCache>;
  /** Work derived from this index as a whole (e.g. resolved waypoint nodes); lives as long as the index. */
  readonly caches: SlotCache;
}

/** How many compile contexts (roughly: nodes) keep their clusters cached. */
export const CACHED_CONTEXTS = 4;

const indexes = new WeakMap<Snapshot, SnapshotIndex>();
/** Every index `indexSnapshot` built: the only ones the public entry points accept. */
const builtIndexes = new WeakSet<object>();

/** Whether `value` is an index `indexSnapshot` built. */
export function isBuiltIndex(value: unknown): value is SnapshotIndex {
  return typeof value === "object" && value !== null && builtIndexes.has(value);
}
let serials = 0;

/**
 * The index of a snapshot; built on first use and then reused for the same snapshot object. With
 * `previous` (the index of an earlier snapshot it is `updatable` from), every service whose
 * records array, declared protocols and being exported are the same, and none of whose records
 * are on a node whose status object changed, keeps its entry and caches: see `withServiceRecords`.
 */
export function indexSnapshot(snapshot: Snapshot, previous?: SnapshotIndex): SnapshotIndex {
  let index = indexes.get(snapshot);
  if (!index) {
    index = previous && updatable(previous.snapshot, snapshot) ? updateIndex(previous, snapshot) : buildIndex(snapshot);
    indexes.set(snapshot, index);
    builtIndexes.add(index);
  }
  return index;
}

/** The index of a snapshot, or the index itself: entry points accept either. */
export function asIndex(snapshot: Snapshot | SnapshotIndex): SnapshotIndex {
  return "serviceKeys" in snapshot ? snapshot : indexSnapshot(snapshot);
}

export function nodeKey(cluster: string, node: string): string {
  return `${cluster}/${node}`;
}

/**
 * `localNodeFrom` with the node's records read from the index: `localNodeFrom` scans every record
 * of the snapshot for the ones naming the node (~25 ms on a 100,000-record mesh), which a caller
 * compiling every node would pay once per node.
 */
export function localNodeIn(index: SnapshotIndex, cluster: string, node: string): LocalNode {
  const key = nodeKey(cluster, node);
  return localNodeOf(index.snapshot, cluster, node, index.hostedBy.get(key) ?? [], index.nodes.get(key));
}

/**
 * Whether an index of `a` can be updated to one of `b`: the same mesh settings object, and export
 * data in both or in neither; records, node statuses, declared protocols and which services are
 * exported may differ (an update redoes the services they touch).
 */
export function updatable(a: Snapshot, b: Snapshot): boolean {
  return a.mesh === b.mesh && (a.exports === undefined) === (b.exports === undefined);
}

function buildIndex(snapshot: Snapshot): SnapshotIndex {
  const services = new Map<ServiceKey, IndexedService>();
  for (const key of serviceKeysOf(snapshot)) services.set(key, indexService(snapshot, key));
  const nodes = nodesByKey(snapshot);
  const hostedBy = hostedEndpoints(services.values());
  return {
    snapshot,
    services,
    serviceKeys: [...services.keys()],
    nodes,
    nodeAddresses: withoutUnknown(nodeAddresses(nodes, hostedBy, new Set([...nodes.keys(), ...hostedBy.keys()]))),
    clustersWithNodeList: clusterNodeLists(snapshot),
    hostedBy,
    contexts: new Map(),
    caches: new SlotCache(),
  };
}

/** Services with records, and services known only from declared protocols; sorted. */
function serviceKeysOf(snapshot: Snapshot): ServiceKey[] {
  return [...new Set([...snapshot.services.keys(), ...snapshot.protocols.keys()])].sort(compareText);
}

/** Whether the index of `snapshot` has `key`: a service with records, or with declared protocols. */
function indexed(snapshot: Snapshot, key: ServiceKey): boolean {
  return snapshot.services.has(key) || snapshot.protocols.has(key);
}

/**
 * The previous index, with only the changed services (and the nodes they run on) redone; the
 * maps are layered on the previous ones, so the update costs what changed. The changed services
 * are known when the snapshot came from `withServiceRecords`; otherwise each service's records
 * array is compared with the previous one.
 */
function updateIndex(previous: SnapshotIndex, snapshot: Snapshot): SnapshotIndex {
  const nodeUpdate = nodesUpdate(previous, snapshot);
  if (!nodeUpdate) return buildIndex(snapshot);
  const { nodes, changedNodes } = nodeUpdate;
  const { changed: changedKeys, sameKeys } = changedServices(previous, snapshot);
  const keys = sameKeys ? previous.serviceKeys : serviceKeysOf(snapshot);
  const changed = [...changedKeys].filter((key) => indexed(snapshot, key)).map((key) => indexService(snapshot, key));
  const replaced = [...changedKeys].flatMap((key) => previous.services.get(key) ?? []);
  const touchedNodes = nodesOfChangedRecords(changed, replaced);
  const hostedByChanged = hostedEndpoints(changed);
  const hostedByChanges = new Map<string, readonly HostedEndpoint[] | undefined>();
  for (const node of touchedNodes) {
    const before = previous.hostedBy.get(node) ?? [];
    const kept = before.filter((hosted) => !changedKeys.has(hosted.service));
    const merged = mergeSorted(kept, hostedByChanged.get(node) ?? []);
    // A node whose records are all the same objects keeps its list: a compile reuses what it derived from it.
    if (!sameRecords(before, merged)) hostedByChanges.set(node, merged.length === 0 ? undefined : merged);
  }
  const claims = claimsChanged(previous, changed, replaced);
  if (claims.kept) keepNoRivals(previous.hostedBy, hostedByChanges);
  const hostedBy = LayeredMap.of(previous.hostedBy, hostedByChanges);
  const addresses = nodeAddresses(nodes, hostedBy, new Set([...touchedNodes, ...changedNodes]));
  // A node whose address comes from its records moves when they do: every other service with a
  // pod there has a waypoint endpoint at the old address cached, so it is indexed afresh too.
  const moved = [...addresses].filter(([node, address]) => address !== previous.nodeAddresses.get(node)).map(([node]) => node);
  // So does one whose status changed (ready, zone, listed or not): its waypoint endpoints change.
  const stale = new Set(
    [
      ...[...moved, ...changedNodes].flatMap((node) => (hostedBy.get(node) ?? []).map((hosted) => hosted.service)),
      ...netnsNeighbours(hostedBy, touchedNodes, claims.services),
    ].filter((key) => !changedKeys.has(key)),
  );
  const serviceChanges = new Map<ServiceKey, IndexedService | undefined>([...changedKeys].map((key) => [key, undefined]));
  for (const service of [...changed, ...[...stale].map((key) => indexService(snapshot, key))]) {
    const before = previous.services.get(service.key);
    if (before) service.caches.carryOverFrom(before.caches);
    serviceChanges.set(service.key, service);
  }
  const layered = LayeredMap.of(previous.services, serviceChanges);
  const services = sameKeys ? layered : new Map(keys.map((key) => [key, layered.get(key)!]));
  const index = {
    ...previous,
    snapshot,
    services,
    serviceKeys: keys,
    nodes,
    nodeAddresses: LayeredMap.of(previous.nodeAddresses, addresses),
    hostedBy,
    caches: new SlotCache(),
  };
  const sharingBefore = sharingByIndex.get(previous);
  if (sharingBefore) sharingByIndex.set(index, sharingAfter(sharingBefore, hostedByChanges));
  return index;
}

/**
 * The node statuses by key, and the keys whose status object changed (or that joined or left the
 * list): the previous map when the node list is the same object. Undefined when a cluster gained
 * or lost its node list, which changes how every remote pod there is routed (NODE_GONE): the
 * index is then built afresh.
 */
function nodesUpdate(previous: SnapshotIndex, snapshot: Snapshot): { nodes: ReadonlyMap<string, NodeStatus>; changedNodes: readonly string[] } | undefined {
  if (snapshot.nodes === previous.snapshot.nodes) return { nodes: previous.nodes, changedNodes: [] };
  const clusters = clusterNodeLists(snapshot);
  if (!sameMembers(clusters, previous.clustersWithNodeList)) return undefined;
  const nodes = nodesByKey(snapshot);
  return { nodes, changedNodes: changedStatuses(previous.nodes, nodes) };
}

/** The node keys whose status object differs between two maps of statuses (joined or left too). */
export function changedStatuses(before: ReadonlyMap<string, NodeStatus>, after: ReadonlyMap<string, NodeStatus>): string[] {
  if (before === after) return [];
  return [...new Set([...before.keys(), ...after.keys()])].filter((key) => before.get(key) !== after.get(key));
}

function nodesByKey(snapshot: Snapshot): Map<string, NodeStatus> {
  return new Map(snapshot.nodes.map((node) => [nodeKey(node.cluster, node.name), node]));
}

/** The clusters whose nodes the snapshot lists. */
function clusterNodeLists(snapshot: Snapshot): Set<string> {
  return new Set(snapshot.nodes.map((node) => node.cluster));
}

/**
 * Services with a record on a touched node in a netns a changed record claims (or claimed): a
 * record joining or leaving a netns changes whether, and beside whom, the others there are
 * advertised (`NETNS_SHARED`), so their cached assignments are redone.
 */
function netnsNeighbours(
  hostedBy: ReadonlyMap<string, readonly HostedEndpoint[]>,
  touched: ReadonlySet<string>,
  changed: readonly IndexedService[],
): ServiceKey[] {
  // By node, the netns changed records claim there: no key string is built per record.
  const claims = new Map<string, Set<string>>();
  for (const service of changed) {
    for (const endpoint of service.endpoints) {
      const { nodeName } = endpoint.kubernetesMetadata;
      const netns = endpoint.containerMetadata.networkNamespace;
      if (nodeName && netns) getOrInsert(claims, nodeKey(endpoint.clusterName, nodeName), () => new Set<string>()).add(netns);
    }
  }
  const neighbours: ServiceKey[] = [];
  for (const node of touched) {
    const claimed = claims.get(node);
    if (!claimed) continue;
    for (const hosted of hostedBy.get(node) ?? []) if (claimed.has(hosted.netns)) neighbours.push(hosted.service);
  }
  return neighbours;
}

/**
 * The nodes named by a record one version of a changed service has and the other has not: a
 * record kept as the same object (`withServiceRecords` keeps an unchanged one) leaves its node's
 * list, address and netns claims as they were, so a health flip touches one node, not every node
 * the service runs on.
 */
function nodesOfChangedRecords(changed: readonly IndexedService[], replaced: readonly IndexedService[]): Set<string> {
  const records = (services: readonly IndexedService[]) => new Set(services.flatMap((service) => service.endpoints));
  const [after, before] = [records(changed), records(replaced)];
  const nodes = new Set<string>();
  for (const [from, other] of [
    [before, after],
    [after, before],
  ] as const) {
    for (const record of from) {
      const { nodeName } = record.kubernetesMetadata;
      if (nodeName && !other.has(record)) nodes.add(nodeKey(record.clusterName, nodeName));
    }
  }
  return nodes;
}

/**
 * The changed services, old and new versions, whose records claim other netns, or the same netns
 * as other pods, than before: only those can give another service's record a rival, take one
 * away, or change how one is described. A health flip, a drain or a new weight claims what it did.
 * `kept`: none does, and no service came or went.
 */
function claimsChanged(
  previous: SnapshotIndex,
  changed: readonly IndexedService[],
  replaced: readonly IndexedService[],
): { services: IndexedService[]; kept: boolean } {
  const unchanged = new Set<ServiceKey>();
  for (const service of changed) {
    const before = previous.services.get(service.key);
    if (before && sameClaims(before.endpoints, service.endpoints)) unchanged.add(service.key);
  }
  // Kept: every changed service is there before and after, claiming what it claimed.
  const kept = unchanged.size === changed.length && replaced.length === changed.length;
  return { services: [...changed, ...replaced].filter((service) => !unchanged.has(service.key)), kept };
}

/**
 * When no record claims other than before, each rebuilt node list claims each netns as often as
 * the list it replaces: one without rivals still has none, and need not be read to know it (a
 * health flip rebuilds its node's list; reading a list's records is a cache miss each).
 */
function keepNoRivals(before: ReadonlyMap<string, readonly HostedEndpoint[]>, changes: ReadonlyMap<string, readonly HostedEndpoint[] | undefined>): void {
  for (const [node, list] of changes) {
    const old = before.get(node);
    if (list && old && rivalsByList.get(old) === NO_NODE_RIVALS) rivalsByList.set(list, NO_NODE_RIVALS);
  }
}

/** Both sorted by (cluster, IP): the same records, pod by pod, on the same nodes in the same netns. */
function sameClaims(before: readonly ServiceEndpoint[], after: readonly ServiceEndpoint[]): boolean {
  return before.length === after.length && before.every((record, i) => sameClaim(record, after[i]!));
}

function sameClaim(a: ServiceEndpoint, b: ServiceEndpoint): boolean {
  return (
    a === b ||
    (a.clusterName === b.clusterName &&
      a.ip === b.ip &&
      a.kubernetesMetadata.nodeName === b.kubernetesMetadata.nodeName &&
      a.kubernetesMetadata.podName === b.kubernetesMetadata.podName &&
      a.containerMetadata.networkNamespace === b.containerMetadata.networkNamespace)
  );
}

/**
 * Services whose records changed, were added or removed, or whose declared protocols or being
 * exported changed; and whether the set of keys is the same.
 */
export interface ServiceChanges {
  readonly changed: ReadonlySet<ServiceKey>;
  readonly sameKeys: boolean;
}

/**
 * The last answer per snapshot, with the id of the index it was asked against: the index update
 * and the ADS server (which nodes a change can reach) both ask about the same pair on every
 * registry event, and without a lineage (`withServiceRecords`) the answer compares every service.
 * An id, not the index: a reference, even a `WeakRef` (which keeps its target until the current
 * job ends), would keep every index of a synchronous run of updates alive.
 */
const lastChanges = new WeakMap<Snapshot, { readonly previous: number; readonly changes: ServiceChanges }>();

/** `ServiceChanges` from `previous` to `snapshot`, worked out once per pair asked in a row. */
export function changedServices(previous: SnapshotIndex, snapshot: Snapshot): ServiceChanges {
  const id = indexId(previous);
  const last = lastChanges.get(snapshot);
  if (last?.previous === id) return last.changes;
  const changes = findChangedServices(previous, snapshot);
  lastChanges.set(snapshot, { previous: id, changes });
  return changes;
}

/** A number per index, given when first asked. */
function indexId(index: SnapshotIndex): number {
  return indexIds.get(index) ?? remember(indexIds, index, nextIndexId++);
}

const indexIds = new WeakMap<SnapshotIndex, number>();
let nextIndexId = 0;

function findChangedServices(previous: SnapshotIndex, snapshot: Snapshot): ServiceChanges {
  const records = changedRecords(previous, snapshot);
  const settings = changedServiceSettings(previous.snapshot, snapshot);
  if (settings.size === 0) return records;
  // A service known only from its declared protocols joins or leaves the index with them.
  const sameKeys = records.sameKeys && [...settings].every((key) => previous.services.has(key) && indexed(snapshot, key));
  return { changed: new Set([...records.changed, ...settings]), sameKeys };
}

/** The services whose declared protocols or being exported differ (export data in both or neither: `updatable`). */
function changedServiceSettings(a: Snapshot, b: Snapshot): Set<ServiceKey> {
  const changed = changedKeys(a.protocols, b.protocols);
  if (a.exports && b.exports) for (const key of changedMembers(a.exports, b.exports)) changed.add(key);
  return changed;
}

/** The services whose records changed, were added or removed. */
function changedRecords(previous: SnapshotIndex, snapshot: Snapshot): ServiceChanges {
  const known = changesSince(snapshot, previous.snapshot);
  if (known) return { changed: known, sameKeys: [...known].every((key) => previous.services.has(key) && indexed(snapshot, key)) };
  const before = previous.snapshot.services;
  const inStep = changedInStep(before, snapshot.services);
  if (inStep) return { changed: inStep, sameKeys: true };
  const changed = new Set<ServiceKey>();
  let added = false;
  for (const [key, records] of snapshot.services) {
    const old = before.get(key);
    if (old === records) continue;
    changed.add(key);
    added ||= old === undefined && !previous.services.has(key);
  }
  // Same number of record keys and none added: none removed either.
  if (!added && before.size === snapshot.services.size) return { changed, sameKeys: true };
  for (const key of previous.serviceKeys) if (!snapshot.services.has(key) && before.has(key)) changed.add(key);
  return { changed, sameKeys: false };
}

/**
 * The keys whose records changed, when both maps hold the same keys in the same order, as a copy
 * of the previous map with some keys set again does; otherwise undefined. Walking both in step
 * compares key and records pointers only: no key is hashed, and no key string is read.
 */
function changedInStep(
  before: ReadonlyMap<ServiceKey, readonly ServiceEndpoint[]>,
  after: ReadonlyMap<ServiceKey, readonly ServiceEndpoint[]>,
): Set<ServiceKey> | undefined {
  if (before.size !== after.size) return undefined;
  const changed = new Set<ServiceKey>();
  // Keys and values walked apart, and `after` by forEach: an entries iterator makes a pair per
  // entry, and this runs on every update of thousands of services.
  const keys = before.keys();
  const values = before.values();
  let inStep = true;
  after.forEach((records, key) => {
    if (!inStep) return;
    if (keys.next().value !== key) inStep = false;
    else if (values.next().value !== records) changed.add(key);
  });
  return inStep ? changed : undefined;
}

function indexService(snapshot: Snapshot, key: ServiceKey): IndexedService {
  const endpoints = sortEndpoints(snapshot.services.get(key) ?? []);
  const protocols = snapshot.protocols.get(key) ?? new Map<number, PortProtocol>();
  const ports = new Set<number>(protocols.keys());
  for (const port of endpoints.flatMap((endpoint) => endpoint.ports)) ports.add(port);
  const trustDomains = new Set<string>();
  for (const cluster of new Set(endpoints.map((endpoint) => endpoint.clusterName))) {
    const domain = trustDomainOfCluster(snapshot.mesh.trust, cluster);
    if (domain) trustDomains.add(domain);
  }
  const sortedPorts = [...ports].sort(compareNumbers);
  const sortedDomains = [...trustDomains].sort(compareText);
  const protocolList = sortedPorts.map((port) => `${port}/${protocolOf(protocols, port)}`);
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
    caches: new SlotCache(),
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
      const netns = endpoint.containerMetadata.networkNamespace;
      getOrInsert(hosted, key, () => []).push({ service: service.key, endpoint, sortKey: podSortKey(service.key, endpoint), netns });
    }
  }
  for (const [key, list] of hosted) hosted.set(key, sortHosted(list));
  return hosted;
}

/** By index: the nodes where two or more records claim one netns (`nodesSharingNetns`). */
const sharingByIndex = new WeakMap<SnapshotIndex, ReadonlySet<string>>();

/**
 * The nodes, `"<cluster>/<node>"`, where two or more records claim one netns: almost always none,
 * and then no record has netns rivals to look up. Every node's list is read once per index; an
 * updated index reads only the lists that changed, when the index before it knew its answer.
 */
export function nodesSharingNetns(index: SnapshotIndex): ReadonlySet<string> {
  const known = sharingByIndex.get(index);
  if (known) return known;
  const nodes = new Set<string>();
  for (const [node, list] of index.hostedBy) if (sharesNetns(list)) nodes.add(node);
  sharingByIndex.set(index, nodes);
  return nodes;
}

/** The nodes sharing a netns after an update: the nodes of the changed lists are looked at again. */
function sharingAfter(before: ReadonlySet<string>, changes: ReadonlyMap<string, readonly HostedEndpoint[] | undefined>): ReadonlySet<string> {
  if (changes.size === 0) return before;
  const nodes = new Set(before);
  for (const [node, list] of changes) {
    if (list && sharesNetns(list)) nodes.add(node);
    else nodes.delete(node);
  }
  return nodes;
}

function sharesNetns(list: readonly HostedEndpoint[]): boolean {
  return netnsRivalsOn(list) !== NO_NODE_RIVALS;
}

/** A node's records whose netns other records of the node also claim, with those records. */
export type NodeRivals = ReadonlyMap<ServiceEndpoint, readonly HostedEndpoint[]>;

/** A node none of whose records shares a netns with another (the usual case). */
export const NO_NODE_RIVALS: NodeRivals = new Map();

/**
 * By a node's list of records: an update gives a node a new list exactly when its records change,
 * so what is worked out for a list holds for every index sharing it, and a registry event costs
 * only the nodes it touched, when a compile asks.
 */
const rivalsByList = new WeakMap<readonly HostedEndpoint[], NodeRivals>();

/**
 * Each record of a node's list whose netns other records of the list also claim, with those
 * records: the node cannot tell them apart, so it serves none of them (NETNS_CONFLICT there).
 */
export function netnsRivalsOn(hosted: readonly HostedEndpoint[]): NodeRivals {
  let rivals = rivalsByList.get(hosted);
  if (!rivals) {
    rivals = rivalsOnNode(hosted);
    rivalsByList.set(hosted, rivals);
  }
  return rivals;
}

function rivalsOnNode(hosted: readonly HostedEndpoint[]): NodeRivals {
  const claims = sharedClaims(hosted);
  if (claims.length === 0) return NO_NODE_RIVALS;
  const rivals = new Map<ServiceEndpoint, readonly HostedEndpoint[]>();
  for (const records of claims) {
    for (const record of records)
      rivals.set(
        record.endpoint,
        records.filter((other) => other !== record),
      );
  }
  return rivals;
}

/**
 * The groups of a node's records claiming one netns, two or more each; almost always none, found
 * with one set operation per record (a netns claimed before leaves the set's size as it was).
 * On a cold index each record and its string is a cache miss. The strings are gathered by a loop
 * of their own first: its loads do not wait on one another, so the CPU overlaps their misses,
 * where a set operation after each read took them one at a time (W1's 2,001 nodes: ~45 → ~28 ms).
 */
function sharedClaims(hosted: readonly HostedEndpoint[]): HostedEndpoint[][] {
  const namespaces: string[] = [];
  for (const record of hosted) if (record.netns.length > 0) namespaces.push(record.netns);
  const claimed = new Set<string>();
  let shared: Set<string> | undefined;
  for (const netns of namespaces) {
    const size = claimed.size;
    claimed.add(netns);
    if (claimed.size > size) continue;
    shared ??= new Set();
    shared.add(netns);
  }
  if (shared === undefined) return [];
  const claims = new Map<string, HostedEndpoint[]>();
  for (const record of hosted) if (shared.has(record.netns)) getOrInsert(claims, record.netns, () => []).push(record);
  return [...claims.values()];
}

function sortHosted(list: HostedEndpoint[]): HostedEndpoint[] {
  return list.sort((a, b) => compareText(a.sortKey, b.sortKey));
}

function sameRecords(a: readonly HostedEndpoint[], b: readonly HostedEndpoint[]): boolean {
  return a.length === b.length && a.every((hosted, i) => hosted.endpoint === b[i]!.endpoint && hosted.service === b[i]!.service);
}

/** Two lists sorted by `sortKey` as one, `a`'s entries first among equals (what a stable sort of a + b gives). */
function mergeSorted(a: readonly HostedEndpoint[], b: readonly HostedEndpoint[]): HostedEndpoint[] {
  const merged: HostedEndpoint[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) merged.push(compareText(a[i]!.sortKey, b[j]!.sortKey) <= 0 ? a[i++]! : b[j++]!);
  while (i < a.length) merged.push(a[i++]!);
  while (j < b.length) merged.push(b[j++]!);
  return merged;
}

/** The known addresses only. */
function withoutUnknown(addresses: ReadonlyMap<string, string | undefined>): Map<string, string> {
  return new Map([...addresses].filter((entry): entry is [string, string] => entry[1] !== undefined));
}

/** Each node's address (`undefined`: none known), for the given node keys. */
function nodeAddresses(
  nodes: ReadonlyMap<string, NodeStatus>,
  hostedBy: ReadonlyMap<string, readonly HostedEndpoint[]>,
  keys: Iterable<string>,
): Map<string, string | undefined> {
  const addresses = new Map<string, string | undefined>();
  for (const key of keys) {
    const listed = nodes.get(key)?.ip;
    addresses.set(
      key,
      listed ||
        pickNodeAddress(
          undefined,
          (hostedBy.get(key) ?? []).map(({ endpoint }) => endpoint.kubernetesMetadata.nodeIp),
        ),
    );
  }
  return addresses;
}

function podSortKey(service: ServiceKey, endpoint: ServiceEndpoint): string {
  // Joined, not a template: V8 keeps a template's result as a rope of its parts, and sorting a
  // node's records compared ropes (several times slower than flat strings).
  return [endpoint.kubernetesMetadata.namespace, "/", endpoint.kubernetesMetadata.podName, "\u0000", service, "\u0000", ipSortKey(endpoint.ip)].join("");
}

/** A compile context's cache (see `SnapshotIndex.contexts`); the least recently used is evicted. */
export function contextCache(index: SnapshotIndex, context: string): SlotCache {
  let cache = index.contexts.get(context);
  if (cache) index.contexts.delete(context);
  else cache = new SlotCache();
  index.contexts.set(context, cache);
  while (index.contexts.size > CACHED_CONTEXTS) index.contexts.delete(index.contexts.keys().next().value!);
  return cache;
}
