/**
 * Network namespaces for the data-plane tests: a small Flannel-like world built from a mesh file,
 * where every address exists ONLY inside test-created namespaces (the host gets none).
 *
 *   fabric netns: bridge br0 — the routed underlay between nodes
 *   node netns (one per node): eth0 on br0 with the node IP /32, a route to every other node IP,
 *     a veth and a /32 route to each of its pods, a route to each same-cluster pod on another node
 *     via that node (pod IPs are not routable across clusters), ip_forward on
 *   pod netns (one per pod): eth0 with the pod IP /32, default route to its node
 * A node's Envoy runs inside its node netns (`exec({node})`) and binds pod listeners through their
 * `network_namespace_filepath` (the netns paths the mesh file gives, rewritten by `meshDocument`
 * to the test-created namespaces). Names: `axt-<owner pid>-<tag>-<n|p><index>` (see cleanup.ts).
 *
 * Fallback when namespaces cannot be created (or AETHER_NETNS=0): "loopback" mode. Every mesh
 * address is mapped to a distinct 127.x address (`meshDocument` rewrites the input; nothing outside
 * 127.0.0.0/8 is ever dialed), everything runs in the host netns, and `adaptBootstrap` binds each
 * pod listener to its pod's 127.x address instead of `0.0.0.0` in the pod netns — a test-only
 * rewrite of the compiled output, so test files say which mode they ran in.
 */
import { spawnSync } from "node:child_process";
import { randomInt } from "node:crypto";
import { atExit, deleteNetns, ledgerNetns, netnsExists } from "./cleanup.js";

export type NetworkMode = "netns" | "loopback";

export interface NodeSpec {
  /** `<cluster>/<node>` */
  readonly key: string;
  readonly cluster: string;
  readonly ip: string;
}

export interface PodSpec {
  /** `<cluster>/<namespace>/<pod>` */
  readonly key: string;
  readonly cluster: string;
  /** Its node's key. */
  readonly node: string;
  readonly ip: string;
}

export type Place = { readonly node: string } | { readonly pod: string } | "host";

export interface Topology {
  readonly mode: NetworkMode;
  readonly nodes: readonly NodeSpec[];
  readonly pods: readonly PodSpec[];
  /** The address a node or pod has in this topology (its own with netns, a 127.x stand-in without). */
  nodeIp(key: string): string;
  podIp(key: string): string;
  /** The address a pod's own servers bind: `0.0.0.0` inside its netns, its 127.x stand-in without. */
  podBindAddress(key: string): string;
  /** The path the mesh file gives as the pod's network namespace. */
  podNetnsPath(key: string): string;
  /** argv that runs `argv` on a node (in its netns), in a pod, or in the host. */
  command(place: Place, argv: readonly string[]): string[];
  /** The mesh document with this topology's netns paths (and, in loopback mode, addresses). A copy. */
  meshDocument(document: MeshDocument): MeshDocument;
  /** Loopback mode: pod listeners bound to the pod's 127.x address instead of its netns. A copy; identity with netns. */
  adaptBootstrap<T extends object>(bootstrap: T): T;
  /** Removes every namespace (killing what runs inside, by PID). Idempotent. */
  destroy(): void;
}

/** The parts of a mesh file (testdata/flannel/mesh.yaml) the topology reads and rewrites. */
export interface MeshDocument {
  nodes?: { cluster: string; name: string; ip?: string }[];
  services: Record<string, MeshRecord[]>;
  [key: string]: unknown;
}

export interface MeshRecord {
  ip: string;
  clusterName: string;
  port?: number;
  ports?: number[];
  containerMetadata?: { networkNamespace?: string };
  kubernetesMetadata?: { podName?: string; nodeName?: string; nodeIp?: string; namespace?: string };
}

let probed: boolean | undefined;

/** Whether this process can create network namespaces and veth pairs (root with CAP_SYS_ADMIN / CAP_NET_ADMIN). */
export function netnsAvailable(): boolean {
  if (probed !== undefined) return probed;
  if (process.env.AETHER_NETNS === "0") {
    probed = false;
    return probed;
  }
  const a = `axt-${process.pid}-probe-a`;
  const b = `axt-${process.pid}-probe-b`;
  ledgerNetns(a);
  ledgerNetns(b);
  try {
    probed =
      ip(["netns", "add", a], false) &&
      ip(["netns", "add", b], false) &&
      ip(["link", "add", "name", "eth0", "netns", a, "type", "veth", "peer", "name", "eth0", "netns", b], false);
  } finally {
    for (const name of [a, b]) if (netnsExists(name)) deleteNetns(name);
  }
  return probed;
}

/** Runs `ip <args>`; throws with its stderr unless `check` is false. */
function ip(args: readonly string[], check = true): boolean {
  const run = spawnSync("ip", args, { encoding: "utf8" });
  if (run.status === 0) return true;
  if (check) throw new Error(`ip ${args.join(" ")}: ${run.error?.message ?? run.stderr.trim()}`);
  return false;
}

