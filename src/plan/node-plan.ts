/**
 * Everything about the local node that CDS and LDS need, derived once per compile: the source
 * identities it hosts and the netns each pod is recognized by, the services in its dependency
 * scope, and how certificates are fetched and validated.
 */
import { hash } from "node:crypto";
import type { ConfigSource } from "../../gen/envoy/config/core/v3/config_source.js";
import { type Diagnostic, diagnostic } from "../diagnostics.js";
import { configSource } from "../envoy/core.js";
import { type CertificateEncoder, type CertificateSelection, certificateEncoder, type TrustValidation } from "../envoy/tls.js";
import { InputError } from "../errors.js";
import type { HostedPod, LocalNode } from "../model/node.js";
import { trustDomainOfCluster } from "../model/node.js";
import type { Options } from "../model/options.js";
import type { PortProtocol, TrustConfig } from "../model/snapshot.js";
import { bundleSecretName, type ServiceKey, type ServiceRef, serviceKey, serviceSpiffeId, workloadSpiffePrefix } from "../naming.js";
import { pushAll, sameItems } from "../util/arrays.js";
import { compositeKey } from "../util/keys.js";
import { LayeredMap } from "../util/layered-map.js";
import { getOrInsert } from "../util/maps.js";
import { compareText, indexOfSorted, indexOfSortedText } from "../util/order.js";
import { type SlotCache, singleEntrySlot } from "./cache-slots.js";
import { type EdsView, edsView } from "./eds-view.js";
import { contextCache, type HostedEndpoint, type IndexedService, nodeKey, type SnapshotIndex } from "./snapshot-index.js";

export interface NodePlan {
  readonly index: SnapshotIndex;
  readonly node: LocalNode;
  readonly options: Options;
  readonly view: EdsView;
  readonly waypointOn: boolean;
  /** The node proxy's own identity: for traffic no hosted pod claims. */
  readonly nodeIdentity: string;
  /** Every source identity the node presents, sorted: its pods' and its own. */
  readonly identities: readonly string[];
  /** Source pods by network namespace, sorted by path: the per-source matcher's keys. */
  readonly identityByNetns: ReadonlyMap<string, string>;
  /** The pods the node hosts, sorted by namespace and name, with what the waypoint side needs. */
  readonly hostedPods: readonly HostedPodPlan[];
  /** A digest of everything the waypoint side (tunnel, ingress, inbound) depends on beyond the context. */
  readonly waypointSignature: string;
  /**
   * One object per parsed node and options pair: what a recompile of the node reuses (its last
   * node side and outbound walk, compile/compile-node.ts) is kept weakly by it.
   */
  readonly recompileKey: object;
  /** Services the node's pods may call, sorted, each with at least one port. */
  readonly dependencies: readonly IndexedService[];
  /** Ports across `dependencies`: one outbound cluster each. */
  readonly dependencyPorts: number;
  /**
   * Each of `dependencies`' `clusterSignature`, in order: the same array from one compile of the
   * node to the next while none of them changes, so a recompile compares one reference instead of
   * reading every dependency (on an update, most of them are out of the CPU's caches).
   */
  readonly dependencySignatures: readonly string[];
  readonly sds: ConfigSource;
  /** The source identities' certificate configs, encoded once per compile context (`sockets` mode). */
  readonly certificates: CertificateEncoder;
  /** Where the certificate selector finds each source's SVID (`selector` mode). */
  readonly certificateSelection: CertificateSelection;
  /**
   * Work that depends only on this compile context — the node's identities and netns, its trust
   * domain and the options — cached across compiles (see `SnapshotIndex.contexts`).
   */
  readonly context: SlotCache;
  readonly eds: ConfigSource;
  readonly validation: TrustValidation;
  /**
   * `spiffe://<td>/ns/` for every trusted trust domain: the workload shape a client certificate
   * must have to reach an application, so another kind of SVID of the trust domain (a SPIRE
   * agent's, say) cannot.
   */
  readonly workloadSanPrefixes: readonly string[];
  readonly diagnostics: readonly Diagnostic[];
}

