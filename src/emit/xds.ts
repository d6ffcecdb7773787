/**
 * A compile result as xDS resources for a control plane: every resource encoded, named and
 * versioned by a hash of its bytes, grouped by type URL — what a state-of-the-world or delta
 * DiscoveryResponse carries.
 */
import { hash } from "node:crypto";
import type { Cluster } from "../../gen/envoy/config/cluster/v3/cluster.js";
import type { ClusterLoadAssignment } from "../../gen/envoy/config/endpoint/v3/endpoint.js";
import type { Listener } from "../../gen/envoy/config/listener/v3/listener.js";
import type { Any } from "../../gen/google/protobuf/any.js";
import { type TYPE_URL_PREFIX, typeUrl } from "../envoy/any.js";
import { patchOf, type ResourceSet } from "../envoy/resources.js";
import { compareText } from "../util/order.js";
import { encodeAssignment } from "./assignment-encoding.js";
import { encodeCluster } from "./cluster-encoding.js";
import { encodeListener } from "./listener-encoding.js";
import { RESOURCE_TYPES, type ResourceKind } from "./text.js";

type TypeUrlOf<K extends ResourceKind> = `${typeof TYPE_URL_PREFIX}${(typeof RESOURCE_TYPES)[K]}`;

function xdsTypeUrl<K extends ResourceKind>(kind: K): TypeUrlOf<K> {
  return typeUrl(RESOURCE_TYPES[kind]) as TypeUrlOf<K>;
}

/** The type URL of each resource kind: `XdsResources` and `XdsDiff` are keyed by them. */
export const XDS_TYPE_URLS: { readonly [K in ResourceKind]: TypeUrlOf<K> } = {
  clusters: xdsTypeUrl("clusters"),
  endpoints: xdsTypeUrl("endpoints"),
  listeners: xdsTypeUrl("listeners"),
};

/** The type URL of a Cluster, a ClusterLoadAssignment or a Listener. */
export type XdsTypeUrl = (typeof XDS_TYPE_URLS)[ResourceKind];

/** One resource as an xDS response carries it: name, content version and the packed message. */
export interface XdsResource {
  /** Cluster.name, ClusterLoadAssignment.cluster_name or Listener.name. */
  readonly name: string;
  /** The first 16 hex digits of the SHA-256 of the encoded resource. */
  readonly version: string;
  /** The encoded resource. This object and its bytes are shared between calls: treat them as read-only. */
  readonly resource: Any;
}

/** Every type URL, each with its resources sorted by name (possibly none). */
export type XdsResources = Readonly<Record<XdsTypeUrl, readonly XdsResource[]>>;

/** The resource names of one type that a delta update adds, changes and removes. */
export interface ResourceDiff {
  readonly added: readonly string[];
  /** Same name, different version. */
  readonly changed: readonly string[];
  readonly removed: readonly string[];
}

/** Per type URL, what changed between two `XdsResources`. */
export type XdsDiff = Readonly<Record<XdsTypeUrl, ResourceDiff>>;

interface ResourceType<T> {
  readonly typeUrl: XdsTypeUrl;
  encode(message: T): Uint8Array;
  name(message: T): string;
}

const CLUSTER: ResourceType<Cluster> = {
  typeUrl: XDS_TYPE_URLS.clusters,
  encode: encodeCluster,
  name: (cluster) => cluster.name ?? "",
};
const CLUSTER_LOAD_ASSIGNMENT: ResourceType<ClusterLoadAssignment> = {
  typeUrl: XDS_TYPE_URLS.endpoints,
  encode: encodeAssignment,
  name: (assignment) => assignment.cluster_name ?? "",
};
const LISTENER: ResourceType<Listener> = {
  typeUrl: XDS_TYPE_URLS.listeners,
  encode: encodeListener,
  name: (listener) => listener.name ?? "",
};

/**
 * The compile result's resources, encoded and versioned. A version depends only on the resource's
 * bytes, so an unchanged resource keeps its version across compiles and processes.
 */
export function toXdsResources(result: ResourceSet): XdsResources {
  return {
    [XDS_TYPE_URLS.clusters]: xdsResources(CLUSTER, result.clusters),
    [XDS_TYPE_URLS.endpoints]: xdsResources(CLUSTER_LOAD_ASSIGNMENT, result.endpoints),
    [XDS_TYPE_URLS.listeners]: xdsResources(LISTENER, result.listeners),
  };
}

/**
 * Each message list's resources: a recompile that changed nothing of a type returns the same list
 * (compile results are never mutated), and gets the same resource list back.
 */
const resourcesByList = new WeakMap<readonly object[], readonly XdsResource[]>();

function xdsResources<T extends object>(type: ResourceType<T>, messages: readonly T[]): readonly XdsResource[] {
  let resources = resourcesByList.get(messages);
  if (!resources) {
    resources = patchedResources(type, messages) ?? sortedByName(messages.map((message) => xdsResource(type, message)));
    resourcesByList.set(messages, resources);
  }
  return resources;
}

