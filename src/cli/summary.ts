/** A short human summary of a snapshot: what the mesh holds, per cluster and service. */

import type { ServiceEndpoint } from "../model/registry.js";
import type { Snapshot } from "../model/snapshot.js";
import { sharedAddresses } from "../model/snapshot-checks.js";
import { getOrInsert, increment } from "../util/maps.js";
import { compareByKey } from "../util/order.js";
import { sharedAddressLine } from "../verify/format.js";

export function summarizeSnapshot(snapshot: Snapshot): string {
  const { mesh } = snapshot;
  const isListed = listedNodes(snapshot);
  const lines = [`mesh ${mesh.meshDomain}, trust ${trustSummary(snapshot)}`, "", "clusters:"];
  for (const [cluster, stats] of clusterStats(snapshot, isListed)) {
    const unlisted = stats.unlistedNodes.size > 0 ? ` (+${stats.unlistedNodes.size} unlisted)` : "";
    lines.push(`  ${cluster.padEnd(12)} ${stats.nodes} nodes${unlisted}, ${stats.endpoints} endpoints`);
  }
  lines.push("", "services:");
  for (const [key, endpoints] of [...snapshot.services].sort(compareByKey)) {
    lines.push(`  ${key.padEnd(24)} ports ${portsSummary(snapshot, key, endpoints)}; ${endpointsSummary(endpoints)}`);
  }
  const noNodeIp = [...snapshot.services.values()].flat().filter((e) => !e.kubernetesMetadata.nodeIp && !isListed(e));
  if (noNodeIp.length > 0) {
    lines.push("", `endpoints without a known node IP (unreachable through a waypoint): ${noNodeIp.length}`);
    for (const e of noNodeIp) lines.push(`  ${e.clusterName}/${e.kubernetesMetadata.namespace}/${e.kubernetesMetadata.podName || e.ip}`);
  }
  const shared = sharedAddresses(snapshot.services);
  if (shared.length > 0) {
    lines.push("", `addresses naming pods of different services in different clusters: ${shared.length}`);
    for (const address of shared) lines.push(`  warning: ${sharedAddressLine(address)}`);
  }
  return lines.join("\n");
}

function trustSummary(snapshot: Snapshot): string {
  const trust = snapshot.mesh.trust;
  if (trust.mode === "shared") return `shared (${trust.trustDomain})`;
  return `federated (${trust.trustDomains.map((d) => `${d.name}: ${d.clusters.join(", ")}`).join("; ")})`;
}

interface ClusterStats {
  nodes: number;
  endpoints: number;
  unlistedNodes: Set<string>;
}

function clusterStats(snapshot: Snapshot, isListed: (endpoint: ServiceEndpoint) => boolean): Map<string, ClusterStats> {
  const stats = new Map<string, ClusterStats>();
  const of = (cluster: string) => getOrInsert(stats, cluster, () => ({ nodes: 0, endpoints: 0, unlistedNodes: new Set<string>() }));
  for (const node of snapshot.nodes) of(node.cluster).nodes++;
  for (const endpoint of [...snapshot.services.values()].flat()) {
    const entry = of(endpoint.clusterName);
    entry.endpoints++;
    const nodeName = endpoint.kubernetesMetadata.nodeName;
    if (nodeName && !isListed(endpoint)) entry.unlistedNodes.add(nodeName);
  }
  return new Map([...stats].sort(compareByKey));
}

/** Whether a record's node is in the node list: sets built once (a scan of the list per record took W1's summary 8 s). */
function listedNodes(snapshot: Snapshot): (endpoint: ServiceEndpoint) => boolean {
  const byCluster = new Map<string, Set<string>>();
  for (const node of snapshot.nodes) getOrInsert(byCluster, node.cluster, () => new Set<string>()).add(node.name);
  return (endpoint) => byCluster.get(endpoint.clusterName)?.has(endpoint.kubernetesMetadata.nodeName) ?? false;
}

function portsSummary(snapshot: Snapshot, key: string, endpoints: readonly ServiceEndpoint[]): string {
  const declared = snapshot.protocols.get(key as `${string}/${string}`);
  const ports = new Set([...endpoints.flatMap((e) => e.ports), ...(declared?.keys() ?? [])]);
  return [...ports]
    .sort((a, b) => a - b)
    .map((port) => `${port}/${declared?.get(port) ?? "http"}`)
    .join(" ");
}

function endpointsSummary(endpoints: readonly ServiceEndpoint[]): string {
  const perCluster = new Map<string, number>();
  const health = new Map<string, number>();
  for (const e of endpoints) {
    increment(perCluster, e.clusterName);
    increment(health, e.health);
  }
  const clusters = [...perCluster]
    .sort()
    .map(([c, n]) => `${c} ${n}`)
    .join(", ");
  const unhealthy = ["DRAINING", "UNHEALTHY"].filter((h) => health.has(h)).map((h) => `${health.get(h)} ${h.toLowerCase()}`);
  return `endpoints ${clusters || "none"}${unhealthy.length ? ` (${unhealthy.join(", ")})` : ""}`;
}
