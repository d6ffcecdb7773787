/**
 * The invariants the property tests assert, as plain functions: each throws a `PropertyViolation`
 * naming the node, the options and what broke. Kept apart from the test files so that a failing
 * counterexample can be replayed from a script.
 */
import { Cluster } from "../../gen/envoy/config/cluster/v3/cluster.js";
import { ClusterLoadAssignment } from "../../gen/envoy/config/endpoint/v3/endpoint.js";
import { Listener } from "../../gen/envoy/config/listener/v3/listener.js";
import type { TransportSocketNameAction } from "../../gen/envoy/extensions/matching/common_inputs/transport_socket/v3/transport_socket_inputs.js";
import { SubjectAltNameMatcher_SanType } from "../../gen/envoy/extensions/transport_sockets/tls/v3/common.js";
import type { UpstreamTlsContext } from "../../gen/envoy/extensions/transport_sockets/tls/v3/tls.js";
import type { Matcher, Matcher_OnMatch } from "../../gen/xds/type/matcher/v3/matcher.js";
import { type CompileResult, compileNode } from "../../src/compile/compile-node.js";
import { type Diagnostic, LEFT_OUT_CODES } from "../../src/diagnostics.js";
import { toXdsResources } from "../../src/emit/xds.js";
import { hostPort } from "../../src/envoy/core.js";
import { unpackAny } from "../../src/envoy/schema.js";
import { EXTENSION } from "../../src/envoy/types.js";
import { type LocalNode, localNodeFrom, trustDomainOfCluster } from "../../src/model/node.js";
import { type OptionsInput, parseOptions } from "../../src/model/options.js";
import { parseSnapshot, type Snapshot } from "../../src/model/snapshot.js";
import { outboundClusterName, parseOutboundClusterName, parseSubClusterName, serviceSpiffeId, TUNNEL_LISTENER_NAME } from "../../src/naming.js";
import { indexSnapshot, type SnapshotIndex } from "../../src/plan/snapshot-index.js";
import { compileMesh } from "../../src/verify/compiled-mesh.js";
import { checkCompiledMesh, formatPathReport } from "../../src/verify/mesh-check.js";
import { compilableNodes, type ModeSelection, type NodeRef, type OtherOptions } from "../support/random-mesh.js";
import { upstreamProblems } from "../support/upstream-schema.js";

/** A mode, a socket selection and possibly other options. */
export type CompileOptions = ModeSelection & OtherOptions;

export const MAX_UINT32 = 0xffffffff;

export class PropertyViolation extends Error {
  override readonly name = "PropertyViolation";
}

function fail(where: string, problems: readonly string[]): void {
  if (problems.length === 0) return;
  const shown = problems.slice(0, 12);
  const more = problems.length > shown.length ? [`... and ${problems.length - shown.length} more`] : [];
  throw new PropertyViolation([where, ...shown.map((p) => `  - ${p}`), ...more].join("\n"));
}

function describe(node: NodeRef, options: OptionsInput): string {
  return `node ${node.cluster}/${node.name}, options ${JSON.stringify(options)}`;
}

/** A compile of one node; the LocalNode is derived with `localNodeFrom`. */
export function compile(index: SnapshotIndex, node: NodeRef, options: OptionsInput): { local: LocalNode; result: CompileResult } {
  const local = localNodeFrom(index.snapshot, node.cluster, node.name);
  try {
    return { local, result: compileNode(index, local, options) };
  } catch (error) {
    // A valid mesh and a node localNodeFrom accepts must compile (e.g. no CompileInvariantError).
    throw new PropertyViolation(`compileNode threw for node ${node.cluster}/${node.name}, options ${JSON.stringify(options)}:\n  ${describeError(error)}`);
  }
}

function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** `<svc>.<ns>.<domain>:<port>` for an outbound cluster or assignment name, with any `|local`/`|waypoint` removed. */
export function baseName(resource: string): string {
  return parseSubClusterName(resource)?.clusterName ?? resource;
}

