/**
 * Registry events for the incremental figure. Each builds a new Snapshot S' from S the way a
 * registry watch would: a new `services` map that shares every untouched service's endpoint
 * array with S, and new records only where something changed. Targets are picked relative to
 * the subject node N so the expected effect on N's resources is known in advance.
 */
import type { LocalNode } from "../src/model/node.js";
import type { ServiceEndpoint } from "../src/model/registry.js";
import type { NodeStatus, Snapshot } from "../src/model/snapshot.js";
import type { ServiceKey } from "../src/naming.js";
import { mulberry32, podIp } from "./workloads.js";

export interface Scenario {
  readonly name: string;
  /** What happens, in words. */
  readonly event: string;
  /** What N's resources should show afterwards. */
  readonly expected: string;
  /** Whether N itself must be derived again (its dependency set changes). */
  readonly nodeChanges: boolean;
  /** The node list S' has, when the event is a node status change (no record changes). */
  readonly nodes?: readonly NodeStatus[];
  /** A new S' on every call (the index is cached per snapshot object). */
  apply(): Snapshot;
}

function withServices(snapshot: Snapshot, changed: ReadonlyMap<ServiceKey, readonly ServiceEndpoint[]>): Snapshot {
  const services = new Map(snapshot.services);
  for (const [key, endpoints] of changed) services.set(key, endpoints);
  return { ...snapshot, services };
}

function hostedServices(node: LocalNode): Set<ServiceKey> {
  return new Set(node.pods.map((pod) => `${pod.namespace}/${pod.serviceAccount}` as ServiceKey));
}

function onNode(endpoint: ServiceEndpoint, cluster: string, name: string): boolean {
  return endpoint.clusterName === cluster && endpoint.kubernetesMetadata.nodeName === name;
}

/** N's dependencies it does not host, by size then key: the middle ones are "median services". */
function remoteDependencies(snapshot: Snapshot, node: LocalNode): ServiceKey[] {
  const hosted = hostedServices(node);
  const size = (key: ServiceKey) => snapshot.services.get(key)?.length ?? 0;
  return [...(node.dependencies ?? snapshot.services.keys())]
    .filter((key) => !hosted.has(key) && size(key) > 0)
    .sort((a, b) => size(a) - size(b) || (a < b ? -1 : 1));
}

function medianDependency(snapshot: Snapshot, node: LocalNode, offset = 0): ServiceKey {
  const candidates = remoteDependencies(snapshot, node);
  const key = candidates[Math.min(candidates.length - 1, (candidates.length >> 1) + offset)];
  if (!key) throw new Error(`node ${node.clusterName}/${node.nodeName} has no remote dependency`);
  return key;
}

/** One healthy endpoint of a median dependency, in N's cluster but not on N, turns unhealthy. */
export function healthFlip(snapshot: Snapshot, node: LocalNode): Scenario {
  const key = medianDependency(snapshot, node);
  const endpoints = snapshot.services.get(key)!;
  const healthy = (e: ServiceEndpoint) => e.health !== "UNHEALTHY" && e.health !== "DRAINING" && !onNode(e, node.clusterName, node.nodeName);
  const local = endpoints.findIndex((e) => healthy(e) && e.clusterName === node.clusterName);
  const index = local >= 0 ? local : endpoints.findIndex(healthy);
  if (index < 0) throw new Error(`service ${key} has no healthy endpoint to flip`);
  const flipped = endpoints.map((e, i) => (i === index ? { ...e, health: "UNHEALTHY" as const } : e));
  return {
    name: "health flip",
    event: `${key} (${endpoints.length} endpoints): ${endpoints[index]!.clusterName}/${endpoints[index]!.ip} HEALTHY → UNHEALTHY`,
    expected: "exactly 1 assignment changes",
    nodeChanges: false,
    apply: () => withServices(snapshot, new Map([[key, flipped]])),
  };
}

/**
 * The node of another cluster that hosts the most of N's dependencies (pods not draining), with
 * those dependencies: an event there touches many of N's assignments.
 */
function busiestRemoteNode(snapshot: Snapshot, node: LocalNode): { id: string; cluster: string; name: string; keys: ReadonlySet<ServiceKey> } {
  const dependencies = new Set(node.dependencies ?? snapshot.services.keys());
  const touched = new Map<string, Set<ServiceKey>>();
  for (const key of dependencies) {
    for (const e of snapshot.services.get(key) ?? []) {
      if (e.clusterName === node.clusterName || e.health === "DRAINING") continue;
      const id = `${e.clusterName}/${e.kubernetesMetadata.nodeName}`;
      touched.set(id, (touched.get(id) ?? new Set()).add(key));
    }
  }
  const [id, keys] = [...touched].sort(([a, x], [b, y]) => y.size - x.size || (a < b ? -1 : 1))[0] ?? [];
  if (!id || !keys) throw new Error("no remote node hosts a dependency");
  const [cluster, name] = id.split("/") as [string, string];
  return { id, cluster, name, keys };
}

/** The node of another cluster hosting the most of N's dependencies is drained: every pod on it becomes DRAINING. */
export function nodeDrain(snapshot: Snapshot, node: LocalNode): Scenario {
  const { id: drained, cluster, name, keys } = busiestRemoteNode(snapshot, node);
  const changed = new Map<ServiceKey, ServiceEndpoint[]>();
  for (const [key, endpoints] of snapshot.services) {
    if (!endpoints.some((e) => onNode(e, cluster, name))) continue;
    changed.set(
      key,
      endpoints.map((e) => (onNode(e, cluster, name) ? { ...e, health: "DRAINING" as const } : e)),
    );
  }
  return {
    name: "node drain",
    event: `${drained}: ${[...changed.values()].reduce((n, list) => n + list.filter((e) => onNode(e, cluster, name)).length, 0)} pods → DRAINING`,
    expected: `${keys.size} assignments change`,
    nodeChanges: false,
    apply: () => withServices(snapshot, changed),
  };
}

