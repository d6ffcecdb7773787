/**
 * `verifyMesh`: compile every node, then replay every source (each hosted pod, and each node
 * itself) calling every service port it depends on, and report where each connection lands — or
 * the mistake that stops it. `explainPath` does the same for one pair, as a trace.
 */

import { InputError } from "../errors.js";
import { hostedPodName, type LocalNode } from "../model/node.js";
import { type Options, type OptionsInput, parseOptions } from "../model/options.js";
import type { Snapshot } from "../model/snapshot.js";
import type { SharedAddress } from "../model/snapshot-checks.js";
import { parseServiceKey, type ServiceKey, serviceKey } from "../naming.js";
import { sharedPodAddresses } from "../plan/endpoints.js";
import { planNode } from "../plan/node-plan.js";
import { asIndex, localNodeIn, type SnapshotIndex } from "../plan/snapshot-index.js";
import { getOrInsert, remember } from "../util/maps.js";
import { compareText } from "../util/order.js";
import {
  type CompiledMesh,
  type CompileProgress,
  compileMesh,
  lazyMesh,
  lazyTunnels,
  type MeshView,
  meshNodes,
  NodeByNodeMesh,
  podsByAddress,
  resourceLookups,
  tunnelAddresses,
} from "./compiled-mesh.js";
import { PATH_FAILURES, type PathReport, type PathSource, type PathTarget, type PoolUse, type ReplayContext, replayPath } from "./path.js";
import { pathSettingsLines } from "./path-settings.js";
import { type MemoKind, ReplayMemo } from "./replay-memo.js";

/** The mesh path check's result: every path replayed, and the nodes that could not be compiled. */
export interface MeshCheckReport {
  readonly ok: boolean;
  readonly mode: Options["eastWestWaypoint"];
  readonly paths: readonly PathReport[];
  /** Nodes the snapshot makes uncompilable, with the reason: the check fails. */
  readonly skippedNodes: ReadonlyMap<string, string>;
  /** Nodes whose address no input gives yet: not compiled, their pods left out everywhere (`NO_NODE_IP`). */
  readonly unaddressedNodes: readonly string[];
  /** Addresses naming pods of different services in different clusters (`sharedAddresses`): reported, in every mode. */
  readonly sharedAddresses: readonly SharedAddress[];
  /** Nodes whose compile failed closed (CompileInvariantError): the check fails. */
  readonly failedNodes: ReadonlyMap<string, string>;
}

/** Called as paths are replayed: paths replayed so far, paths in all; first with 0, as the replay starts. For progress lines. */
export type ReplayProgress = (done: number, total: number) => void;

/**
 * Progress of a mesh check, phase by phase: `compiled` as each node is compiled, then `replayed`
 * as the paths are (after each service port's paths, so `done` moves in steps).
 */
export interface CheckProgress {
  readonly compiled?: CompileProgress;
  readonly replayed?: ReplayProgress;
}

/**
 * `onProgress`: a function hears the compile only (nodes compiled / total); a `CheckProgress` hears
 * both phases. In `sockets` mode each node is compiled and its paths replayed in turn
 * (`replayNodeByNode`): `compiled` hears each node as its turn comes, `replayed` only the end.
 */
export function verifyMesh(
  snapshot: Snapshot | SnapshotIndex,
  options: Options | OptionsInput = {},
  onProgress?: CompileProgress | CheckProgress,
): MeshCheckReport {
  const progress = progressOf(onProgress);
  const parsed = parseOptions(options);
  if (!checksNodeByNode(parsed)) return checkCompiledMesh(compileMesh(snapshot, parsed, progress.compiled), progress.replayed);
  const reports: PathReport[] = [];
  let failed = false;
  const nodes = replayNodeByNode(asIndex(snapshot), parsed, progress.compiled, (report) => {
    reports.push(report);
    if (report.status === "failed") failed = true;
  });
  progress.replayed?.(reports.length, reports.length);
  return { ...checkOutcome(nodes, !failed), paths: reports };
}

/** Both phases' callbacks: a plain function hears the compile only. */
export function progressOf(onProgress: CompileProgress | CheckProgress | undefined): CheckProgress {
  return typeof onProgress === "function" ? { compiled: onProgress } : (onProgress ?? {});
}

