/**
 * The waypoint side of a node: the host tunnel listener `ew_tunnel` on `node_ip:tunnelPort` and
 * one raw-passthrough `ew_ingress_<svc>_<ns>` cluster per hosted exported service. The node reads
 * the ClientHello's SNI and forwards the still-encrypted stream to a local pod: no transport
 * socket anywhere on this path, so TLS is never terminated or originated here.
 */
import { Cluster_DiscoveryType, type Cluster } from "../../gen/envoy/config/cluster/v3/cluster.js";
import { TrafficDirection } from "../../gen/envoy/config/core/v3/base.js";
import { HealthStatus } from "../../gen/envoy/config/core/v3/health_check.js";
import type { ClusterLoadAssignment } from "../../gen/envoy/config/endpoint/v3/endpoint.js";
import type { Listener } from "../../gen/envoy/config/listener/v3/listener.js";
import type { FilterChain } from "../../gen/envoy/config/listener/v3/listener_components.js";
import { diagnostic, type Diagnostic } from "../diagnostics.js";
import { socketAddress } from "../envoy/core.js";
import { tcpProxy, tlsInspector } from "../envoy/listener.js";
import { TUNNEL_LISTENER_NAME, ingressClusterName, parseServiceKey, tunnelChainName, tunnelServerName, type ServiceKey, type ServiceRef } from "../naming.js";
import type { NodePlan } from "../plan/node-plan.js";
import { compareText, ipSortKey } from "../util/order.js";

/** Hosted services other nodes may reach through this one: exported, sorted by chain name. */
export function tunneledServices(plan: NodePlan): ServiceRef[] {
  if (!plan.waypointOn) return [];
  const keys = new Set(plan.hostedPods.filter((hosted) => hosted.exported).map((hosted) => hosted.service));
  return [...keys].map((key) => parseServiceKey(key)!).sort((a, b) => compareText(tunnelChainName(a), tunnelChainName(b)));
}

/** `ew_tunnel`, or nothing when the waypoint is off or no exported service is hosted here. */
export function tunnelListener(plan: NodePlan, services: readonly ServiceRef[]): Listener[] {
  if (services.length === 0) return [];
  return [
    {
      name: TUNNEL_LISTENER_NAME,
      // Bound in the host netns (the node proxy's own), on the node's routable address.
      address: socketAddress(plan.node.nodeIp, plan.options.tunnelPort),
      filter_chains: services.map((service) => tunnelChain(plan, service)),
      listener_filters: [tlsInspector()],
      traffic_direction: TrafficDirection.INBOUND,
    },
  ];
}

/**
 * `*.<svc>.<ns>.<meshDomain>` matches every port of the service (Envoy's leading `*` matches any
 * number of labels); no default chain, so an unknown SNI is refused.
 */
function tunnelChain(plan: NodePlan, service: ServiceRef): FilterChain {
  const name = tunnelChainName(service);
  return {
    filter_chain_match: { server_names: [tunnelServerName(plan.node.meshDomain, service)], transport_protocol: "tls" },
    filters: [tcpProxy(name, ingressClusterName(service))],
    name,
  };
}

/** The ingress clusters: EDS, so pod churn never touches CDS; no transport socket. */
export function ingressClusters(plan: NodePlan, services: readonly ServiceRef[]): Cluster[] {
  return services.map((service) => {
    const name = ingressClusterName(service);
    return { name, type: Cluster_DiscoveryType.EDS, eds_cluster_config: { eds_config: plan.eds, service_name: name } };
  });
}

/**
 * The service's pods in this cluster at `pod_ip:inboundPort`: this node's first (priority 0),
 * the rest of the cluster as fallback (priority 1). Draining, unhealthy and terminating pods are
 * left out; a waypoint never forwards to another waypoint.
 */
export function ingressAssignments(plan: NodePlan, services: readonly ServiceRef[]): { assignments: ClusterLoadAssignment[]; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  const assignments = services.map((service) => {
    const name = ingressClusterName(service);
    const key = `${service.namespace}/${service.service}` as ServiceKey;
    const candidates = servingPods(plan, key);
    const tiers = [candidates.filter((pod) => pod.local), candidates.filter((pod) => !pod.local)].filter((tier) => tier.length > 0);
    if (tiers.length === 0) diagnostics.push(diagnostic("EMPTY_ASSIGNMENT", `${name} has no serving pod in cluster ${plan.node.clusterName}`, { resource: name, service: key }));
    const assignment: ClusterLoadAssignment = { cluster_name: name };
    if (tiers.length > 0) {
      assignment.endpoints = tiers.map((pods, priority) => ({
        lb_endpoints: pods.map((pod) => ({
          endpoint: { address: socketAddress(pod.ip, plan.options.inboundPort) },
          health_status: HealthStatus.HEALTHY,
          load_balancing_weight: pod.weight,
        })),
        ...(priority > 0 ? { priority } : {}),
      }));
    }
    return assignment;
  });
  return { assignments, diagnostics };
}

interface ServingPod {
  readonly ip: string;
  readonly weight: number;
  readonly local: boolean;
}

function servingPods(plan: NodePlan, key: ServiceKey): ServingPod[] {
  const { clusterName, nodeName } = plan.node;
  const terminating = new Set(plan.hostedPods.filter((h) => h.service === key && h.pod.terminating).map((h) => h.pod.ip));
  const endpoints = plan.index.services.get(key)?.endpoints ?? [];
  return endpoints
    .filter((e) => e.clusterName === clusterName && (e.health === "HEALTHY" || e.health === "UNSPECIFIED") && !terminating.has(e.ip))
    .map((e) => ({ ip: e.ip, weight: e.weight, local: e.kubernetesMetadata.nodeName === nodeName }))
    .sort((a, b) => compareText(ipSortKey(a.ip), ipSortKey(b.ip)));
}
