/**
 * Replays one connection — a source (a hosted pod, or the node itself) calling a service port —
 * over the compiled resources of every node, the way Envoy would route it: priority choice, the
 * transport-socket matcher, the waypoint's tunnel chain and ingress, the destination pod's inbound
 * chain, and the mTLS identities on both ends. Every step is recorded as a hop.
 */
import type { Cluster } from "../../gen/envoy/config/cluster/v3/cluster.js";
import type { TransportSocket } from "../../gen/envoy/config/core/v3/base.js";
import type { ClusterLoadAssignment } from "../../gen/envoy/config/endpoint/v3/endpoint.js";
import type { LbEndpoint } from "../../gen/envoy/config/endpoint/v3/endpoint_components.js";
import type { ClusterConfig } from "../../gen/envoy/extensions/clusters/aggregate/v3/cluster.js";
import type { TcpProxy } from "../../gen/envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy.js";
import type { Config as FilterStateOverrideConfig } from "../../gen/envoy/extensions/transport_sockets/tls/cert_mappers/filter_state_override/v3/config.js";
import type { Config as OnDemandSecretConfig } from "../../gen/envoy/extensions/transport_sockets/tls/cert_selectors/on_demand_secret/v3/config.js";
import type { CommonTlsContext, DownstreamTlsContext, UpstreamTlsContext } from "../../gen/envoy/extensions/transport_sockets/tls/v3/tls.js";
import type { SPIFFECertValidatorConfig } from "../../gen/envoy/extensions/transport_sockets/tls/v3/tls_spiffe_validator_config.js";
import type { Any } from "../../gen/google/protobuf/any.js";
import { hostPort } from "../envoy/core.js";
import { unpackAny } from "../envoy/schema.js";
import { EXTENSION, FILTER_STATE } from "../envoy/types.js";
import type { ServiceEndpoint } from "../model/registry.js";
import { bundleSecretName, parseInboundChainName, type ServiceKey, trustDomainOf } from "../naming.js";
import { getOrInsert } from "../util/maps.js";
import type { CompiledNode, MeshView, NodeResources, PodLookup, RegistryPod, TunnelLookup } from "./compiled-mesh.js";
import { enterAtSource, type Stamped, type StampedValue, targetNames } from "./entry.js";
import { chosenPriority, evaluateSocketMatcher, readsFilterState, selectFilterChain } from "./envoy-match.js";
import { type ReplayMemo, remember } from "./replay-memo.js";

/** Every mistake the path check can find, by stable code, with what it means. */
export const PATH_FAILURES = {
  NO_OUTBOUND_LISTENER: "the source pod has no egress listener in its network namespace",
  NO_ROUTE: "the egress listener has no route to a cluster for the service's authority",
  NO_CAPTURE_CHAIN: "the capture listener has no chain for the service's VIP and port",
  NO_CLUSTER: "the source node has no cluster for the service port",
  MATCHER_NO_MATCH: "the transport-socket matcher yields no socket (Envoy would use the default: plaintext)",
  MATCHER_INVALID: "the transport-socket matcher cannot be evaluated",
  MISSING_SOCKET: "the matcher names a socket that does not exist (Envoy would use the default socket)",
  NO_TLS: "no TLS socket on this hop",
  WRONG_CLIENT_CERT: "the source presents a certificate other than its own",
  SELECTOR_OVER_ADS: "the certificate selector fetches over ADS (Envoy 1.38–1.40 crash on it; a secret already watched on ADS never arrives)",
  POOL_SHARED_ACROSS_SOURCES:
    "sources with different certificates share the node's upstream connection pool: one's requests may go out with another's certificate",
  NO_SAN_PIN: "the source does not pin the destination identity",
  POD_IP_NOT_ROUTABLE: "a pod IP that is not routable from the source's cluster",
  UNKNOWN_ADDRESS: "an address that is neither a pod's inbound port nor a waypoint",
  WAYPOINT_IN_OFF_MODE: "a waypoint is used with the waypoint off",
  SAME_CLUSTER_VIA_WAYPOINT: "same-cluster traffic goes through a waypoint",
  TUNNEL_NO_CHAIN: "the waypoint's tunnel listener has no chain for the SNI: the connection is refused",
  TLS_TERMINATED_AT_NODE: "the waypoint's tunnel chain terminates TLS",
  INGRESS_CLUSTER_MISSING: "the tunnel chain forwards to a cluster the waypoint does not have",
  TLS_ORIGINATED_AT_NODE: "the waypoint's ingress cluster originates TLS",
  INGRESS_EMPTY: "the waypoint's ingress cluster has no healthy pod",
  WAYPOINT_TO_WAYPOINT: "a waypoint forwards to another waypoint",
  POD_NODE_NOT_COMPILED: "the destination pod's node has no compiled configuration",
  NO_INBOUND_LISTENER: "the destination pod has no inbound listener",
  NO_INBOUND_CHAIN: "the destination pod's inbound listener has no chain for the SNI: the connection is refused",
  WRONG_PORT: "the SNI selects a chain for another port",
  WRONG_SERVICE: "the connection lands on a pod of another service",
  CLIENT_CERT_NOT_REQUIRED: "the destination does not require a client certificate",
  SAN_MISMATCH: "the destination's certificate is not the identity the source pins",
  PEER_NOT_TRUSTED: "a peer's trust domain is not trusted by the other side",
} as const;