/** The check over already-compiled output (tests seed mistakes into it). */
export function checkCompiledMesh(mesh: CompiledMesh, onReplayed?: ReplayProgress): MeshCheckReport {
  const paths = meshPaths(mesh);
  const reports = new Array<PathReport>(paths.count);
  replayEach(replayContext(mesh), paths, onReplayed, (at, report) => {
    reports[at] = report;
  });
  withSharedPoolFailures(reports);
  const noPathFailed = reports.every((p) => p.status !== "failed");
  return { ...checkOutcome(mesh, noPathFailed), paths: reports };
}

/** Everything of a check's report but its paths, given whether every path went without failure. */
export function checkOutcome(
  mesh: Pick<CompiledMesh, "index" | "options" | "skipped" | "unaddressed" | "failed">,
  noPathFailed: boolean,
): Omit<MeshCheckReport, "paths"> {
  return {
    ok: mesh.failed.size === 0 && mesh.skipped.size === 0 && noPathFailed,
    mode: mesh.options.eastWestWaypoint,
    skippedNodes: mesh.skipped,
    unaddressedNodes: mesh.unaddressed,
    sharedAddresses: sharedPodAddresses(mesh.index),
    failedNodes: mesh.failed,
  };
}

/** Every path the check replays: each node's sources (`sourcesOf`), each with the targets it calls, in report order. */
export interface MeshPaths {
  readonly sources: readonly PathSource[];
  /** By source: what `targetsOf` gives (one list shared by sources of a service). */
  readonly targets: readonly (readonly PathTarget[])[];
  /** By source: the report index of its first path (its paths' reports follow in its targets' order). */
  readonly offsets: readonly number[];
  readonly count: number;
}

export function meshPaths(mesh: CompiledMesh): MeshPaths {
  const lookup = targetLookup(mesh);
  const sources: PathSource[] = [];
  const targets: (readonly PathTarget[])[] = [];
  const offsets: number[] = [];
  let count = 0;
  for (const { local } of mesh.nodes.values()) {
    for (const source of sourcesOf(mesh, local)) {
      const list = targetsOf(mesh, local, source, lookup);
      sources.push(source);
      targets.push(list);
      offsets.push(count);
      count += list.length;
    }
  }
  return { sources, targets, offsets, count };
}

/**
 * Every path replayed, handed to `each` with its index in report order (each source's targets in
 * turn) but replayed target by target. The replay is bound by memory latency, not arithmetic:
 * paths to one service port share its levels, dials, sockets and arrivals, which stay in cache
 * while that target's paths are replayed together; replayed source by source, each path met them
 * cold (W10k's check: 0.8× the CPU time in interleaved A/B). Paths are independent, so the order
 * changes no report. What the replay derived for a target alone (`ReplayMemo.forTarget`: its
 * levels, what dialing them yielded, their sockets and arrivals) is dropped once its paths are
 * done: held to the end, it was ~0.2 GB of the ~1.2 GB a W1 replay held besides the nodes.
 */
export function replayEach(
  context: ReplayContext,
  { sources, targets, offsets, count }: MeshPaths,
  onReplayed: ReplayProgress | undefined,
  each: (at: number, report: PathReport) => void,
): void {
  // By target object (one per service port): each path's source index, then its report index.
  const byTarget = new Map<PathTarget, number[]>();
  for (const [source, list] of targets.entries()) {
    for (const [j, target] of list.entries()) (byTarget.get(target) ?? remember(byTarget, target, [])).push(source, offsets[source]! + j);
  }
  let done = 0;
  onReplayed?.(done, count);
  for (const [target, at] of byTarget) {
    for (let i = 0; i < at.length; i += 2) each(at[i + 1]!, replayPath(context, sources[at[i]!]!, target));
    context.memo.endTarget();
    done += at.length / 2;
    onReplayed?.(done, count);
  }
}

/**
 * The memo's kinds kept from one node's paths to the next: what arrivals at pods and waypoints
 * derive (from receiving sides, which stay), endpoints' addresses (keyed by the views' assignment
 * endpoints, which the index keeps anyway) and names. Every other table may hold the node's own
 * output (its clusters, sockets, chains), so it goes with the node.
 */
const KEPT_ACROSS_NODES: ReadonlySet<MemoKind> = new Set<MemoKind>([
  "address",
  "arrivals",
  "forwarded",
  "mTLS hops",
  "shared trust domain",
  "source class ids",
  "target ids",
  "target names",
  "trust domain",
]);

/** The nodes a node-by-node check compiled, skipped, or found broken: its report but the paths. */
export type NodesCompiled = Pick<CompiledMesh, "index" | "options" | "skipped" | "unaddressed" | "failed">;

