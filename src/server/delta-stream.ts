/**
 * Delta (DeltaAggregatedResources): a response carries only the resources whose version the
 * client does not hold, and the names it holds that are gone. The client's holdings start from
 * `initial_resource_versions` (a reconnecting Envoy resumes without a resend), grow with every
 * response and shrink with unsubscriptions. A request naming a response's nonce ACKs it, or NACKs
 * it with `error_detail`; the first request of a type, and every newly subscribed name, is
 * answered even when there is nothing new, so Envoy never waits for a response that will not come.
 */
import type { DeltaDiscoveryRequest, DeltaDiscoveryResponse } from "../../gen/envoy/service/discovery/v3/discovery.js";
import { XDS_TYPE_URLS, type XdsResource, type XdsTypeUrl } from "../emit/xds.js";
import { type NodeResources, TYPE_ORDER } from "./mesh-state.js";
import { AdsStreamBase, typeStatus } from "./stream.js";
import { applySubscription, type Desired, desiredListeners, type Subscription, subscribed, withRetained } from "./stream-state.js";

interface DeltaType {
  readonly subscription: Subscription;
  /** Name → version the client holds (or is being sent). */
  readonly holds: Map<string, XdsResource | string>;
  /** Responses not yet ACKed or NACKed: nonce → version. */
  readonly pending: Map<string, string>;
  mustRespond: boolean;
  /** The node's list at the last reconcile: an unchanged list needs no work. */
  lastList?: readonly XdsResource[];
  /** Whether CDS or EDS still carries resources retained for listeners not yet settled. */
  retaining: boolean;
  sent?: string;
  acked?: string;
}

export class DeltaStream extends AdsStreamBase<DeltaDiscoveryResponse> {
  readonly #types = new Map<XdsTypeUrl, DeltaType>();

  onRequest(request: DeltaDiscoveryRequest): void {
    const url = this.requestedType(request.type_url);
    if (!url) return;
    const subscribe = request.resource_names_subscribe ?? [];
    let state = this.#types.get(url);
    if (!state) {
      // Envoy's first CDS/LDS request subscribes to nothing: the legacy wildcard.
      const wildcard = url !== XDS_TYPE_URLS.endpoints && subscribe.length === 0;
      state = {
        subscription: { wildcard, names: new Set() },
        holds: new Map(Object.entries(request.initial_resource_versions ?? {})),
        pending: new Map(),
        mustRespond: true,
        retaining: false,
      };
      this.#types.set(url, state);
    }
    const nonce = request.response_nonce ?? "";
    const version = state.pending.get(nonce);
    if (version !== undefined) {
      state.pending.delete(nonce);
      if (request.error_detail) {
        this.host.emit({ event: "nack", typeUrl: url, version, kept: state.acked ?? "", nonce, error: request.error_detail.message ?? "" });
      } else {
        state.acked = version;
        this.host.emit({ event: "ack", typeUrl: url, version, nonce });
      }
    }
    const added = applySubscription(state.subscription, subscribe, request.resource_names_unsubscribe ?? []);
    for (const name of request.resource_names_unsubscribe ?? []) state.holds.delete(name);
    if (added.length > 0) state.mustRespond = true;
    this.reconcile();
  }

  /** Sends, in CDS → EDS → LDS order, what each subscribed type's client does not hold yet. */
  reconcile(): void {
    const current = this.host.current;
    for (const url of TYPE_ORDER) {
      const state = this.#types.get(url);
      if (!state) continue;
      const list = current.resources[url];
      if (list === state.lastList && !state.mustRespond && !state.retaining) continue;
      state.lastList = list;
      this.#respond(url, state, this.#desired(url, state, current));
    }
  }

  status(url: XdsTypeUrl) {
    const state = this.#types.get(url);
    return typeStatus(state?.sent, state?.acked, state && this.#desired(url, state, this.host.current).version);
  }

  #desired(url: XdsTypeUrl, state: DeltaType, current: NodeResources): Desired {
    const desired = subscribed(current.resources[url], state.subscription);
    state.retaining = false;
    if (url === XDS_TYPE_URLS.listeners || this.#listenersSettled(current)) return desired;
    const held = new Map<string, XdsResource>();
    for (const value of state.holds.values()) if (typeof value !== "string") held.set(value.name, value);
    const result = withRetained(desired, held, false);
    state.retaining = result !== desired;
    return result;
  }

  #listenersSettled(current: NodeResources): boolean {
    const listeners = this.#types.get(XDS_TYPE_URLS.listeners);
    const desired = desiredListeners(current, listeners?.subscription);
    return !listeners || !desired || (listeners.sent === desired.version && listeners.acked === desired.version);
  }

  #respond(url: XdsTypeUrl, state: DeltaType, desired: Desired): void {
    const updates = desired.resources.filter((resource) => versionOf(state.holds.get(resource.name)) !== resource.version);
    const removed = removedNames(state.holds, desired.resources, updates);
    if (updates.length === 0 && removed.length === 0 && !state.mustRespond) return;
    state.mustRespond = false;
    for (const resource of updates) state.holds.set(resource.name, resource);
    for (const name of removed) state.holds.delete(name);
    const nonce = this.nextNonce();
    state.pending.set(nonce, desired.version);
    state.sent = desired.version;
    this.send({
      system_version_info: desired.version,
      resources: updates.map((r) => ({ name: r.name, version: r.version, resource: r.resource })),
      type_url: url,
      removed_resources: removed,
      nonce,
    });
    this.host.emit({ event: "push", typeUrl: url, version: desired.version, nonce, resources: updates.length, removed: removed.length });
  }
}

/** A held entry's version: a resource sent, or a version the client reported on reconnect. */
function versionOf(held: XdsResource | string | undefined): string | undefined {
  return typeof held === "string" ? held : held?.version;
}

/** Names held but not desired, sorted. Held names are all desired when every desired name not newly sent is held. */
function removedNames(holds: ReadonlyMap<string, unknown>, desired: readonly XdsResource[], updates: readonly XdsResource[]): string[] {
  const fresh = updates.reduce((count, resource) => count + (holds.has(resource.name) ? 0 : 1), 0);
  if (holds.size === desired.length - fresh) return [];
  const keep = new Set(desired.map((resource) => resource.name));
  return [...holds.keys()].filter((name) => !keep.has(name)).sort();
}