/** A stable path-failure code, e.g. `"SAN_MISMATCH"`. */
export type PathFailureCode = keyof typeof PATH_FAILURES;

export interface PathSource {
  /** `"<cluster>/<node>"`. */
  readonly node: string;
  readonly cluster: string;
  /** The source pod, or undefined for the node proxy itself. */
  readonly pod?: { readonly namespace: string; readonly name: string; readonly service: ServiceKey };
  readonly netns?: string;
  /** The identity the source must present. */
  readonly identity: string;
}

export interface PathTarget {
  readonly service: ServiceKey;
  readonly port: number;
}

export interface Landing {
  readonly address: string;
  readonly priority: number;
  readonly socket: string;
  readonly sni: string;
  /** The waypoint node, `"<cluster>/<node>"`, when the connection went through one. */
  readonly via?: string;
  readonly pod: { readonly cluster: string; readonly namespace: string; readonly name: string; readonly ip: string };
  readonly hops: readonly string[];
}

export interface PathFailure {
  readonly code: PathFailureCode;
  readonly reason: string;
  readonly hops: readonly string[];
}

/**
 * One source calling one service port: the cluster it uses, where each healthy endpoint of the
 * chosen priority lands, and each mistake that stops a connection, with the hops that led there.
 */
export interface PathReport {
  readonly source: PathSource;
  readonly target: PathTarget;
  readonly cluster: string;
  /**
   * ok: every healthy endpoint of the chosen priority lands (or could not be followed, see
   * `unverified`); failed: at least one does not; unreachable: no healthy endpoint at all;
   * unverified: none could be followed; not-captured: the source has no way in by design (see `note`).
   */
  readonly status: "ok" | "failed" | "unreachable" | "unverified" | "not-captured";
  readonly landings: readonly Landing[];
  readonly failures: readonly PathFailure[];
  /** Endpoints on nodes the snapshot cannot compile (e.g. no known IP): not a mistake, not proven. */
  readonly unverified: readonly PathFailure[];
  /** Why a `not-captured` source has no way in. */
  readonly note?: string;
  /** The upstream connection pool the source's connections use (checked across sources by the mesh check). */
  readonly pool?: PoolUse;
}

/**
 * Envoy keys an upstream pool by host and the hashable filter state shared by the downstream
 * connection (or gives each downstream connection its own). Sources of one node with the same key
 * share pools, so they must present the same certificate.
 */
export interface PoolUse {
  readonly node: string;
  readonly cluster: string;
  /** The hashable values that partition the pools; undefined: a pool per downstream connection. */
  readonly key: string | undefined;
  readonly certificate: string;
}

export interface ReplayContext {
  readonly mesh: MeshView;
  readonly tunnels: TunnelLookup;
  /** Registry pods at an IP, by cluster. */
  readonly pods: PodLookup;
  /** A compiled node's resources by name and address (see `resourceLookups`). */
  readonly resources: (node: CompiledNode) => NodeResources;
  /** What paths derive from the same compiled resources, kept for this replay. */
  readonly memo: ReplayMemo;
}

class PathError extends Error {
  constructor(
    readonly code: PathFailureCode,
    readonly detail: string,
  ) {
    super(`${PATH_FAILURES[code]}: ${detail}`);
  }
}

interface Trip {
  readonly source: PathSource;
  readonly target: PathTarget;
  readonly filterState: ReadonlyMap<string, StampedValue>;
  readonly hops: string[];
}

