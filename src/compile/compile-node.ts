/** `compileNode`: one node's outbound clusters, their split-horizon EDS, its listeners and diagnostics. */
import type { Cluster } from "../../gen/envoy/config/cluster/v3/cluster.js";
import type { ClusterLoadAssignment } from "../../gen/envoy/config/endpoint/v3/endpoint.js";
import type { Diagnostic } from "../diagnostics.js";
import type { ResourceSet } from "../envoy/resources.js";
import { type LocalNode, type LocalNodeInput, parseNode } from "../model/node.js";
import { type Options, type OptionsInput, parseOptions } from "../model/options.js";
import type { Snapshot } from "../model/snapshot.js";
import { singleEntrySlot } from "../plan/cache-slots.js";
import { sharedAddressDiagnostics } from "../plan/endpoints.js";
import { type NodePlan, planNode, reuseIfUnchanged } from "../plan/node-plan.js";
import { asIndex, type SnapshotIndex } from "../plan/snapshot-index.js";
import { BoundedCache } from "../util/bounded-cache.js";
import { getOrInsert } from "../util/maps.js";
import { compareText } from "../util/order.js";
import { outboundClusters } from "./clusters.js";
import { type PortAssignments, portAssignments } from "./endpoints.js";
import { inboundSide } from "./inbound.js";
import { lintCompileResult } from "./lint.js";
import { checkNodeLimits, checkPodPorts } from "./node-limits.js";
import { outboundListeners } from "./outbound.js";
import { ingressAssignments, ingressClusters, tunnelListener, tunnelRoutes } from "./waypoint.js";

/**
 * One node's compiled resources — clusters, endpoints and listeners, each sorted by name — with
 * the node, the options it was compiled with, and its diagnostics. Shared and cached between
 * calls: never mutate it.
 */
export interface CompileResult extends ResourceSet {
  /** The node compiled. */
  readonly node: {
    readonly cluster: string;
    readonly name: string;
    readonly ip: string;
    readonly locality: { readonly region: string; readonly zone: string };
  };
  /** The options the node was compiled with, defaults applied. */
  readonly options: Options;
  /** Every endpoint the node could see (emitted or left out) and every input it could not use; built when first read. */
  readonly diagnostics: readonly Diagnostic[];
}

/** Per compile context: outbound clusters by the service's cluster signature, then port (see `outboundCacheLimit`). */
const OUTBOUND_CLUSTERS = singleEntrySlot<BoundedCache<string, Map<number, Cluster[]>>>("outbound clusters");

/**
 * Compiles one node. Pure: the same snapshot, node and options give byte-identical resources,
 * whatever the order of the input. Pass an index (`indexSnapshot`) to share work across nodes.
 * A node whose output would exceed `NODE_LIMITS` is refused before anything is built (`InputError`).
 * The output is linted before it is returned (fail closed: `CompileInvariantError`).
 */
