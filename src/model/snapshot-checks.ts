/**
 * The mesh file's cross-field checks: what one field says about another (duplicate nodes and node
 * addresses, trust domains, VIPs, pods per node, ports per service, SNIs, the node identity).
 * Each runs on whatever sections parsed, so a file with a broken field still gets every other
 * problem reported in the same run.
 */
import { formatPath, type InputIssue } from "../errors.js";
import { nodeSpiffeId, parseServiceKey, type ServiceKey, structuredSniProblem } from "../naming.js";
import { getOrInsert, remember } from "../util/maps.js";
import { trustDomainOfCluster } from "./node.js";
import { MAX_PORTS_PER_RECORD, podNameOf, type ServiceEndpoint } from "./registry.js";
import type { NodeStatus, PortProtocol, TrustConfig } from "./snapshot.js";

/** Size limits, checked before any record is parsed so an oversized input fails fast. */
export const SNAPSHOT_LIMITS = {
  endpoints: 1_000_000,
  endpointsPerService: 100_000,
  services: 100_000,
  nodes: 100_000,
  /** Ports one record lists (`port` and `ports`). */
  portsPerRecord: MAX_PORTS_PER_RECORD,
  /** Distinct ports of one service: its records' and its declared protocols'. Each is a cluster on every node that calls it. */
  portsPerService: 256,
} as const;

/** The sections of a mesh file that parsed; a section that did not is left out. */
export interface MeshParts {
  readonly mesh?: { readonly meshDomain: string; readonly trust: TrustConfig; readonly nodeIdentity: string; readonly podNetwork: string };
  readonly nodes?: readonly NodeStatus[];
  readonly protocols?: Readonly<Record<string, Readonly<Record<string, PortProtocol>>>>;
  readonly dependencies?: Readonly<Record<string, readonly string[]>>;
  readonly vips?: Readonly<Record<string, string>>;
}

/**
 * Every cross-field check whose inputs parsed. With `recordsChecked`, the records are a validated
 * snapshot's: what they must agree on among themselves alone (no pod twice) is not checked again.
 */
export function crossCheck(parts: MeshParts, services: ReadonlyMap<ServiceKey, readonly ServiceEndpoint[]>, recordsChecked = false): InputIssue[] {
  const { mesh, nodes, protocols, dependencies, vips } = parts;
  return [
    ...(nodes ? duplicateNodeIssues(nodes) : []),
    ...(mesh ? trustIssues(mesh.trust, nodes ?? [], services) : []),
    ...(vips ? vipIssues(vips) : []),
    ...servicePortIssues(services, protocols ?? {}),
    ...(recordsChecked ? [] : duplicatePodIssues(services)),
    ...(mesh ? nodeIdentityIssues(mesh, nodes ?? [], services) : []),
    ...(mesh
      ? sniIssues(mesh.meshDomain, [
          ...[...services.keys()].map((key) => ({ key, path: ["services", key] })),
          ...Object.keys(protocols ?? {}).map((key) => ({ key, path: ["protocols", key] })),
          ...Object.entries(dependencies ?? {}).flatMap(([key, deps]) => [
            { key, path: ["dependencies", key] },
            ...deps.map((dep, index) => ({ key: dep, path: ["dependencies", key, index] })),
          ]),
        ])
      : []),
  ];
}

/**
 * What a new node list must agree on with a validated snapshot's settings and records
 * (`withNodes`). The nodes its records name were checked with it, and what is checked of a node
 * (its trust domain, its identity) does not depend on the list: only the listed nodes are.
 */
export function nodeListIssues(
  mesh: NonNullable<MeshParts["mesh"]>,
  nodes: readonly NodeStatus[],
  services: ReadonlyMap<ServiceKey, readonly ServiceEndpoint[]>,
): InputIssue[] {
  const unmapped =
    mesh.trust.mode === "federated"
      ? nodes.flatMap((node, index) => (trustDomainOfCluster(mesh.trust, node.cluster) ? [] : [noTrustDomainIssue(node.cluster, ["nodes", index, "cluster"])]))
      : [];
  const named = nodes.map((node) => ({ cluster: node.cluster, node: node.name }));
  return [...duplicateNodeIssues(nodes), ...dedupeByMessage(unmapped), ...identityClashes(mesh, named, services)];
}

/** Under federation, a cluster (of a node or record at `path`) that no trust domain lists. */
export function noTrustDomainIssue(cluster: string, path: readonly PropertyKey[]): InputIssue {
  return { path: formatPath(path), message: `cluster ${cluster} belongs to no trust domain` };
}

