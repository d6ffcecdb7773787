/** `compileNode`: one node's outbound clusters, their split-horizon EDS, its listeners and diagnostics. */
import type { Cluster } from "../../gen/envoy/config/cluster/v3/cluster.js";
import type { ClusterLoadAssignment } from "../../gen/envoy/config/endpoint/v3/endpoint.js";
import type { Diagnostic } from "../diagnostics.js";
import { notePatched, type ResourceSet } from "../envoy/resources.js";
import { type LocalNode, type LocalNodeInput, parseNode } from "../model/node.js";
import { type Options, type OptionsInput, parseOptions } from "../model/options.js";
import type { Snapshot } from "../model/snapshot.js";
import { CacheSlot, type SlotCache, singleEntrySlot } from "../plan/cache-slots.js";
import { viewKey } from "../plan/eds-view.js";
import { sharedAddressDiagnostics } from "../plan/endpoints.js";
import { type NodePlan, planNode, type ReuseSlot, reuseIfUnchanged } from "../plan/node-plan.js";
import { asIndex, type IndexedService, type SnapshotIndex } from "../plan/snapshot-index.js";
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
  const reuse = recompileReuse(plan);
  const side = reuseIfUnchanged(reuse.side, nodeSideInputs(plan), () => nodeSide(plan));
  const walk = walkOutbound(plan, side, reuse.walk);
  let diagnostics: Diagnostic[] | undefined;
  const result = lintCompileResult({
    node: { cluster: plan.node.clusterName, name: plan.node.nodeName, ip: plan.node.nodeIp, locality: plan.node.locality },
    options: plan.options,
    clusters: walk.clusters.items,
    endpoints: walk.endpoints.items,
    listeners: side.listeners,
    // Gathered when first read: most of them (one per emitted endpoint) are never looked at.
    get diagnostics() {
      const eds = walk.parts.flatMap((parts) => parts.map((part) => part.assignments));
      diagnostics ??= [...plan.diagnostics, ...eds.flatMap((a) => [...a.diagnostics, ...sharedAddressDiagnostics(index, a.plan)]), ...side.diagnostics];
      return diagnostics;
    },
  });
  reuse.walk = walk;
  return result;
}

/**
 * Lets go of what a recompile of the same node and options would reuse — its last node side and
 * outbound walk — for a caller that keeps the node but is done compiling it: the mesh check node
 * by node holds one node's full output at a time, and of the others only what arrives there reads.
 */
export function releaseRecompileReuse(index: SnapshotIndex, node: LocalNode, options: Options): void {
  reuseByNode.delete(planNode(index, node, options).recompileKey);
}

type NodeSide = ReturnType<typeof nodeSide>;

/** What a recompile of one parsed node and options pair reuses: its last node side (with the inputs it came from) and outbound walk. */
interface RecompileReuse {
  readonly side: ReuseSlot<NodeSide>;
  walk?: OutboundWalk;
}

const reuseByNode = new WeakMap<object, RecompileReuse>();

function recompileReuse(plan: NodePlan): RecompileReuse {
  return getOrInsert(reuseByNode, plan.recompileKey, () => ({ side: {} }));
}

/** One dependency port's share of a compile: its outbound clusters and its assignments. */
interface PortPart {
  readonly clusters: readonly Cluster[];
  readonly assignments: PortAssignments;
}

/**
 * A compile's walk over the node's dependencies: each one's port parts, and the sorted lists made
 * of them and the node side. Kept per node for the next compile (`RecompileReuse`).
 */
interface OutboundWalk {
  readonly context: SlotCache;
  readonly side: NodeSide;
  readonly services: readonly IndexedService[];
  readonly parts: readonly (readonly PortPart[])[];
  readonly clusters: NamedList<Cluster>;
  readonly endpoints: NamedList<ClusterLoadAssignment>;
}

/** A sorted resource list, with each resource's position by name once a patch needed it. */
interface NamedList<T> {
  readonly items: T[];
  positions?: ReadonlyMap<string, number>;
}