export function replayPath(context: ReplayContext, source: PathSource, target: PathTarget): PathReport {
  const node = context.mesh.node(source.node)!;
  const entry = enterAtSource(context, node, source, target);
  const expected = targetNames(context, target).cluster;
  if (entry.kind === "not-captured")
    return { source, target, cluster: expected, status: "not-captured", landings: [], failures: [], unverified: [], note: entry.reason };
  if (entry.kind === "failed") {
    const failure = { code: entry.code, reason: `${PATH_FAILURES[entry.code]}: ${entry.detail}`, hops: entry.hops };
    return { source, target, cluster: expected, status: "failed", landings: [], failures: [failure], unverified: [] };
  }
  const cluster = entry.cluster;
  const { clusters, chosen, unroutable } = levelFor(context, context.resources(node), cluster);
  if (clusters.length === 0) {
    const failure = { code: "NO_CLUSTER" as const, reason: `${PATH_FAILURES.NO_CLUSTER}: ${cluster}`, hops: [...entry.hops] };
    return { source, target, cluster, status: "failed", landings: [], failures: [failure], unverified: [] };
  }
  if (!chosen) return { source, target, cluster, status: "unreachable", landings: [], failures: [], unverified: [] };
  const landings: Landing[] = [];
  const failures: PathFailure[] = [];
  const unverified: PathFailure[] = [];
  const { stamped } = entry;
  const pool = poolHop(chosen.cluster, stamped);
  const pathClass = pathClassOf(context, source, target, stamped);
  const outcomes =
    chosen.outcomes.get(pathClass) ?? remember(chosen.outcomes, pathClass, dialAll(context, { source, target, filterState: stamped.filterState }, chosen));
  for (const [i, dial] of chosen.dials.entries()) {
    const outcome = outcomes[i]!;
    if ("error" in outcome) {
      const { code, message } = outcome.error;
      (code === "POD_NODE_NOT_COMPILED" ? unverified : failures).push({ code, reason: message, hops: joinHops(entry.hops, dial.hop, pool, outcome.hops) });
      continue;
    }
    for (const { address, priority, socket, sni, via, pod, hops: tail } of outcome.landings) {
      const hops = joinHops(entry.hops, dial.hop, pool, tail);
      landings.push(via === undefined ? { address, priority, socket, sni, pod, hops } : { address, priority, socket, sni, via, pod, hops });
    }
  }
  const failover =
    unroutable.get(source.cluster) ??
    remember(unroutable, source.cluster, unroutableFailover(context, clusters, { cluster: source.cluster, dialed: new Set(chosen.endpoints) }));
  for (const { reason, hop } of failover) failures.push({ code: "POD_IP_NOT_ROUTABLE", reason, hops: [...entry.hops, hop] });
  const status = failures.length > 0 ? "failed" : landings.length > 0 ? "ok" : "unverified";
  if (landings.length === 0) return { source, target, cluster, status, landings, failures, unverified };
  // Every landing presented the source's own certificate (else it failed): that is what its pool carries.
  return { source, target, cluster, status, landings, failures, unverified, pool: poolUse(source, chosen.cluster, stamped) };
}

/** The path's own hops, the dial's two, then the dial outcome's: one array, allocated once at its size. */
function joinHops(entry: readonly string[], dial: string, pool: string, tail: readonly string[]): string[] {
  const hops = new Array<string>(entry.length + 2 + tail.length);
  let at = 0;
  for (const hop of entry) hops[at++] = hop;
  hops[at++] = dial;
  hops[at++] = pool;
  for (const hop of tail) hops[at++] = hop;
  return hops;
}

/** One dial's landings, or the mistake that stops it, with the hops after the dial (the path's own come before). */
type DialOutcome = { readonly landings: readonly Landing[] } | { readonly error: PathError; readonly hops: readonly string[] };

/**
 * What dialing each endpoint of a level yields depends on the source only through its identity,
 * its cluster and the values it shares with upstream: kept per level (levels are shared across the
 * nodes whose output holds the same objects) by the class of the path (`pathClassOf`).
 */
function dialAll(context: ReplayContext, trip: Omit<Trip, "hops">, level: Chosen): DialOutcome[] {
  return level.dials.map((dial): DialOutcome => {
    const tail: Trip = { ...trip, hops: [] };
    try {
      return { landings: connect(context, tail, level.cluster, dial, level.priority) };
    } catch (error) {
      if (!(error instanceof PathError)) throw error;
      return { error, hops: tail.hops };
    }
  });
}

/** A number per target, source identity, source cluster and values shared with upstream: paths alike in all four dial alike. */
function pathClassOf(context: ReplayContext, source: PathSource, target: PathTarget, stamped: Stamped): number {
  const key = [target.service, target.port, source.identity, source.cluster, stamped.signature].join("\u0000");
  const classes = context.memo.get("path classes", "", newMap<string, number>);
  return classes.get(key) ?? remember(classes, key, classes.size);
}

function newMap<K, V>(): Map<K, V> {
  return new Map();
}

/** A direct endpoint a path fails on when Envoy fails over to it: its reason and its last hop. */
interface Unroutable {
  readonly reason: string;
  readonly hop: string;
}

/**
 * On an isolated pod network, a direct endpoint in another cluster fails whenever Envoy fails over
 * to it, whatever priority it has: every such endpoint of the cluster is a failure of the path,
 * not only those of the priority chosen today.
 */
function unroutableFailover(
  context: ReplayContext,
  clusters: readonly EdsCluster[],
  source: { cluster: string; dialed: ReadonlySet<LbEndpoint> },
): Unroutable[] {
  if (context.mesh.index.snapshot.mesh.podNetwork !== "isolated") return [];
  const unroutable: Unroutable[] = [];
  for (const { cluster, assignment } of clusters) {
    for (const group of assignment?.endpoints ?? []) {
      for (const endpoint of group.lb_endpoints ?? []) {
        const { address, ip, port } = addressOf(context, endpoint);
        // Direct endpoints only (pod_ip:inboundPort): a waypoint's address routes, compiled or not.
        if (port !== context.mesh.options.inboundPort || source.dialed.has(endpoint) || context.tunnels.has(address)) continue;
        if (context.pods(ip).has(source.cluster)) continue;
        const reason = `${PATH_FAILURES.POD_IP_NOT_ROUTABLE}: ${address} (priority ${group.priority ?? 0}) from cluster ${source.cluster}, and mesh.podNetwork is isolated`;
        unroutable.push({ reason, hop: `${cluster.name} priority ${group.priority ?? 0}: dial ${address}` });
      }
    }
  }
  return unroutable;
}

