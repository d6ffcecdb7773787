/**
 * A snapshot's nodes compiled with the same options — every node up front (`compileMesh`, for the
 * mesh check) or each on first lookup (`lazyMesh`, for one path) — plus the lookups a path replay
 * needs: which node's waypoint listens on an address, and which registry pod an address reaches.
 */
import type { Cluster } from "../../gen/envoy/config/cluster/v3/cluster.js";
import type { ClusterLoadAssignment } from "../../gen/envoy/config/endpoint/v3/endpoint.js";
import type { Listener } from "../../gen/envoy/config/listener/v3/listener.js";
import type { TcpProxy } from "../../gen/envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy.js";
import { type CompileResult, compileNode, compileNodeSide, releaseRecompileReuse } from "../compile/compile-node.js";
import { hostPort } from "../envoy/core.js";
import { EXTENSION } from "../envoy/types.js";
import { isCompileInvariantError, isInputError } from "../errors.js";
import type { LocalNode } from "../model/node.js";
import { type Options, type OptionsInput, parseOptions } from "../model/options.js";
import type { ServiceEndpoint } from "../model/registry.js";
import type { Snapshot } from "../model/snapshot.js";
import { type ServiceKey, TUNNEL_LISTENER_NAME } from "../naming.js";
import { asIndex, localNodeIn, nodeKey, type SnapshotIndex } from "../plan/snapshot-index.js";
import { NONE } from "../util/arrays.js";
import { getOrInsert } from "../util/maps.js";
import { compareText, indexOfSortedText } from "../util/order.js";
import { filterConfig } from "./entry.js";

export interface CompiledNode {
  readonly local: LocalNode;
  /** Mutable on purpose: tests seed mistakes into compiled output to prove the check catches them. */
  readonly result: CompileResult;
}

export interface RegistryPod {
  readonly service: ServiceKey;
  readonly endpoint: ServiceEndpoint;
}

/** What a path replay reads: the index, the options, and a node's compiled output by key. */
export interface MeshView {
  readonly index: SnapshotIndex;
  readonly options: Options;
  /** The node `"<cluster>/<node>"` compiled; undefined when it is unknown or could not be compiled. */
  node(key: string): CompiledNode | undefined;
  /**
   * At least the node's receiving side (tunnel, ingress and inbound listeners and clusters): all a
   * path arriving at the node reads. Undefined as for `node`.
   */
  receiving(key: string): CompiledNode | undefined;
}

export interface CompiledMesh extends MeshView {
  /** By `"<cluster>/<node>"`, sorted. */
  readonly nodes: ReadonlyMap<string, CompiledNode>;
  /** Nodes the snapshot's input makes uncompilable, with the reason: the mesh check fails. */
  readonly skipped: ReadonlyMap<string, string>;
  /**
   * Nodes named only by registry records that give no address (the registry does not know the
   * node's IP yet): nothing to compile until it does. Every other node leaves their pods out
   * (`NO_NODE_IP`), so nothing dials them; sorted.
   */
  readonly unaddressed: readonly string[];
  /** Nodes whose compile broke an output invariant (a bug): the mesh check fails. */
  readonly failed: ReadonlyMap<string, string>;
}

/** Called after each node is compiled: nodes compiled so far, nodes in the mesh. For progress lines. */
export type CompileProgress = (done: number, total: number) => void;

/** A node compiled, or why not: its input (`skipped`) or an output invariant (`failed`). */
export type Outcome = { readonly kind: "compiled"; readonly node: CompiledNode } | { readonly kind: "skipped" | "failed"; readonly reason: string };

function compileOne(index: SnapshotIndex, options: Options, cluster: string, name: string, compile = compileNode): Outcome {
  return outcomeOf(() => {
    const local = localNodeIn(index, cluster, name);
    return { local, result: compile(index, local, options) };
  });
}

/** What `compile` gives, its input and invariant errors caught as the mesh check reports them. */
export function outcomeOf(compile: () => CompiledNode): Outcome {
  try {
    return { kind: "compiled", node: compile() };
  } catch (error) {
    if (isInputError(error)) return { kind: "skipped", reason: error.issues.map((issue) => issue.message).join("; ") };
    if (isCompileInvariantError(error)) return { kind: "failed", reason: error.message };
    throw error;
  }
}