/**
 * Whether the mesh check goes node by node (`replayNodeByNode`): in `sockets` mode, where each
 * node's outbound clusters carry a socket per hosted identity (~15 MB a node on the figure-10 mesh)
 * and no two nodes share them. The replay then shares nothing between nodes' outbound clusters,
 * while holding every node compiled (`compileMesh`, then target by target) grows with the mesh
 * until it no longer fits: W10k's `aether-xds check` peaked at 3.6 GB of RSS that way, 0.56 GB
 * node by node.
 */
export function checksNodeByNode(options: Options): boolean {
  return options.sourceIdentity === "sockets";
}

/**
 * Every path of the mesh, node by node in key order, each node's sources and their targets in
 * turn: the reports come in the order `checkCompiledMesh` lists them, each with the pool failures
 * of its node applied (a pool is a node's own, so its node's reports are all it can be shared
 * across). Each node is compiled in full when its turn comes and let go after its paths; what
 * stays is its receiving side (`NodeByNodeMesh`), which other nodes' paths read. The reports are
 * those of the check over every node compiled up front, but for a node whose outbound clusters
 * break a compile invariant (a compiler bug, reported in `failedNodes` either way): paths arriving
 * at its pods are followed through its receiving side here, and left unverified there.
 * `onCompiled` hears each node as its turn comes.
 */
export function replayNodeByNode(
  index: SnapshotIndex,
  options: Options,
  onCompiled: CompileProgress | undefined,
  each: (report: PathReport) => void,
): NodesCompiled {
  const view = new NodeByNodeMesh(index, options);
  const context: ReplayContext = { mesh: view, tunnels: lazyTunnels(view), pods: podsByAddress(index), resources: resourceLookups(), memo: new ReplayMemo() };
  const targets = targetLookup(view);
  const skipped = new Map<string, string>();
  const failed = new Map<string, string>();
  const unaddressed: string[] = [];
  const all = meshNodes(index);
  for (const [done, [key]] of all.entries()) {
    onCompiled?.(done + 1, all.length);
    if (!index.nodeAddresses.has(key)) {
      unaddressed.push(key);
      continue;
    }
    const outcome = view.compileInFull(key);
    if (outcome.kind !== "compiled") {
      (outcome.kind === "skipped" ? skipped : failed).set(key, outcome.reason);
      continue;
    }
    const { local } = outcome.node;
    const reports: PathReport[] = [];
    for (const source of sourcesOf(view, local)) {
      for (const target of targetsOf(view, local, source, targets)) reports.push(replayPath(context, source, target));
    }
    for (const report of withSharedPoolFailures(reports)) each(report);
    view.release(key);
    context.memo.endNode(KEPT_ACROSS_NODES);
  }
  return { index, options, skipped, failed, unaddressed };
}

/**
 * Sources of one node whose connections to one cluster carry the same pool key share Envoy's
 * upstream pools there; if their certificates differ, a pooled connection opened by one carries
 * another's requests. Every path in such a group fails.
 */
export function withSharedPoolFailures(paths: PathReport[]): PathReport[] {
  const mixed = mixedPoolKeys(paths);
  if (mixed.size === 0) return paths;
  // By node, cluster and pool key: nested maps, so that no key is built per path; each path's
  // group is noted on the first pass, for the second.
  const certificates = new Map<string, Map<string, Map<string, Set<string>>>>();
  const groups = new Array<Set<string> | undefined>(paths.length);
  for (let i = 0; i < paths.length; i++) {
    const pool = paths[i]!.pool;
    if (pool?.key === undefined || !mixed.get(pool.node)?.has(pool.key)) continue;
    const group = poolGroup(certificates, pool.node, pool.cluster, pool.key);
    group.add(pool.certificate);
    groups[i] = group;
  }
  for (let i = 0; i < paths.length; i++) {
    const shared = groups[i];
    if (shared === undefined || shared.size < 2) continue;
    const path = paths[i]!;
    const others = [...shared].filter((certificate) => certificate !== path.pool!.certificate).sort(compareText);
    const reason = `${PATH_FAILURES.POOL_SHARED_ACROSS_SOURCES}: ${path.pool!.cluster} on ${path.pool!.node}, pool key "${path.pool!.key}", shared with ${others.join(", ")}`;
    paths[i] = { ...path, status: "failed", failures: [...path.failures, { code: "POOL_SHARED_ACROSS_SOURCES", reason, hops: [] }] };
  }
  return paths;
}

/**
 * The pool keys, by node, that the node's sources use with different certificates: only paths
 * with those keys can share a pool with another certificate. Found per node and key (few pairs),
 * so a mesh where every key has one certificate builds no group per cluster.
 */
