/**
 * Seeded mesh generator for the benchmark. The same parameters (seed included) always give a
 * byte-identical mesh document; `buildWorkload` parses it with `parseSnapshot`, as a control
 * plane would, and times each step.
 *
 * Shape (W1): clusters of one region and three zones each; pods spread at random over a cluster's
 * nodes, a pod sometimes landing next to a sibling of its service (so ~50 pods are ~40 services);
 * every cluster reuses the same pod CIDR (Flannel), nodes have routable per-cluster IPs; each pod
 * has its own netns, user metadata and a small chance of being unhealthy or draining; each service
 * calls 10 others, so a node's dependency set is the union over its pods' services.
 */

import type { ServiceEndpointInput } from "../src/model/registry.js";
import { type MeshFileInput, parseSnapshot, type Snapshot } from "../src/model/snapshot.js";
import { formatMs } from "./measure.js";

export interface WorkloadParams {
  readonly name: string;
  readonly seed: number;
  readonly clusters: number;
  readonly zonesPerCluster: number;
  /** Total over every cluster. */
  readonly nodes: number;
  readonly namespaces: number;
  readonly services: number;
  /** Total registry records. */
  readonly endpoints: number;
  /** Zipf exponent of service sizes; 0 gives every service the same size. */
  readonly zipf: number;
  readonly dependenciesPerService: number;
  /** Chance that a pod lands on the node of its service's previous pod in the same cluster. */
  readonly colocation: number;
  readonly unhealthy: number;
  readonly draining: number;
  readonly port: number;
}

const W1_SHAPE = {
  seed: 1,
  clusters: 3,
  zonesPerCluster: 3,
  zipf: 0,
  dependenciesPerService: 10,
  colocation: 0.2,
  unhealthy: 0.02,
  draining: 0.01,
  port: 8080,
} as const;

/** W1 scaled to `endpoints` (20 per service, 50 services per namespace, `podsPerNode` pods per node). */
function scaled(name: string, endpoints: number, extra: Partial<WorkloadParams> = {}, podsPerNode = 50): WorkloadParams {
  const services = endpoints / 20;
  return { ...W1_SHAPE, name, endpoints, services, nodes: endpoints / podsPerNode, namespaces: Math.max(1, Math.round(services / 50)), ...extra };
}

export const WORKLOADS = {
  W1: scaled("W1", 100_000),
  W2: scaled("W2", 100_000, { name: "W2", zipf: 0.9 }),
  W4_50K: scaled("W4-50k", 50_000),
  W4_200K: scaled("W4-200k", 200_000),
  /** Figure 10: the mesh check's size (10,000 endpoints, 200 nodes). */
  W10K: scaled("W10k", 10_000, {}, 50),
} as const satisfies Record<string, WorkloadParams>;

/** Tiny versions for `--smoke` (10 pods per node): same code paths, seconds in all. */
export const SMOKE_WORKLOADS: Record<keyof typeof WORKLOADS, WorkloadParams> = {
  W1: scaled("W1-smoke", 600, {}, 10),
  W2: scaled("W2-smoke", 600, { name: "W2-smoke", zipf: 0.9 }, 10),
  W4_50K: scaled("W4-smoke-300", 300, {}, 10),
  W4_200K: scaled("W4-smoke-1200", 1_200, {}, 10),
  W10K: scaled("W10k-smoke", 300, {}, 10),
};

export const MESH_DOMAIN = "mesh.aether";
export const TRUST_DOMAIN = "aether.internal";

// ---- PRNG -----------------------------------------------------------------------------------

