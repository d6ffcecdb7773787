/**
 * Split-horizon endpoint planning for one service port, as one view sees it: which registry
 * endpoints are dialed directly (`pod_ip:inboundPort`), which through their node's waypoint
 * (`node_ip:tunnelPort`, all of a node's pods folded into one endpoint), which are left out and
 * why, and each endpoint's priority tier.
 */

import type { Metadata } from "../../gen/envoy/config/core/v3/base.js";
import { HealthStatus } from "../../gen/envoy/config/core/v3/health_check.js";
import type { Endpoint, LbEndpoint } from "../../gen/envoy/config/endpoint/v3/endpoint_components.js";
import { type Diagnostic, diagnostic, type EndpointRef } from "../diagnostics.js";
import { hostPort, lbMetadata, socketAddress } from "../envoy/core.js";
import type { ServiceEndpoint } from "../model/registry.js";
import { type SharedAddress, sharedAddresses } from "../model/snapshot-checks.js";
import { outboundClusterName } from "../naming.js";
import { AddressMap } from "../util/address-map.js";
import { sameItems } from "../util/arrays.js";
import { BoundedCache } from "../util/bounded-cache.js";
import { compositeKey, compositeKeyOf } from "../util/keys.js";
import { getOrInsert, newMap, remember, setOwn } from "../util/maps.js";
import { compareText, ipSortKey } from "../util/order.js";
import { CacheSlot, singleEntrySlot } from "./cache-slots.js";
import type { EdsView } from "./eds-view.js";
import { EncodingCell } from "./encoding-cells.js";
import {
  type HostedEndpoint,
  type IndexedService,
  NO_NODE_RIVALS,
  type NodeRivals,
  netnsRivalsOn,
  nodeKey,
  nodesSharingNetns,
  type SnapshotIndex,
} from "./snapshot-index.js";

export type Route = "direct" | "waypoint";

/** `envoy.lb` metadata key: `"true"` (a string) on an endpoint dialed through its node's waypoint. */
export const WAYPOINT_KEY = "waypoint";
/** `envoy.lb` metadata key of a waypoint endpoint: the cluster of the pods behind it. */
export const ORIGIN_CLUSTER_KEY = "origin_cluster";
/** `envoy.lb` metadata key of a waypoint endpoint: the node whose waypoint it is. */
export const ORIGIN_NODE_KEY = "origin_node";
/** Keys aether-xds owns in `envoy.lb` metadata; user metadata never overrides them. */
export const RESERVED_METADATA_KEYS: ReadonlySet<string> = new Set([WAYPOINT_KEY, ORIGIN_CLUSTER_KEY, ORIGIN_NODE_KEY]);

export interface Locality {
  readonly region: string;
  readonly zone: string;
}

/**
 * One endpoint Envoy will see (a LbEndpoint). It does not depend on the view (its tier does, and
 * is kept beside it in `PortPlan.tiers`), so it is built once and shared by every view.
 */
export interface PlannedEndpoint {
  readonly route: Route;
  readonly ip: string;
  readonly port: number;
  /** `ip:port`, unique within an assignment. */
  readonly address: string;
  readonly originCluster: string;
  readonly originNode: string;
  readonly locality: Locality;
  readonly health: HealthStatus;
  /** Unscaled; may exceed uint32 before the assignment is built. */
  readonly weight: number;
  /** Orders endpoints of one locality by address. */
  readonly sortKey: string;
  /**
   * The LbEndpoint as emitted (unscaled weight). It does not depend on the view, so it is built
   * once per registry record (direct) or per service, port and node (waypoint) and shared.
   */
  readonly lbEndpoint: LbEndpoint;
  /** Its encoding, filled by the first assignment encoder that needs it; shared like the LbEndpoint. */
  readonly encoding: EncodingCell;
  /** The registry endpoints behind it: one pod when direct, every pod of the node via a waypoint. */
  readonly pods: readonly EndpointRef[];
}