/** No node listed twice, and no two listed nodes with one address (each would get the other's traffic). */
function duplicateNodeIssues(nodes: readonly NodeStatus[]): InputIssue[] {
  const names = new Map<string, number>();
  const addresses = new Map<string, number>();
  return nodes.flatMap((node, index) => {
    const name = JSON.stringify([node.cluster, node.name]);
    const first = names.get(name);
    if (first !== undefined) return [{ path: formatPath(["nodes", index]), message: `duplicate node ${node.cluster}/${node.name}; first at nodes[${first}]` }];
    names.set(name, index);
    const sameIp = addresses.get(node.ip);
    addresses.set(node.ip, sameIp ?? index);
    if (sameIp === undefined) return [];
    const other = nodes[sameIp]!;
    return [
      {
        path: formatPath(["nodes", index, "ip"]),
        message: `${node.ip} is also node ${other.cluster}/${other.name}'s (nodes[${sameIp}]): one address per node`,
      },
    ];
  });
}

/** Under federation every cluster must belong to exactly one trust domain. */
function trustIssues(trust: TrustConfig, nodes: readonly NodeStatus[], services: ReadonlyMap<ServiceKey, readonly ServiceEndpoint[]>): InputIssue[] {
  if (trust.mode !== "federated") return [];
  const issues: InputIssue[] = [];
  const owner = new Map<string, string>();
  for (const [index, domain] of trust.trustDomains.entries()) {
    for (const [c, cluster] of domain.clusters.entries()) {
      const previous = owner.get(cluster);
      if (previous) {
        issues.push({
          path: formatPath(["mesh", "trust", "trustDomains", index, "clusters", c]),
          message: `cluster ${cluster} is already in trust domain ${previous}`,
        });
      }
      owner.set(cluster, domain.name);
    }
  }
  const unmapped = (cluster: string, path: PropertyKey[]) => (owner.has(cluster) ? [] : [noTrustDomainIssue(cluster, path)]);
  for (const [index, node] of nodes.entries()) issues.push(...unmapped(node.cluster, ["nodes", index, "cluster"]));
  for (const [key, endpoints] of services) {
    for (const [index, endpoint] of endpoints.entries()) issues.push(...unmapped(endpoint.clusterName, ["services", key, index, "clusterName"]));
  }
  return [...bundleIssues(trust), ...dedupeByMessage(issues)];
}

/**
 * No two services share a VIP. A VIP may name a service with no endpoints yet (or none left): it
 * is captured once the service has a port.
 */
function vipIssues(vips: Readonly<Record<string, string>>): InputIssue[] {
  const owner = new Map<string, string>();
  return Object.entries(vips).flatMap(([key, vip]) => {
    const path = formatPath(["vips", key]);
    const other = owner.get(vip);
    owner.set(vip, key);
    return other ? [{ path, message: `VIP ${vip} is already ${other}'s` }] : [];
  });
}

/**
 * Two records on one node naming the same pod (namespace and name, the name made from the IP when
 * a record has none) would give the node two pods with one listener name: the node could not be
 * compiled. The later record is refused, naming the first.
 */
export function duplicatePodIssues(services: ReadonlyMap<ServiceKey, readonly ServiceEndpoint[]>): InputIssue[] {
  const claims = new PodClaims();
  for (const [key, endpoints] of services) claims.addAll(key, endpoints);
  return claims.issues;
}

/**
 * `duplicatePodIssues` of `services`, which passed it, with `key`'s records replaced by
 * `endpoints`, reported as if the service came last: on its new records. Only a new record can
 * clash, and only with a record of its namespace that names a pod of the same name, so only those
 * are read — an update costs its own records, not every record of the mesh.
 */
export function replacedServicePodIssues(
  services: ReadonlyMap<ServiceKey, readonly ServiceEndpoint[]>,
  key: ServiceKey,
  endpoints: readonly ServiceEndpoint[],
): InputIssue[] {
  const names = new Set<string>();
  for (const endpoint of endpoints) if (endpoint.kubernetesMetadata.nodeName) names.add(podNameOf(endpoint));
  if (names.size === 0) return [];
  const claims = new PodClaims();
  for (const other of keysByNamespace(services).get(namespaceOf(key)) ?? []) {
    if (other === key) continue;
    for (const [index, endpoint] of services.get(other)!.entries()) if (names.has(podNameOf(endpoint))) claims.add(other, index, endpoint);
  }
  claims.addAll(key, endpoints);
  return claims.issues;
}

