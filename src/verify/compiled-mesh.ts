/**
 * Every node of a snapshot compiled with the same options, plus the lookups a path replay needs:
 * which node's waypoint listens on an address, and which registry pod an address reaches.
 */
import type { Listener } from "../../gen/envoy/config/listener/v3/listener.js";
import { type CompileResult, compileNode } from "../compile/compile-node.js";
import { hostPort } from "../envoy/core.js";
import { isCompileInvariantError, isInputError } from "../errors.js";
import { type LocalNode, localNodeFrom } from "../model/node.js";
import { type Options, type OptionsInput, parseOptions } from "../model/options.js";
import type { ServiceEndpoint } from "../model/registry.js";
import type { Snapshot } from "../model/snapshot.js";
import { type ServiceKey, TUNNEL_LISTENER_NAME } from "../naming.js";
import { asIndex, nodeKey, type SnapshotIndex } from "../plan/snapshot-index.js";
import { compositeKey } from "../util/keys.js";
import { compareText } from "../util/order.js";

export interface CompiledNode {
  readonly local: LocalNode;
  /** Mutable on purpose: tests seed mistakes into compiled output to prove the check catches them. */
  readonly result: CompileResult;
}

export interface RegistryPod {
  readonly service: ServiceKey;
  readonly endpoint: ServiceEndpoint;
}

export interface CompiledMesh {
  readonly index: SnapshotIndex;
  readonly options: Options;
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

/** Called after each node is compiled; for progress lines on big meshes. */
export type CompileProgress = (done: number, total: number) => void;

/** Compiles every node the snapshot lists or any registry record names. */
export function compileMesh(snapshot: Snapshot | SnapshotIndex, optionsInput: Options | OptionsInput = {}, onProgress?: CompileProgress): CompiledMesh {
  const index = asIndex(snapshot);
  const options = parseOptions(optionsInput);
  const nodes = new Map<string, CompiledNode>();
  const skipped = new Map<string, string>();
  const failed = new Map<string, string>();
  const unaddressed: string[] = [];
  const all = meshNodes(index);
  for (const [done, [cluster, name]] of all.entries()) {
    onProgress?.(done, all.length);
    const key = nodeKey(cluster, name);
    if (!index.nodeAddresses.has(key)) {
      unaddressed.push(key);
      continue;
    }
    try {
      const local = localNodeFrom(index.snapshot, cluster, name);
      nodes.set(key, { local, result: compileNode(index, local, options) });
    } catch (error) {
      if (isInputError(error)) skipped.set(key, error.issues.map((issue) => issue.message).join("; "));
      else if (isCompileInvariantError(error)) failed.set(key, error.message);
      else throw error;
    }
  }
  return { index, options, nodes, skipped, failed, unaddressed };
}

function meshNodes(index: SnapshotIndex): [string, string][] {
  const keys = new Map<string, [string, string]>();
  for (const node of index.snapshot.nodes) keys.set(nodeKey(node.cluster, node.name), [node.cluster, node.name]);
  for (const records of index.hostedBy.values()) {
    const { clusterName, kubernetesMetadata } = records[0]!.endpoint;
    keys.set(nodeKey(clusterName, kubernetesMetadata.nodeName), [clusterName, kubernetesMetadata.nodeName]);
  }
  return [...keys].sort(([a], [b]) => compareText(a, b)).map(([, pair]) => pair);
}

/** Where each node's `ew_tunnel` listens, `"ip:port"` → node key. */
export function tunnelAddresses(mesh: CompiledMesh): Map<string, string> {
  const addresses = new Map<string, string>();
  for (const [key, { result }] of mesh.nodes) {
    const tunnel = result.listeners.find((l) => l.name === TUNNEL_LISTENER_NAME);
    const socket = tunnel?.address?.socket_address;
    if (socket) addresses.set(hostPort(socket.address ?? "", socket.port_value ?? 0), key);
  }
  return addresses;
}

/** The key of `podsByAddress`: a cluster and an address in it. */
export function podAddressKey(cluster: string, ip: string): string {
  return compositeKey(cluster, ip);
}

/** Registry pods by cluster and address (`podAddressKey`). */
export function podsByAddress(mesh: CompiledMesh): Map<string, RegistryPod[]> {
  const pods = new Map<string, RegistryPod[]>();
  for (const service of mesh.index.services.values()) {
    for (const endpoint of service.endpoints) {
      const key = podAddressKey(endpoint.clusterName, endpoint.ip);
      pods.set(key, [...(pods.get(key) ?? []), { service: service.key, endpoint }]);
    }
  }
  return pods;
}

/** The inbound listener bound in a netns on a node, if any. */
export function inboundListenerIn(node: CompiledNode, netns: string, port: number): Listener | undefined {
  return node.result.listeners.find((l) => l.address?.socket_address?.network_namespace_filepath === netns && l.address.socket_address.port_value === port);
}