export interface PortPlan {
  readonly service: IndexedService;
  readonly port: number;
  /** The outbound cluster, `<svc>.<ns>.<meshDomain>:<port>`. */
  readonly clusterName: string;
  /** Sorted by tier, locality and address. */
  readonly endpoints: readonly PlannedEndpoint[];
  /**
   * Each endpoint's tier in this view, by position, before priorities are compacted: 0–5, same
   * cluster before remote; within each, same zone, same region, elsewhere. A list of numbers
   * rather than an object per endpoint and view: a view of W1 has ~88,000 endpoints.
   */
  readonly tiers: readonly number[];
  /** Endpoints left out, and adjustments made to emitted ones. */
  readonly diagnostics: readonly Diagnostic[];
}

export function planPort(index: SnapshotIndex, view: EdsView, service: IndexedService, port: number): PortPlan {
  const clusterName = outboundClusterName(index.snapshot.mesh.meshDomain, { ...service.ref, port });
  const routed = ROUTED_PORTS.get(service.caches, [port, view], () => routedPort(index, view, service, port, clusterName));
  const diagnostics = [...routed.diagnostics];
  const report = (code: Diagnostic["code"], message: string, endpoint: EndpointRef) =>
    diagnostics.push(diagnostic(code, message, { resource: clusterName, service: service.key, endpoint }));
  const { targets } = routed;
  const allTiers = targets.map((target) => tierOf(view, target.originCluster, target.locality));
  const order = targets.map((_, i) => i).sort((a, b) => allTiers[a]! - allTiers[b]! || compareEndpoints(targets[a]!, targets[b]!));
  const kept = uniqueAddresses(targets, order, (pod, first, address) =>
    report("ADDRESS_CONFLICT", leftOut(service, pod, `address ${address} is already used by ${describeOrigin(first)}`), pod),
  );
  const endpoints = kept.map((i) => targets[i]!);
  const tiers = kept.map((i) => allTiers[i]!);
  if (index.snapshot.mesh.podNetwork === "isolated") {
    for (const endpoint of endpoints) {
      if (endpoint.route !== "direct" || endpoint.originCluster === view.cluster) continue;
      const pod = endpoint.pods[0]!;
      report(
        "POD_IP_NOT_ROUTABLE",
        `${describePod(pod)} is dialed directly from cluster ${view.cluster}, but mesh.podNetwork is isolated: its IP does not route from here (use a waypoint mode, or podNetwork "routable" if pod IPs do route between clusters)`,
        pod,
      );
    }
  }
  return { service, port, clusterName, endpoints, tiers, diagnostics };
}

/**
 * A port's endpoints as a view routes them, before tiers: the direct ones, then one per waypoint
 * node, in that order (the stable sort keeps it among equals, and the first of an address wins),
 * with what was left out on the way. Nothing here depends on the viewer's zone or region.
 */
interface RoutedPort {
  readonly targets: readonly PlannedEndpoint[];
  readonly diagnostics: readonly Diagnostic[];
}

/**
 * Per service version: its routed ports by port and what routing reads of the view (its
 * cluster, its node in `always` mode, the mode and ports), so the views of a cluster's zones
 * route each port once.
 */
const ROUTED_PORTS = new CacheSlot<[port: number, view: EdsView], RoutedPort>("routed endpoints", (port, view) =>
  compositeKey(port, view.cluster, view.node, view.mode, view.inboundPort, view.tunnelPort),
);