/** mulberry32: a tiny, fast, well-mixed 32-bit PRNG; returns floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Random = () => number;

function randomInt(random: Random, below: number): number {
  return Math.floor(random() * below);
}

function hex(random: Random, digits: number): string {
  let out = "";
  while (out.length < digits) out += randomInt(random, 0x10000).toString(16).padStart(4, "0");
  return out.slice(0, digits);
}

function shuffled<T>(random: Random, items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = randomInt(random, i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

// ---- sizes ----------------------------------------------------------------------------------

/** Service sizes summing to `total`, each ≥ 1: equal, or Zipf(`exponent`) by a shuffled rank. */
export function serviceSizes(random: Random, services: number, total: number, exponent: number): number[] {
  const weights = Array.from({ length: services }, (_, rank) => 1 / (rank + 1) ** exponent);
  const sum = weights.reduce((a, b) => a + b, 0);
  const spare = total - services;
  const exact = weights.map((w) => (spare * w) / sum);
  const sizes = exact.map((x) => 1 + Math.floor(x));
  // Largest remainder: hand the leftover endpoints to the largest fractional parts.
  const leftover = total - sizes.reduce((a, b) => a + b, 0);
  const byRemainder = exact.map((x, i) => ({ i, r: x - Math.floor(x) })).sort((a, b) => b.r - a.r || a.i - b.i);
  for (let k = 0; k < leftover; k++) sizes[byRemainder[k]!.i]! += 1;
  return shuffled(random, sizes);
}

// ---- topology -------------------------------------------------------------------------------

const REGIONS = ["us-east-1", "eu-west-1", "ap-south-1", "sa-east-1", "ca-central-1"];

export interface GeneratedNode {
  readonly cluster: string;
  readonly name: string;
  readonly ip: string;
  readonly region: string;
  readonly zone: string;
  /** Position in its cluster: picks its pod subnet. */
  readonly slot: number;
}

export function clusterName(c: number): string {
  return `cluster-${c}`;
}

function regionOf(c: number): string {
  return REGIONS[c % REGIONS.length]! + (c >= REGIONS.length ? `-${c}` : "");
}

/** Nodes split evenly over clusters, zones round-robin; node names repeat across clusters. */
function generateNodes(params: WorkloadParams): GeneratedNode[][] {
  const perCluster = Math.ceil(params.nodes / params.clusters);
  return Array.from({ length: params.clusters }, (_, c) =>
    Array.from({ length: perCluster }, (_, slot) => {
      const region = regionOf(c);
      return {
        cluster: clusterName(c),
        name: `node-${slot}`,
        ip: `172.${16 + c}.${slot >> 8}.${slot & 255}`,
        region,
        zone: `${region}${String.fromCharCode(97 + (slot % params.zonesPerCluster))}`,
        slot,
      };
    }),
  );
}

/**
 * Every cluster uses the pod CIDR 10.128.0.0/9 with a /24 per node (so pod IPs repeat across
 * clusters); `index` is the pod's position on its node.
 */
export function podIp(slot: number, index: number): string {
  if (index > 252) throw new Error(`more than 253 pods on one node (slot ${slot})`);
  return `10.${128 + (slot >> 8)}.${slot & 255}.${index + 2}`;
}

export function serviceName(i: number): string {
  return `svc-${String(i).padStart(5, "0")}`;
}

export function namespaceName(i: number): string {
  return `ns-${String(i).padStart(3, "0")}`;
}

// ---- the document ---------------------------------------------------------------------------

interface PodPlacement {
  readonly node: GeneratedNode;
  readonly ip: string;
}

/** Hands out pod IPs per node, in placement order. */
function podAllocator(): (node: GeneratedNode) => string {
  const used = new Map<GeneratedNode, number>();
  return (node) => {
    const index = used.get(node) ?? 0;
    used.set(node, index + 1);
    return podIp(node.slot, index);
  };
}

function placePods(random: Random, params: WorkloadParams, nodes: GeneratedNode[][], size: number, allocate: (n: GeneratedNode) => string): PodPlacement[] {
  const offset = randomInt(random, params.clusters);
  const previous = new Map<number, GeneratedNode>();
  const pods: PodPlacement[] = [];
  for (let i = 0; i < size; i++) {
    const c = (offset + i) % params.clusters;
    const clusterNodes = nodes[c]!;
    const sibling = previous.get(c);
    const node = sibling && random() < params.colocation ? sibling : clusterNodes[randomInt(random, clusterNodes.length)]!;
    previous.set(c, node);
    pods.push({ node, ip: allocate(node) });
  }
  return pods;
}

function health(random: Random, params: WorkloadParams): "HEALTHY" | "UNHEALTHY" | "DRAINING" {
  const r = random();
  if (r < params.unhealthy) return "UNHEALTHY";
  if (r < params.unhealthy + params.draining) return "DRAINING";
  return "HEALTHY";
}