/** `sysctl -w` inside a namespace. */
function sysctl(netns: string, setting: string): void {
  const run = spawnSync("ip", ["netns", "exec", netns, "sysctl", "-qw", setting], { encoding: "utf8" });
  if (run.status !== 0) throw new Error(`sysctl ${setting} in ${netns}: ${run.stderr.trim()}`);
}

/** Nodes and pods of a mesh document: the given nodes (`cluster/name`) and every pod they host. */
export function topologySpec(document: MeshDocument, nodeKeys: readonly string[]): { nodes: NodeSpec[]; pods: PodSpec[] } {
  const nodes = nodeKeys.map((key) => {
    const [cluster, name] = key.split("/") as [string, string];
    const listed = document.nodes?.find((n) => n.cluster === cluster && n.name === name)?.ip;
    const reported = Object.values(document.services)
      .flat()
      .find((r) => r.clusterName === cluster && r.kubernetesMetadata?.nodeName === name)?.kubernetesMetadata?.nodeIp;
    const address = listed ?? reported;
    if (!address) throw new Error(`node ${key} has no IP in the mesh document`);
    return { key, cluster, ip: address };
  });
  const pods: PodSpec[] = [];
  for (const [service, records] of Object.entries(document.services)) {
    for (const record of records) {
      const node = `${record.clusterName}/${record.kubernetesMetadata?.nodeName}`;
      if (!nodeKeys.includes(node)) continue;
      const namespace = record.kubernetesMetadata?.namespace || service.split("/")[0];
      pods.push({ key: `${record.clusterName}/${namespace}/${record.kubernetesMetadata?.podName}`, cluster: record.clusterName, node, ip: record.ip });
    }
  }
  return { nodes, pods };
}

export function createTopology(spec: { nodes: readonly NodeSpec[]; pods: readonly PodSpec[] }, tag: string, mode?: NetworkMode): Topology {
  const chosen = mode ?? (netnsAvailable() ? "netns" : "loopback");
  return chosen === "netns" ? netnsTopology(spec, tag) : loopbackTopology(spec);
}

function lookup<T extends { key: string }>(list: readonly T[], key: string, what: string): T {
  const found = list.find((item) => item.key === key);
  if (!found) throw new Error(`no ${what} ${key} in the topology`);
  return found;
}

function podKeyOf(record: MeshRecord, service: string): string {
  return `${record.clusterName}/${record.kubernetesMetadata?.namespace || service.split("/")[0]}/${record.kubernetesMetadata?.podName}`;
}

function netnsTopology(spec: { nodes: readonly NodeSpec[]; pods: readonly PodSpec[] }, tag: string): Topology {
  const prefix = `axt-${process.pid}-${tag}`;
  const fabric = `${prefix}-f`;
  const nodeNs = new Map(spec.nodes.map((node, i) => [node.key, `${prefix}-n${i}`]));
  const podNs = new Map(spec.pods.map((pod, i) => [pod.key, `${prefix}-p${i}`]));
  const all = [fabric, ...nodeNs.values(), ...podNs.values()];
  let destroyed = false;
  const destroy = () => {
    if (destroyed) return;
    destroyed = true;
    for (const name of [...all].reverse()) if (netnsExists(name)) deleteNetns(name);
    unregister();
  };
  const unregister = atExit(destroy);
  try {
    for (const name of all) {
      ledgerNetns(name);
      ip(["netns", "add", name]);
      ip(["-n", name, "link", "set", "lo", "up"]);
    }
    ip(["-n", fabric, "link", "add", "br0", "type", "bridge"]);
    ip(["-n", fabric, "link", "set", "br0", "up"]);
    spec.nodes.forEach((node, i) => {
      const ns = nodeNs.get(node.key)!;
      ip(["link", "add", "name", "eth0", "netns", ns, "type", "veth", "peer", "name", `n${i}`, "netns", fabric]);
      ip(["-n", fabric, "link", "set", `n${i}`, "master", "br0", "up"]);
      ip(["-n", ns, "addr", "add", `${node.ip}/32`, "dev", "eth0"]);
      ip(["-n", ns, "link", "set", "eth0", "up"]);
      sysctl(ns, "net.ipv4.ip_forward=1");
    });
    for (const node of spec.nodes) {
      const ns = nodeNs.get(node.key)!;
      for (const other of spec.nodes) if (other !== node) ip(["-n", ns, "route", "add", `${other.ip}/32`, "dev", "eth0"]);
    }
    spec.pods.forEach((pod, i) => {
      const ns = podNs.get(pod.key)!;
      const host = nodeNs.get(pod.node);
      if (!host) throw new Error(`pod ${pod.key}: node ${pod.node} is not in the topology`);
      ip(["link", "add", "name", "eth0", "netns", ns, "type", "veth", "peer", "name", `p${i}`, "netns", host]);
      ip(["-n", ns, "addr", "add", `${pod.ip}/32`, "dev", "eth0"]);
      ip(["-n", ns, "link", "set", "eth0", "up"]);
      ip(["-n", ns, "route", "add", "default", "dev", "eth0"]);
      ip(["-n", host, "link", "set", `p${i}`, "up"]);
      ip(["-n", host, "route", "add", `${pod.ip}/32`, "dev", `p${i}`]);
      sysctl(host, `net.ipv4.conf.p${i}.proxy_arp=1`);
      // Same-cluster nodes reach this pod through its node (Flannel host-gw); other clusters cannot.
      for (const other of spec.nodes) {
        if (other.key !== pod.node && other.cluster === pod.cluster)
          ip(["-n", nodeNs.get(other.key)!, "route", "add", `${pod.ip}/32`, "via", lookup(spec.nodes, pod.node, "node").ip, "dev", "eth0"]);
      }
    });
  } catch (error) {
    destroy();
    throw error;
  }
  const netnsPath = (key: string) => `/var/run/netns/${podNs.get(lookup(spec.pods, key, "pod").key)}`;
  return {
    mode: "netns",
    nodes: spec.nodes,
    pods: spec.pods,
    nodeIp: (key) => lookup(spec.nodes, key, "node").ip,
    podIp: (key) => lookup(spec.pods, key, "pod").ip,
    podBindAddress: () => "0.0.0.0",
    podNetnsPath: netnsPath,
    command(place, argv) {
      if (place === "host") return [...argv];
      const ns = "node" in place ? nodeNs.get(lookup(spec.nodes, place.node, "node").key) : podNs.get(lookup(spec.pods, place.pod, "pod").key);
      return ["ip", "netns", "exec", ns!, ...argv];
    },
    meshDocument(document) {
      const copy = structuredClone(document);
      for (const [service, records] of Object.entries(copy.services)) {
        for (const record of records) {
          const key = podKeyOf(record, service);
          if (podNs.has(key)) record.containerMetadata = { ...record.containerMetadata, networkNamespace: netnsPath(key) };
        }
      }
      return copy;
    },
    adaptBootstrap: (bootstrap) => bootstrap,
    destroy,
  };
}