function routedPort(index: SnapshotIndex, view: EdsView, service: IndexedService, port: number, clusterName: string): RoutedPort {
  const diagnostics: Diagnostic[] = [];
  const report = (code: Diagnostic["code"], message: string, endpoint: ServiceEndpoint | EndpointRef) =>
    diagnostics.push(diagnostic(code, message, { resource: clusterName, service: service.key, endpoint: endpointRef(endpoint) }));
  const direct: PlannedEndpoint[] = [];
  const waypointTargets = WAYPOINT_ENDPOINTS.get(service.caches, [port, view.tunnelPort], () => new Map());
  const earlierTargets = WAYPOINT_ENDPOINTS.earlier(service.caches, [port, view.tunnelPort]);
  const viaNode = new Map<string, { node: WaypointNode; pods: ServiceEndpoint[] }>();
  for (const endpoint of service.endpoints) {
    if (!endpoint.ports.includes(port)) continue;
    if (!endpoint.containerMetadata.networkNamespace) {
      // Its node binds its inbound listener in its netns: without one, nothing would answer.
      report("NO_NETNS", leftOut(service, endpoint, "its record has no network namespace, so its node gives it no inbound listener"), endpoint);
      continue;
    }
    const rivals = netnsRivals(index, endpoint);
    if (rivals.length > 0) {
      const others = rivals.map((rival) => `${rival.service} ${describePod(rival.endpoint)}`).join(", ");
      const reason = `its network namespace ${endpoint.containerMetadata.networkNamespace} is also claimed by ${others} on its node, which tells them apart by it and so gives none an inbound listener (NETNS_CONFLICT there)`;
      report("NETNS_SHARED", leftOut(service, endpoint, reason), endpoint);
      continue;
    }
    const route = routeOf(view, service, endpoint);
    if (route === "not-exported") {
      report("NOT_EXPORTED", leftOut(service, endpoint, `${service.key} is not exported, so other clusters cannot reach it through a waypoint`), endpoint);
      continue;
    }
    if (hasReservedKey(endpoint)) {
      for (const key of Object.keys(endpoint.metadata).filter((k) => RESERVED_METADATA_KEYS.has(k))) {
        report("RESERVED_METADATA_KEY", `user metadata key "${key}" of ${describePod(endpoint)} is reserved by aether-xds and was dropped`, endpoint);
      }
    }
    if (route === "direct") {
      direct.push(directTarget(endpoint, view.inboundPort));
      continue;
    }
    const node = waypointNode(index, endpoint);
    if ("problem" in node) {
      report(node.problem, leftOut(service, endpoint, node.message), endpoint);
      continue;
    }
    if (node.mismatch) report("NODE_IP_MISMATCH", node.mismatch, endpoint);
    const group = viaNode.get(node.key) ?? { node, pods: [] };
    group.pods.push(endpoint);
    viaNode.set(node.key, group);
  }
  const waypoints = [...viaNode.values()].map(({ node, pods }) => waypointTarget(view, waypointTargets, earlierTargets, node, pods));
  return { targets: [...direct, ...waypoints], diagnostics };
}

/** Per index: the addresses naming pods of different services in different clusters (`sharedAddresses`), by IP. */
const SHARED_ADDRESSES = singleEntrySlot<ReadonlyMap<string, SharedAddress>>("shared pod addresses");

function sharedAddressesOf(index: SnapshotIndex): ReadonlyMap<string, SharedAddress> {
  return SHARED_ADDRESSES.get(index.caches, [], () => new Map(sharedAddresses(index.snapshot.services).map((shared) => [shared.ip, shared])));
}

/** `sharedAddresses` of the index's snapshot, in IP order: found once per index, by the compile or by this. */
export function sharedPodAddresses(index: SnapshotIndex): SharedAddress[] {
  return [...sharedAddressesOf(index).values()];
}

/**
 * A port's emitted direct endpoints at an address that names pods of different services in
 * different clusters. Computed per index rather than cached with the port's plan: a change to
 * another service can make or unmake such an address.
 */
export function sharedAddressDiagnostics(index: SnapshotIndex, plan: PortPlan): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  for (const endpoint of plan.endpoints) {
    const shared = endpoint.route === "direct" ? sharedAddressesOf(index).get(endpoint.ip) : undefined;
    if (!shared) continue;
    const pod = endpoint.pods[0]!;
    const message = `${describePod(pod)} is dialed at ${endpoint.ip}, which names ${shared.pods.join(", ")}: pods of different services in different clusters share it, so a connection to it that lands in the wrong cluster reaches another service's pod (only its certificate pin stops it)`;
    diagnostics.push(diagnostic("SHARED_POD_ADDRESS", message, { resource: plan.clusterName, service: plan.service.key, endpoint: pod }));
  }
  return diagnostics;
}

/**
 * The other records of an endpoint's node that claim its netns. The node cannot tell them apart
 * (NETNS_CONFLICT), so it serves none of them: no node may advertise any of them. While no node
 * of the index has records sharing a netns, none are looked up.
 */