function mixedPoolKeys(paths: readonly PathReport[]): ReadonlyMap<string, ReadonlySet<string>> {
  const keys = new PoolKeys();
  for (let i = 0; i < paths.length; i++) keys.note(paths[i]!.pool);
  return keys.mixed;
}

/** The pool keys seen so far, by node, with the first certificate each was used with; `mixed`: those used with another one too. */
export class PoolKeys {
  readonly #firstCertificate = new Map<string, Map<string, string>>();
  readonly mixed = new Map<string, Set<string>>();

  note(pool: PoolUse | undefined): void {
    if (pool?.key === undefined) return;
    const byKey = this.#firstCertificate.get(pool.node) ?? remember(this.#firstCertificate, pool.node, new Map<string, string>());
    const first = byKey.get(pool.key) ?? remember(byKey, pool.key, pool.certificate);
    if (first !== pool.certificate) (this.mixed.get(pool.node) ?? remember(this.mixed, pool.node, new Set<string>())).add(pool.key);
  }
}

function poolGroup(certificates: Map<string, Map<string, Map<string, Set<string>>>>, node: string, cluster: string, key: string): Set<string> {
  const byCluster = certificates.get(node) ?? remember(certificates, node, new Map<string, Map<string, Set<string>>>());
  const byKey = byCluster.get(cluster) ?? remember(byCluster, cluster, new Map<string, Set<string>>());
  return byKey.get(key) ?? remember(byKey, key, new Set<string>());
}

export function replayContext(mesh: CompiledMesh): ReplayContext {
  return { mesh, tunnels: tunnelAddresses(mesh), pods: podsByAddress(mesh.index), resources: resourceLookups(), memo: new ReplayMemo() };
}

/**
 * Each hosted pod and the node itself. A pod is told apart by its netns only when the node plan
 * gives it one of its own; otherwise its traffic, like the node's, carries the node identity.
 */
export function sourcesOf(mesh: Pick<MeshView, "index" | "options">, local: LocalNode): PathSource[] {
  const nodeRef = `${local.clusterName}/${local.nodeName}`;
  const identityByNetns = planNode(mesh.index, local, mesh.options).identityByNetns;
  const pods = [...local.pods]
    .sort((a, b) => compareText(`${a.namespace}/${a.name}`, `${b.namespace}/${b.name}`))
    .map(
      (pod): PathSource => ({
        node: nodeRef,
        cluster: local.clusterName,
        pod: { namespace: pod.namespace, name: pod.name, service: serviceKey({ namespace: pod.namespace, service: pod.serviceAccount }) },
        ...(pod.netns ? { netns: pod.netns } : {}),
        identity: identityByNetns.get(pod.netns) ?? local.spiffeId,
      }),
    );
  return [...pods, { node: nodeRef, cluster: local.clusterName, identity: local.spiffeId }];
}

/** The service ports a source calls: its service's dependencies (the node's for the node itself). */
export function targetsOf(
  mesh: Pick<MeshView, "index">,
  local: LocalNode,
  source: PathSource,
  targets: (keys: readonly ServiceKey[]) => readonly PathTarget[],
): readonly PathTarget[] {
  const declared = source.pod ? mesh.index.snapshot.dependencies?.get(source.pod.service) : local.dependencies;
  return targets(declared ?? mesh.index.serviceKeys);
}

/**
 * Each service's ports as targets, one object per service port for the whole check (the replay
 * memoizes by target), and a list of services' targets once per list (sources of a service share it).
 */
export function targetLookup(mesh: Pick<MeshView, "index">): (keys: readonly ServiceKey[]) => readonly PathTarget[] {
  const byService = new Map<ServiceKey, readonly PathTarget[]>();
  const ofService = (key: ServiceKey) => getOrInsert(byService, key, () => (mesh.index.services.get(key)?.ports ?? []).map((port) => ({ service: key, port })));
  const byList = new Map<readonly ServiceKey[], readonly PathTarget[]>();
  return (keys) => getOrInsert(byList, keys, () => keys.flatMap(ofService));
}

/**
 * One path, from `"<cluster>/<ns>/<pod>"` to `"<ns>/<svc>:<port>"`, replayed over the compiled
 * mesh: the report plus a readable trace. Both arguments are checked before anything is compiled,
 * and only the nodes the replay visits are: the source's in full, and the receiving side of the
 * waypoints' and destination pods' nodes it reaches (`compileNodeSide`). The same report as the
 * mesh check's for that path — unless a visited node's outbound clusters break a compile
 * invariant, which only the mesh check (compiling every node in full) reports.
 */