/** Per services map, its keys by namespace, in the map's order: made once per set of keys (see `sameServiceKeys`). */
const namespaceKeys = new WeakMap<ReadonlyMap<ServiceKey, unknown>, ReadonlyMap<string, readonly ServiceKey[]>>();

function keysByNamespace(services: ReadonlyMap<ServiceKey, unknown>): ReadonlyMap<string, readonly ServiceKey[]> {
  return getOrInsert(namespaceKeys, services, () => {
    const byNamespace = new Map<string, ServiceKey[]>();
    for (const key of services.keys()) getOrInsert(byNamespace, namespaceOf(key), () => []).push(key);
    return byNamespace;
  });
}

/** That `next` has the keys of `previous`, in the same order (one service's records replaced): it shares their index by namespace. */
export function sameServiceKeys(previous: ReadonlyMap<ServiceKey, unknown>, next: ReadonlyMap<ServiceKey, unknown>): void {
  const known = namespaceKeys.get(previous);
  if (known) namespaceKeys.set(next, known);
}

function namespaceOf(key: ServiceKey): string {
  return key.slice(0, key.indexOf("/"));
}

/** The first record naming each pod on a node, and an issue for each later one. */
class PodClaims {
  readonly issues: InputIssue[] = [];
  /** By cluster, node, namespace and pod name joined with "/", which none of them can hold (each is validated). */
  private readonly first = new Map<string, { key: string; index: number }>();

  addAll(key: ServiceKey, endpoints: readonly ServiceEndpoint[]): void {
    for (const [index, endpoint] of endpoints.entries()) this.add(key, index, endpoint);
  }

  add(key: ServiceKey, index: number, endpoint: ServiceEndpoint): void {
    const node = endpoint.kubernetesMetadata.nodeName;
    if (!node) return;
    const pod = `${endpoint.clusterName}/${node}/${endpoint.kubernetesMetadata.namespace}/${podNameOf(endpoint)}`;
    const earlier = this.first.get(pod);
    if (earlier === undefined) {
      this.first.set(pod, { key, index });
      return;
    }
    this.issues.push({
      path: formatPath(["services", key, index, "kubernetesMetadata", "podName"]),
      message: `pod ${endpoint.kubernetesMetadata.namespace}/${podNameOf(endpoint)} on node ${endpoint.clusterName}/${node} is also ${formatPath(["services", earlier.key, earlier.index])}: one pod per name and node`,
    });
  }
}

/** No service has more distinct ports than `SNAPSHOT_LIMITS.portsPerService`. */
function servicePortIssues(services: ReadonlyMap<ServiceKey, readonly ServiceEndpoint[]>, protocols: NonNullable<MeshParts["protocols"]>): InputIssue[] {
  const keys = new Set<string>([...services.keys(), ...Object.keys(protocols)]);
  return [...keys].flatMap((key) => portCountIssues(key, services.get(key as ServiceKey) ?? [], Object.keys(protocols[key] ?? {}).map(Number)));
}

export function portCountIssues(key: string, endpoints: readonly ServiceEndpoint[], declared: readonly number[]): InputIssue[] {
  const ports = new Set(declared);
  for (const endpoint of endpoints) for (const port of endpoint.ports) ports.add(port);
  if (ports.size <= SNAPSHOT_LIMITS.portsPerService) return [];
  return [{ path: formatPath(["services", key]), message: `${ports.size} distinct ports, over the limit of ${SNAPSHOT_LIMITS.portsPerService} per service` }];
}

/** Under federation the bundles come from one map, or inline for every trust domain. */
function bundleIssues(trust: Extract<TrustConfig, { mode: "federated" }>): InputIssue[] {
  return trust.trustDomains.flatMap((domain, index) => {
    const path = formatPath(["mesh", "trust", "trustDomains", index, "bundle"]);
    if (trust.bundles && domain.bundle) return [{ path, message: "give mesh.trust.bundles or a bundle per trust domain, not both" }];
    if (!trust.bundles && !domain.bundle)
      return [{ path, message: "no CA bundle: give mesh.trust.bundles (a SPIFFE bundle map) or this domain's inlineString" }];
    return [];
  });
}

/** Reports an unmapped cluster once, at its first occurrence. */
function dedupeByMessage(issues: InputIssue[]): InputIssue[] {
  const seen = new Set<string>();
  return issues.filter((issue) => !seen.has(issue.message) && seen.add(issue.message));
}

/**
 * Every service must have a structured SNI within DNS limits, whatever port it serves. Worked out
 * once per service: a mesh file names each one in many dependency lists.
 */