export interface HostedPodPlan {
  readonly pod: HostedPod;
  readonly service: ServiceKey;
  readonly ref: ServiceRef;
  readonly identity: string;
  /** The pod's netns when it is its own ("" when unknown or claimed by another pod too). */
  readonly netns: string;
  /** Served ports: the pod's own list, else its registry record's. Sorted. */
  readonly ports: readonly number[];
  readonly protocols: ReadonlyMap<number, PortProtocol>;
  /** Whether other clusters may reach the pod's service through this node's waypoint. */
  readonly exported: boolean;
}

export function planNode(index: SnapshotIndex, node: LocalNode, options: Options): NodePlan {
  checkNodeAgainstMesh(index, node);
  const basics = nodeBasics(node, options);
  const diagnostics: Diagnostic[] = [...basics.diagnostics];
  const context = contextCache(index, basics.contextKey);
  const { hosted, waypointSignature } = hostedSide(index, node, basics);
  const scope = dependencyScope(index, node, basics, diagnostics);
  return {
    index,
    node,
    options,
    view: basics.view,
    waypointOn: options.eastWestWaypoint !== "off",
    nodeIdentity: node.spiffeId,
    identities: basics.identities,
    identityByNetns: basics.identityByNetns,
    hostedPods: hosted,
    waypointSignature,
    recompileKey: basics.recompileKey,
    dependencies: scope.scope,
    dependencyPorts: scope.ports,
    dependencySignatures: scope.signatures,
    sds: basics.sds,
    certificates: CERTIFICATES.get(context, [], () => certificateEncoder(basics.sds)),
    certificateSelection: basics.certificateSelection,
    context,
    eds: basics.eds,
    validation: trustValidation(index.snapshot.mesh.trust, basics.sds),
    workloadSanPrefixes: workloadSanPrefixes(index.snapshot.mesh.trust),
    diagnostics,
  };
}

/** What a plan takes from the node and options alone. */
interface NodeBasics {
  /** The last hosted side computed, with what it was computed from. */
  lastHosted?: HostedSide;
  /** The last dependency scope computed, with what it was computed from. */
  lastScope?: DependencyScope;
  readonly recompileKey: object;
  readonly sortedPods: readonly HostedPod[];
  /** The service key of each of `sortedPods`, built once (a fresh string would be hashed on every lookup). */
  readonly podServiceKeys: readonly ServiceKey[];
  /** The same keys as a set. */
  readonly hostedServiceKeys: ReadonlySet<ServiceKey>;
  readonly identityByNetns: ReadonlyMap<string, string>;
  readonly identities: readonly string[];
  readonly contextKey: string;
  readonly view: EdsView;
  readonly sds: ConfigSource;
  readonly eds: ConfigSource;
  readonly certificateSelection: CertificateSelection;
  readonly diagnostics: readonly Diagnostic[];
}

/** By node, then options: parsed nodes and options are immutable, so this is derived once per pair. */
const basicsByNode = new WeakMap<LocalNode, WeakMap<Options, NodeBasics>>();

function nodeBasics(node: LocalNode, options: Options): NodeBasics {
  const byOptions = getOrInsert(basicsByNode, node, () => new WeakMap<Options, NodeBasics>());
  return getOrInsert(byOptions, options, () => {
    const diagnostics: Diagnostic[] = [];
    const pods = sortedPods(node);
    const identityByNetns = sourcesByNetns(node, pods, diagnostics);
    const podServiceKeys = pods.map((pod) => serviceKey({ namespace: pod.namespace, service: pod.serviceAccount }));
    return {
      recompileKey: {},
      sortedPods: pods,
      podServiceKeys,
      hostedServiceKeys: new Set(podServiceKeys),
      identityByNetns,
      identities: [...new Set([node.spiffeId, ...identityByNetns.values()])].sort(compareText),
      contextKey: contextKey(node, options, identityByNetns),
      view: edsView(node, options),
      sds: configSource(options.sds),
      eds: configSource(options.eds),
      certificateSelection: { sds: configSource({ grpcCluster: options.selectorSds }), defaultIdentity: node.spiffeId },
      diagnostics,
    };
  });
}

/**
 * What a node's outbound clusters depend on besides the services themselves. In `selector` mode
 * that is not the node's pods, so every node with the same identity, trust domain and options
 * shares one context — and the same cluster objects.
 */