/** Resources replacing ones of the same name in the last walk's lists. */
interface Replacements {
  readonly clusters: Cluster[];
  readonly endpoints: ClusterLoadAssignment[];
}

/**
 * The node's outbound clusters and assignments, with the node side's, sorted by name. A
 * dependency that is the same service object as last time, in the same compile context, has the
 * same parts (its caches hold them). When every change keeps its resources' names in place (an
 * endpoint's health, a pod's port), the last sorted lists are patched instead of sorted again.
 */
function walkOutbound(plan: NodePlan, side: NodeSide, last: OutboundWalk | undefined): OutboundWalk {
  const previous = last?.context === plan.context ? last : undefined;
  // Outbound clusters by the service's cluster signature, then port. Bounded: a signature that
  // changes (a service's ports, protocols or trust domains) leaves its old entry behind.
  const outbound = OUTBOUND_CLUSTERS.get(plan.context, [], () => new BoundedCache<string, Map<number, Cluster[]>>(outboundCacheLimit(plan.index)));
  const shared = sharedPortParts(plan);
  const services = plan.dependencies;
  const parts: (readonly PortPart[])[] = [];
  const replacements: Replacements = { clusters: [], endpoints: [] };
  let patchable = previous !== undefined && previous.services.length === services.length;
  if (previous && previous.side !== side) {
    patchable &&= replaced(previous.side.clusters, side.clusters, nameOfCluster, replacements.clusters);
    patchable &&= replaced(previous.side.endpoints, side.endpoints, nameOfAssignment, replacements.endpoints);
  }
  for (let i = 0; i < services.length; i++) {
    const service = services[i]!;
    const before = previous?.services[i] === service ? previous.parts[i] : undefined;
    if (before) {
      parts.push(before);
      continue;
    }
    const now = portParts(plan, outbound, shared, service);
    parts.push(now);
    patchable &&= samePorts(previous!.parts[i]!, now, replacements);
  }
  const walk = { context: plan.context, side, services, parts };
  return (patchable && patched(previous!, walk, replacements)) || sorted(walk);
}

/**
 * Per compile context, by the EDS view's key: each dependency's port parts, by service object.
 * A part is the context's clusters and the view's assignments of one service port, both cached
 * already; sharing the pair spares every further node of the view a walk through those caches.
 */
const PORT_PARTS = new CacheSlot<[viewKey: string], WeakMap<IndexedService, readonly PortPart[]>>("port parts by EDS view", (viewKey) => viewKey);

/** The table of the node's view, or none in `always` mode, where the view is the node's own. */
function sharedPortParts(plan: NodePlan): WeakMap<IndexedService, readonly PortPart[]> | undefined {
  if (plan.view.node) return undefined;
  return PORT_PARTS.get(plan.context, [viewKey(plan.view)], () => new WeakMap());
}

function portParts(
  plan: NodePlan,
  outbound: BoundedCache<string, Map<number, Cluster[]>>,
  shared: WeakMap<IndexedService, readonly PortPart[]> | undefined,
  service: IndexedService,
): readonly PortPart[] {
  const build = () => service.ports.map((port) => portPart(plan, outbound, service, port));
  return shared ? getOrInsert(shared, service, build) : build();
}

function portPart(plan: NodePlan, outbound: BoundedCache<string, Map<number, Cluster[]>>, service: IndexedService, port: number): PortPart {
  const assignments = portAssignments(plan.index, plan.view, service, port);
  const target = { service, port, clusterName: assignments.plan.clusterName };
  const byPort = outbound.get(service.clusterSignature, () => new Map<number, Cluster[]>());
  return { clusters: getOrInsert(byPort, port, () => outboundClusters(plan, target)), assignments };
}

const nameOfCluster = (cluster: Cluster) => cluster.name!;
const nameOfAssignment = (assignment: ClusterLoadAssignment) => assignment.cluster_name!;