export function netnsRivals(index: SnapshotIndex, endpoint: ServiceEndpoint): readonly HostedEndpoint[] {
  const { nodeName } = endpoint.kubernetesMetadata;
  if (!nodeName || !endpoint.containerMetadata.networkNamespace || nodesSharingNetns(index).size === 0) return NO_RIVALS;
  return nodeRivals(index, endpoint.clusterName, nodeName).get(endpoint) ?? NO_RIVALS;
}

const NO_RIVALS: readonly HostedEndpoint[] = [];

/** Per index: each node's netns rivals by cluster, then node name (looked up per record: no key string is built). */
const RIVALS_BY_NODE = singleEntrySlot<Map<string, Map<string, NodeRivals>>>("netns rivals by node");

function nodeRivals(index: SnapshotIndex, cluster: string, name: string): NodeRivals {
  const byCluster = RIVALS_BY_NODE.get(index.caches, NO_ARGS, newMap<string, Map<string, NodeRivals>>);
  const byName = byCluster.get(cluster) ?? remember(byCluster, cluster, new Map<string, NodeRivals>());
  return byName.get(name) ?? remember(byName, name, rivalsOnNode(index, cluster, name));
}

function rivalsOnNode(index: SnapshotIndex, cluster: string, name: string): NodeRivals {
  const hosted = index.hostedBy.get(nodeKey(cluster, name));
  return hosted ? netnsRivalsOn(hosted) : NO_NODE_RIVALS;
}

/** The arguments of a single-entry slot: with `newMap` as its builder, per-record lookups allocate nothing. */
const NO_ARGS: [] = [];

function routeOf(view: EdsView, service: IndexedService, endpoint: ServiceEndpoint): Route | "not-exported" {
  if (view.mode === "off") return "direct";
  const sameCluster = endpoint.clusterName === view.cluster;
  const sameNode = sameCluster && endpoint.kubernetesMetadata.nodeName === view.node;
  const viaWaypoint = !sameCluster || (view.mode === "always" && !sameNode);
  if (!viaWaypoint) return "direct";
  if (service.exported) return "waypoint";
  // Only exported services have tunnel chains. Inside its own cluster, a service that is not
  // exported stays reachable directly (always mode); from another cluster it is not reachable.
  return sameCluster ? "direct" : "not-exported";
}

function envoyHealth(endpoint: ServiceEndpoint): HealthStatus {
  switch (endpoint.health) {
    case "UNHEALTHY":
      return HealthStatus.UNHEALTHY;
    case "DRAINING":
      return HealthStatus.DRAINING;
    default:
      return HealthStatus.HEALTHY;
  }
}

function hasReservedKey(endpoint: ServiceEndpoint): boolean {
  const { metadata } = endpoint;
  return Object.hasOwn(metadata, WAYPOINT_KEY) || Object.hasOwn(metadata, ORIGIN_CLUSTER_KEY) || Object.hasOwn(metadata, ORIGIN_NODE_KEY);
}

/** Direct endpoints by registry record: the same in every view, so built once per record (and port). */
const directTargets = new WeakMap<ServiceEndpoint, DirectTarget>();

function directTarget(endpoint: ServiceEndpoint, port: number): PlannedEndpoint {
  const known = directTargets.get(endpoint);
  if (known?.port === port) return known;
  const target = new DirectTarget(endpoint, port);
  directTargets.set(endpoint, target);
  return target;
}

/**
 * A direct endpoint, shared by every view. What its record says is read from the record; only
 * what costs work (address, sort key, LbEndpoint) is kept. It is its own encoding cell, and builds
 * its one pod's ref when asked (diagnostics, explain), so a kept endpoint holds no more objects.
 */
class DirectTarget extends EncodingCell implements PlannedEndpoint {
  readonly address: string;
  readonly locality: Locality;
  readonly health: HealthStatus;
  readonly sortKey: string;
  readonly lbEndpoint: LbEndpoint;

  constructor(
    private readonly record: ServiceEndpoint,
    readonly port: number,
  ) {
    super();
    this.address = hostPort(record.ip, port);
    this.locality = internedLocality(record.locality);
    this.health = envoyHealth(record);
    this.sortKey = ipSortKey(record.ip);
    this.lbEndpoint = buildLbEndpoint({ address: socketAddress(record.ip, port) }, this.health, directMetadata(record), record.weight);
  }

