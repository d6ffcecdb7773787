/**
 * Replays one connection — a source (a hosted pod, or the node itself) calling a service port —
 * over the compiled resources of every node, the way Envoy would route it: priority choice, the
 * transport-socket matcher, the waypoint's tunnel chain and ingress, the destination pod's inbound
 * chain, and the mTLS identities on both ends. Every step is recorded as a hop.
 */
import type { Cluster } from "../../gen/envoy/config/cluster/v3/cluster.js";
import type { ClusterLoadAssignment } from "../../gen/envoy/config/endpoint/v3/endpoint.js";
import type { LbEndpoint } from "../../gen/envoy/config/endpoint/v3/endpoint_components.js";
import type { ClusterConfig } from "../../gen/envoy/extensions/clusters/aggregate/v3/cluster.js";
import type { Any } from "../../gen/google/protobuf/any.js";
import { unpackAny } from "../envoy/schema.js";
import { EXTENSION } from "../envoy/types.js";
import type { ServiceKey } from "../naming.js";
import { NONE } from "../util/arrays.js";
import { newMap, remember } from "../util/maps.js";
import type { CompiledNode, MeshView, NodeResources, PodLookup, TunnelLookup } from "./compiled-mesh.js";
import { addressOf, Dial, type Dialed, type DialLevel, dialAll } from "./dial.js";
import { enterAtSource, type SourceEntry, type Stamped, targetNames } from "./entry.js";
import { chosenPriority } from "./envoy-match.js";
import { PATH_FAILURES, type PathFailureCode } from "./failures.js";
import type { ReplayMemo } from "./replay-memo.js";

export { PATH_FAILURES, type PathFailureCode } from "./failures.js";

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
  /** From the dial on: they continue the path's own (`PathReport.hops`). */
  readonly hops: readonly string[];
}