function contextKey(node: LocalNode, options: Options, identityByNetns: ReadonlyMap<string, string>): string {
  const sources = options.sourceIdentity === "sockets" ? [...identityByNetns] : [];
  return JSON.stringify([node.spiffeId, node.trustDomain, node.meshDomain, sources, options]);
}

interface HostedSide {
  readonly hosted: readonly HostedPodPlan[];
  readonly waypointSignature: string;
  /** Inputs: the node's registry records, its pods' services, and the mesh's protocols and exports. */
  readonly records: readonly HostedEndpoint[] | undefined;
  readonly services: readonly (IndexedService | undefined)[];
  /** The index's services map `services` were read from. */
  readonly serviceMap: ReadonlyMap<ServiceKey, IndexedService>;
  readonly protocols: unknown;
  readonly exports: unknown;
}

/** The hosted pods and waypoint signature, reused while none of their inputs changed (a recompile). */
function hostedSide(index: SnapshotIndex, node: LocalNode, basics: NodeBasics): HostedSide {
  const records = index.hostedBy.get(nodeKey(node.clusterName, node.nodeName));
  const last = basics.lastHosted;
  const { protocols, exports } = index.snapshot;
  if (last && last.records === records && last.protocols === protocols && last.exports === exports && sameHostedServices(last, index.services, basics)) {
    if (last.serviceMap === index.services) return last;
    basics.lastHosted = { ...last, serviceMap: index.services };
    return basics.lastHosted;
  }
  const hosted = hostedPods(index, node, basics);
  const services = basics.podServiceKeys.map((key) => index.services.get(key));
  basics.lastHosted = { hosted, waypointSignature: waypointSignature(index, node, hosted), records, services, serviceMap: index.services, protocols, exports };
  return basics.lastHosted;
}

/**
 * Whether the pods' services are the objects `last` was read from. When the index's map is
 * layered on last's (an update), only the keys it changed are checked, against the pods' keys:
 * the services themselves, mostly out of the CPU's caches by then, are not read.
 */
function sameHostedServices(last: HostedSide, services: ReadonlyMap<ServiceKey, IndexedService>, basics: NodeBasics): boolean {
  const changed = LayeredMap.keysChangedBetween(last.serviceMap, services);
  if (changed) return !changed.some((key) => basics.hostedServiceKeys.has(key));
  return basics.podServiceKeys.every((key, i) => services.get(key) === last.services[i]);
}

/**
 * The node's address and pods, and the version of every service it hosts, as a digest: the node
 * keeps it for its next recompile, and the text it digests runs to kilobytes per node.
 */
function waypointSignature(index: SnapshotIndex, node: LocalNode, hosted: readonly HostedPodPlan[]): string {
  const text = JSON.stringify([
    node.nodeIp,
    node.clusterName,
    node.nodeName,
    hosted.map((h) => [h.pod, h.netns, h.ports, index.services.get(h.service)?.serial ?? 0]),
  ]);
  return hash("sha256", text, "base64");
}

/** A one-entry cache: the last value computed, and the inputs it was computed from. */
export interface ReuseSlot<T> {
  last?: { readonly inputs: readonly unknown[]; readonly value: T };
}

/** The slot's value when every input is the same (`===`) as last time; else computed and kept. */
export function reuseIfUnchanged<T>(slot: ReuseSlot<T>, inputs: readonly unknown[], compute: () => T): T {
  const last = slot.last;
  if (last && sameItems(last.inputs, inputs)) return last.value;
  slot.last = { inputs, value: compute() };
  return slot.last.value;
}

/** Per compile context: the source identities' encoded certificate configs (one per context). */
const CERTIFICATES = singleEntrySlot<CertificateEncoder>("certificate configs");

/** A pod's SVID identity: its override, or its service account in the node's trust domain. */
export function podIdentity(node: LocalNode, pod: HostedPod): string {
  return pod.spiffeId ?? serviceSpiffeId(node.trustDomain, { namespace: pod.namespace, service: pod.serviceAccount });
}