  get route(): Route {
    return "direct";
  }
  get ip(): string {
    return this.record.ip;
  }
  get originCluster(): string {
    return this.record.clusterName;
  }
  get originNode(): string {
    return this.record.kubernetesMetadata.nodeName;
  }
  get weight(): number {
    return this.record.weight;
  }
  get encoding(): EncodingCell {
    return this;
  }
  get pods(): readonly EndpointRef[] {
    return [endpointRef(this.record)];
  }
}

/**
 * A waypoint endpoint, shared by every view: the node's address at the tunnel port, standing for
 * the service's pods there. Like a direct one, its own encoding cell, building its pods' refs when
 * asked; what its node and tunnel say (shared by every endpoint of the node) is read from them.
 */
class WaypointTarget extends EncodingCell implements PlannedEndpoint {
  readonly locality: Locality;

  constructor(
    private readonly node: WaypointNode,
    private readonly tunnel: Tunnel,
    readonly health: HealthStatus,
    readonly weight: number,
    readonly lbEndpoint: LbEndpoint,
    private readonly records: readonly ServiceEndpoint[],
  ) {
    super();
    this.locality = internedLocality(node.locality);
  }

  get ip(): string {
    return this.node.ip;
  }
  get port(): number {
    return this.tunnel.port;
  }
  get address(): string {
    return this.tunnel.address;
  }
  get originCluster(): string {
    return this.node.cluster;
  }
  get originNode(): string {
    return this.node.name;
  }
  get sortKey(): string {
    return this.node.sortKey;
  }
  get route(): Route {
    return "waypoint";
  }
  get encoding(): EncodingCell {
    return this;
  }
  get pods(): readonly EndpointRef[] {
    return this.records.map(endpointRef);
  }

  /** Whether it is the endpoint of exactly these pods (records are immutable) behind this node as it resolves now, at this tunnel port. */
  standsFor(node: WaypointNode, port: number, pods: readonly ServiceEndpoint[]): boolean {
    if (this.port !== port || this.ip !== node.ip || this.originCluster !== node.cluster || this.originNode !== node.name) return false;
    return this.locality.region === node.locality.region && this.locality.zone === node.locality.zone && sameItems(this.records, pods);
  }
}

/** One literal per shape, so each object is built with its fields in place (no property array added later). */
function buildLbEndpoint(endpoint: Endpoint, health: HealthStatus, metadata: Metadata | undefined, weight: number): LbEndpoint {
  return metadata
    ? { endpoint, health_status: health, metadata, load_balancing_weight: weight }
    : { endpoint, health_status: health, load_balancing_weight: weight };
}

interface WaypointNode {
  readonly key: string;
  /** Its key and address as one injective string, for cache keys. */
  readonly cacheKey: string;
  readonly cluster: string;
  readonly name: string;
  readonly ip: string;
  /** `ipSortKey(ip)`. */
  readonly sortKey: string;
  readonly locality: Locality;
  /** Set when the registry's node IP disagrees with the node list. */
  readonly mismatch?: string;
  /** Its last tunnel (`tunnelAt`), in a holder that copies of the node share. */
  readonly tunnel: { last?: Tunnel };
}

/** A node's address at a tunnel port, as a string and as the Endpoint message its waypoint endpoints share. */
interface Tunnel {
  readonly port: number;
  readonly address: string;
  readonly endpoint: Endpoint;
}

/**
 * One Endpoint message per node and tunnel port, shared by the waypoint endpoints of every
 * service behind that node: a view's endpoints are mostly these, and each kept its own three
 * objects and address string, the same for every service. One tunnel port is kept per node (a
 * map per node held more than the sharing saved); views with another port make their own.
 */
function tunnelAt(node: WaypointNode, port: number): Tunnel {
  const last = node.tunnel.last;
  if (last?.port === port) return last;
  node.tunnel.last = { port, address: hostPort(node.ip, port), endpoint: { address: socketAddress(node.ip, port) } };
  return node.tunnel.last;
}