export interface PathFailure {
  readonly code: PathFailureCode;
  readonly reason: string;
  /** From where the path's own hops (`PathReport.hops`) end to the mistake. */
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
  /**
   * The path's own hops: how it entered its node's Envoy and reached the cluster. Each landing's
   * and failure's hops continue from here; landings and failures are shared by every path that
   * dials the same level alike, so they do not repeat these.
   */
  readonly hops: readonly string[];
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

export function replayPath(context: ReplayContext, source: PathSource, target: PathTarget): PathReport {
  const facts = context.memo.get("source facts", source, sourceFacts, context);
  const names = targetNames(context, target);
  const entry = enterAtSource(context, facts, source, target, names);
  const expected = names.cluster;
  if (entry.kind === "not-captured")
    return { source, target, cluster: expected, status: "not-captured", hops: NONE, landings: NONE, failures: NONE, unverified: NONE, note: entry.reason };
  const hops = entry.hops;
  if (entry.kind === "failed") {
    const failure = { code: entry.code, reason: `${PATH_FAILURES[entry.code]}: ${entry.detail}`, hops: NONE };
    return { source, target, cluster: expected, status: "failed", hops, landings: NONE, failures: [failure], unverified: NONE };
  }
  const cluster = entry.cluster;
  const { clusters, chosen, unroutable } = levelFor(context, facts, cluster);
  if (clusters.length === 0) {
    const failure = { code: "NO_CLUSTER" as const, reason: `${PATH_FAILURES.NO_CLUSTER}: ${cluster}`, hops: NONE };
    return { source, target, cluster, status: "failed", hops, landings: NONE, failures: [failure], unverified: NONE };
  }
  if (!chosen) return { source, target, cluster, status: "unreachable", hops, landings: NONE, failures: NONE, unverified: NONE };
  const { stamped } = entry;
  const byTarget = chosen.outcomes.get(names.id) ?? remember(chosen.outcomes, names.id, new Map<number, Dialed>());
  const classId = facts.class?.stamped === stamped ? facts.class.id : classOf(context, facts, source, stamped);
  const dialed =
    byTarget.get(classId) ?? remember(byTarget, classId, dialAll(context, source, target, stamped.filterState, chosen, poolHop(chosen.cluster, stamped)));
  const failover =
    unroutable.get(source.cluster) ??
    remember(unroutable, source.cluster, unroutableFailover(context, clusters, { cluster: source.cluster, dialed: new Set(chosen.endpoints) }));
  const { landings, unverified } = dialed;
  const failures = failover.length === 0 ? dialed.failures : [...dialed.failures, ...failover];
  const status = failures.length > 0 ? "failed" : landings.length > 0 ? "ok" : "unverified";
  if (landings.length === 0) return { source, target, cluster, status, hops, landings, failures, unverified };
  // Every landing presented the source's own certificate (else it failed): that is what its pool carries.
  return { source, target, cluster, status, hops, landings, failures, unverified, pool: poolUse(source, chosen.cluster, stamped) };
}

/** What every path of one source reads alike, looked up once per source (not per path). */
interface SourceFacts extends SourceEntry {
  /**
   * The source's class for the last stamp it entered with (`sourceClass`): a source enters through
   * one chain, or a few, so one entry rather than a map per source (a W1 check has 100,000).
   */
  class?: { readonly stamped: Stamped; readonly id: number };
}

function sourceFacts(source: PathSource, context: ReplayContext): SourceFacts {
  const resources = context.resources(context.mesh.node(source.node)!);
  return { resources };
}

function classOf(context: ReplayContext, facts: SourceFacts, source: PathSource, stamped: Stamped): number {
  facts.class = { stamped, id: sourceClass(context, source, stamped) };
  return facts.class.id;
}

/**
 * What dialing each endpoint of a level yields depends on the source only through its target, its
 * identity, its cluster and the values it shares with upstream: kept per level (levels are shared
 * across the nodes whose output holds the same objects) by the target's id (`TargetNames`), then
 * the source's class. Both are small numbers, remembered per target and per source object
 * (`SourceFacts.class`), so no key is built per path. The class of a source entering through a
 * chain that stamps `stamped` is its identity, its cluster and the values shared.
 */
function sourceClass(context: ReplayContext, source: PathSource, stamped: Stamped): number {
  const classes = context.memo.get("source class ids", "", newMap<string, number>);
  const key = [source.identity, source.cluster, stamped.signature].join("\u0000");
  return classes.get(key) ?? remember(classes, key, classes.size);
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
): PathFailure[] {
  if (context.mesh.index.snapshot.mesh.podNetwork !== "isolated") return [];
  const unroutable: PathFailure[] = [];
  for (const { cluster, assignment } of clusters) {
    for (const group of assignment?.endpoints ?? []) {
      for (const endpoint of group.lb_endpoints ?? []) {
        const { address, ip, port } = addressOf(context, endpoint);
        // Direct endpoints only (pod_ip:inboundPort): a waypoint's address routes, compiled or not.
        if (port !== context.mesh.options.inboundPort || source.dialed.has(endpoint) || context.tunnels.has(address)) continue;
        if (context.pods(ip).has(source.cluster)) continue;
        const reason = `${PATH_FAILURES.POD_IP_NOT_ROUTABLE}: ${address} (priority ${group.priority ?? 0}) from cluster ${source.cluster}, and mesh.podNetwork is isolated`;
        unroutable.push({ code: "POD_IP_NOT_ROUTABLE", reason, hops: [`${cluster.name} priority ${group.priority ?? 0}: dial ${address}`] });
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

/** An EDS cluster Envoy balances over and the node's assignment for it. */
interface EdsCluster {
  readonly cluster: Cluster;
  readonly assignment: ClusterLoadAssignment | undefined;
}

/** The level Envoy picks, its endpoints to dial, and what dialing them yields, by path class. */
interface Chosen extends DialLevel {
  readonly endpoints: readonly LbEndpoint[];
  /** What dialing it yields, by target id (a misrouted path enters another target's cluster), then source class (`sourceClass`). */
  readonly outcomes: Map<number, Map<number, Dialed>>;
}

interface Level {
  readonly clusters: readonly EdsCluster[];
  readonly chosen?: Chosen;
  /** Failover endpoints that do not route, by source cluster: failures of every path from there. */
  readonly unroutable: Map<string, PathFailure[]>;
}

const NO_LEVEL: Level = { clusters: [], unroutable: new Map() };

/**
 * The level of a cluster of a node, kept per cluster name and node for every source of the node:
 * one table per name, as a target's paths ask for its cluster from every node.
 */
function levelFor(context: ReplayContext, { resources }: SourceFacts, name: string): Level {
  const byNode = context.memo.forTarget("levels by node", name, newMap<NodeResources, Level>);
  return byNode.get(resources) ?? remember(byNode, resources, findLevel(context, resources, name));
}

/**
 * A cluster's EDS clusters and the level Envoy picks among them: the same for every node whose
 * output holds the same cluster and assignment objects (the compiler shares identical ones across
 * nodes).
 */
function findLevel(context: ReplayContext, resources: NodeResources, name: string): Level {
  const cluster = resources.cluster(name);
  if (!cluster) return NO_LEVEL;
  return isAggregate(cluster) ? aggregateLevel(context, resources, cluster) : plainLevel(context, cluster, assignmentOf(resources, cluster));
}

/** An aggregate cluster's level over its halves, kept by their cluster and assignment objects in order. */
function aggregateLevel(context: ReplayContext, resources: NodeResources, aggregate: Cluster): Level {
  const clusters = aggregateHalves(context, resources, aggregate).map((cluster) => ({ cluster, assignment: assignmentOf(resources, cluster) }));
  if (clusters.length === 0) return NO_LEVEL;
  const { cluster, assignment } = clusters[0]!;
  const byAssignment = context.memo.forTarget("aggregate levels", cluster, newMap<ClusterLoadAssignment | undefined, Level[]>);
  const known = byAssignment.get(assignment) ?? remember(byAssignment, assignment, []);
  for (const level of known) if (sameEdsClusters(level.clusters, clusters)) return level;
  const level = levelOf(context, clusters);
  known.push(level);
  return level;
}

/**
 * The level of one EDS cluster with its assignment, kept by both objects: a check asks once per
 * node and cluster name, and most nodes share both, so nothing is built for a level met before.
 */
function plainLevel(context: ReplayContext, cluster: Cluster, assignment: ClusterLoadAssignment | undefined): Level {
  const byAssignment = context.memo.forTarget("plain levels", cluster, newMap<ClusterLoadAssignment | undefined, Level>);
  return byAssignment.get(assignment) ?? remember(byAssignment, assignment, levelOf(context, [{ cluster, assignment }]));
}

function assignmentOf(resources: NodeResources, cluster: Cluster): ClusterLoadAssignment | undefined {
  return resources.assignment(cluster.eds_cluster_config?.service_name || cluster.name || "");
}

/** Whether both are the same cluster objects with the same assignment objects, in order. */
function sameEdsClusters(a: readonly EdsCluster[], b: readonly EdsCluster[]): boolean {
  return a.length === b.length && a.every((eds, i) => eds.cluster === b[i]!.cluster && eds.assignment === b[i]!.assignment);
}

function levelOf(context: ReplayContext, clusters: readonly EdsCluster[]): Level {
  const level = chooseLevel(clusters);
  if (!level) return { clusters, unroutable: new Map() };
  const dials = level.endpoints.map((endpoint) => {
    const address = addressOf(context, endpoint);
    return new Dial(endpoint, address, `${level.cluster.name} priority ${level.priority}: dial ${address.address}`);
  });
  return { clusters, chosen: { ...level, dials, outcomes: new Map() }, unroutable: new Map() };
}

function isAggregate(cluster: Cluster): boolean {
  return cluster.cluster_type?.name === EXTENSION.aggregateCluster;
}

/** The EDS clusters an aggregate cluster balances over: its halves, in order. */
function aggregateHalves(context: ReplayContext, resources: NodeResources, cluster: Cluster): readonly Cluster[] {
  const any = cluster.cluster_type!.typed_config!;
  const halves = context.memo.forTarget("aggregate", any, halvesOf);
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