function loopbackTopology(spec: { nodes: readonly NodeSpec[]; pods: readonly PodSpec[] }): Topology {
  // A per-topology 127.<base>.x.y block, so concurrent topologies rarely share addresses.
  const base = randomInt(64, 250);
  const mapped = new Map<string, string>(); // "<cluster>|<ip>" → 127.x
  let next = 0;
  const map = (cluster: string, address: string) => {
    const key = `${cluster}|${address}`;
    let found = mapped.get(key);
    if (!found) {
      do next++;
      while ((next & 255) === 0 || (next & 255) === 255);
      found = `127.${base}.${(next >> 8) & 255}.${next & 255}`;
      mapped.set(key, found);
    }
    return found;
  };
  for (const node of spec.nodes) map(node.cluster, node.ip);
  for (const pod of spec.pods) map(pod.cluster, pod.ip);
  const netnsPath = (key: string) => `/nonexistent/aether-loopback/${lookup(spec.pods, key, "pod").key.replaceAll("/", "_")}`;
  const podByPath = new Map(spec.pods.map((pod) => [netnsPath(pod.key), pod]));
  const podIp = (key: string) => {
    const pod = lookup(spec.pods, key, "pod");
    return map(pod.cluster, pod.ip);
  };
  return {
    mode: "loopback",
    nodes: spec.nodes,
    pods: spec.pods,
    nodeIp: (key) => {
      const node = lookup(spec.nodes, key, "node");
      return map(node.cluster, node.ip);
    },
    podIp,
    podBindAddress: podIp,
    podNetnsPath: netnsPath,
    command: (_place, argv) => [...argv],
    meshDocument(document) {
      const copy = structuredClone(document);
      for (const node of copy.nodes ?? []) if (node.ip) node.ip = map(node.cluster, node.ip);
      for (const [service, records] of Object.entries(copy.services)) {
        for (const record of records) {
          const key = podKeyOf(record, service);
          if (spec.pods.some((pod) => pod.key === key)) record.containerMetadata = { ...record.containerMetadata, networkNamespace: netnsPath(key) };
          record.ip = map(record.clusterName, record.ip);
          if (record.kubernetesMetadata?.nodeIp) record.kubernetesMetadata.nodeIp = map(record.clusterName, record.kubernetesMetadata.nodeIp);
        }
      }
      return copy;
    },
    adaptBootstrap(bootstrap) {
      const copy = structuredClone(bootstrap) as any;
      for (const listener of copy.static_resources?.listeners ?? []) {
        const socket = listener.address?.socket_address;
        const pod = socket?.network_namespace_filepath ? podByPath.get(socket.network_namespace_filepath) : undefined;
        if (!socket?.network_namespace_filepath) continue;
        if (!pod) throw new Error(`listener ${listener.name}: netns ${socket.network_namespace_filepath} is no pod of the topology`);
        socket.address = map(pod.cluster, pod.ip);
        delete socket.network_namespace_filepath;
      }
      return copy;
    },
    destroy: () => {},
  };
}