function isOutbound(name: string): boolean {
  return parseOutboundClusterName(baseName(name)) !== undefined;
}

function addressOf(socket: { address?: string; port_value?: number } | undefined): string {
  return hostPort(socket?.address ?? "", socket?.port_value ?? 0);
}

// ---- 1. schema check and mesh path check ----------------------------------------------------

/**
 * Every node `compileMesh` compiles passes the upstream schema check, and the mesh path check over
 * them (`verifyMesh` = `checkCompiledMesh(compileMesh(...))`) is ok.
 */
export function checkSchemaAndPaths(snapshot: Snapshot, options: CompileOptions): void {
  let mesh: ReturnType<typeof compileMesh>;
  try {
    mesh = compileMesh(snapshot, options);
  } catch (error) {
    // Name the node that does not compile (compileMesh only skips nodes with input errors).
    const index = indexSnapshot(snapshot);
    for (const node of compilableNodes(snapshot)) compile(index, node, options);
    throw new PropertyViolation(`compileMesh threw, options ${JSON.stringify(options)}:\n  ${describeError(error)}`);
  }
  const problems: string[] = [];
  for (const [key, { result }] of mesh.nodes) {
    const found = [
      ...result.clusters.flatMap((c) => schemaProblems("envoy.config.cluster.v3.Cluster", Cluster.encode(c).finish(), c)),
      ...result.endpoints.flatMap((e) => schemaProblems("envoy.config.endpoint.v3.ClusterLoadAssignment", ClusterLoadAssignment.encode(e).finish(), e)),
      ...result.listeners.flatMap((l) => schemaProblems("envoy.config.listener.v3.Listener", Listener.encode(l).finish(), l)),
    ];
    problems.push(...found.map((p) => `${key}: ${p}`));
  }
  fail(`upstream schema check, options ${JSON.stringify(options)}`, problems);
  // `off` is the flat-network mode: it can only work when pod IPs are unique across clusters
  // (README: with a shared pod CIDR the remote pods collide, which is what the waypoint is for)
  // and route between them; on an isolated pod network, remote direct endpoints fail the check.
  const report = checkCompiledMesh(mesh);
  if (options.eastWestWaypoint === "off" && snapshot.mesh.podNetwork === "isolated" && isFlatNetwork(snapshot)) {
    const codes = report.paths.flatMap((p) => p.failures.map((f) => f.code)).filter((code) => code !== "POD_IP_NOT_ROUTABLE");
    fail(`off mode on an isolated pod network fails only with POD_IP_NOT_ROUTABLE, options ${JSON.stringify(options)}`, [...new Set(codes)]);
    return;
  }
  if (options.eastWestWaypoint === "off" && !isFlatNetwork(snapshot)) return;
  fail(`verifyMesh not ok, options ${JSON.stringify(options)}`, report.paths.filter((p) => p.status === "failed").map(formatPathReport));
}

/**
 * `upstreamProblems`, memoized by the encoded bytes: most resources repeat across nodes, modes and
 * meshes (shared EDS views, ingress clusters, app clusters), and the check is a function of the
 * bytes (the message renders the same whenever it encodes the same).
 */
const schemaMemo = new Map<string, readonly string[]>();

function schemaProblems(typeName: string, bytes: Uint8Array, message: unknown): readonly string[] {
  const key = `${typeName} ${Buffer.from(bytes).toString("base64")}`;
  let problems = schemaMemo.get(key);
  if (!problems) {
    problems = upstreamProblems(typeName, message);
    if (schemaMemo.size > 50_000) schemaMemo.clear();
    schemaMemo.set(key, problems);
  }
  return problems;
}

/** Whether no pod IP is registered in two clusters (so `off` mode's direct dials are unambiguous). */
export function isFlatNetwork(snapshot: Snapshot): boolean {
  const clusterOf = new Map<string, string>();
  for (const records of snapshot.services.values()) {
    for (const record of records) {
      const seen = clusterOf.get(record.ip);
      if (seen !== undefined && seen !== record.clusterName) return false;
      clusterOf.set(record.ip, record.clusterName);
    }
  }
  return true;
}