type WaypointProblem = { problem: "UNKNOWN_NODE" | "NO_NODE_IP" | "NODE_NOT_READY" | "NODE_GONE"; message: string };

/**
 * The node whose waypoint fronts an endpoint. Its address is the one the whole index agrees on
 * (the node list's, else what most of its records say), the address its own tunnel listener binds;
 * a cluster with a node list loses the waypoints of nodes missing from it.
 */
function waypointNode(index: SnapshotIndex, endpoint: ServiceEndpoint): WaypointNode | WaypointProblem {
  const { nodeName, nodeIp } = endpoint.kubernetesMetadata;
  if (!nodeName) return { problem: "UNKNOWN_NODE", message: "the record names no node, so no waypoint fronts it" };
  const resolved = resolvedNode(index, endpoint.clusterName, nodeName);
  if ("problem" in resolved) return resolved;
  // A node missing from the node list is placed where its record says.
  const node = resolved.listed ? resolved.node : { ...resolved.node, locality: endpoint.locality };
  if (!nodeIp || nodeIp === node.ip) return node;
  const source = resolved.listed ? "the node list says" : "its other records say";
  return { ...node, mismatch: `the registry says node ${node.key} is ${nodeIp}, ${source} ${node.ip}; using ${node.ip}` };
}

type ResolvedNode = { readonly node: WaypointNode; readonly listed: boolean } | WaypointProblem;

/** Per index: waypoint nodes by cluster, then node name, resolved once (looked up per remote record: no key string is built). */
const RESOLVED_NODES = singleEntrySlot<Map<string, Map<string, ResolvedNode>>>("resolved waypoint nodes");

function resolvedNode(index: SnapshotIndex, cluster: string, name: string): ResolvedNode {
  const byCluster = RESOLVED_NODES.get(index.caches, NO_ARGS, newMap<string, Map<string, ResolvedNode>>);
  const byName = byCluster.get(cluster) ?? remember(byCluster, cluster, new Map<string, ResolvedNode>());
  return byName.get(name) ?? remember(byName, name, resolveNode(index, cluster, name));
}

function resolveNode(index: SnapshotIndex, cluster: string, name: string): ResolvedNode {
  const key = nodeKey(cluster, name);
  const listed = index.nodes.get(key);
  if (listed && !listed.ready) return { problem: "NODE_NOT_READY", message: `node ${key} is not ready, so its waypoint is down` };
  const ip = index.nodeAddresses.get(key);
  if (!ip) return { problem: "NO_NODE_IP", message: `node ${key} has no known IP: a remote pod IP is not routable` };
  if (!listed && index.clustersWithNodeList.has(cluster)) {
    return { problem: "NODE_GONE", message: `node ${key} is not in the node list of cluster ${cluster}` };
  }
  const locality = listed ? { region: listed.region, zone: listed.zone } : { region: "", zone: "" };
  const node = { key, cacheKey: compositeKey(key, ip), cluster, name, ip, sortKey: ipSortKey(ip), locality, tunnel: {} };
  return { node, listed: listed !== undefined };
}

/**
 * Envoy keeps one host per address, so every pod of the service behind one node becomes one
 * endpoint: healthy if any pod is, else draining if any is, else unhealthy; its weight is the sum
 * over the pods in that state. Which pods those are does not depend on the view, so the result is
 * cached on the service.
 */
const WAYPOINT_ENDPOINTS = new CacheSlot<[port: number, tunnelPort: number], Map<string, WaypointTarget>>(
  "waypoint endpoints",
  (port, tunnelPort) => `${port},${tunnelPort}`,
  // A registry update keeps each unchanged record object (`withServiceRecords`), so after a health
  // flip the service's next version finds every other node's endpoint, and its encoding, here.
  true,
);

/**
 * `targets`: the service port's waypoint endpoints for the view's tunnel port, by the node's
 * `cacheKey` (its key and address); `earlier`: the same, as the service's previous version left
 * them, each reused while it stands for the same pods.
 */