export function compileNode(snapshot: Snapshot | SnapshotIndex, node: LocalNode | LocalNodeInput, options: Options | OptionsInput = {}): CompileResult {
  const index = asIndex(snapshot);
  const plan = planNode(index, parseNode(node), parseOptions(options));
  checkPodPorts(plan);
  checkNodeLimits(plan);
  // Outbound clusters by the service's cluster signature, then port. Bounded: a signature that
  // changes (a service's ports, protocols or trust domains) leaves its old entry behind.
  const outbound = OUTBOUND_CLUSTERS.get(plan.context, [], () => new BoundedCache<string, Map<number, Cluster[]>>(outboundCacheLimit(index)));
  const clusters: Cluster[] = [];
  const endpoints: ClusterLoadAssignment[] = [];
  const eds: PortAssignments[] = [];
  for (const service of plan.dependencies) {
    for (const port of service.ports) {
      const assignments = portAssignments(index, plan.view, service, port);
      const target = { service, port, clusterName: assignments.plan.clusterName };
      const byPort = outbound.get(service.clusterSignature, () => new Map<number, Cluster[]>());
      for (const cluster of getOrInsert(byPort, port, () => outboundClusters(plan, target))) clusters.push(cluster);
      for (const assignment of assignments.assignments) endpoints.push(assignment);
      eds.push(assignments);
    }
  }
  const side = reuseIfUnchanged(plan.nodeSide, nodeSideInputs(plan), () => nodeSide(plan));
  clusters.push(...side.clusters);
  endpoints.push(...side.endpoints);
  let diagnostics: Diagnostic[] | undefined;
  return lintCompileResult({
    node: { cluster: plan.node.clusterName, name: plan.node.nodeName, ip: plan.node.nodeIp, locality: plan.node.locality },
    options: plan.options,
    clusters: clusters.sort((a, b) => compareText(a.name!, b.name!)),
    endpoints: endpoints.sort((a, b) => compareText(a.cluster_name!, b.cluster_name!)),
    listeners: side.listeners,
    // Gathered when first read: most of them (one per emitted endpoint) are never looked at.
    get diagnostics() {
      diagnostics ??= [...plan.diagnostics, ...eds.flatMap((a) => [...a.diagnostics, ...sharedAddressDiagnostics(index, a.plan)]), ...side.diagnostics];
      return diagnostics;
    },
  });
}

/** Signatures a context's outbound cache keeps per generation: every service of the mesh, twice over. */
function outboundCacheLimit(index: SnapshotIndex): number {
  return Math.max(64, 2 * index.serviceKeys.length);
}

/**
 * Only what a connection arriving at the node meets — its tunnel listener and ingress clusters
 * with their endpoints, its pods' inbound listeners and application clusters — plus its pods'
 * outbound listeners; none of the outbound clusters and EDS that make up most of a compile. The
 * same resources as `compileNode`'s (shared with it), linted the same way. For replaying a path
 * into the node (`explainPath`).
 */
export function compileNodeSide(snapshot: Snapshot | SnapshotIndex, node: LocalNode | LocalNodeInput, options: Options | OptionsInput = {}): CompileResult {
  const index = asIndex(snapshot);
  const plan = planNode(index, parseNode(node), parseOptions(options));
  const side = reuseIfUnchanged(plan.nodeSide, nodeSideInputs(plan), () => nodeSide(plan));
  return lintCompileResult({
    node: { cluster: plan.node.clusterName, name: plan.node.nodeName, ip: plan.node.nodeIp, locality: plan.node.locality },
    options: plan.options,
    clusters: [...side.clusters].sort((a, b) => compareText(a.name!, b.name!)),
    endpoints: [...side.endpoints].sort((a, b) => compareText(a.cluster_name!, b.cluster_name!)),
    listeners: side.listeners,
    diagnostics: [...plan.diagnostics, ...side.diagnostics],
  });
}

/**
 * Everything the node's listeners depend on: the mesh settings, its hosted pods and their
 * services (the waypoint signature), and the ports and protocols of the services it calls — not
 * their endpoints, so an endpoint change leaves the listeners as they are.
 */
function nodeSideInputs(plan: NodePlan): unknown[] {
  const { mesh, protocols, exports, dependencies, vips } = plan.index.snapshot;
  return [mesh, protocols, exports, dependencies, vips, plan.waypointSignature, ...plan.dependencies.map((service) => service.clusterSignature)];
}

/**
 * What the node listens on and the clusters behind it: its tunnel listener and ingress clusters,
 * its pods' inbound listeners and their application clusters, its pods' outbound listeners.
 */
function nodeSide(plan: NodePlan) {
  const routes = tunnelRoutes(plan);
  const ingress = ingressAssignments(plan, routes);
  const inbound = inboundSide(plan);
  const listeners = [...tunnelListener(plan, routes), ...inbound.listeners, ...outboundListeners(plan)];
  return {
    clusters: [...ingressClusters(plan, routes), ...inbound.clusters],
    endpoints: [...ingress.assignments, ...inbound.endpoints],
    listeners: listeners.sort((a, b) => compareText(a.name!, b.name!)),
    diagnostics: [...ingress.diagnostics, ...inbound.diagnostics],
  };
}
