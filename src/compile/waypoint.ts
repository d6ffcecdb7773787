/**
 * The waypoint side of a node: the host tunnel listener `ew_tunnel` on `node_ip:tunnelPort` and
 * raw-passthrough `ew_ingress_*` clusters for the hosted exported services. The node reads the
 * ClientHello's SNI and forwards the still-encrypted stream to a local pod: no transport socket
 * anywhere on this path, so TLS is never terminated or originated here.
 */
import { type Cluster, Cluster_DiscoveryType } from "../../gen/envoy/config/cluster/v3/cluster.js";
import { TrafficDirection } from "../../gen/envoy/config/core/v3/base.js";
import { HealthStatus } from "../../gen/envoy/config/core/v3/health_check.js";
import type { ClusterLoadAssignment } from "../../gen/envoy/config/endpoint/v3/endpoint.js";
import type { LbEndpoint, LocalityLbEndpoints } from "../../gen/envoy/config/endpoint/v3/endpoint_components.js";
import type { Listener } from "../../gen/envoy/config/listener/v3/listener.js";
import type { FilterChain } from "../../gen/envoy/config/listener/v3/listener_components.js";
import { type Diagnostic, diagnostic } from "../diagnostics.js";
import { loadAssignment, socketAddress } from "../envoy/core.js";
import { tcpProxy, tlsInspector } from "../envoy/listener.js";
import type { ServiceEndpoint } from "../model/registry.js";
import {
  ingressClusterName,
  parseServiceKey,
  type ServiceRef,
  serviceKey,
  TUNNEL_LISTENER_NAME,
  tunnelChainName,
  tunnelServerName,
  waypointSni,
} from "../naming.js";
import { CacheSlot } from "../plan/cache-slots.js";
import { netnsRivals } from "../plan/endpoints.js";
import type { NodePlan } from "../plan/node-plan.js";
import type { IndexedService, SnapshotIndex } from "../plan/snapshot-index.js";
import { compareText } from "../util/order.js";
import { accessLogs } from "./access-log.js";
import { fitToUint32 } from "./endpoints.js";
import { clusterSettings, listenerSettings, tcpIdleTimeout } from "./settings.js";

/** A pod a waypoint may forward to: healthy, in the node's cluster, not terminating. */
interface ServingPod {
  readonly record: ServiceEndpoint;
  /** On this node (priority 0), or elsewhere in the cluster (priority 1). */
  readonly local: boolean;
}

/**
 * One tunnel chain and its ingress cluster. The service-wide route matches every port
 * (`*.<svc>.<ns>.<meshDomain>`); a port that only some serving pods serve gets its own exact
 * route (`<port>.<svc>.<ns>.<meshDomain>`, exact beats wildcard) to just those pods, so a
 * connection never lands on a pod without a chain for its port.
 */
export interface TunnelRoute {
  readonly service: ServiceRef;
  readonly port?: number;
  readonly chain: string;
  readonly cluster: string;
  readonly pods: readonly ServingPod[];
}

/** The routes of every hosted exported service, sorted by chain name; none with the waypoint off. */
export function tunnelRoutes(plan: NodePlan): TunnelRoute[] {
  if (!plan.waypointOn) return [];
  const keys = new Set(plan.hostedPods.filter((hosted) => hosted.exported).map((hosted) => hosted.service));
  return [...keys].flatMap((key) => routesOf(plan, parseServiceKey(key)!)).sort((a, b) => compareText(a.chain, b.chain));
}

function routesOf(plan: NodePlan, service: ServiceRef): TunnelRoute[] {
  const pods = servingPods(plan, service);
  const route = (port?: number, subset = pods): TunnelRoute => ({
    service,
    ...(port === undefined ? {} : { port }),
    chain: tunnelChainName(service, port),
    cluster: ingressClusterName(service, port),
    pods: subset,
  });
  const ports = [...new Set(pods.flatMap((pod) => pod.record.ports))].sort((a, b) => a - b);
  const partial = ports.filter((port) => pods.some((pod) => !pod.record.ports.includes(port)));
  return [
    route(),
    ...partial.map((port) =>
      route(
        port,
        pods.filter((pod) => pod.record.ports.includes(port)),
      ),
    ),
  ];
}

function servingPods(plan: NodePlan, service: ServiceRef): ServingPod[] {
  const key = serviceKey(service);
  const { clusterName, nodeName } = plan.node;
  const indexed = plan.index.services.get(key);
  if (!indexed) return [];
  const terminating = new Set(plan.hostedPods.filter((h) => h.service === key && h.pod.terminating).map((h) => h.pod.ip));
  return CLUSTER_PODS.get(indexed.caches, [clusterName], () => clusterPods(plan.index, indexed, clusterName))
    .filter((e) => !terminating.has(e.ip))
    .map((record) => ({ record, local: record.kubernetesMetadata.nodeName === nodeName }));
}

/**
 * Per service version: its records in a cluster a waypoint may forward to, sorted by address —
 * the same for every node of the cluster; each node then drops its own terminating pods. A record
 * gaining or losing a netns rival re-indexes the service (see `netnsNeighbours`), so the entry
 * never outlives its rivals.
 */
const CLUSTER_PODS = new CacheSlot<[cluster: string], ServiceEndpoint[]>("waypoint pods by cluster", (cluster) => cluster);

function clusterPods(index: SnapshotIndex, service: IndexedService, clusterName: string): ServiceEndpoint[] {
  // The service's records are sorted by cluster, then IP: one cluster's are already in address order.
  return service.endpoints.filter((e) => e.clusterName === clusterName && serving(e) && netnsRivals(index, e).length === 0);
}

