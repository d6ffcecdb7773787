/**
 * Outbound service clusters: one per dependency service and port. The transport socket is chosen
 * per endpoint — the `local` socket (SNI `<port>`) for a direct dial, the `waypoint` socket (SNI
 * `<port>.<svc>.<ns>.<meshDomain>`) for an endpoint behind a node's waypoint — and per source, so
 * each pod presents its own certificate. How the source's certificate is chosen depends on the
 * source-identity mode:
 *
 * - `selector`: each socket picks the client certificate per connection, from the identity the
 *   pod's outbound listener stamped (which also partitions the connection pools). Two sockets,
 *   chosen by the endpoint's `waypoint` label; nothing in the cluster depends on the node's pods.
 * - `sockets`: one socket per source identity and variant, chosen by a second matcher level on
 *   the source's netns, with one connection pool per downstream connection so a pool opened by one
 *   pod is never reused by another.
 *
 * Sockets differ only in SNI and client certificate: same SAN pins, validation and ALPN.
 */
import { type Cluster, Cluster_DiscoveryType, Cluster_LbPolicy, type Cluster_TransportSocketMatch } from "../../gen/envoy/config/cluster/v3/cluster.js";
import type { TransportSocket } from "../../gen/envoy/config/core/v3/base.js";
import type { Matcher } from "../../gen/xds/type/matcher/v3/matcher.js";
import { pack } from "../envoy/any.js";
import { LB_METADATA_NAMESPACE } from "../envoy/core.js";
import { httpProtocolOptions, type UpstreamHttp } from "../envoy/listener.js";
import { descend, endpointMetadataInput, exactMatchTree, filterStateInput, useSocket } from "../envoy/matcher.js";
import { selectedCertificateSockets, type UpstreamSocketSpec, upstreamSockets } from "../envoy/tls.js";
import { AGGREGATE_CLUSTER_CONFIG, EXTENSION } from "../envoy/types.js";
import { protocolOf } from "../model/snapshot.js";
import { directSni, outboundStatName, type SocketVariant, serviceSpiffeId, socketName, subClusterName, waypointSni } from "../naming.js";
import { CacheSlot, singleEntrySlot } from "../plan/cache-slots.js";
import { WAYPOINT_KEY } from "../plan/endpoints.js";
import type { NodePlan } from "../plan/node-plan.js";
import type { IndexedService } from "../plan/snapshot-index.js";
import { compositeKey } from "../util/keys.js";
import { remember } from "../util/maps.js";
import { compareText } from "../util/order.js";
import { clusterSettings, http2Keepalive } from "./settings.js";

export interface OutboundTarget {
  readonly service: IndexedService;
  readonly port: number;
  readonly clusterName: string;
}

/** The clusters of one service port: one (`matcher`), or the aggregate and its halves. */
export function outboundClusters(plan: NodePlan, target: OutboundTarget): Cluster[] {
  const variants: SocketVariant[] = plan.waypointOn ? ["local", "waypoint"] : ["local"];
  const sockets = plan.options.sourceIdentity === "selector" ? selectorSockets(plan, target) : perSourceSockets(plan, target);
  if (plan.options.socketSelection === "matcher") return [edsCluster(plan, target, target.clusterName, sockets(variants))];
  return [
    aggregateCluster(
      plan,
      target,
      variants.map((half) => subClusterName(target.clusterName, half)),
    ),
    ...variants.map((half) => edsCluster(plan, target, subClusterName(target.clusterName, half), sockets([half]), half)),
  ];
}

/**
 * Per compile context: the HTTP protocol options of a cluster speaking `http`, with or without the
 * settings' HTTP/2 keepalive — one object shared by every such cluster of every node.
 */
const PROTOCOL_OPTIONS = new CacheSlot<[http: UpstreamHttp, keepalive: boolean], ProtocolOptions>("HTTP protocol options", (http, keepalive) =>
  JSON.stringify([http, keepalive]),
);
type ProtocolOptions = NonNullable<Cluster["typed_extension_protocol_options"]>;

export function protocolOptions(plan: NodePlan, http: UpstreamHttp, keepalive: boolean): ProtocolOptions {
  return PROTOCOL_OPTIONS.get(plan.context, [http, keepalive], () => httpProtocolOptions(http, keepalive ? http2Keepalive(plan.options.settings) : undefined));
}