function waypointTarget(
  view: EdsView,
  targets: Map<string, WaypointTarget>,
  earlier: ReadonlyMap<string, WaypointTarget> | undefined,
  node: WaypointNode,
  pods: readonly ServiceEndpoint[],
): WaypointTarget {
  const known = targets.get(node.cacheKey);
  if (known) return known;
  const kept = earlier?.get(node.cacheKey);
  return remember(targets, node.cacheKey, kept?.standsFor(node, view.tunnelPort, pods) ? kept : newWaypointTarget(view, node, pods));
}

function newWaypointTarget(view: EdsView, node: WaypointNode, pods: readonly ServiceEndpoint[]): WaypointTarget {
  let health = envoyHealth(pods[0]!);
  for (let i = 1; i < pods.length; i++) health = rollUpHealth(health, envoyHealth(pods[i]!));
  let weight = 0;
  for (const pod of pods) if (envoyHealth(pod) === health) weight += pod.weight;
  const tunnel = tunnelAt(node, view.tunnelPort);
  const lbEndpoint = buildLbEndpoint(tunnel.endpoint, health, endpointMetadata(pods, node), weight);
  // A copy of exactly their length: the list was grown by push, with room for 17.
  return new WaypointTarget(node, tunnel, health, weight, lbEndpoint, pods.slice());
}

const HEALTH_RANK: Partial<Record<HealthStatus, number>> = {
  [HealthStatus.HEALTHY]: 0,
  [HealthStatus.DRAINING]: 1,
  [HealthStatus.UNHEALTHY]: 2,
};

function rollUpHealth(a: HealthStatus, b: HealthStatus): HealthStatus {
  return (HEALTH_RANK[a] ?? 2) <= (HEALTH_RANK[b] ?? 2) ? a : b;
}

/** The `envoy.lb` metadata of an endpoint standing for `pods` (`endpointFields`); undefined when there is none. */
function endpointMetadata(pods: readonly ServiceEndpoint[], waypoint?: WaypointNode): Metadata | undefined {
  const fields = endpointFields(pods, waypoint);
  return fields && lbMetadata(fields);
}

/**
 * The `envoy.lb` fields of an endpoint standing for `pods`: the user metadata they all agree on,
 * without aether-xds's reserved keys, and for a waypoint endpoint those keys naming its node; keys
 * sorted. Undefined when there are none. Built straight from the sorted keys, with no map of the
 * values in between: a view builds one per waypoint endpoint on every cold index.
 */
function endpointFields(pods: readonly ServiceEndpoint[], waypoint?: WaypointNode): Record<string, string> | undefined {
  const first = pods[0]!.metadata;
  const keys = agreedKeys(pods);
  if (waypoint) keys.push(WAYPOINT_KEY, ORIGIN_CLUSTER_KEY, ORIGIN_NODE_KEY);
  if (keys.length === 0) return undefined;
  keys.sort(compareText);
  const fields: Record<string, string> = {};
  for (const key of keys) setOwn(fields, key, (waypoint && reservedValue(waypoint, key)) ?? first[key]!);
  return fields;
}

/**
 * A direct endpoint's metadata, one object per distinct content: the pods of a deployment carry
 * the same labels (app, version, pod-template-hash), so their endpoints share one. Process-wide,
 * so bounded; a service's records are planned together, so its pods meet while their entry is
 * kept, and a record whose entry was dropped gets its own.
 */
const DIRECT_METADATA = new BoundedCache<string, Metadata>(4096);

function directMetadata(record: ServiceEndpoint): Metadata | undefined {
  const fields = endpointFields([record]);
  // The fields come with their keys sorted, so equal metadata gives the same key.
  return fields && DIRECT_METADATA.get(compositeKeyOf(Object.entries(fields).flat()), () => lbMetadata(fields));
}

/** The keys of user metadata every pod has with the same value, reserved keys left out. */
function agreedKeys(pods: readonly ServiceEndpoint[]): string[] {
  const first = pods[0]!.metadata;
  const keys: string[] = [];
  for (const key of Object.keys(first)) if (!RESERVED_METADATA_KEYS.has(key) && everyPodHas(pods, key, first[key]!)) keys.push(key);
  return keys;
}