// ---- 2. the waypoint set grows with the mode ------------------------------------------------

/** `(outbound cluster, endpoint cluster, endpoint ip)` of every pod reached through a waypoint. */
export function viaWaypointKeys(result: CompileResult): Set<string> {
  return new Set(
    result.diagnostics.filter((d) => d.code === "ENDPOINT_VIA_WAYPOINT").map((d) => `${baseName(d.resource ?? "")} ${d.endpoint?.cluster} ${d.endpoint?.ip}`),
  );
}

export function checkWaypointMonotone(index: SnapshotIndex, node: NodeRef, options: CompileOptions): void {
  const socketSelection = options.socketSelection;
  const [off, cross, always] = (["off", "cross-cluster", "always"] as const).map((mode) =>
    viaWaypointKeys(compile(index, node, { ...options, eastWestWaypoint: mode }).result),
  );
  const missing = (from: Set<string>, to: Set<string>, label: string) => [...from].filter((k) => !to.has(k)).map((k) => `${label}: ${k}`);
  fail(`waypoint set not monotone for node ${node.cluster}/${node.name} (${socketSelection}, ${JSON.stringify(options)})`, [
    ...missing(off!, cross!, "via waypoint in off, not in cross-cluster"),
    ...missing(cross!, always!, "via waypoint in cross-cluster, not in always"),
  ]);
}

// ---- 3. no other cluster's pod IP in a waypoint mode ----------------------------------------

/** Every `socket_address` in the node's resources (Anys are bytes, so they are not entered). */
export function socketAddresses(result: CompileResult): { resource: string; address: string; port: number }[] {
  const found: { resource: string; address: string; port: number }[] = [];
  const walk = (resource: string, value: unknown): void => {
    if (typeof value !== "object" || value === null || value instanceof Uint8Array) return;
    if (Array.isArray(value)) {
      for (const item of value) walk(resource, item);
      return;
    }
    for (const [key, child] of Object.entries(value)) {
      if (key === "socket_address" && child && typeof child === "object") {
        const socket = child as { address?: string; port_value?: number };
        found.push({ resource, address: socket.address ?? "", port: socket.port_value ?? 0 });
      } else walk(resource, child);
    }
  };
  for (const c of result.clusters) walk(c.name ?? "", c);
  for (const e of result.endpoints) walk(e.cluster_name ?? "", e);
  for (const l of result.listeners) walk(l.name ?? "", l);
  return found;
}

export function checkNoRemotePodIps(index: SnapshotIndex, node: NodeRef, options: CompileOptions): void {
  if (options.eastWestWaypoint === "off") return;
  const { local, result } = compile(index, node, options);
  const parsed = parseOptions(options);
  const ownPodIps = new Set<string>();
  const remotePodIps = new Set<string>();
  // Node IPs: the node list's; a registry nodeIp only for a node the list does not have (a stale
  // registry IP of a listed node must never be dialed: the list wins).
  const nodeIps = new Set<string>(index.snapshot.nodes.map((n) => n.ip));
  for (const service of index.services.values()) {
    for (const endpoint of service.endpoints) {
      (endpoint.clusterName === local.clusterName ? ownPodIps : remotePodIps).add(endpoint.ip);
      const { nodeName, nodeIp } = endpoint.kubernetesMetadata;
      if (nodeIp && !index.nodes.has(`${endpoint.clusterName}/${nodeName}`)) nodeIps.add(nodeIp);
    }
  }
  const problems: string[] = [];
  for (const { resource, address, port } of socketAddresses(result)) {
    // Wildcard and loopback binds are listeners (inbound, egress, capture), not destinations.
    if (address === "0.0.0.0" || address === "127.0.0.1" || address === "::1" || ownPodIps.has(address)) continue;
    if (remotePodIps.has(address) && !nodeIps.has(address)) problems.push(`${resource}: ${hostPort(address, port)} is a pod IP of another cluster only`);
    else if (!nodeIps.has(address)) problems.push(`${resource}: ${hostPort(address, port)} is neither a pod of ${local.clusterName} nor a node`);
    else if (port !== parsed.tunnelPort) problems.push(`${resource}: node address ${hostPort(address, port)} is not at the tunnel port ${parsed.tunnelPort}`);
  }
  fail(`remote pod IP in the output of ${describe(node, options)}`, problems);
}