/** How one EDS cluster picks its transport socket. */
interface SocketChoice {
  /** The named sockets a matcher chooses from (none: `fallback` is the only socket). */
  readonly table: readonly Cluster_TransportSocketMatch[];
  readonly matcher?: Matcher;
  /** The cluster's own socket: the only one, or what Envoy uses if the matcher names no socket. */
  readonly fallback?: TransportSocket;
  /** The choice depends on the source, so pools must not be shared across downstream connections. */
  readonly perDownstreamPools: boolean;
}

function edsCluster(plan: NodePlan, target: OutboundTarget, name: string, choice: SocketChoice, half?: SocketVariant): Cluster {
  const settings = plan.options.settings;
  const cluster: Cluster = {
    name,
    ...statName(plan, target, half),
    type: Cluster_DiscoveryType.EDS,
    eds_cluster_config: { eds_config: plan.eds, service_name: name },
    ...clusterSettings(settings, "outbound"),
  };
  // The mesh hop is HTTP/2 over mTLS for every HTTP port, whatever the application speaks.
  if (protocolOf(target.service.protocols, target.port) !== "tcp") cluster.typed_extension_protocol_options = protocolOptions(plan, "http2", true);
  if (choice.table.length > 0) cluster.transport_socket_matches = [...choice.table];
  if (choice.matcher) cluster.transport_socket_matcher = choice.matcher;
  if (choice.fallback) cluster.transport_socket = choice.fallback;
  if (choice.perDownstreamPools) cluster.connection_pool_per_downstream_connection = true;
  return cluster;
}

// ---- selector mode --------------------------------------------------------------------------

/**
 * One socket per variant, each selecting the source's certificate per connection. With both
 * variants, the endpoint's `waypoint` label picks one; with one, it is the cluster's socket.
 */
function selectorSockets(plan: NodePlan, target: OutboundTarget): (variants: readonly SocketVariant[]) => SocketChoice {
  const sockets = selectedCertificateSockets(socketSpec(plan, target), plan.certificateSelection);
  const socket = (variant: SocketVariant) => sockets(sniOf(plan, target, variant));
  return (variants) => {
    if (variants.length === 1) return { table: [], fallback: socket(variants[0]!), perDownstreamPools: false };
    return {
      table: variants.map((variant) => ({ name: variant, transport_socket: socket(variant) })),
      matcher: WAYPOINT_LABEL_MATCHER,
      perDownstreamPools: false,
    };
  };
}

/** `envoy.lb` / `waypoint` == "true" → the `waypoint` socket, else `local`. The same for every cluster. */
const WAYPOINT_LABEL_MATCHER = exactMatchTree(
  endpointMetadataInput(LB_METADATA_NAMESPACE, WAYPOINT_KEY),
  new Map([["true", useSocket("waypoint")]]),
  useSocket("local"),
);

// ---- sockets mode ---------------------------------------------------------------------------

/** The per-node part of every outbound cluster in `sockets` mode, built once per compile context. */
export interface SourceMatchers {
  /** Matcher mode: the two-level tree (or one level when the node hosts no pods). */
  readonly matcher: Matcher | undefined;
  /** Aggregate mode: the per-source tree of each sub-cluster. */
  readonly perSource: Readonly<Record<SocketVariant, Matcher | undefined>>;
}

/** Per compile context: the source matchers, the same for every cluster of the node. */
const SOURCE_MATCHERS = singleEntrySlot<SourceMatchers>("source matchers");

function sourceMatchers(plan: NodePlan): SourceMatchers {
  return SOURCE_MATCHERS.get(plan.context, [], () => {
    const perSource = { local: perSourceMatcher(plan, "local"), waypoint: perSourceMatcher(plan, "waypoint") };
    return { matcher: plan.waypointOn ? byWaypointLabel(plan, perSource) : perSource.local, perSource };
  });
}

/** Level 2: the source pod's netns → that pod's socket; anything else → the node's socket. */
function perSourceMatcher(plan: NodePlan, variant: SocketVariant): Matcher | undefined {
  if (plan.identityByNetns.size === 0) return undefined;
  const entries = new Map([...plan.identityByNetns].map(([netns, identity]) => [netns, useSocket(socketName(variant, identity))]));
  return exactMatchTree(filterStateInput(plan.options.netnsFilterStateKey), entries, useSocket(socketName(variant, plan.nodeIdentity)));
}

/** Level 1: `envoy.lb` / `waypoint` == "true" → the waypoint subtree, else the local one. */
function byWaypointLabel(plan: NodePlan, perSource: SourceMatchers["perSource"]): Matcher {
  const branch = (variant: SocketVariant) => {
    const nested = perSource[variant];
    return nested ? descend(nested) : useSocket(socketName(variant, plan.nodeIdentity));
  };
  return exactMatchTree(endpointMetadataInput(LB_METADATA_NAMESPACE, WAYPOINT_KEY), new Map([["true", branch("waypoint")]]), branch("local"));
}