/** A waypoint endpoint's value for a reserved key; undefined for a user key. */
function reservedValue(node: WaypointNode, key: string): string | undefined {
  if (key === WAYPOINT_KEY) return "true";
  if (key === ORIGIN_CLUSTER_KEY) return node.cluster;
  return key === ORIGIN_NODE_KEY ? node.name : undefined;
}

function everyPodHas(pods: readonly ServiceEndpoint[], key: string, value: string): boolean {
  for (let i = 1; i < pods.length; i++) if (pods[i]!.metadata[key] !== value) return false;
  return true;
}

/** Same cluster first, even against a remote endpoint in the same locality; then zone, region, elsewhere. */
export function tierOf(view: EdsView, cluster: string, locality: Locality): number {
  const clusterTier = cluster === view.cluster ? 0 : 3;
  if (!locality.region || locality.region !== view.region) return clusterTier + 2;
  return clusterTier + (locality.zone && locality.zone === view.zone ? 0 : 1);
}

/**
 * One object per (region, zone), so that endpoints of one locality compare and group by identity
 * (a fast path only: comparisons fall back to the strings). Process-wide, so capped.
 */
const localities = new Map<string, Map<string, Locality>>();
const MAX_INTERNED_LOCALITIES = 4096;
let internedCount = 0;

function internedLocality(locality: Locality): Locality {
  const interned = localities.get(locality.region)?.get(locality.zone);
  if (interned || internedCount >= MAX_INTERNED_LOCALITIES) return interned ?? locality;
  const fresh = { region: locality.region, zone: locality.zone };
  getOrInsert(localities, locality.region, () => new Map<string, Locality>()).set(locality.zone, fresh);
  internedCount++;
  return fresh;
}

/** Within a tier: by locality, then address. */
function compareEndpoints(a: PlannedEndpoint, b: PlannedEndpoint): number {
  return (
    (a.locality !== b.locality && (compareText(a.locality.region, b.locality.region) || compareText(a.locality.zone, b.locality.zone))) ||
    compareText(a.sortKey, b.sortKey) ||
    a.port - b.port
  );
}

/**
 * Envoy de-duplicates hosts by address (the first wins): of the endpoints in `order`, the
 * positions to keep (the best-tier one of each address); the rest are reported.
 */
function uniqueAddresses(
  endpoints: readonly PlannedEndpoint[],
  order: readonly number[],
  conflict: (pod: EndpointRef, kept: PlannedEndpoint, address: string) => void,
): number[] {
  const seen = new AddressMap<PlannedEndpoint>();
  return order.filter((i) => {
    const endpoint = endpoints[i]!;
    const kept = seen.get(endpoint.ip, endpoint.port);
    if (!kept) {
      seen.set(endpoint.ip, endpoint.port, endpoint);
      return true;
    }
    for (const pod of endpoint.pods) conflict(pod, kept, endpoint.address);
    return false;
  });
}

function describeOrigin(endpoint: PlannedEndpoint): string {
  return endpoint.route === "waypoint"
    ? `the waypoint of ${endpoint.originCluster}/${endpoint.originNode}`
    : `pod ${endpoint.pods[0]?.pod || endpoint.ip} of cluster ${endpoint.originCluster}`;
}

/** A literal per shape (pod and node each set only when known), built with its fields in place. */
export function endpointRef(endpoint: ServiceEndpoint | EndpointRef): EndpointRef {
  if (!("kubernetesMetadata" in endpoint)) return endpoint;
  const { clusterName: cluster, ip } = endpoint;
  const { podName: pod, nodeName: node } = endpoint.kubernetesMetadata;
  if (pod && node) return { cluster, ip, pod, node };
  if (pod) return { cluster, ip, pod };
  return node ? { cluster, ip, node } : { cluster, ip };
}

function describePod(endpoint: ServiceEndpoint | EndpointRef): string {
  const ref = endpointRef(endpoint);
  return `pod ${ref.pod ?? ref.ip} (${ref.cluster}, ${ref.ip})`;
}

function leftOut(service: IndexedService, endpoint: ServiceEndpoint | EndpointRef, reason: string): string {
  return `left out ${service.key} ${describePod(endpoint)}: ${reason}`;
}