/** Lists whose resources came out in their messages' order (already sorted): position i is message i's. */
const inMessageOrder = new WeakSet<readonly XdsResource[]>();

/**
 * A recompile's patched list (`notePatched`) as its base's resources with the replaced places
 * looked up again: the other places hold the same messages, and looking each one up by message
 * (a weak-map probe apiece) was a fifth of pushing one health flip to 2,000 connected nodes.
 */
function patchedResources<T extends object>(type: ResourceType<T>, messages: readonly T[]): XdsResource[] | undefined {
  const patch = patchOf(messages);
  const base = patch && resourcesByList.get(patch.base);
  if (!base || !inMessageOrder.has(base) || patch.base.length !== messages.length) return undefined;
  const resources = [...base];
  for (let i = 0; i < messages.length; i++) if (messages[i] !== patch.base[i]) resources[i] = xdsResource(type, messages[i]!);
  inMessageOrder.add(resources);
  return resources;
}

/** Compile results come sorted by name; anything else is sorted here. */
function sortedByName(resources: XdsResource[]): XdsResource[] {
  if (!isSortedByName(resources)) return resources.sort((a, b) => compareText(a.name, b.name));
  inMessageOrder.add(resources);
  return resources;
}

function isSortedByName(resources: readonly XdsResource[]): boolean {
  return resources.every((resource, i) => i === 0 || compareText(resources[i - 1]!.name, resource.name) <= 0);
}

/**
 * Each message's xDS resource, by message object. The compiler shares one ClusterLoadAssignment
 * between every node of an EDS view (and clusters between compiles of one context), so each is
 * encoded and hashed once however many nodes carry it. Compiled resources are never mutated, so
 * an entry cannot go stale.
 */
const resourcesByMessage = new WeakMap<object, XdsResource>();

function xdsResource<T extends object>(type: ResourceType<T>, message: T): XdsResource {
  let resource = resourcesByMessage.get(message);
  if (!resource) {
    const bytes = type.encode(message);
    resource = { name: type.name(message), version: shortHash(bytes), resource: { type_url: type.typeUrl, value: bytes } };
    resourcesByMessage.set(message, resource);
  }
  return resource;
}

/** The character codes of a version's 16 digits, reused (`String.fromCharCode` builds a flat string from them). */
const VERSION_DIGITS: number[] = new Array(16).fill(0);

/**
 * One-shot `hash` to hex: a Hash object per resource cost more than hashing its bytes, and a
 * digest Buffer (an ArrayBuffer apiece) about four times the hash once thousands of nodes' outputs
 * are held. The 16 digits are copied into a flat string of their own: a slice of the 64-digit
 * string would be a view keeping all 64 alive beside every held resource.
 */
function shortHash(data: Uint8Array | string): string {
  const digest = hash("sha256", data, "hex");
  for (let i = 0; i < VERSION_DIGITS.length; i++) VERSION_DIGITS[i] = digest.charCodeAt(i);
  return String.fromCharCode(...VERSION_DIGITS);
}

/** What changed per type URL from `previous` (undefined: nothing was sent yet) to `next`. */
export function diffResources(previous: XdsResources | undefined, next: XdsResources): XdsDiff {
  const diffOf = (url: XdsTypeUrl) => diffOfType(previous?.[url] ?? [], next[url]);
  return {
    [XDS_TYPE_URLS.clusters]: diffOf(XDS_TYPE_URLS.clusters),
    [XDS_TYPE_URLS.endpoints]: diffOf(XDS_TYPE_URLS.endpoints),
    [XDS_TYPE_URLS.listeners]: diffOf(XDS_TYPE_URLS.listeners),
  };
}

function diffOfType(previous: readonly XdsResource[], next: readonly XdsResource[]): ResourceDiff {
  const before = new Map(previous.map((r) => [r.name, r.version]));
  const after = new Map(next.map((r) => [r.name, r.version]));
  return {
    added: [...after.keys()].filter((name) => !before.has(name)).sort(compareText),
    changed: [...after]
      .filter(([name, version]) => before.has(name) && before.get(name) !== version)
      .map(([name]) => name)
      .sort(compareText),
    removed: [...before.keys()].filter((name) => !after.has(name)).sort(compareText),
  };
}

/** Whether nothing was added, changed or removed in any type: there is nothing to push. */
export function isEmptyDiff(diff: XdsDiff): boolean {
  return Object.values(diff).every((d) => d.added.length === 0 && d.changed.length === 0 && d.removed.length === 0);
}

/**
 * The `version_info` of a state-of-the-world response carrying `resources` (all of one type):
 * a hash of their sorted names and versions, so it changes exactly when one of them does.
 */
export function versionInfo(resources: readonly XdsResource[]): string {
  const entries = resources.map((r) => [r.name, r.version] as const);
  // Served lists come sorted by unique names: then the sort would leave them as they are.
  if (!resources.every((resource, i) => i === 0 || resources[i - 1]!.name < resource.name)) {
    entries.sort(([a, av], [b, bv]) => compareText(a, b) || compareText(av, bv));
  }
  return shortHash(JSON.stringify(entries));
}