/** Compiles every node the snapshot lists or any registry record names. */
export function compileMesh(snapshot: Snapshot | SnapshotIndex, optionsInput: Options | OptionsInput = {}, onProgress?: CompileProgress): CompiledMesh {
  const index = asIndex(snapshot);
  const options = parseOptions(optionsInput);
  const nodes = new Map<string, CompiledNode>();
  const skipped = new Map<string, string>();
  const failed = new Map<string, string>();
  const unaddressed: string[] = [];
  const all = meshNodes(index);
  for (const [done, [key, cluster, name]] of all.entries()) {
    onProgress?.(done + 1, all.length);
    if (!index.nodeAddresses.has(key)) {
      unaddressed.push(key);
      continue;
    }
    const outcome = compileOne(index, options, cluster, name);
    if (outcome.kind === "compiled") nodes.set(key, outcome.node);
    else (outcome.kind === "skipped" ? skipped : failed).set(key, outcome.reason);
  }
  const node = (key: string) => nodes.get(key);
  return { index, options, nodes, skipped, failed, unaddressed, node, receiving: node };
}

/**
 * The mesh's nodes, each compiled on its first lookup (and remembered, compiled or not): a path
 * replay pays only for the nodes it visits. A node looked up only as a receiver (a waypoint, a
 * destination pod's node) gets only its receiving side compiled (`compileNodeSide`).
 */
export function lazyMesh(snapshot: Snapshot | SnapshotIndex, optionsInput: Options | OptionsInput = {}, onProgress?: CompileProgress): MeshView {
  const index = asIndex(snapshot);
  const options = parseOptions(optionsInput);
  const names = meshNodeNames(index);
  const full = new Map<string, Outcome>();
  const sides = new Map<string, Outcome>();
  const lookup = (outcomes: Map<string, Outcome>, key: string, compile: typeof compileNode): CompiledNode | undefined => {
    const name = names.get(key);
    if (!name) return undefined;
    const outcome = getOrInsert(outcomes, key, () => {
      const compiled = compileOne(index, options, ...name, compile);
      onProgress?.(full.size + sides.size + 1, names.size);
      return compiled;
    });
    return outcome.kind === "compiled" ? outcome.node : undefined;
  };
  const node = (key: string) => lookup(full, key, compileNode);
  return { index, options, node, receiving: (key) => (full.has(key) ? node(key) : lookup(sides, key, compileNodeSide)) };
}

/**
 * The mesh as a node-by-node replay sees it: the node whose paths are replayed, compiled in full;
 * of every node, what a path arriving there reads (`receivingPart`), compiled when first reached
 * and kept. Nothing a recompile would reuse is kept for a node once it is compiled: the rest of
 * its node side (its pods' egress and capture listeners, application and probe clusters) is most
 * of what it would hold.
 */
export class NodeByNodeMesh implements MeshView {
  readonly #names: ReadonlyMap<string, readonly [cluster: string, name: string]>;
  readonly #locals = new Map<string, LocalNode>();
  readonly #sides = new Map<string, Outcome>();
  #current: { readonly key: string; readonly node: CompiledNode } | undefined;

  constructor(
    readonly index: SnapshotIndex,
    readonly options: Options,
  ) {
    this.#names = meshNodeNames(index);
  }

  node(key: string): CompiledNode | undefined {
    return this.#current?.key === key ? this.#current.node : undefined;
  }