function sniIssues(meshDomain: string, uses: readonly { key: string; path: PropertyKey[] }[]): InputIssue[] {
  const problems = new Map<string, string | undefined>();
  const problemOf = (key: string) => structuredSniProblem(meshDomain, parseServiceKey(key)!);
  return uses.flatMap(({ key, path }) => {
    const problem = problems.has(key) ? problems.get(key) : remember(problems, key, problemOf(key));
    return problem ? [{ path: formatPath(path), message: problem }] : [];
  });
}

/**
 * A node identity must not be a workload's: the node proxy presents it for traffic no hosted pod
 * claims, so a node whose identity is a service's SVID would speak as that service. Checked for
 * every node the file names (listed, or named by a record), filled in as `localNodeFrom` fills it.
 */
function nodeIdentityIssues(
  mesh: NonNullable<MeshParts["mesh"]>,
  nodes: readonly NodeStatus[],
  services: ReadonlyMap<ServiceKey, readonly ServiceEndpoint[]>,
): InputIssue[] {
  // By "<cluster>/<node>" (neither part can hold a "/"); records name a node once per pod, so a name is kept only once.
  const named = new Map<string, { cluster: string; node: string }>();
  const name = (cluster: string, node: string) => {
    const key = `${cluster}/${node}`;
    if (!named.has(key)) named.set(key, { cluster, node });
  };
  for (const node of nodes) name(node.cluster, node.name);
  for (const endpoints of services.values()) {
    for (const { clusterName, kubernetesMetadata } of endpoints) if (kubernetesMetadata.nodeName) name(clusterName, kubernetesMetadata.nodeName);
  }
  return identityClashes(mesh, named.values(), services);
}

/** The first of `named` whose node identity is a service's workload identity. */
function identityClashes(
  mesh: NonNullable<MeshParts["mesh"]>,
  named: Iterable<{ readonly cluster: string; readonly node: string }>,
  services: ReadonlyMap<ServiceKey, unknown>,
): InputIssue[] {
  for (const { cluster, node } of named) {
    const trustDomain = trustDomainOfCluster(mesh.trust, cluster);
    if (!trustDomain) continue;
    const identity = nodeSpiffeId(mesh.nodeIdentity, { trustDomain, cluster, node });
    const workload = /^spiffe:\/\/[^/]+\/ns\/([^/]+)\/sa\/([^/]+)$/.exec(identity);
    if (workload && services.has(`${workload[1]}/${workload[2]}`)) {
      return [
        { path: "mesh.nodeIdentity", message: `node ${cluster}/${node}'s identity ${identity} is service ${workload[1]}/${workload[2]}'s workload identity` },
      ];
    }
  }
  return [];
}

/** Pods at one address: of different services, in different clusters. */
export interface SharedAddress {
  readonly ip: string;
  /** `"<cluster>/<namespace>/<pod>"` of each, sorted. */
  readonly pods: readonly string[];
}

/**
 * Addresses that name pods of different services in different clusters (overlapping pod CIDRs).
 * Harmless while only waypoints cross clusters; a node that dials one directly from another
 * cluster reaches the wrong service's pod (only its certificate pin stops it). Reported in every
 * mode by `inspect` and the mesh check.
 */
export function sharedAddresses(services: ReadonlyMap<ServiceKey, readonly ServiceEndpoint[]>): SharedAddress[] {
  // Each record by position; most addresses have one record, so only a repeated one gets a list.
  const keys: ServiceKey[] = [];
  const records: ServiceEndpoint[] = [];
  const firstAt = new Map<string, number>();
  const repeated = new Map<string, number[]>();
  for (const [key, endpoints] of services) {
    for (const endpoint of endpoints) {
      const at = records.push(endpoint) - 1;
      keys.push(key);
      const first = firstAt.get(endpoint.ip);
      const list = repeated.get(endpoint.ip);
      if (first === undefined) firstAt.set(endpoint.ip, at);
      else if (list) list.push(at);
      else repeated.set(endpoint.ip, [first, at]);
    }
  }
  const shared: SharedAddress[] = [];
  for (const [ip, at] of repeated) {
    if (new Set(at.map((i) => records[i]!.clusterName)).size < 2 || new Set(at.map((i) => keys[i])).size < 2) continue;
    shared.push({ ip, pods: at.map((i) => `${records[i]!.clusterName}/${records[i]!.kubernetesMetadata.namespace}/${podNameOf(records[i]!)}`).sort() });
  }
  return shared.sort((a, b) => (a.ip < b.ip ? -1 : a.ip > b.ip ? 1 : 0));
}