/**
 * The node of another cluster hosting the most of N's dependencies turns not ready (its node
 * status, not its pods' records): its waypoint endpoint leaves each of those assignments.
 */
export function nodeNotReady(snapshot: Snapshot, node: LocalNode): Scenario {
  const { id, cluster, name, keys } = busiestRemoteNode(snapshot, node);
  const nodes = snapshot.nodes.map((status) => (status.cluster === cluster && status.name === name ? { ...status, ready: false } : status));
  return {
    name: "node not ready",
    event: `${id}: ready → not ready (node status)`,
    expected: `${keys.size} assignments change`,
    nodeChanges: false,
    nodes,
    apply: () => ({ ...snapshot, nodes }),
  };
}

/** Hands out fresh pod IPs high in a node's /24, above what the generator uses. */
function freshPodIps(first: number): (status: NodeStatus) => string {
  const used = new Map<string, number>();
  return (status) => {
    const id = `${status.cluster}/${status.name}`;
    const next = used.get(id) ?? first;
    used.set(id, next + 1);
    return podIp(Number(status.name.replace(/^node-/, "")), next);
  };
}

/** A new pod built from `template`, placed on `status` with a new IP, name and netns. */
function respawn(template: ServiceEndpoint, status: NodeStatus, ip: string, hash: string, ordinal: number): ServiceEndpoint {
  const service = template.metadata.app ?? "pod";
  const container = `${hash}${ordinal.toString(16).padStart(4, "0")}`;
  return {
    ...template,
    ip,
    clusterName: status.cluster,
    locality: { region: status.region, zone: status.zone },
    metadata: { ...template.metadata, "pod-template-hash": hash },
    containerMetadata: { containerId: container, networkNamespace: `/var/run/netns/cni-${container}` },
    kubernetesMetadata: { ...template.kubernetesMetadata, podName: `${service}-${hash}-${ordinal.toString(36)}`, nodeName: status.name, nodeIp: status.ip },
    health: "HEALTHY",
  };
}

/** Random nodes of `cluster` other than N, from a seeded stream. */
function nodePicker(snapshot: Snapshot, node: LocalNode, seed: number): (cluster: string) => NodeStatus {
  const random = mulberry32(seed);
  const byCluster = new Map<string, NodeStatus[]>();
  for (const status of snapshot.nodes) {
    if (status.cluster === node.clusterName && status.name === node.nodeName) continue;
    byCluster.set(status.cluster, [...(byCluster.get(status.cluster) ?? []), status]);
  }
  return (cluster) => {
    const candidates = byCluster.get(cluster) ?? [];
    return candidates[Math.floor(random() * candidates.length)]!;
  };
}

/** A median dependency rolls out: every pod is replaced by a new one (new IP, name, netns, node). */
export function rollout(snapshot: Snapshot, node: LocalNode): Scenario {
  const key = medianDependency(snapshot, node, 1);
  const pick = nodePicker(snapshot, node, 7);
  const ipOn = freshPodIps(150);
  const endpoints = snapshot.services.get(key)!;
  const replaced = endpoints.map((e, i) => {
    const status = pick(e.clusterName);
    return respawn(e, status, ipOn(status), "5eed0001", i);
  });
  return {
    name: "rollout",
    event: `${key}: all ${endpoints.length} pods replaced`,
    expected: "exactly 1 assignment changes",
    nodeChanges: false,
    apply: () => withServices(snapshot, new Map([[key, replaced]])),
  };
}

/** A new service (20 pods, none on N) appears and one of N's hosted services starts calling it. */
export function addService(snapshot: Snapshot, node: LocalNode): Scenario {
  const caller = [...hostedServices(node)].sort()[0];
  const template = caller && snapshot.services.get(caller)?.[0];
  if (!caller || !template) throw new Error(`node ${node.nodeName} hosts no service`);
  const namespace = caller.split("/")[0]!;
  const key = `${namespace}/svc-added` as ServiceKey;
  const clusters = [...new Set(snapshot.nodes.map((n) => n.cluster))].sort();
  const pick = nodePicker(snapshot, node, 11);
  const ipOn = freshPodIps(200);
  const added = Array.from({ length: 20 }, (_, i) => {
    const status = pick(clusters[i % clusters.length]!);
    const pod = respawn(template, status, ipOn(status), "add0000a", i);
    return {
      ...pod,
      metadata: { ...pod.metadata, app: "svc-added" },
      kubernetesMetadata: { ...pod.kubernetesMetadata, podName: `svc-added-add0000a-${i.toString(36)}` },
    };
  });
  const dependencies = new Map(snapshot.dependencies ?? []);
  dependencies.set(key, []);
  dependencies.set(caller, [...(dependencies.get(caller) ?? []), key].sort());
  return {
    name: "add service",
    event: `${key} (20 pods) added; ${caller} (hosted on N) now calls it`,
    expected: "CDS +1, EDS +1, nothing else",
    nodeChanges: true,
    apply: () => ({ ...withServices(snapshot, new Map([[key, added]])), dependencies }),
  };
}