// ---- 4. priorities --------------------------------------------------------------------------

const EMITTED = new Set(["ENDPOINT_DIRECT", "ENDPOINT_VIA_WAYPOINT"]);

function emitted(result: CompileResult): Diagnostic[] {
  return result.diagnostics.filter((d) => EMITTED.has(d.code));
}

/** Priority of each lb_endpoint address in an assignment. */
function prioritiesByAddress(assignment: ClusterLoadAssignment): Map<string, number> {
  const out = new Map<string, number>();
  for (const group of assignment.endpoints ?? []) {
    for (const lb of group.lb_endpoints ?? []) out.set(addressOf(lb.endpoint?.address?.socket_address), group.priority ?? 0);
  }
  return out;
}

export function checkPriorities(index: SnapshotIndex, node: NodeRef, options: CompileOptions): void {
  const { local, result } = compile(index, node, options);
  const problems: string[] = [];
  /** Per outbound cluster: the priority Envoy sees for each emitted pod, an aggregate's halves flattened local first. */
  const flattened = new Map<string, { cluster: string; priority: number }[]>();
  const levelsOf = new Map<string, number>();
  for (const assignment of result.endpoints) {
    const name = assignment.cluster_name ?? "";
    const levels = [...new Set((assignment.endpoints ?? []).map((g) => g.priority ?? 0))].sort((a, b) => a - b);
    levelsOf.set(name, levels.length);
    if (levels.some((p, i) => p !== i)) problems.push(`${name}: priorities ${levels.join(", ")} are not contiguous from 0`);
    if (!isOutbound(name)) continue;
    const byAddress = prioritiesByAddress(assignment);
    const diagnostics = emitted(result).filter((d) => d.resource === name);
    const covered = new Set<string>();
    for (const d of diagnostics) {
      const actual = d.address === undefined ? undefined : byAddress.get(d.address);
      if (actual === undefined)
        problems.push(`${name}: diagnostic ${d.code} for ${d.endpoint?.cluster}/${d.endpoint?.ip} names ${d.address}, not in the assignment`);
      else if (actual !== d.priority) problems.push(`${name}: diagnostic says ${d.address} is at priority ${d.priority}, the assignment has ${actual}`);
      if (d.address) covered.add(d.address);
    }
    for (const address of byAddress.keys()) if (!covered.has(address)) problems.push(`${name}: ${address} is emitted without a diagnostic`);
  }
  for (const d of emitted(result)) {
    const resource = d.resource ?? "";
    // The aggregate tries `|local` first: the waypoint half's priorities come after the local half's.
    const offset = resource.endsWith("|waypoint") ? (levelsOf.get(`${baseName(resource)}|local`) ?? 0) : 0;
    const list = flattened.get(baseName(resource)) ?? [];
    list.push({ cluster: d.endpoint?.cluster ?? "", priority: offset + (d.priority ?? 0) });
    flattened.set(baseName(resource), list);
  }
  for (const [name, list] of flattened) {
    const same = list.filter((e) => e.cluster === local.clusterName).map((e) => e.priority);
    const remote = list.filter((e) => e.cluster !== local.clusterName).map((e) => e.priority);
    if (same.length > 0 && remote.length > 0 && Math.max(...same) >= Math.min(...remote)) {
      problems.push(
        `${name}: a same-cluster endpoint at ${options.socketSelection === "aggregate" ? "flattened " : ""}priority ${Math.max(...same)} is not ahead of a remote one at ${Math.min(...remote)}`,
      );
    }
  }
  fail(`priorities of ${describe(node, options)}`, problems);
}

