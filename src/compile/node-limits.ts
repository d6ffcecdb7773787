/**
 * Per-node output limits. What one node's Envoy receives grows with products of the input — its
 * dependencies' ports × the sockets per cluster (× its hosted identities in `sockets` mode), its
 * pods × the service ports each may call — so a few hundred kilobytes of records can ask for
 * gigabytes of xDS. The node's size is counted from its plan, before anything is built, and a node
 * over a limit is refused with an `InputError` naming the limit.
 */
import { InputError, type InputIssue } from "../errors.js";
import type { HostedPodPlan, NodePlan } from "../plan/node-plan.js";
import type { IndexedService } from "../plan/snapshot-index.js";

/** The most a single node may receive (README, "Limits"). */
export const NODE_LIMITS = {
  /** Clusters: outbound (one per dependency port, three with `aggregate`), ingress and application clusters. */
  clusters: 50_000,
  /** Upstream TLS sockets across the outbound clusters: 2 per cluster (`selector`), 2 per hosted identity (`sockets`). */
  transportSockets: 200_000,
  /** Routes in the pods' listeners: a virtual host per HTTP destination port and a capture chain per VIP port, per pod. */
  podRoutes: 200_000,
} as const;

export type NodeSize = { readonly [K in keyof typeof NODE_LIMITS]: number };

/** What a node's output holds, counted from its plan: the figures `NODE_LIMITS` bounds. */
export function nodeSize(plan: NodePlan): NodeSize {
  const variants = plan.waypointOn ? 2 : 1;
  const socketsPerPort = variants * (plan.options.sourceIdentity === "selector" ? 1 : plan.identities.length);
  const clustersPerPort = plan.options.socketSelection === "aggregate" ? 1 + variants : 1;
  const hostedPorts = plan.hostedPods.reduce((sum, hosted) => sum + hosted.ports.length, 0);
  return {
    // Application clusters (one per pod port) plus, at most, an ingress cluster per hosted port.
    clusters: plan.dependencyPorts * clustersPerPort + 2 * hostedPorts,
    transportSockets: plan.dependencyPorts * socketsPerPort,
    podRoutes: podRoutes(plan),
  };
}

/** What a pod route count was worked out from. */
interface CountedRoutes {
  readonly dependencies: readonly IndexedService[];
  readonly vips: unknown;
  readonly dependencyData: unknown;
  readonly routes: number;
}

/** By hosted pod list (a recompile keeps the list while the node's pods stay): the last count. */
const lastRoutes = new WeakMap<readonly HostedPodPlan[], CountedRoutes>();

/**
 * The pod route count, reused by a recompile whose dependencies kept their keys and port counts
 * (a health flip, a rollout): the count reads nothing else of them.
 */
function podRoutes(plan: NodePlan): number {
  const { vips, dependencies: dependencyData } = plan.index.snapshot;
  const last = lastRoutes.get(plan.hostedPods);
  if (last && last.vips === vips && last.dependencyData === dependencyData && sameRouteShape(last.dependencies, plan.dependencies)) return last.routes;
  const routes = countPodRoutes(plan);
  lastRoutes.set(plan.hostedPods, { dependencies: plan.dependencies, vips, dependencyData, routes });
  return routes;
}

function sameRouteShape(a: readonly IndexedService[], b: readonly IndexedService[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== b[i] && (a[i]!.key !== b[i]!.key || a[i]!.ports.length !== b[i]!.ports.length)) return false;
  }
  return true;
}

/** Each pod with a netns routes to its service's dependencies (every dependency of the node without dependency data). */
function countPodRoutes(plan: NodePlan): number {
  const inScope = new Map(plan.dependencies.map((service) => [service.key, service]));
  const vips = plan.index.snapshot.vips;
  const routesOf = (keys: Iterable<string>) => {
    let routes = 0;
    for (const key of keys) {
      const service = inScope.get(key as never);
      if (service) routes += service.ports.length * (vips?.has(service.key) ? 2 : 1);
    }
    return routes;
  };
  const perService = new Map<string, number>();
  let total = 0;
  for (const hosted of plan.hostedPods) {
    if (!hosted.netns) continue;
    let routes = perService.get(hosted.service);
    if (routes === undefined) {
      routes = routesOf(plan.index.snapshot.dependencies?.get(hosted.service) ?? inScope.keys());
      perService.set(hosted.service, routes);
    }
    total += routes;
  }
  return total;
}

/** Throws an `InputError` naming every limit the node's output would exceed. */
export function checkNodeLimits(plan: NodePlan): void {
  const size = nodeSize(plan);
  const node = `${plan.node.clusterName}/${plan.node.nodeName}`;
  const issues: InputIssue[] = [];
  for (const limit of Object.keys(NODE_LIMITS) as (keyof typeof NODE_LIMITS)[]) {
    if (size[limit] > NODE_LIMITS[limit]) {
      issues.push({
        path: "",
        message: `node ${node} would receive ${size[limit]} ${LIMIT_NAMES[limit]}, over the limit of ${NODE_LIMITS[limit]} (NODE_LIMITS.${limit}): fewer ports, dependencies or pods per node`,
      });
    }
  }
  if (issues.length > 0) throw new InputError("node", issues);
}

const LIMIT_NAMES: Readonly<Record<keyof typeof NODE_LIMITS, string>> = {
  clusters: "clusters",
  transportSockets: "upstream TLS sockets",
  podRoutes: "pod listener routes",
};

/**
 * The inbound, egress and capture listeners bind in each pod's netns, where the application
 * listens too: a pod port equal to one of them would make Envoy's bind (or the application's) fail.
 */
export function checkPodPorts(plan: NodePlan): void {
  const { inboundPort, egressPort, capturePort } = plan.options;
  const issues: InputIssue[] = [];
  for (const [option, port] of [
    ["inboundPort", inboundPort],
    ["egressPort", egressPort],
    ["capturePort", capturePort],
  ] as const) {
    const clash = plan.hostedPods.find((hosted) => hosted.ports.includes(port));
    if (clash) {
      issues.push({
        path: option,
        message: `${port} is also an application port of pod ${clash.pod.namespace}/${clash.pod.name} on node ${plan.node.clusterName}/${plan.node.nodeName}: both bind in the pod's network namespace`,
      });
    }
  }
  if (issues.length > 0) throw new InputError("options", issues);
}