function poolHop(cluster: Cluster, stamped: Stamped): string {
  return cluster.connection_pool_per_downstream_connection ? "connection pool: one per downstream connection" : stamped.poolHop;
}

/** The pool the source's connections to this cluster use. */
function poolUse(source: PathSource, cluster: Cluster, stamped: Stamped): PoolUse {
  const key = cluster.connection_pool_per_downstream_connection ? undefined : stamped.poolKey;
  return { node: source.node, cluster: cluster.name ?? "", key, certificate: source.identity };
}

/** Where an endpoint listens, read once per endpoint object (nodes share them). */
interface Address {
  readonly address: string;
  readonly ip: string;
  readonly port: number;
}

function addressOf(context: ReplayContext, endpoint: LbEndpoint): Address {
  return context.memo.get("address", endpoint, readAddress);
}

function readAddress(endpoint: LbEndpoint): Address {
  const socket = endpoint.endpoint?.address?.socket_address;
  const address = hostPort(socket?.address ?? "", socket?.port_value ?? 0);
  return { address, ...splitAddress(address) };
}

/** A healthy endpoint of the chosen level, with its address and the hop that dials it. */
interface Dial extends Address {
  readonly endpoint: LbEndpoint;
  readonly hop: string;
}

/** An EDS cluster Envoy balances over and the node's assignment for it. */
interface EdsCluster {
  readonly cluster: Cluster;
  readonly assignment: ClusterLoadAssignment | undefined;
}

/** The level Envoy picks, its endpoints to dial, and what dialing them yields, by path class. */
interface Chosen {
  readonly cluster: Cluster;
  readonly priority: number;
  readonly endpoints: readonly LbEndpoint[];
  readonly dials: readonly Dial[];
  readonly outcomes: Map<number, DialOutcome[]>;
}

interface Level {
  readonly clusters: readonly EdsCluster[];
  readonly chosen?: Chosen;
  /** Failover endpoints that do not route, by source cluster. */
  readonly unroutable: Map<string, Unroutable[]>;
}

const NO_LEVEL: Level = { clusters: [], unroutable: new Map() };

/**
 * A cluster's EDS clusters and the level Envoy picks among them: the same for every source of the
 * node, and for every node whose output holds the same cluster and assignment objects (the
 * compiler shares identical ones across nodes).
 */
function levelFor(context: ReplayContext, resources: NodeResources, name: string): Level {
  const clusters = edsClustersOf(context, resources, name);
  if (clusters.length === 0) return NO_LEVEL;
  const first = assignmentOf(resources, clusters[0]!);
  const byAssignment = context.memo.get("levels", clusters[0]!, newMap<ClusterLoadAssignment | undefined, Level[]>);
  const known = byAssignment.get(first) ?? remember(byAssignment, first, []);
  for (const level of known) if (readFrom(level, resources, clusters)) return level;
  const level = levelOf(
    context,
    clusters.map((cluster) => ({ cluster, assignment: assignmentOf(resources, cluster) })),
  );
  known.push(level);
  return level;
}

function assignmentOf(resources: NodeResources, cluster: Cluster): ClusterLoadAssignment | undefined {
  return resources.assignment(cluster.eds_cluster_config?.service_name || cluster.name || "");
}

/** Whether the level was read from exactly these cluster objects and the node's assignments for them. */
function readFrom(level: Level, resources: NodeResources, clusters: readonly Cluster[]): boolean {
  if (level.clusters.length !== clusters.length) return false;
  for (const [i, eds] of level.clusters.entries()) {
    if (eds.cluster !== clusters[i] || eds.assignment !== assignmentOf(resources, eds.cluster)) return false;
  }
  return true;
}

function levelOf(context: ReplayContext, clusters: readonly EdsCluster[]): Level {
  const level = chooseLevel(clusters);
  if (!level) return { clusters, unroutable: new Map() };
  const dials = level.endpoints.map((endpoint): Dial => {
    const address = addressOf(context, endpoint);
    return { endpoint, ...address, hop: `${level.cluster.name} priority ${level.priority}: dial ${address.address}` };
  });
  return { clusters, chosen: { ...level, dials, outcomes: new Map() }, unroutable: new Map() };
}

/** The EDS cluster(s) Envoy balances over: the cluster itself, or an aggregate's halves in order. */
function edsClustersOf(context: ReplayContext, resources: NodeResources, name: string): readonly Cluster[] {
  const cluster = resources.clusters(name)[0];
  if (!cluster) return [];
  if (cluster.cluster_type?.name !== EXTENSION.aggregateCluster) return [cluster];
  const any = cluster.cluster_type.typed_config!;
  const halves = context.memo.get("aggregate", any, halvesOf);
  return halves.flatMap((half) => resources.clusters(half));
}