/**
 * Healthy, and with a netns its node binds an inbound listener in (else nothing answers at
 * pod_ip:inboundPort); a netns other records also claim gets none either (see `netnsRivals`).
 */
function serving(endpoint: ServiceEndpoint): boolean {
  return (endpoint.health === "HEALTHY" || endpoint.health === "UNSPECIFIED") && endpoint.containerMetadata.networkNamespace !== "";
}

/** `ew_tunnel`, or nothing when there is no route. No default chain: an unknown SNI is refused. */
export function tunnelListener(plan: NodePlan, routes: readonly TunnelRoute[]): Listener[] {
  if (routes.length === 0) return [];
  return [
    {
      name: TUNNEL_LISTENER_NAME,
      // Bound in the host netns (the node proxy's own), on the node's routable address.
      address: socketAddress(plan.node.nodeIp, plan.options.tunnelPort),
      filter_chains: routes.map((route) => TUNNEL_CHAINS.get(plan.context, [route.chain], () => tunnelChain(plan, route))),
      listener_filters: [tlsInspector()],
      traffic_direction: TrafficDirection.INBOUND,
      ...listenerSettings(plan.options.settings, true),
    },
  ];
}

/**
 * Per compile context (mesh domain, settings), by chain name (which names the service and port):
 * a tunnel chain is the same on every node that hosts the service.
 */
const TUNNEL_CHAINS = new CacheSlot<[chain: string], FilterChain>("tunnel chains", (chain) => chain);

/** A leading `*` matches any number of labels: the service-wide chain takes every port. */
function tunnelChain(plan: NodePlan, route: TunnelRoute): FilterChain {
  const meshDomain = plan.node.meshDomain;
  const serverName = route.port === undefined ? tunnelServerName(meshDomain, route.service) : waypointSni(meshDomain, { ...route.service, port: route.port });
  return {
    filter_chain_match: { server_names: [serverName], transport_protocol: "tls" },
    filters: [
      tcpProxy(route.chain, route.cluster, {
        idleTimeout: tcpIdleTimeout(plan.options.settings),
        accessLog: accessLogs(plan, { reporter: "waypoint", listener: TUNNEL_LISTENER_NAME, http: false }),
      }),
    ],
    name: route.chain,
  };
}

/** The ingress clusters: EDS, so pod churn never touches CDS; no transport socket. */
export function ingressClusters(plan: NodePlan, routes: readonly TunnelRoute[]): Cluster[] {
  return routes.map(({ cluster: name }) => INGRESS_CLUSTERS.get(plan.context, [name], () => ingressCluster(plan, name)));
}

/** Per compile context, by name: an ingress cluster is its name, the EDS source and the settings (the context's), so nodes share it. */
const INGRESS_CLUSTERS = new CacheSlot<[name: string], Cluster>("ingress clusters", (name) => name);

function ingressCluster(plan: NodePlan, name: string): Cluster {
  return {
    name,
    type: Cluster_DiscoveryType.EDS,
    eds_cluster_config: { eds_config: plan.eds, service_name: name },
    ...clusterSettings(plan.options.settings, "ingress"),
  };
}

/**
 * Each route's pods at `pod_ip:inboundPort`: this node's first (priority 0), the rest of the
 * cluster as fallback (priority 1); a waypoint never forwards to another waypoint. Weights are
 * kept within uint32 per priority, as in every assignment.
 */
export function ingressAssignments(plan: NodePlan, routes: readonly TunnelRoute[]): { assignments: ClusterLoadAssignment[]; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  const assignments = routes.map((route) => {
    const tiers = [route.pods.filter((pod) => pod.local), route.pods.filter((pod) => !pod.local)].filter((tier) => tier.length > 0);
    const fields = { resource: route.cluster, service: serviceKey(route.service) };
    if (tiers.length === 0) diagnostics.push(diagnostic("EMPTY_ASSIGNMENT", `${route.cluster} has no serving pod in cluster ${plan.node.clusterName}`, fields));
    return loadAssignment(
      route.cluster,
      tiers.map((pods, priority) => ingressTier(plan, pods, priority, diagnostics, fields)),
    );
  });
  return { assignments, diagnostics };
}

function ingressTier(
  plan: NodePlan,
  pods: readonly ServingPod[],
  priority: number,
  diagnostics: Diagnostic[],
  fields: { resource: string; service: string },
): LocalityLbEndpoints {
  const weights = fitToUint32(pods.map((pod) => pod.record.weight));
  if (weights.factor !== undefined) {
    diagnostics.push(
      diagnostic("WEIGHTS_SCALED", `priority ${priority} weights sum to ${weights.total}, over uint32: scaled by ${weights.factor.toPrecision(6)}`, fields),
    );
  }
  return {
    lb_endpoints: pods.map((pod, i) => ingressEndpoint(pod.record, plan.options.inboundPort, weights.values[i]!)),
    ...(priority > 0 ? { priority } : {}),
  };
}

/**
 * A serving pod's endpoint in ingress assignments: one object per registry record while its port
 * and weight stay the same. Every node of the cluster hosting the service lists the pod and keeps
 * the list for its next recompile, so they share the object rather than each holding a copy.
 */
const ingressEndpoints = new WeakMap<ServiceEndpoint, LbEndpoint>();

function ingressEndpoint(record: ServiceEndpoint, port: number, weight: number): LbEndpoint {
  const known = ingressEndpoints.get(record);
  if (known?.load_balancing_weight === weight && known.endpoint!.address!.socket_address!.port_value === port) return known;
  const made: LbEndpoint = { endpoint: { address: socketAddress(record.ip, port) }, health_status: HealthStatus.HEALTHY, load_balancing_weight: weight };
  ingressEndpoints.set(record, made);
  return made;
}
