/**
 * What the server serves: the current snapshot, its index and, per node that has connected, its
 * compiled xDS resources. A new snapshot is indexed from the previous index and the known nodes it
 * can reach recompiled, all at once or a few at a time (`accept`, then `recompileStale`; a
 * snapshot read afresh in which only records, node statuses, dependencies, VIPs, protocols and
 * exports changed is taken as an update of the previous one, see `asUpdateOf`); a node keeps its
 * `LocalNode` while nothing it is derived from changed, so the compiler reuses its per-node work,
 * and a type's resource list keeps its identity while none of its resources changed, so streams
 * can tell "nothing to push" by `===`.
 */
import { compileNode } from "../compile/compile-node.js";
import { toXdsResources, versionInfo, XDS_TYPE_URLS, type XdsResource, type XdsResources, type XdsTypeUrl } from "../emit/xds.js";
import type { LocalNode } from "../model/node.js";
import { type Options, type OptionsInput, parseOptions, type WaypointMode } from "../model/options.js";
import { asRegistryUpdate } from "../model/registry-update.js";
import { isValidatedSnapshot, type Snapshot } from "../model/snapshot.js";
import {
  changedServices,
  changedStatuses,
  type HostedEndpoint,
  indexSnapshot,
  localNodeIn,
  nodeKey,
  type SnapshotIndex,
  updatable,
} from "../plan/snapshot-index.js";
import { sameItems, sameMembers } from "../util/arrays.js";
import { changedKeys } from "../util/changes.js";
import { compositeKey } from "../util/keys.js";
import { getOrInsert } from "../util/maps.js";
import { indexOfSortedText } from "../util/order.js";

/** The three resource types, in the order Envoy warms them: clusters, their endpoints, listeners. */
export const TYPE_ORDER: readonly XdsTypeUrl[] = [XDS_TYPE_URLS.clusters, XDS_TYPE_URLS.endpoints, XDS_TYPE_URLS.listeners];

/** One node's compiled resources. Replaced, never mutated, when they change. */
export interface NodeResources {
  /** `"<cluster>/<node>"`. */
  readonly key: string;
  readonly resources: XdsResources;
}

interface NodeEntry {
  readonly key: string;
  readonly cluster: string;
  readonly name: string;
  /** What the LocalNode was derived from: reused while all of these are the same objects. */
  readonly inputs: readonly unknown[];
  /** The node's registry records in the index it was compiled from. */
  readonly hosted: readonly HostedEndpoint[] | undefined;
  readonly local: LocalNode;
  readonly compiled: NodeResources;
}

/** What recompiling stale nodes did: the nodes whose resources changed, and those the snapshot cannot compile. */
export interface Recompiled {
  readonly changed: NodeResources[];
  /** Forgotten: the new snapshot cannot compile them (the error says why). */
  readonly failed: { key: string; error: unknown }[];
}

export class MeshState {
  #snapshot: Snapshot;
  #index: SnapshotIndex;
  readonly options: Options;
  readonly #nodes = new Map<string, NodeEntry>();
  /**
   * Known nodes compiled from an earlier snapshot than the one served, which it can reach: marked
   * by `accept`, brought up to date by `recompileStale`. Until then they keep their last resources.
   */
  readonly #stale = new Set<string>();

  constructor(snapshot: Snapshot, options: Options | OptionsInput = {}) {
    this.options = parseOptions(options);
    this.#snapshot = snapshot;
    this.#index = indexSnapshot(snapshot);
  }

  get snapshot(): Snapshot {
    return this.#snapshot;
  }

  /** How many known nodes wait for `recompileStale`. */
  get staleNodes(): number {
    return this.#stale.size;
  }

  /**
   * The node's resources, compiled on first use; a stale node's last ones (see `accept`). Throws
   * `InputError` when the snapshot cannot compile it (not in the mesh, no known IP).
   */
  resources(cluster: string, name: string): NodeResources {
    const key = nodeKey(cluster, name);
    const known = this.#nodes.get(key);
    if (known) return known.compiled;
    const entry = this.#compile(cluster, name, undefined);
    this.#nodes.set(key, entry);
    return entry.compiled;
  }