function halvesOf(any: Any): readonly string[] {
  const config = unpackAny(any)?.message as ClusterConfig;
  return config.clusters ?? [];
}

/** The first priority with a healthy endpoint; an aggregate's halves' levels are flattened in order. */
function chooseLevel(clusters: readonly EdsCluster[]) {
  let offset = 0;
  for (const { cluster, assignment } of clusters) {
    const level = assignment && chosenPriority(assignment);
    if (level) return { cluster, priority: offset + level.priority, endpoints: level.endpoints };
    offset += new Set((assignment?.endpoints ?? []).map((g) => g.priority ?? 0)).size;
  }
  return undefined;
}

function connect(context: ReplayContext, trip: Trip, cluster: Cluster, dial: Dial, priority: number): Landing[] {
  const choice = socketChoice(context, cluster, dial.endpoint, trip.filterState);
  if (choice.hop !== undefined) trip.hops.push(choice.hop);
  if (choice.error) throw choice.error;
  const { name, socket } = choice;
  const client = context.memo.get("client TLS", socket, clientTls);
  if (client.error) throw client.error;
  const identity = presentedCertificate(client.presents, trip.filterState);
  const hops = client.hops.get(name) ?? remember(client.hops, name, new Map<string, string>());
  trip.hops.push(hops.get(identity) ?? remember(hops, identity, `socket ${name}: SNI "${client.sni}", client certificate ${identity}`));
  if (identity !== trip.source.identity) throw new PathError("WRONG_CLIENT_CERT", `${identity}, expected ${trip.source.identity}`);
  if (client.pins.length === 0) throw new PathError("NO_SAN_PIN", name);
  const waypoint = context.tunnels.get(dial.address);
  // Each pod a waypoint may forward to is its own branch of the trip.
  const arrive = (pod: RegistryPod, branch: Trip, via?: string): Landing => {
    const landed = landOn(context, branch, pod, client);
    return via
      ? { address: dial.address, priority, socket: name, sni: client.sni, via, pod: landed, hops: branch.hops }
      : { address: dial.address, priority, socket: name, sni: client.sni, pod: landed, hops: branch.hops };
  };
  if (!waypoint) return [arrive(dialPod(context, trip, dial), trip)];
  return throughWaypoint(context, trip, waypoint, client.sni).map(({ pod, hop }) => arrive(pod, { ...trip, hops: [...trip.hops, hop] }, waypoint));
}

/** A client socket's TLS context as the replay reads it: SNI, pinned SANs, where its certificate comes from. */
interface ClientTls {
  /** No TLS context, or a certificate selector that cannot work. */
  readonly error?: PathError;
  readonly sni: string;
  readonly tls: CommonTlsContext;
  readonly pins: readonly string[];
  readonly presents: Presented;
  /** The socket hop, by socket name and certificate presented. */
  readonly hops: Map<string, Map<string, string>>;
  /** Whether this side trusts a server identity, by identity. */
  readonly trusts: Map<string, boolean>;
}

/** The certificate a client TLS context presents: its own, or the mapper's choice (else `fallback`). */
type Presented = { readonly certificate: string } | { readonly fallback: string };

function clientTls(socket: TransportSocket): ClientTls {
  try {
    const client = tlsOf<UpstreamTlsContext>(socket, "upstream");
    const presents = certificateSource(client);
    const tls = client.common_tls_context ?? {};
    return { sni: client.sni ?? "", tls, pins: pinnedSans(client.common_tls_context), presents, hops: new Map(), trusts: new Map() };
  } catch (error) {
    if (!(error instanceof PathError)) throw error;
    return { error, sni: "", tls: {}, pins: [], presents: { certificate: "" }, hops: new Map(), trusts: new Map() };
  }
}

/** The socket the cluster uses for one endpoint, with the matcher's hop; `error` when none is usable. */
type SocketChoice =
  | { readonly hop?: string; readonly error: PathError; readonly name?: undefined; readonly socket?: undefined }
  | { readonly hop?: string; readonly error?: undefined; readonly name: string; readonly socket: TransportSocket };

/** Kept per cluster and endpoint object, unless the cluster's matcher reads filter state. */
function socketChoice(context: ReplayContext, cluster: Cluster, endpoint: LbEndpoint, filterState: ReadonlyMap<string, StampedValue>): SocketChoice {
  const matcher = cluster.transport_socket_matcher;
  if (matcher && context.memo.get("reads filter state", matcher, readsFilterState)) return chooseSocket(cluster, endpoint, filterState);
  const byEndpoint = context.memo.get("socket choice", cluster, newMap<LbEndpoint, SocketChoice>);
  return byEndpoint.get(endpoint) ?? remember(byEndpoint, endpoint, chooseSocket(cluster, endpoint, filterState));
}