// ---- 5. addresses and weights ---------------------------------------------------------------

export function checkAddressesAndWeights(index: SnapshotIndex, node: NodeRef, options: CompileOptions): void {
  const { result } = compile(index, node, options);
  const problems: string[] = [];
  for (const assignment of result.endpoints) {
    const name = assignment.cluster_name ?? "";
    const seen = new Set<string>();
    const sums = new Map<number, number>();
    for (const group of assignment.endpoints ?? []) {
      for (const lb of group.lb_endpoints ?? []) {
        const address = addressOf(lb.endpoint?.address?.socket_address);
        if (seen.has(address)) problems.push(`${name}: ${address} appears twice`);
        seen.add(address);
        const weight = lb.load_balancing_weight ?? 1;
        if (!Number.isInteger(weight) || weight < 1 || weight > MAX_UINT32) problems.push(`${name}: ${address} has weight ${weight}`);
        sums.set(group.priority ?? 0, (sums.get(group.priority ?? 0) ?? 0) + weight);
      }
    }
    for (const [priority, sum] of sums) if (sum > MAX_UINT32) problems.push(`${name}: priority ${priority} weights sum to ${sum} > ${MAX_UINT32}`);
  }
  fail(`addresses/weights of ${describe(node, options)}`, problems);
}

// ---- 6. conservation ------------------------------------------------------------------------

export function checkConservation(index: SnapshotIndex, node: NodeRef, options: CompileOptions): void {
  const { local, result } = compile(index, node, options);
  const meshDomain = index.snapshot.mesh.meshDomain;
  const key = (resource: string, cluster: string | undefined, ip: string | undefined) => `${baseName(resource)} ${cluster} ${ip}`;
  const emittedKeys = new Map<string, number>();
  const leftOutKeys = new Set<string>();
  for (const d of result.diagnostics) {
    if (!d.endpoint || !d.resource) continue;
    const k = key(d.resource, d.endpoint.cluster, d.endpoint.ip);
    if (EMITTED.has(d.code)) emittedKeys.set(k, (emittedKeys.get(k) ?? 0) + 1);
    else if (LEFT_OUT_CODES.has(d.code)) leftOutKeys.add(k);
  }
  const problems: string[] = [];
  const scope = local.dependencies ?? index.serviceKeys;
  for (const serviceKey of scope) {
    const service = index.services.get(serviceKey);
    if (!service) continue;
    for (const port of service.ports) {
      const cluster = outboundClusterName(meshDomain, { ...service.ref, port });
      if (!result.clusters.some((c) => c.name === cluster)) problems.push(`${serviceKey}:${port}: no cluster ${cluster}`);
      for (const endpoint of service.endpoints) {
        if (!endpoint.ports.includes(port)) continue;
        const k = key(cluster, endpoint.clusterName, endpoint.ip);
        const times = emittedKeys.get(k) ?? 0;
        const who = `${serviceKey} ${endpoint.clusterName}/${endpoint.ip} (node ${endpoint.kubernetesMetadata.nodeName || "-"}) for ${cluster}`;
        if (times === 0 && !leftOutKeys.has(k)) problems.push(`${who}: neither emitted nor left out with a reason`);
        if (times > 1) problems.push(`${who}: emitted ${times} times`);
        if (times > 0 && leftOutKeys.has(k)) problems.push(`${who}: both emitted and left out`);
      }
    }
  }
  fail(`conservation for ${describe(node, options)}`, problems);
}

// ---- 7. TLS ---------------------------------------------------------------------------------