/**
 * A socket per source identity and variant. The node's own local socket is also the cluster's
 * socket, so a matcher naming a socket that does not exist falls back to TLS, never plaintext.
 */
function perSourceSockets(plan: NodePlan, target: OutboundTarget): (variants: readonly SocketVariant[]) => SocketChoice {
  const matchers = sourceMatchers(plan);
  const perSource = plan.identityByNetns.size > 0;
  const sockets = upstreamSockets(socketSpec(plan, target), plan.certificates, perSource);
  // Each variant's SNI once, not once per identity.
  const snis = new Map<SocketVariant, string>();
  const sniFor = (variant: SocketVariant) => snis.get(variant) ?? remember(snis, variant, sniOf(plan, target, variant));
  const socketOf = (variant: SocketVariant, identity: string) => sockets(sniFor(variant), identity);
  return (variants) => {
    const matcher = variants.length === 2 ? matchers.matcher : matchers.perSource[variants[0]!];
    const fallback = socketOf(variants[0]!, plan.nodeIdentity);
    if (!matcher) return { table: [], fallback, perDownstreamPools: false };
    const table = socketNames(plan, variants).map(({ name, identity, variant }) => ({ name, transport_socket: socketOf(variant, identity) }));
    return { table, matcher, fallback, perDownstreamPools: perSource };
  };
}

interface SocketEntry {
  readonly name: string;
  readonly identity: string;
  readonly variant: SocketVariant;
}

/** Per compile context: a socket table's entries by variants, sorted by name (the same for every cluster of the node). */
const SOCKET_NAMES = new CacheSlot<[variants: readonly SocketVariant[]], readonly SocketEntry[]>("socket table entries", (variants) =>
  compositeKey(...variants),
);

function socketNames(plan: NodePlan, variants: readonly SocketVariant[]): readonly SocketEntry[] {
  return SOCKET_NAMES.get(plan.context, [variants], () => {
    const identities = plan.identityByNetns.size > 0 ? plan.identities : [plan.nodeIdentity];
    return variants
      .flatMap((variant) => identities.map((identity) => ({ name: socketName(variant, identity), identity, variant })))
      .sort((a, b) => compareText(a.name, b.name));
  });
}

// ---- shared ---------------------------------------------------------------------------------

/** Everything a socket to the target has besides SNI and client certificate. */
function socketSpec(plan: NodePlan, target: OutboundTarget): Omit<UpstreamSocketSpec, "sni" | "source"> {
  return {
    alpn: protocolOf(target.service.protocols, target.port) !== "tcp" ? ["h2"] : [],
    pinnedSans: destinationIdentities(plan, target.service),
    validation: plan.validation,
  };
}

function sniOf(plan: NodePlan, target: OutboundTarget, variant: SocketVariant): string {
  return variant === "local" ? directSni(target.port) : waypointSni(plan.node.meshDomain, { ...target.service.ref, port: target.port });
}

/** The service's identity in each trust domain it runs in (the node's own when it runs nowhere yet). */
function destinationIdentities(plan: NodePlan, service: IndexedService): string[] {
  const domains = service.trustDomains.length > 0 ? service.trustDomains : [plan.node.trustDomain];
  return domains.map((domain) => serviceSpiffeId(domain, service.ref));
}

/**
 * Stats under `outbound_<svc>_<ns>_<port>[_<half>]`: the cluster name's dots and port would
 * otherwise split into Prometheus tags.
 */
function statName(plan: NodePlan, target: OutboundTarget, half?: SocketVariant): Pick<Cluster, "alt_stat_name"> {
  if (!plan.options.settings.altStatNames) return {};
  return { alt_stat_name: outboundStatName({ ...target.service.ref, port: target.port }, half) };
}

/** `envoy.clusters.aggregate` over its halves, in failover order: local first. */
function aggregateCluster(plan: NodePlan, target: OutboundTarget, halves: readonly string[]): Cluster {
  return {
    name: target.clusterName,
    ...statName(plan, target),
    cluster_type: { name: EXTENSION.aggregateCluster, typed_config: pack(AGGREGATE_CLUSTER_CONFIG, { clusters: [...halves] }) },
    lb_policy: Cluster_LbPolicy.CLUSTER_PROVIDED,
  };
}