function chooseSocket(cluster: Cluster, endpoint: LbEndpoint, filterState: ReadonlyMap<string, StampedValue>): SocketChoice {
  const hops: string[] = [];
  try {
    return { ...socketFor(hops, cluster, endpoint, filterState), ...(hops.length > 0 ? { hop: hops[0] } : {}) };
  } catch (error) {
    if (!(error instanceof PathError)) throw error;
    return { error, ...(hops.length > 0 ? { hop: hops[0] } : {}) };
  }
}

function socketFor(
  hops: string[],
  cluster: Cluster,
  endpoint: LbEndpoint,
  stamped: ReadonlyMap<string, StampedValue>,
): { name: string; socket: TransportSocket } {
  if (!cluster.transport_socket_matcher) {
    if (!cluster.transport_socket) throw new PathError("NO_TLS", `cluster ${cluster.name} has no transport socket`);
    return { name: "(the cluster's transport_socket)", socket: cluster.transport_socket };
  }
  const filterState = Object.fromEntries([...stamped].map(([key, { value }]) => [key, value]));
  const outcome = evaluateSocketMatcher(cluster.transport_socket_matcher, {
    endpointMetadata: (endpoint.metadata?.filter_metadata ?? {}) as Record<string, Record<string, unknown>>,
    filterState,
  });
  hops.push(`matcher: ${outcome.trace.join("; ")}`);
  if (outcome.kind === "invalid") throw new PathError("MATCHER_INVALID", outcome.reason);
  if (outcome.kind === "no-match") throw new PathError("MATCHER_NO_MATCH", `cluster ${cluster.name}`);
  const match = cluster.transport_socket_matches?.find((m) => m.name === outcome.name);
  if (!match?.transport_socket) throw new PathError("MISSING_SOCKET", `"${outcome.name}" in cluster ${cluster.name}`);
  return { name: outcome.name, socket: match.transport_socket };
}

function tlsOf<T extends UpstreamTlsContext | DownstreamTlsContext>(socket: TransportSocket | undefined, side: string): T {
  const unpacked = socket?.name === EXTENSION.tlsTransportSocket && socket.typed_config ? unpackAny(socket.typed_config) : undefined;
  if (!unpacked) throw new PathError("NO_TLS", `no ${side} TLS context`);
  return unpacked.message as T;
}

function certificateOf(context: CommonTlsContext | undefined): string {
  return context?.tls_certificate_sds_secret_configs?.[0]?.name ?? "(none)";
}

/**
 * Where the client certificate of a connection comes from: with a certificate selector, the SDS
 * secret its mapper names — the shared filter-state value under the mapper's key, else its
 * default — and otherwise the socket's own certificate.
 */
function certificateSource(tls: UpstreamTlsContext): Presented {
  const selector = tls.common_tls_context?.custom_tls_certificate_selector;
  if (!selector?.typed_config) return { certificate: certificateOf(tls.common_tls_context) };
  const config = unpackAny(selector.typed_config)?.message as OnDemandSecretConfig | undefined;
  if (!config?.config_source?.api_config_source) throw new PathError("SELECTOR_OVER_ADS", selector.name ?? "");
  const mapper = config.certificate_mapper;
  if (mapper?.name !== EXTENSION.filterStateOverrideMapper || !mapper.typed_config) return { certificate: "(no certificate mapper)" };
  return { fallback: (unpackAny(mapper.typed_config)?.message as FilterStateOverrideConfig | undefined)?.default_value ?? "(none)" };
}

/** The client certificate a connection presents, given what its source shares with upstream. */
function presentedCertificate(presents: Presented, filterState: ReadonlyMap<string, StampedValue>): string {
  if ("certificate" in presents) return presents.certificate;
  return filterState.get(FILTER_STATE.certificateMapperKey)?.value ?? presents.fallback;
}

function pinnedSans(context: CommonTlsContext | undefined): string[] {
  const validation = context?.combined_validation_context?.default_validation_context ?? context?.validation_context;
  return (validation?.match_typed_subject_alt_names ?? []).map((san) => san.matcher?.exact ?? "").filter(Boolean);
}

/** Pod IPs route within their own cluster; across clusters only in the flat-network mode (off) on a routable pod network. */
function dialPod(context: ReplayContext, trip: Trip, { address, ip, port }: Dial): RegistryPod {
  const inboundPort = context.mesh.options.inboundPort;
  if (port !== inboundPort) throw new PathError("UNKNOWN_ADDRESS", address);
  const byCluster = context.pods(ip);
  const local = byCluster.get(trip.source.cluster);
  if (local) return preferService(local, trip.target.service);
  const elsewhere = [...byCluster.values()];
  const routable = context.mesh.options.eastWestWaypoint === "off" && context.mesh.index.snapshot.mesh.podNetwork === "routable";
  if (!routable || elsewhere.length !== 1) {
    throw new PathError("POD_IP_NOT_ROUTABLE", `${ip} from cluster ${trip.source.cluster}`);
  }
  return preferService(elsewhere[0]!, trip.target.service);
}

