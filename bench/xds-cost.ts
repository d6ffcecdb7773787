/**
 * The reference cost E (binary-encoding exactly the resources a compile produced, with the
 * generated ts-proto codecs) and small facts about compiled output: sizes by kind, endpoint
 * counts, what changed between two versions.
 */
import { Cluster } from "../gen/envoy/config/cluster/v3/cluster.js";
import { ClusterLoadAssignment } from "../gen/envoy/config/endpoint/v3/endpoint.js";
import { Listener } from "../gen/envoy/config/listener/v3/listener.js";
import type { CompileResult } from "../src/compile/compile-node.js";
import { diffResources, XDS_TYPE_URLS, type XdsResources } from "../src/emit/xds.js";
import type { LocalNode } from "../src/model/node.js";
import type { Options } from "../src/model/options.js";
import { parseOutboundClusterName } from "../src/naming.js";

export interface ResourceSet {
  readonly clusters: readonly Cluster[];
  readonly endpoints: readonly ClusterLoadAssignment[];
  readonly listeners: readonly Listener[];
}

/** E's unit of work: encode every resource to bytes; returns the total size so nothing is dead code. */
export function encodeAll(resources: ResourceSet): number {
  let bytes = 0;
  for (const cluster of resources.clusters) bytes += Cluster.encode(cluster).finish().length;
  for (const assignment of resources.endpoints) bytes += ClusterLoadAssignment.encode(assignment).finish().length;
  for (const listener of resources.listeners) bytes += Listener.encode(listener).finish().length;
  return bytes;
}

/** A compile result carrying only `assignments`, so `toXdsResources` can encode and version them. */
export function assignmentsOnly(node: LocalNode, options: Options, assignments: readonly ClusterLoadAssignment[]): CompileResult {
  return {
    node: { cluster: node.clusterName, name: node.nodeName, ip: node.nodeIp, locality: node.locality },
    options,
    clusters: [],
    endpoints: assignments,
    listeners: [],
    diagnostics: [],
  };
}

/** LbEndpoints over every assignment: "endpoints of the output". */
export function lbEndpointCount(assignments: readonly ClusterLoadAssignment[]): number {
  let count = 0;
  for (const assignment of assignments) for (const group of assignment.endpoints ?? []) count += group.lb_endpoints?.length ?? 0;
  return count;
}

export interface BytesByKind {
  readonly clusters: number;
  readonly endpoints: number;
  readonly listeners: number;
}

export function bytesByKind(xds: XdsResources): BytesByKind {
  const total = (url: keyof XdsResources) => xds[url].reduce((sum, r) => sum + (r.resource.value?.length ?? 0), 0);
  return { clusters: total(XDS_TYPE_URLS.clusters), endpoints: total(XDS_TYPE_URLS.endpoints), listeners: total(XDS_TYPE_URLS.listeners) };
}

/** Encoded bytes of the outbound clusters (those with per-source socket tables) and their shape. */
export function outboundSocketFootprint(result: CompileResult, xds: XdsResources): { clusters: number; socketsPerCluster: number; bytes: number } {
  const outbound = new Set(result.clusters.map((c) => c.name!).filter((name) => parseOutboundClusterName(name) !== undefined));
  const bytes = xds[XDS_TYPE_URLS.clusters].filter((r) => outbound.has(r.name)).reduce((sum, r) => sum + (r.resource.value?.length ?? 0), 0);
  const first = result.clusters.find((c) => outbound.has(c.name!));
  return { clusters: outbound.size, socketsPerCluster: first?.transport_socket_matches?.length ?? 0, bytes };
}

export interface ChangeSummary {
  readonly changedAssignments: number;
  /** Every add, change or removal that is not a changed assignment. */
  readonly other: number;
  readonly text: string;
}

/** What changed from `before` to `after`, in one line. */
export function summarizeChanges(before: XdsResources, after: XdsResources): ChangeSummary {
  const diff = diffResources(before, after);
  const kinds = [
    ["CDS", diff[XDS_TYPE_URLS.clusters]],
    ["EDS", diff[XDS_TYPE_URLS.endpoints]],
    ["LDS", diff[XDS_TYPE_URLS.listeners]],
  ] as const;
  const parts = kinds.flatMap(([kind, d]) => {
    const bits = [d.added.length && `+${d.added.length}`, d.changed.length && `~${d.changed.length}`, d.removed.length && `-${d.removed.length}`].filter(
      Boolean,
    );
    return bits.length > 0 ? [`${kind} ${bits.join(" ")}`] : [];
  });
  const eds = diff[XDS_TYPE_URLS.endpoints];
  const all = kinds.reduce((sum, [, d]) => sum + d.added.length + d.changed.length + d.removed.length, 0);
  return { changedAssignments: eds.changed.length, other: all - eds.changed.length, text: parts.join(", ") || "no change" };
}