function upstreamTls(socket: { name?: string; typed_config?: Parameters<typeof unpackAny>[0] } | undefined): UpstreamTlsContext | undefined {
  if (socket?.name !== EXTENSION.tlsTransportSocket || !socket.typed_config) return undefined;
  const unpacked = unpackAny(socket.typed_config);
  return unpacked?.typeName === "envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext" ? (unpacked.message as UpstreamTlsContext) : undefined;
}

function uriPins(tls: UpstreamTlsContext): string[] {
  const common = tls.common_tls_context;
  const validation = common?.combined_validation_context?.default_validation_context ?? common?.validation_context;
  return (validation?.match_typed_subject_alt_names ?? [])
    .filter((san) => san.san_type === SubjectAltNameMatcher_SanType.URI && !!san.matcher?.exact)
    .map((san) => san.matcher!.exact!);
}

function matcherActions(matcher: Matcher): string[] {
  const onMatch = (target: Matcher_OnMatch): string[] => {
    if (target.matcher) return matcherActions(target.matcher);
    const action = target.action;
    if (action?.name !== EXTENSION.socketNameAction || !action.typed_config) return [`(action ${action?.name ?? "missing"})`];
    return [(unpackAny(action.typed_config)?.message as TransportSocketNameAction | undefined)?.name ?? "(no name)"];
  };
  return [
    ...Object.values(matcher.matcher_tree?.exact_match_map?.map ?? {}).flatMap(onMatch),
    ...(matcher.on_no_match ? onMatch(matcher.on_no_match) : ["(no on_no_match)"]),
  ];
}

export function checkTls(index: SnapshotIndex, node: NodeRef, options: CompileOptions): void {
  const { result } = compile(index, node, options);
  const problems: string[] = [];
  for (const listener of result.listeners.filter((l) => l.name === TUNNEL_LISTENER_NAME)) {
    for (const chain of listener.filter_chains ?? []) if (chain.transport_socket) problems.push(`ew_tunnel chain ${chain.name} has a transport_socket`);
  }
  for (const cluster of result.clusters) {
    const name = cluster.name ?? "";
    if (name.startsWith("ew_ingress_")) {
      if (cluster.transport_socket || (cluster.transport_socket_matches ?? []).length > 0 || cluster.transport_socket_matcher)
        problems.push(`${name} originates TLS`);
      continue;
    }
    if (!isOutbound(name) || cluster.cluster_type?.name === EXTENSION.aggregateCluster) continue;
    const target = parseOutboundClusterName(baseName(name))!;
    const service = index.services.get(`${target.namespace}/${target.service}`);
    const domains = service && service.trustDomains.length > 0 ? service.trustDomains : [trustDomainOfCluster(index.snapshot.mesh.trust, node.cluster)!];
    const expectedPins = new Set(domains.map((td) => serviceSpiffeId(td, target)));
    const sockets = [
      ...(cluster.transport_socket ? [{ name: "(transport_socket)", socket: cluster.transport_socket }] : []),
      ...(cluster.transport_socket_matches ?? []).map((m) => ({ name: m.name ?? "", socket: m.transport_socket })),
    ];
    if (sockets.length === 0) problems.push(`${name}: no transport socket at all (plaintext)`);
    for (const { name: socketName, socket } of sockets) {
      const tls = upstreamTls(socket);
      if (!tls) {
        problems.push(`${name}: socket ${socketName} is not an UpstreamTlsContext`);
        continue;
      }
      const pins = uriPins(tls);
      if (pins.length === 0) problems.push(`${name}: socket ${socketName} pins no URI SAN`);
      for (const pin of pins) if (!expectedPins.has(pin)) problems.push(`${name}: socket ${socketName} pins ${pin}, not the destination service`);
    }
    if (cluster.transport_socket_matcher) {
      const table = new Set((cluster.transport_socket_matches ?? []).map((m) => m.name));
      for (const action of matcherActions(cluster.transport_socket_matcher))
        if (!table.has(action)) problems.push(`${name}: matcher action names ${action}, not in the socket table`);
    } else if ((cluster.transport_socket_matches ?? []).length > 0) problems.push(`${name}: a socket table without a matcher`);
  }
  fail(`TLS of ${describe(node, options)}`, problems);
}