function preferService(pods: readonly RegistryPod[], service: ServiceKey): RegistryPod {
  return pods.find((pod) => pod.service === service) ?? pods[0]!;
}

function splitAddress(address: string): { ip: string; port: number } {
  const colon = address.lastIndexOf(":");
  return { ip: address.slice(0, colon).replace(/^\[|\]$/g, ""), port: Number(address.slice(colon + 1)) };
}

/** The waypoint reads the SNI and forwards raw bytes to a local pod (or one in its cluster). */
function throughWaypoint(context: ReplayContext, trip: Trip, nodeKey: string, sni: string): readonly { pod: RegistryPod; hop: string }[] {
  const mode = context.mesh.options.eastWestWaypoint;
  const waypoint = context.mesh.receiving(nodeKey)!;
  if (mode === "off") throw new PathError("WAYPOINT_IN_OFF_MODE", nodeKey);
  if (mode === "cross-cluster" && waypoint.local.clusterName === trip.source.cluster) throw new PathError("SAME_CLUSTER_VIA_WAYPOINT", nodeKey);
  const resources = context.resources(waypoint);
  const bySni = context.memo.get("forwarded", resources, () => new Map<string, Map<ServiceKey, Forwarded>>());
  const byService = getOrInsert(bySni, sni, () => new Map<ServiceKey, Forwarded>());
  const forwarded = getOrInsert(byService, trip.target.service, () => forwardedBy(context, waypoint, nodeKey, sni, trip.target.service));
  trip.hops.push(...forwarded.hops);
  if (forwarded.error) throw forwarded.error;
  return forwarded.pods;
}

/** Where a waypoint forwards one SNI, the same for every source: `hops` were recorded before `error` stopped it. */
interface Forwarded {
  readonly hops: readonly string[];
  readonly error?: PathError;
  readonly pods: readonly { pod: RegistryPod; hop: string }[];
}

function forwardedBy(context: ReplayContext, waypoint: CompiledNode, nodeKey: string, sni: string, service: ServiceKey): Forwarded {
  const hops: string[] = [];
  try {
    return { hops, pods: forwardTo(context, waypoint, nodeKey, sni, service, hops) };
  } catch (error) {
    if (!(error instanceof PathError)) throw error;
    return { hops, error, pods: [] };
  }
}

function forwardTo(context: ReplayContext, waypoint: CompiledNode, nodeKey: string, sni: string, service: ServiceKey, hops: string[]) {
  const resources = context.resources(waypoint);
  const tunnel = resources.tunnel!;
  const chain = selectFilterChain(tunnel.filter_chains ?? [], sni);
  if (!chain) throw new PathError("TUNNEL_NO_CHAIN", `SNI "${sni}" at ${nodeKey}`);
  if (chain.transport_socket) throw new PathError("TLS_TERMINATED_AT_NODE", `${nodeKey} chain ${chain.name}`);
  const proxy = chain.filters?.find((f) => f.name === EXTENSION.tcpProxy);
  const ingressName = proxy?.typed_config ? (unpackAny(proxy.typed_config)?.message as TcpProxy | undefined)?.cluster : undefined;
  hops.push(`waypoint ${nodeKey}: ew_tunnel chain ${chain.name} → tcp_proxy ${ingressName ?? "(none)"}`);
  const ingress = ingressName === undefined ? undefined : resources.clusters(ingressName)[0];
  if (!ingress) throw new PathError("INGRESS_CLUSTER_MISSING", `${ingressName} at ${nodeKey}`);
  if (ingress.transport_socket || ingress.transport_socket_matches?.length || ingress.transport_socket_matcher) {
    throw new PathError("TLS_ORIGINATED_AT_NODE", `${ingress.name} at ${nodeKey}`);
  }
  const assignment = resources.assignment(ingress.eds_cluster_config?.service_name || ingress.name || "");
  const level = assignment && chosenPriority(assignment);
  if (!level) throw new PathError("INGRESS_EMPTY", `${ingress.name} at ${nodeKey}`);
  return level.endpoints.map((endpoint) => {
    const { address, ip, port } = addressOf(context, endpoint);
    if (context.tunnels.has(address)) throw new PathError("WAYPOINT_TO_WAYPOINT", `${ingress.name} at ${nodeKey} lists ${address}`);
    const pods = context.pods(ip).get(waypoint.local.clusterName);
    if (!pods || port !== context.mesh.options.inboundPort) throw new PathError("UNKNOWN_ADDRESS", `${address} from ${nodeKey}`);
    return { pod: preferService(pods, service), hop: `${ingress.name} priority ${level.priority}: ${address}` };
  });
}

/**
 * What a connection with one SNI meets at one pod, whatever its source: its inbound chain and the
 * server side of its TLS. `error` stops it before the chain hop, `serverError` after the chain's
 * port and service are checked.
 */