function checkNodeAgainstMesh(index: SnapshotIndex, node: LocalNode): void {
  const mesh = index.snapshot.mesh;
  const issues = [];
  if (node.meshDomain !== mesh.meshDomain) {
    issues.push({ path: "meshDomain", message: `${node.meshDomain} is not the snapshot's mesh domain ${mesh.meshDomain}` });
  }
  const trustDomain = trustDomainOfCluster(mesh.trust, node.clusterName);
  if (node.trustDomain !== trustDomain) {
    issues.push({ path: "trustDomain", message: `${node.trustDomain} is not cluster ${node.clusterName}'s trust domain ${trustDomain ?? "(none)"}` });
  }
  if (issues.length > 0) throw new InputError("node", issues);
}

/**
 * The per-source matcher keys on the pod's netns. A pod without one cannot be told apart; a netns
 * claimed by two pods (a stale or forged record) is used for neither — failing closed, rather than
 * letting one record decide which identity another pod's traffic presents.
 */
function sourcesByNetns(node: LocalNode, pods: readonly HostedPod[], diagnostics: Diagnostic[]): Map<string, string> {
  const claims = new Map<string, HostedPod[]>();
  for (const pod of pods) {
    const service = `${pod.namespace}/${pod.serviceAccount}`;
    if (!pod.netns) {
      diagnostics.push(
        diagnostic(
          "POD_WITHOUT_NETNS",
          `pod ${pod.namespace}/${pod.name} has no network namespace: it gets no inbound or outbound listeners (its traffic never enters the mesh)`,
          { service },
        ),
      );
      continue;
    }
    claims.set(pod.netns, [...(claims.get(pod.netns) ?? []), pod]);
  }
  const byNetns = new Map<string, string>();
  for (const [netns, pods] of [...claims].sort(([a], [b]) => compareText(a, b))) {
    if (pods.length === 1) {
      byNetns.set(netns, podIdentity(node, pods[0]!));
      continue;
    }
    const names = pods.map((pod) => `${pod.namespace}/${pod.name}`).join(", ");
    diagnostics.push(
      diagnostic("NETNS_CONFLICT", `pods ${names} all claim network namespace ${netns}: none is told apart, so none gets inbound or outbound listeners`),
    );
  }
  return byNetns;
}

/** By "<namespace>/<name>" as one string (not as a pair: "a-b/x" sorts before "a/y"). */
function sortedPods(node: LocalNode): HostedPod[] {
  return node.pods
    .map((pod) => ({ pod, key: `${pod.namespace}/${pod.name}` }))
    .sort((a, b) => compareText(a.key, b.key))
    .map(({ pod }) => pod);
}

function hostedPods(index: SnapshotIndex, node: LocalNode, basics: NodeBasics): HostedPodPlan[] {
  const records = index.hostedBy.get(nodeKey(node.clusterName, node.nodeName)) ?? [];
  const recordOf = new Map<string, HostedEndpoint>();
  for (const record of records) {
    const key = compositeKey(record.service, record.endpoint.ip);
    if (!recordOf.has(key)) recordOf.set(key, record);
  }
  return basics.sortedPods.map((pod) => {
    const ref = { namespace: pod.namespace, service: pod.serviceAccount };
    const key = serviceKey(ref);
    const service = index.services.get(key);
    const record = recordOf.get(compositeKey(key, pod.ip));
    const ports = pod.ports.length > 0 ? [...new Set(pod.ports)].sort((a, b) => a - b) : (record?.endpoint.ports ?? []);
    return {
      pod,
      service: key,
      ref,
      identity: podIdentity(node, pod),
      netns: basics.identityByNetns.has(pod.netns) ? pod.netns : "",
      ports,
      protocols: service?.protocols ?? index.snapshot.protocols.get(key) ?? new Map(),
      exported: service?.exported ?? index.snapshot.exports?.has(key) ?? true,
    };
  });
}

/** A node's dependencies that get clusters, and a diagnostic for each that does not. */
interface DependencyScope {
  /** Inputs: the dependency keys (sorted) and the index's services. */
  readonly keys: readonly ServiceKey[];
  readonly services: ReadonlyMap<ServiceKey, IndexedService>;
  readonly scope: readonly IndexedService[];
  /** Ports across `scope`. */
  readonly ports: number;
  /** `scope`'s cluster signatures, in order (`NodePlan.dependencySignatures`). */
  readonly signatures: readonly string[];
  readonly diagnostics: readonly Diagnostic[];
}

