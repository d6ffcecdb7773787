/**
 * Outbound service clusters: one per dependency service and port. The transport socket is chosen
 * per endpoint and per source by a two-level matcher — first the endpoint's `waypoint` label
 * (local socket, SNI `<port>`; or waypoint socket, SNI `<port>.<svc>.<ns>.<meshDomain>`), then the
 * source pod's netns (its own SVID). Sockets differ only in SNI: same client cert, SAN pin, ALPN.
 */
import { type Cluster, Cluster_DiscoveryType, Cluster_LbPolicy, type Cluster_TransportSocketMatch } from "../../gen/envoy/config/cluster/v3/cluster.js";
import type { TransportSocket } from "../../gen/envoy/config/core/v3/base.js";
import type { Matcher } from "../../gen/xds/type/matcher/v3/matcher.js";
import { pack } from "../envoy/any.js";
import { LB_METADATA_NAMESPACE } from "../envoy/core.js";
import { http2ProtocolOptions } from "../envoy/listener.js";
import { descend, endpointMetadataInput, exactMatchTree, filterStateInput, useSocket } from "../envoy/matcher.js";
import { upstreamSockets } from "../envoy/tls.js";
import { AGGREGATE_CLUSTER_CONFIG, EXTENSION } from "../envoy/types.js";
import { directSni, type SocketVariant, serviceSpiffeId, socketName, subClusterName, waypointSni } from "../naming.js";
import { WAYPOINT_KEY } from "../plan/endpoints.js";
import { cached, type NodePlan } from "../plan/node-plan.js";
import type { IndexedService } from "../plan/snapshot-index.js";
import { compareText } from "../util/order.js";

/** The per-node part of every outbound cluster, built once per compile. */
export interface SourceMatchers {
  /** Matcher mode: the two-level tree (or one level when the node hosts no pods). */
  readonly matcher: Matcher | undefined;
  /** Aggregate mode: the per-source tree of each sub-cluster. */
  readonly perSource: Readonly<Record<SocketVariant, Matcher | undefined>>;
}

export function sourceMatchers(plan: NodePlan): SourceMatchers {
  const perSource = { local: perSourceMatcher(plan, "local"), waypoint: perSourceMatcher(plan, "waypoint") };
  return { matcher: plan.waypointOn ? byWaypointLabel(plan, perSource) : perSource.local, perSource };
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

export interface OutboundTarget {
  readonly service: IndexedService;
  readonly port: number;
  readonly clusterName: string;
}

/** The clusters of one service port: one (`matcher`), or the aggregate and its halves. */
export function outboundClusters(plan: NodePlan, selection: SourceMatchers, target: OutboundTarget): Cluster[] {
  if (plan.options.socketSelection === "matcher") {
    const variants: SocketVariant[] = plan.waypointOn ? ["local", "waypoint"] : ["local"];
    return [edsCluster(plan, target, target.clusterName, variants, selection.matcher)];
  }
  const halves: SocketVariant[] = plan.waypointOn ? ["local", "waypoint"] : ["local"];
  return [
    aggregateCluster(
      target.clusterName,
      halves.map((half) => subClusterName(target.clusterName, half)),
    ),
    ...halves.map((half) => edsCluster(plan, target, subClusterName(target.clusterName, half), [half], selection.perSource[half])),
  ];
}

function edsCluster(plan: NodePlan, target: OutboundTarget, name: string, variants: readonly SocketVariant[], matcher: Matcher | undefined): Cluster {
  const cluster: Cluster = {
    name,
    type: Cluster_DiscoveryType.EDS,
    eds_cluster_config: { eds_config: plan.eds, service_name: name },
  };
  if (protocolOf(target) === "http2") cluster.typed_extension_protocol_options = http2ProtocolOptions();
  if (matcher) {
    cluster.transport_socket_matches = socketTable(plan, target, variants);
    cluster.transport_socket_matcher = matcher;
  } else {
    // No pods to tell apart and a single variant: one socket, the node's own.
    cluster.transport_socket = socketsFor(plan, target)(variants[0]!, plan.nodeIdentity);
  }
  return cluster;
}

function socketTable(plan: NodePlan, target: OutboundTarget, variants: readonly SocketVariant[]): Cluster_TransportSocketMatch[] {
  const socketOf = socketsFor(plan, target);
  return socketNames(plan, variants).map(({ name, identity, variant }) => ({ name, transport_socket: socketOf(variant, identity) }));
}

/** The table's entries, sorted by name: the same for every cluster of the node, so built once. */
function socketNames(plan: NodePlan, variants: readonly SocketVariant[]) {
  return cached(plan.cache, `socket-names\u0000${variants.join(",")}`, () => {
    const identities = plan.identityByNetns.size > 0 ? plan.identities : [plan.nodeIdentity];
    return variants
      .flatMap((variant) => identities.map((identity) => ({ name: socketName(variant, identity), identity, variant })))
      .sort((a, b) => compareText(a.name, b.name));
  });
}

/** The target's sockets, by variant (which SNI) and source identity (which certificate). */
function socketsFor(plan: NodePlan, target: OutboundTarget): (variant: SocketVariant, identity: string) => TransportSocket {
  const { service, port } = target;
  const sockets = upstreamSockets(
    { alpn: protocolOf(target) === "http2" ? ["h2"] : [], pinnedSans: destinationIdentities(plan, service), validation: plan.validation },
    plan.certificates,
  );
  const sni = { local: directSni(port), waypoint: waypointSni(plan.node.meshDomain, { ...service.ref, port }) };
  return (variant, identity) => sockets(sni[variant], identity);
}

/** The service's identity in each trust domain it runs in (the node's own when it runs nowhere yet). */
function destinationIdentities(plan: NodePlan, service: IndexedService): string[] {
  const domains = service.trustDomains.length > 0 ? service.trustDomains : [plan.node.trustDomain];
  return domains.map((domain) => serviceSpiffeId(domain, service.ref));
}

function protocolOf(target: OutboundTarget) {
  return target.service.protocols.get(target.port) ?? "http2";
}

/** `envoy.clusters.aggregate` over its halves, in failover order: local first. */
function aggregateCluster(name: string, halves: readonly string[]): Cluster {
  return {
    name,
    cluster_type: { name: EXTENSION.aggregateCluster, typed_config: pack(AGGREGATE_CLUSTER_CONFIG, { clusters: [...halves] }) },
    lb_policy: Cluster_LbPolicy.CLUSTER_PROVIDED,
  };
}