  /** Forgets a node nobody is connected as any more. */
  forget(cluster: string, name: string): void {
    const key = nodeKey(cluster, name);
    this.#nodes.delete(key);
    this.#stale.delete(key);
  }

  /** `accept`, then every stale node recompiled. */
  update(given: Snapshot): Recompiled {
    this.accept(given);
    return this.recompileStale();
  }

  /**
   * Replaces the snapshot (see `asUpdateOf`) and marks stale the known nodes the change can reach,
   * on top of any still stale from an earlier snapshot: those are recompiled whatever this one
   * changed, since what reaches them was measured against the snapshot they missed.
   */
  accept(given: Snapshot): void {
    const previous = this.#index;
    const snapshot = asUpdateOf(this.#snapshot, given);
    this.#index = indexSnapshot(snapshot, previous);
    this.#snapshot = snapshot;
    const touches = touchedBy(previous, this.#index, this.options.eastWestWaypoint);
    for (const [key, entry] of this.#nodes) if (!touches || touches(entry)) this.#stale.add(key);
  }

  /**
   * Recompiles stale nodes, oldest mark first, until none is left or `more()` (asked after each
   * node, so every call makes progress) says to stop. A node the snapshot cannot compile is
   * forgotten and reported.
   */
  recompileStale(more: () => boolean = () => true): Recompiled {
    const changed: NodeResources[] = [];
    const failed: { key: string; error: unknown }[] = [];
    for (const key of this.#stale) {
      this.#stale.delete(key);
      const entry = this.#nodes.get(key)!;
      try {
        const next = this.#compile(entry.cluster, entry.name, entry);
        this.#nodes.set(key, next);
        if (next.compiled !== entry.compiled) changed.push(next.compiled);
      } catch (error) {
        this.#nodes.delete(key);
        failed.push({ key, error });
      }
      if (!more()) break;
    }
    return { changed, failed };
  }

  #compile(cluster: string, name: string, previous: NodeEntry | undefined): NodeEntry {
    const key = nodeKey(cluster, name);
    const hosted = this.#index.hostedBy.get(key);
    const { mesh, dependencies } = this.#snapshot;
    const inputs = [mesh, this.#index.nodes.get(key), dependencies, hosted];
    const local = previous && sameItems(previous.inputs, inputs) ? previous.local : localNodeIn(this.#index, cluster, name);
    const resources = toXdsResources(compileNode(this.#index, local, this.options));
    const compiled = previous ? reuseUnchanged(previous.compiled, key, resources) : { key, resources };
    return { key, cluster, name, inputs, hosted, local, compiled };
  }
}

/**
 * `next`, or, when it was read afresh (another mesh object: a mesh file read again) but only
 * records, node statuses, dependencies, VIPs, protocols and exports differ, the same content as
 * an update of `previous` (`asRegistryUpdate`), so that the index redoes only what those touch and
 * only the nodes they reach are recompiled.
 */
function asUpdateOf(previous: Snapshot, next: Snapshot): Snapshot {
  if (previous.mesh === next.mesh || !isValidatedSnapshot(previous) || !isValidatedSnapshot(next)) return next;
  return asRegistryUpdate(previous, next);
}

/**
 * When `next` differs from `previous` only in some services' records and some nodes' statuses,
 * dependencies, VIPs, declared protocols and exports (what registry events and re-reads change),
 * which nodes can see the change: those whose status changed, and those that depend on a changed
 * service (or on every service), host a pod of one, or whose own records changed — a service
 * being changed when its records, protocols, being exported or VIP are — and those hosting a pod
 * of a service whose dependencies changed. A node's status and address reach the other nodes
 * only through its waypoint endpoints (`resolveNode` is all that reads them): a change to either
 * (a node joining or leaving the list, a new address, its records moving its derived address)
 * touches the nodes calling a service with pods there from where `mode` routes to them through a
 * waypoint — another cluster in `cross-cluster` mode, any other node in `always` mode, none in
 * `off` mode. Undefined — every node — when anything else changed: the mesh settings, dependency
 * or export data given or dropped, or which clusters list their nodes.
 */
function touchedBy(previous: SnapshotIndex, next: SnapshotIndex, mode: WaypointMode): ((entry: NodeEntry) => boolean) | undefined {
  const [a, b] = [previous.snapshot, next.snapshot];
  const sameSettings = updatable(a, b) && (a.dependencies === undefined) === (b.dependencies === undefined);
  if (!sameSettings || !sameMembers(previous.clustersWithNodeList, next.clustersWithNodeList)) return undefined;
  const changed = new Set(changedServices(previous, b).changed);
  const changedNodes = changedStatuses(previous.nodes, next.nodes);
  const namedNodes = [...changed].flatMap((key) =>
    [...(a.services.get(key) ?? []), ...(b.services.get(key) ?? [])].map((record) => nodeKey(record.clusterName, record.kubernetesMetadata.nodeName)),
  );
  const moved = [...namedNodes, ...changedNodes].filter((node) => previous.nodeAddresses.get(node) !== next.nodeAddresses.get(node));
  for (const key of changedKeys(a.vips, b.vips)) changed.add(key);
  const callersChanged = changedKeys(a.dependencies, b.dependencies);
  const changedList = [...changed];
  const statusChanged = new Set(changedNodes);
  const waypointsChanged = mode === "off" ? [] : changedWaypoints(previous, next, new Set([...changedNodes, ...moved]));
  return (entry) =>
    statusChanged.has(entry.key) ||
    entry.hosted !== next.hostedBy.get(entry.key) ||
    entry.local.dependencies === undefined ||
    changedList.some((service) => includesSorted(entry.local.dependencies!, service)) ||
    // Its waypoint side (tunnel chains, ingress fallbacks) lists every pod of the services it hosts
    // (its records' services: its pods were derived from them); its pods call what those depend on.
    (entry.hosted?.some((record) => changed.has(record.service) || callersChanged.has(record.service)) ?? false) ||
    waypointsChanged.some(({ service, cluster }) => (mode === "always" || cluster !== entry.cluster) && includesSorted(entry.local.dependencies!, service));
}

/** Each service with a pod on a node whose status or address changed, with that node's cluster (once per pair). */
function changedWaypoints(previous: SnapshotIndex, next: SnapshotIndex, nodes: Iterable<string>): { service: string; cluster: string }[] {
  const pairs = new Map<string, { service: string; cluster: string }>();
  for (const node of nodes) {
    for (const { service, endpoint } of [...(previous.hostedBy.get(node) ?? []), ...(next.hostedBy.get(node) ?? [])]) {
      pairs.set(compositeKey(service, endpoint.clusterName), { service, cluster: endpoint.clusterName });
    }
  }
  return [...pairs.values()];
}

/** Whether sorted `list` holds `key` (parseNode sorts a node's dependencies). */
function includesSorted(list: readonly string[], key: string): boolean {
  return indexOfSortedText(list, key) >= 0;
}

/** The previous lists for types whose resources are all the same objects; the previous result when no type changed. */
function reuseUnchanged(previous: NodeResources, key: string, next: XdsResources): NodeResources {
  let changed = false;
  const merged = {} as Record<XdsTypeUrl, readonly XdsResource[]>;
  for (const url of TYPE_ORDER) {
    const same = sameResources(previous.resources[url], next[url]);
    merged[url] = same ? previous.resources[url] : next[url];
    changed ||= !same;
  }
  return changed ? { key, resources: merged } : previous;
}

function sameResources(a: readonly XdsResource[], b: readonly XdsResource[]): boolean {
  if (a === b) return true;
  return a.length === b.length && a.every((resource, i) => resource === b[i] || (resource.name === b[i]!.name && resource.version === b[i]!.version));
}

const versions = new WeakMap<readonly XdsResource[], string>();

/** `versionInfo` of a resource list, computed once per list object. */
export function listVersion(resources: readonly XdsResource[]): string {
  return getOrInsert(versions, resources, () => versionInfo(resources));
}