function dependencyScope(index: SnapshotIndex, node: LocalNode, basics: NodeBasics, diagnostics: Diagnostic[]): DependencyScope {
  // Both lists are sorted: parseNode sorts the dependencies, the index its service keys.
  const keys: readonly ServiceKey[] = node.dependencies ?? index.serviceKeys;
  const last = basics.lastScope;
  const scope = (last && patchedScope(last, keys, index.services)) ?? scopeOf(keys, index.services, last);
  basics.lastScope = scope;
  pushAll(diagnostics, scope.diagnostics);
  return scope;
}

function scopeOf(keys: readonly ServiceKey[], services: ReadonlyMap<ServiceKey, IndexedService>, last: DependencyScope | undefined): DependencyScope {
  const scope: IndexedService[] = [];
  const diagnostics: Diagnostic[] = [];
  let ports = 0;
  for (const key of keys) {
    const service = services.get(key);
    if (service && service.ports.length > 0) {
      scope.push(service);
      ports += service.ports.length;
    } else
      diagnostics.push(
        diagnostic("DEPENDENCY_WITHOUT_PORTS", `dependency ${key} has no endpoints and no declared ports, so it gets no cluster`, { service: key }),
      );
  }
  const signatures = scope.map((service) => service.clusterSignature);
  const kept = last !== undefined && sameItems(last.signatures, signatures);
  return { keys, services, scope, ports, signatures: kept ? last.signatures : signatures, diagnostics };
}

/**
 * The last scope with the services the index changed since put in place, so a recompile after a
 * registry event looks up only those; undefined when the keys changed, the maps are not layered
 * on one another, or a dependency gained or lost its ports (the scope's members change).
 */
function patchedScope(last: DependencyScope, keys: readonly ServiceKey[], services: ReadonlyMap<ServiceKey, IndexedService>): DependencyScope | undefined {
  if (last.keys !== keys) return undefined;
  const changed = LayeredMap.keysChangedBetween(last.services, services);
  if (!changed) return undefined;
  let scope: IndexedService[] | undefined;
  let signatures: string[] | undefined;
  let ports = last.ports;
  for (const key of changed) {
    const at = indexOfSorted(last.scope, key, (service) => service.key);
    const service = services.get(key);
    const inScope = service !== undefined && service.ports.length > 0;
    if (at < 0) {
      // Not a member before: fine while it is none now, or not a dependency at all.
      if (!inScope || indexOfSortedText(keys, key) < 0) continue;
      return undefined;
    }
    if (!inScope) return undefined;
    scope ??= [...last.scope];
    ports += service.ports.length - scope[at]!.ports.length;
    scope[at] = service;
    if (service.clusterSignature === last.signatures[at]) continue;
    signatures ??= [...last.signatures];
    signatures[at] = service.clusterSignature;
  }
  return { ...last, services, scope: scope ?? last.scope, ports, signatures: signatures ?? last.signatures };
}

function workloadSanPrefixes(trust: TrustConfig): string[] {
  const domains = trust.mode === "shared" ? [trust.trustDomain] : trust.trustDomains.map((domain) => domain.name);
  return domains.sort(compareText).map(workloadSpiffePrefix);
}

function trustValidation(trust: TrustConfig, sds: ConfigSource): TrustValidation {
  if (trust.mode === "shared") {
    return { kind: "sds-bundle", bundleSecret: trust.bundleSdsName ?? bundleSecretName(trust.trustDomain), sds };
  }
  const trustDomains = [...trust.trustDomains]
    .sort((a, b) => compareText(a.name, b.name))
    .map((domain) =>
      domain.bundle && "inlineString" in domain.bundle ? { name: domain.name, bundle: { inline_string: domain.bundle.inlineString } } : { name: domain.name },
    );
  if (!trust.bundles) return { kind: "spiffe", trustDomains };
  const bundles = "filename" in trust.bundles ? { filename: trust.bundles.filename } : { inline_string: trust.bundles.inlineString };
  return { kind: "spiffe", trustDomains, bundles };
}