/** One registry record as the mesh file holds it (proto3 JSON form). */
export function endpointRecord(
  random: Random,
  params: WorkloadParams,
  where: { namespace: string; service: string; node: GeneratedNode; ip: string; templateHash: string; ordinal: number },
): ServiceEndpointInput {
  const container = hex(random, 12);
  return {
    ip: where.ip,
    clusterName: where.node.cluster,
    port: params.port,
    locality: { region: where.node.region, zone: where.node.zone },
    metadata: {
      app: where.service,
      version: random() < 0.1 ? "v2" : "v1",
      "pod-template-hash": where.templateHash,
    },
    containerMetadata: { containerId: container, networkNamespace: `/var/run/netns/cni-${container}` },
    kubernetesMetadata: {
      namespace: where.namespace,
      podName: `${where.service}-${where.templateHash}-${where.ordinal.toString(36)}`,
      nodeName: where.node.name,
      nodeIp: where.node.ip,
    },
    health: health(random, params),
  };
}

function dependencyLists(random: Random, keys: readonly string[], perService: number): Record<string, string[]> {
  const dependencies: Record<string, string[]> = {};
  keys.forEach((key, i) => {
    const chosen = new Set<number>();
    const wanted = Math.min(perService, keys.length - 1);
    while (chosen.size < wanted) {
      const j = randomInt(random, keys.length);
      if (j !== i) chosen.add(j);
    }
    dependencies[key] = [...chosen].sort((a, b) => a - b).map((j) => keys[j]!);
  });
  return dependencies;
}

/** The mesh document for `params`: a pure function of the parameters. */
export function generateDocument(params: WorkloadParams): MeshFileInput {
  const random = mulberry32(params.seed);
  const nodes = generateNodes(params);
  const sizes = serviceSizes(random, params.services, params.endpoints, params.zipf);
  const allocate = podAllocator();
  const services: Record<string, ServiceEndpointInput[]> = {};
  const keys: string[] = [];
  for (let i = 0; i < params.services; i++) {
    const namespace = namespaceName(i % params.namespaces);
    const service = serviceName(i);
    const key = `${namespace}/${service}`;
    const templateHash = hex(random, 8);
    keys.push(key);
    services[key] = placePods(random, params, nodes, sizes[i]!, allocate).map(({ node, ip }, ordinal) =>
      endpointRecord(random, params, { namespace, service, node, ip, templateHash, ordinal }),
    );
  }
  return {
    mesh: { meshDomain: MESH_DOMAIN, trust: { mode: "shared", trustDomain: TRUST_DOMAIN } },
    nodes: nodes.flat().map(({ cluster, name, ip, region, zone }) => ({ cluster, name, ip, region, zone, ready: true })),
    services,
    dependencies: dependencyLists(random, keys, params.dependenciesPerService),
  };
}

// ---- building a workload --------------------------------------------------------------------

export interface Workload {
  readonly params: WorkloadParams;
  readonly snapshot: Snapshot;
  /** Milliseconds per step. */
  readonly timings: { readonly generateMs: number; readonly parseMs: number };
}

/** Generates and parses a workload; the document is dropped once parsed. */
export function buildWorkload(params: WorkloadParams): Workload {
  const t0 = performance.now();
  const document = generateDocument(params);
  const t1 = performance.now();
  const snapshot = parseSnapshot(document);
  const t2 = performance.now();
  return { params, snapshot, timings: { generateMs: t1 - t0, parseMs: t2 - t1 } };
}

/** A setup row's text: the workload's size and what generating and parsing it took. */
export function describeWorkload(w: Workload): string {
  return (
    `${endpointCount(w.snapshot).toLocaleString("en-US")} endpoints, ${w.snapshot.services.size} services, ${w.snapshot.nodes.length} nodes: ` +
    `generated ${formatMs(w.timings.generateMs)}, parseSnapshot ${formatMs(w.timings.parseMs)}`
  );
}

/** Registry records in the snapshot. */
export function endpointCount(snapshot: Snapshot): number {
  let total = 0;
  for (const endpoints of snapshot.services.values()) total += endpoints.length;
  return total;
}