  receiving(key: string): CompiledNode | undefined {
    if (!this.#names.has(key)) return undefined;
    const outcome = getOrInsert(this.#sides, key, () =>
      outcomeOf(() => {
        const local = this.#local(key);
        const result = receivingPart(compileNodeSide(this.index, local, this.options), this.options);
        if (this.#current?.key !== key) releaseRecompileReuse(this.index, local, this.options);
        return { local, result };
      }),
    );
    return outcome.kind === "compiled" ? outcome.node : undefined;
  }

  /** The node compiled in full: `node(key)` until `release(key)`. */
  compileInFull(key: string): Outcome {
    const outcome = outcomeOf(() => {
      const local = this.#local(key);
      return { local, result: compileNode(this.index, local, this.options) };
    });
    if (outcome.kind === "compiled") this.#current = { key, node: outcome.node };
    return outcome;
  }

  /** Lets go of the node's full compile: once its paths are done, all but its receiving part is garbage. */
  release(key: string): void {
    if (this.#current?.key !== key) return;
    releaseRecompileReuse(this.index, this.#current.node.local, this.options);
    this.#current = undefined;
  }

  #local(key: string): LocalNode {
    const known = this.#locals.get(key);
    if (known) return known;
    const [cluster, name] = this.#names.get(key)!;
    const local = localNodeIn(this.index, cluster, name);
    this.#locals.set(key, local);
    return local;
  }
}

/**
 * What a path arriving at a node reads of its output: its tunnel listener, the clusters the
 * tunnel's chains forward to and their assignments, and its listeners on the inbound port, each
 * list in output order (so every lookup of `NodeResources` a receiver makes answers as over the
 * whole output). No diagnostics: the check reads none.
 */
export function receivingPart(result: CompileResult, options: Options): CompileResult {
  const tunnel = result.listeners.find((listener) => listener.name === TUNNEL_LISTENER_NAME);
  const forwardedTo = new Set((tunnel?.filter_chains ?? []).map((chain) => filterConfig<TcpProxy>(chain, EXTENSION.tcpProxy)?.cluster));
  const clusters = result.clusters.filter((cluster) => forwardedTo.has(cluster.name));
  const assignments = new Set(clusters.map((cluster) => cluster.eds_cluster_config?.service_name || cluster.name || ""));
  return {
    node: result.node,
    options: result.options,
    clusters,
    endpoints: result.endpoints.filter((assignment) => assignments.has(assignment.cluster_name ?? "")),
    listeners: result.listeners.filter((listener) => listener === tunnel || listener.address?.socket_address?.port_value === options.inboundPort),
    diagnostics: NONE,
  };
}

/** Every node's key, cluster and name, sorted by key. */
export function meshNodes(index: SnapshotIndex): [string, string, string][] {
  const keys = new Map<string, [string, string, string]>();
  for (const node of index.snapshot.nodes) keys.set(nodeKey(node.cluster, node.name), [nodeKey(node.cluster, node.name), node.cluster, node.name]);
  for (const records of index.hostedBy.values()) {
    const { clusterName, kubernetesMetadata } = records[0]!.endpoint;
    const key = nodeKey(clusterName, kubernetesMetadata.nodeName);
    keys.set(key, [key, clusterName, kubernetesMetadata.nodeName]);
  }
  return [...keys.values()].sort(([a], [b]) => compareText(a, b));
}

/** Every node's cluster and name by its key, in key order. */
function meshNodeNames(index: SnapshotIndex): Map<string, readonly [cluster: string, name: string]> {
  return new Map(meshNodes(index).map(([key, cluster, name]) => [key, [cluster, name] as const]));
}

/** Which node's `ew_tunnel` listens on an `"ip:port"` address. */
export type TunnelLookup = Pick<ReadonlyMap<string, string>, "get" | "has">;

/** Where each compiled node's `ew_tunnel` listens, `"ip:port"` → node key. */
export function tunnelAddresses(mesh: CompiledMesh): Map<string, string> {
  const addresses = new Map<string, string>();
  for (const [key, { result }] of mesh.nodes) {
    const address = tunnelAddressOf(result);
    if (address) addresses.set(address, key);
  }
  return addresses;
}

function tunnelAddressOf(result: CompileResult): string | undefined {
  const socket = result.listeners.find((l) => l.name === TUNNEL_LISTENER_NAME)?.address?.socket_address;
  return socket ? hostPort(socket.address ?? "", socket.port_value ?? 0) : undefined;
}

/**
 * The same answers as `tunnelAddresses`, without compiling every node: a node's tunnel listener
 * binds its one address (`index.nodeAddresses`) and the tunnel port, so only the nodes at an
 * address asked about are compiled, to see whether they have a tunnel listener there.
 */
export function lazyTunnels(mesh: MeshView): TunnelLookup {
  const candidates = new Map<string, string[]>();
  for (const [key, ip] of mesh.index.nodeAddresses) getOrInsert(candidates, hostPort(ip, mesh.options.tunnelPort), () => []).push(key);
  const answers = new Map<string, string | undefined>();
  const resolve = (address: string): string | undefined => {
    // The last in key order wins, as in tunnelAddresses.
    const keys = [...(candidates.get(address) ?? [])].sort(compareText).reverse();
    return keys.find((key) => {
      const node = mesh.receiving(key);
      return node !== undefined && tunnelAddressOf(node.result) === address;
    });
  };
  const get = (address: string): string | undefined => {
    if (!answers.has(address)) answers.set(address, resolve(address));
    return answers.get(address);
  };
  return { get, has: (address) => get(address) !== undefined };
}

/** Registry pods at an IP, by cluster (pod CIDRs may overlap across clusters). */
export type PodLookup = (ip: string) => ReadonlyMap<string, readonly RegistryPod[]>;

/**
 * Registry pods at an IP, by cluster, each IP's answer built when first asked. The first ask
 * notes where every IP's records are, in one pass: a path asks about every endpoint of its
 * cluster, and a pass over all records per IP took W1's explain ~100 ms; the mesh check, which
 * asks about nearly every IP, gets each answer built once as well.
 */
export function podsByAddress(index: SnapshotIndex): PodLookup {
  const answers = new Map<string, ReadonlyMap<string, readonly RegistryPod[]>>();
  let records: RecordsByIp | undefined;
  return (ip) =>
    getOrInsert(answers, ip, () => {
      records ??= recordsByIp(index);
      return podsAt(records, ip);
    });
}

/** Every registry record in index order, with its service, the first position of each IP, and per position the next one of its IP (-1: none). */
interface RecordsByIp {
  readonly services: readonly ServiceKey[];
  readonly endpoints: readonly ServiceEndpoint[];
  readonly first: ReadonlyMap<string, number>;
  readonly next: Int32Array;
}

function recordsByIp(index: SnapshotIndex): RecordsByIp {
  const services: ServiceKey[] = [];
  const endpoints: ServiceEndpoint[] = [];
  for (const service of index.services.values()) {
    for (const endpoint of service.endpoints) {
      services.push(service.key);
      endpoints.push(endpoint);
    }
  }
  const first = new Map<string, number>();
  const next = new Int32Array(endpoints.length).fill(-1);
  // From the end, so that each IP's chain runs in index order.
  for (let i = endpoints.length - 1; i >= 0; i--) {
    const ip = endpoints[i]!.ip;
    const after = first.get(ip);
    if (after !== undefined) next[i] = after;
    first.set(ip, i);
  }
  return { services, endpoints, first, next };
}

function podsAt({ services, endpoints, first, next }: RecordsByIp, ip: string): ReadonlyMap<string, readonly RegistryPod[]> {
  const byCluster = new Map<string, RegistryPod[]>();
  for (let i = first.get(ip) ?? -1; i >= 0; i = next[i]!) {
    getOrInsert(byCluster, endpoints[i]!.clusterName, () => []).push({ service: services[i]!, endpoint: endpoints[i]! });
  }
  return byCluster;
}

/** A compiled node's resources by name and address, for replaying many paths over them. */
export interface NodeResources {
  /** Every cluster of that name, in output order. */
  clusters(name: string): readonly Cluster[];
  /** The first cluster of that name. */
  cluster(name: string): Cluster | undefined;
  /** The first assignment for that cluster name. */
  assignment(clusterName: string): ClusterLoadAssignment | undefined;
  /** The first listener bound in a netns on a port. */
  listenerIn(netns: string, port: number): Listener | undefined;
  /** The first listener named `ew_tunnel`. */
  readonly tunnel: Listener | undefined;
}

/**
 * Each node's `NodeResources`, built on first use. One per replay: tests change compiled output
 * between two checks of the same mesh.
 */
export function resourceLookups(): (node: CompiledNode) => NodeResources {
  const built = new WeakMap<CompileResult, NodeResources>();
  return (node) => getOrInsert(built, node.result, () => indexResources(node.result));
}

function indexResources(result: CompileResult): NodeResources {
  const clusters = byName(result.clusters, (cluster) => cluster.name ?? "");
  const assignments = byName(result.endpoints, (assignment) => assignment.cluster_name ?? "");
  // By netns, then port: a lookup builds no key.
  const bound = new Map<string, Map<number | undefined, Listener>>();
  for (const listener of result.listeners) {
    const socket = listener.address?.socket_address;
    if (typeof socket?.network_namespace_filepath !== "string") continue;
    const ports = getOrInsert(bound, socket.network_namespace_filepath, () => new Map());
    if (!ports.has(socket.port_value)) ports.set(socket.port_value, listener);
  }
  return {
    clusters: clusters.all,
    cluster: clusters.first,
    assignment: assignments.first,
    listenerIn: (netns, port) => bound.get(netns)?.get(port),
    tunnel: result.listeners.find((l) => l.name === TUNNEL_LISTENER_NAME),
  };
}

/**
 * Every resource of a name, in output order, or the first of them. A compiled list is sorted by
 * name, so it is searched by halves, over a copy of its names: each step then reads one slot of a
 * contiguous array and a name string (shared by the nodes that share the resource), not a
 * resource object of its own (a W10k check ~0.9 of its time). A map by name of every node's
 * clusters and assignments was a third of what a W1 check's replay held; the names take 8 bytes
 * each. Output changed out of order (tests seed mistakes) gets a map.
 */
function byName<T>(list: readonly T[], nameOf: (resource: T) => string): { all(name: string): readonly T[]; first(name: string): T | undefined } {
  const names = list.map(nameOf);
  if (!isSorted(names)) {
    const named = new Map<string, T[]>();
    for (const [i, resource] of list.entries()) getOrInsert(named, names[i]!, () => []).push(resource);
    return { all: (name) => named.get(name) ?? NONE, first: (name) => named.get(name)?.[0] };
  }
  const firstAt = (name: string) => indexOfSortedText(names, name);
  return {
    all: (name) => {
      const first = firstAt(name);
      if (first < 0) return NONE;
      let end = first + 1;
      while (end < names.length && names[end] === name) end++;
      return list.slice(first, end);
    },
    first: (name) => list[firstAt(name)],
  };
}

function isSorted(names: readonly string[]): boolean {
  for (let i = 1; i < names.length; i++) if (names[i - 1]! > names[i]!) return false;
  return true;
}