interface Arrival {
  readonly pod: Landing["pod"];
  readonly where: string;
  readonly error?: PathError;
  readonly hop: string;
  readonly chain: string;
  readonly port: number | undefined;
  readonly serverError?: PathError;
  readonly server: CommonTlsContext;
  readonly identity: string;
  /** The mTLS hop, by source identity. */
}

function arrivalAt(context: ReplayContext, endpoint: ServiceEndpoint, sni: string): Arrival {
  const pod = {
    cluster: endpoint.clusterName,
    namespace: endpoint.kubernetesMetadata.namespace,
    name: endpoint.kubernetesMetadata.podName || endpoint.ip,
    ip: endpoint.ip,
  };
  const where = `${pod.cluster}/${pod.namespace}/${pod.name}`;
  const arrival = { pod, where, hop: "", chain: "", port: undefined, server: {}, identity: "" };
  const node = context.mesh.receiving(`${endpoint.clusterName}/${endpoint.kubernetesMetadata.nodeName}`);
  if (!node) return { ...arrival, error: new PathError("POD_NODE_NOT_COMPILED", where) };
  const listener = context.resources(node).listenerIn(endpoint.containerMetadata.networkNamespace, context.mesh.options.inboundPort);
  if (!listener || !endpoint.containerMetadata.networkNamespace) return { ...arrival, error: new PathError("NO_INBOUND_LISTENER", where) };
  const chain = selectFilterChain(listener.filter_chains ?? [], sni);
  if (!chain) return { ...arrival, error: new PathError("NO_INBOUND_CHAIN", `SNI "${sni}" at ${listener.name}`) };
  const reached = {
    ...arrival,
    hop: `pod ${where}: ${listener.name} chain ${chain.name}`,
    chain: chain.name ?? "",
    port: parseInboundChainName(chain.name ?? ""),
  };
  try {
    const server = tlsOf<DownstreamTlsContext>(chain.transport_socket, "downstream");
    if (server.require_client_certificate !== true) throw new PathError("CLIENT_CERT_NOT_REQUIRED", listener.name ?? "");
    return { ...reached, server: server.common_tls_context ?? {}, identity: certificateOf(server.common_tls_context) };
  } catch (error) {
    if (!(error instanceof PathError)) throw error;
    return { ...reached, serverError: error };
  }
}

/** At the pod: the inbound chain the SNI selects, its port, and mTLS identities on both ends. */
function landOn(context: ReplayContext, trip: Trip, target: RegistryPod, client: ClientTls): Landing["pod"] {
  const bySni = context.memo.get("arrivals", target.endpoint, newMap<string, Arrival>);
  const arrival = bySni.get(client.sni) ?? remember(bySni, client.sni, arrivalAt(context, target.endpoint, client.sni));
  if (arrival.error) throw arrival.error;
  trip.hops.push(arrival.hop);
  if (arrival.port !== trip.target.port) throw new PathError("WRONG_PORT", `${arrival.chain} for port ${trip.target.port}`);
  if (target.service !== trip.target.service) throw new PathError("WRONG_SERVICE", `${arrival.where} serves ${target.service}`);
  if (arrival.serverError) throw arrival.serverError;
  const serverIdentity = arrival.identity;
  if (!client.pins.includes(serverIdentity)) throw new PathError("SAN_MISMATCH", `${serverIdentity} is not among ${client.pins.join(", ")}`);
  const trusted = client.trusts.get(serverIdentity) ?? remember(client.trusts, serverIdentity, trusts(context, client.tls, serverIdentity));
  if (!trusted) throw new PathError("PEER_NOT_TRUSTED", serverIdentity);
  const source = trip.source.identity;
  if (!trusts(context, arrival.server, source)) throw new PathError("PEER_NOT_TRUSTED", source);
  const bySource = context.memo.get("mTLS hops", serverIdentity, newMap<string, string>);
  trip.hops.push(bySource.get(source) ?? remember(bySource, source, `mTLS ${source} ↔ ${serverIdentity}`));
  return arrival.pod;
}

/** The trust domains a SPIFFE validator accepts. */
function trustedDomains(any: Any): ReadonlySet<string | undefined> {
  const config = unpackAny(any)?.message as SPIFFECertValidatorConfig;
  return new Set((config.trust_domains ?? []).map((d) => d.name));
}

/** Whether a TLS context's validation accepts a peer identity's trust domain. */
function trusts(context: ReplayContext, tls: CommonTlsContext, peer: string): boolean {
  const domain = context.memo.get("trust domain", peer, trustDomainOf);
  const validator = tls.validation_context?.custom_validator_config;
  if (validator?.name === EXTENSION.spiffeValidator && validator.typed_config) {
    const any = validator.typed_config;
    return context.memo.get("trusted domains", any, trustedDomains).has(domain);
  }
  const trust = context.mesh.index.snapshot.mesh.trust;
  const bundle = tls.combined_validation_context?.validation_context_sds_secret_config?.name;
  return trust.mode === "shared" && domain === trust.trustDomain && bundle === (trust.bundleSdsName ?? bundleSecretName(trust.trustDomain));
}