/** Whether each port of `now` has the names of `before`'s; collects what differs. */
function samePorts(before: readonly PortPart[], now: readonly PortPart[], replacements: Replacements): boolean {
  if (before.length !== now.length) return false;
  return now.every(
    (part, k) =>
      replaced(before[k]!.clusters, part.clusters, nameOfCluster, replacements.clusters) &&
      replaced(before[k]!.assignments.assignments, part.assignments.assignments, nameOfAssignment, replacements.endpoints),
  );
}

/** Whether `now` names what `before` named, in order; collects the resources that are not the same objects. */
function replaced<T>(before: readonly T[], now: readonly T[], nameOf: (resource: T) => string, into: T[]): boolean {
  if (before === now) return true;
  if (before.length !== now.length) return false;
  for (let k = 0; k < now.length; k++) {
    if (before[k] === now[k]) continue;
    if (nameOf(before[k]!) !== nameOf(now[k]!)) return false;
    into.push(now[k]!);
  }
  return true;
}

/** The last walk's lists with the replacements put in their places (undefined if one has no place). */
function patched(previous: OutboundWalk, walk: Omit<OutboundWalk, "clusters" | "endpoints">, replacements: Replacements): OutboundWalk | undefined {
  const clusters = patchedList(previous.clusters, replacements.clusters, nameOfCluster);
  const endpoints = patchedList(previous.endpoints, replacements.endpoints, nameOfAssignment);
  return clusters && endpoints && { ...walk, clusters, endpoints };
}

function patchedList<T extends object>(list: NamedList<T>, replacements: readonly T[], nameOf: (resource: T) => string): NamedList<T> | undefined {
  if (replacements.length === 0) return list;
  const positions = list.positions ?? new Map(list.items.map((item, i) => [nameOf(item), i]));
  const items = [...list.items];
  for (const item of replacements) {
    const at = positions.get(nameOf(item));
    if (at === undefined) return undefined;
    items[at] = item;
  }
  notePatched(items, list.items, replacements);
  return { items, positions };
}

/**
 * The walk's lists sorted by name. The sort alone decides the order; gathering the parts in the
 * order of their first cluster's name makes most of each list one sorted run already (only a
 * service's ports and sub-clusters may interleave), which the sort then merges with the node
 * side's instead of sorting every resource from scratch.
 */
function sorted(walk: Omit<OutboundWalk, "clusters" | "endpoints">): OutboundWalk {
  const clusters: Cluster[] = [];
  const endpoints: ClusterLoadAssignment[] = [];
  for (const at of inNameOrder(walk.parts)) {
    for (const part of walk.parts[at]!) {
      for (const cluster of part.clusters) clusters.push(cluster);
      for (const assignment of part.assignments.assignments) endpoints.push(assignment);
    }
  }
  clusters.push(...walk.side.clusters);
  endpoints.push(...walk.side.endpoints);
  clusters.sort((a, b) => compareText(a.name!, b.name!));
  endpoints.sort((a, b) => compareText(a.cluster_name!, b.cluster_name!));
  return { ...walk, clusters: { items: clusters }, endpoints: { items: endpoints } };
}

/** The positions of `parts` ordered by the name of each one's first cluster. */
function inNameOrder(parts: readonly (readonly PortPart[])[]): number[] {
  const names = parts.map((ports) => ports[0]?.clusters[0]?.name ?? "");
  return names.map((_, i) => i).sort((a, b) => compareText(names[a]!, names[b]!));
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
  // Refused as `compileNode` refuses it: a node the full compile would not serve receives nothing.
  checkPodPorts(plan);
  checkNodeLimits(plan);
  const side = reuseIfUnchanged(recompileReuse(plan).side, nodeSideInputs(plan), () => nodeSide(plan));
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
  return [mesh, protocols, exports, dependencies, vips, plan.waypointSignature, plan.dependencySignatures];
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
