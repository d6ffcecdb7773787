/**
 * What both ADS protocols share: which names a stream asked for, what it should hold of a type
 * (`desired`), and the ordering rule that no cluster disappears before the listeners using it are
 * updated — a cluster (and its assignment) the node's new resources drop is kept in CDS (and EDS)
 * until Envoy has ACKed the current listeners.
 */
import { versionInfo, XDS_TYPE_URLS, type XdsResource, type XdsTypeUrl } from "../emit/xds.js";
import { listVersion, type NodeResources } from "./mesh-state.js";

/** A served type URL, or undefined for any other (secrets, routes, ...). */
export function servedType(url: string): XdsTypeUrl | undefined {
  return url === XDS_TYPE_URLS.clusters || url === XDS_TYPE_URLS.endpoints || url === XDS_TYPE_URLS.listeners ? url : undefined;
}

/** The names a stream subscribed to for one type: all of them (wildcard) or a set. */
export interface Subscription {
  wildcard: boolean;
  readonly names: Set<string>;
}

/** What a stream should hold of one type, and its version. */
export interface Desired {
  readonly resources: readonly XdsResource[];
  readonly version: string;
}

/** The node's resources of a type, narrowed to the subscription. */
export function subscribed(list: readonly XdsResource[], subscription: Subscription): Desired {
  if (subscription.wildcard) return { resources: list, version: listVersion(list) };
  const resources = list.filter((resource) => subscription.names.has(resource.name));
  return { resources, version: versionInfo(resources) };
}

/**
 * Clusters or assignments the stream holds that `desired` drops, added back while the listeners
 * are not settled (the current listeners sent and ACKed): removing a cluster a listener still
 * routes to, or emptying its endpoints, would break that listener's traffic until the listener
 * update lands.
 */
export function withRetained(desired: Desired, held: ReadonlyMap<string, XdsResource>, listenersSettled: boolean): Desired {
  if (listenersSettled || held.size === 0) return desired;
  const names = new Set(desired.resources.map((resource) => resource.name));
  const retained = [...held.values()].filter((resource) => !names.has(resource.name));
  if (retained.length === 0) return desired;
  const resources = [...desired.resources, ...retained].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { resources, version: versionInfo(resources) };
}

/** The listener list of the node's current resources, narrowed to the stream's listener subscription. */
export function desiredListeners(current: NodeResources, subscription: Subscription | undefined): Desired | undefined {
  return subscription && subscribed(current.resources[XDS_TYPE_URLS.listeners], subscription);
}

/** Updates a subscription from a request's subscribe/unsubscribe lists; returns the names newly subscribed. */
export function applySubscription(subscription: Subscription, subscribe: readonly string[], unsubscribe: readonly string[]): string[] {
  const added: string[] = [];
  for (const name of subscribe) {
    if (name === "*") subscription.wildcard = true;
    else if (!subscription.names.has(name)) {
      subscription.names.add(name);
      added.push(name);
    }
  }
  for (const name of unsubscribe) {
    if (name === "*") subscription.wildcard = false;
    else subscription.names.delete(name);
  }
  return added;
}