// ---- 8. input order -------------------------------------------------------------------------

/** Every resource's bytes, by kind and name, plus the xDS versions. */
export function fingerprint(result: CompileResult): { bytes: string[]; versions: string[] } {
  const bytes = [
    ...result.clusters.map((c) => `C ${c.name} ${Buffer.from(Cluster.encode(c).finish()).toString("base64")}`),
    ...result.endpoints.map((e) => `E ${e.cluster_name} ${Buffer.from(ClusterLoadAssignment.encode(e).finish()).toString("base64")}`),
    ...result.listeners.map((l) => `L ${l.name} ${Buffer.from(Listener.encode(l).finish()).toString("base64")}`),
  ];
  const versions = Object.entries(toXdsResources(result)).flatMap(([type, resources]) => resources.map((r) => `${type} ${r.name} ${r.version}`));
  return { bytes, versions };
}

/** A seeded Fisher–Yates shuffle (mulberry32). */
export function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

export function mulberry32(seed: number): () => number {
  let state = seed | 0;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffledObject<T>(record: Record<string, T>, random: () => number, inner: (value: T) => T = (v) => v): Record<string, T> {
  return Object.fromEntries(shuffled(Object.entries(record), random).map(([k, v]) => [k, inner(v)]));
}

/** The same mesh with every list and map in another order: nodes, services, records, metadata, ports, exports, protocols, dependencies. */
export function permutedDocument(doc: any, seed: number): any {
  const random = mulberry32(seed);
  const copy = structuredClone(doc);
  copy.nodes = shuffled(copy.nodes ?? [], random);
  copy.services = shuffledObject(copy.services, random, (records: any[]) =>
    shuffled(records, random).map((record) => {
      if (typeof record !== "object") return record;
      const out: any = shuffledObject(record, random);
      if (out.metadata) out.metadata = shuffledObject(out.metadata, random);
      if (out.ports) out.ports = shuffled(out.ports, random);
      return out;
    }),
  );
  if (copy.exports) copy.exports = shuffled(copy.exports, random);
  if (copy.protocols) copy.protocols = shuffledObject(copy.protocols, random, (ports: any) => shuffledObject(ports, random));
  if (copy.dependencies) copy.dependencies = shuffledObject(copy.dependencies, random, (deps: any) => shuffled(deps, random));
  if (copy.mesh.trust.trustDomains) copy.mesh.trust.trustDomains = shuffled(copy.mesh.trust.trustDomains, random);
  return copy;
}

/** Compiles every compilable node of `doc` and of a permutation of it; their fingerprints must be equal. */
export function checkPermutationInvariance(doc: unknown, seed: number, nodes: readonly NodeRef[], options: CompileOptions): void {
  const original = indexSnapshot(parseSnapshot(structuredClone(doc)));
  const permuted = indexSnapshot(parseSnapshot(permutedDocument(doc, seed)));
  const differ = (a: string[], b: string[], kind: string) => {
    const [setA, setB] = [new Set(a), new Set(b)];
    const problems = [
      ...a.filter((x) => !setB.has(x)).map((x) => `${kind} only in the original: ${x.slice(0, 200)}`),
      ...b.filter((x) => !setA.has(x)).map((x) => `${kind} only in the permutation: ${x.slice(0, 200)}`),
    ];
    if (problems.length === 0 && a.join("\n") !== b.join("\n")) problems.push(`${kind}: the same resources in another order`);
    return problems;
  };
  for (const node of nodes) {
    const reference = fingerprint(compile(original, node, options).result);
    const other = fingerprint(compile(permuted, node, options).result);
    fail(`input permutation (seed ${seed}) changed the output of ${describe(node, options)}`, [
      ...differ(reference.bytes, other.bytes, "bytes"),
      ...differ(reference.versions, other.versions, "version"),
    ]);
  }
}