export function explainPath(
  snapshot: Snapshot | SnapshotIndex,
  from: string,
  to: string,
  options: Options | OptionsInput = {},
  onProgress?: CompileProgress,
): { report: PathReport; trace: string } {
  const mesh = lazyMesh(snapshot, options, onProgress);
  const source = findSource(mesh, from);
  const target = parseTarget(mesh.index, to);
  if (!mesh.node(source.node)) throw noSource(from);
  const context = { mesh, tunnels: lazyTunnels(mesh), pods: podsByAddress(mesh.index), resources: resourceLookups(), memo: new ReplayMemo() };
  const report = replayPath(context, source, target);
  return { report, trace: [formatPathReport(report), ...pathSettingsLines(mesh, report)].join("\n") };
}

/** The source pod, from the nodes whose registry records name it (first by node key), without compiling. */
function findSource(mesh: MeshView, from: string): PathSource {
  const [cluster, namespace, pod] = from.split("/");
  const hosts: string[] = [];
  for (const [key, hosted] of mesh.index.hostedBy) {
    if (!key.startsWith(`${cluster}/`)) continue;
    if (hosted.some(({ service, endpoint }) => hostedPodName(endpoint) === pod && parseServiceKey(service)?.namespace === namespace)) hosts.push(key);
  }
  hosts.sort(compareText);
  for (const key of hosts) {
    const local = localOf(mesh.index, key);
    const found = local && sourcesOf(mesh, local).find((s) => s.cluster === cluster && s.pod?.namespace === namespace && s.pod?.name === pod);
    if (found) return found;
  }
  throw noSource(from);
}

function localOf(index: SnapshotIndex, key: string): LocalNode | undefined {
  const { endpoint } = index.hostedBy.get(key)![0]!;
  try {
    return localNodeIn(index, endpoint.clusterName, endpoint.kubernetesMetadata.nodeName);
  } catch {
    // A node that cannot be compiled (e.g. no known IP) hosts no source.
    return undefined;
  }
}

function noSource(from: string): InputError {
  return new InputError("options", [{ path: "from", message: `no hosted pod ${from} on a compiled node (expected <cluster>/<namespace>/<pod>)` }]);
}

/** `"<ns>/<svc>:<port>"`, a port of a service the snapshot has. */
function parseTarget(index: SnapshotIndex, to: string): PathTarget {
  const match = /^([^:]+):(\d{1,5})$/.exec(to);
  const ref = match ? parseServiceKey(match[1]!) : undefined;
  if (!match || !ref) throw new InputError("options", [{ path: "to", message: `${to} is not <namespace>/<service>:<port>` }]);
  const target = { service: match[1] as ServiceKey, port: Number(match[2]) };
  const ports = index.services.get(target.service)?.ports;
  if (!ports) throw new InputError("options", [{ path: "to", message: `no service ${target.service} in the snapshot` }]);
  if (!ports.includes(target.port))
    throw new InputError("options", [{ path: "to", message: `service ${target.service} has no port ${target.port} (ports: ${ports.join(", ")})` }]);
  return target;
}

export function sourceName(source: PathSource): string {
  return source.pod ? `${source.cluster}/${source.pod.namespace}/${source.pod.name}` : `${source.node} (node)`;
}

/** A path report as lines: each landing and each failure with every hop that led there (the path's own, then its own). */
export function formatPathReport(report: PathReport): string {
  const lines = [`${sourceName(report.source)} → ${report.target.service}:${report.target.port} (${report.cluster}): ${report.status}`];
  if (report.status === "unreachable") lines.push("  no healthy endpoint in any priority");
  if (report.note) lines.push(`  not captured: ${report.note}`);
  const trace = (hops: readonly string[]) => {
    for (const hop of report.hops) lines.push(`    ${hop}`);
    for (const hop of hops) lines.push(`    ${hop}`);
  };
  for (const landing of report.landings) {
    lines.push(`  lands on ${landing.pod.cluster}/${landing.pod.namespace}/${landing.pod.name}${landing.via ? ` via ${landing.via}` : " directly"}`);
    trace(landing.hops);
  }
  for (const failure of report.failures) {
    lines.push(`  FAILED [${failure.code}] ${failure.reason}`);
    trace(failure.hops);
  }
  for (const skipped of report.unverified) lines.push(`  not followed [${skipped.code}] ${skipped.reason}`);
  return lines.join("\n");
}
