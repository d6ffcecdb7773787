/**
 * State of the world (StreamAggregatedResources): every response carries all the stream's
 * resources of one type. A request is an ACK when it carries the last response's nonce, a NACK
 * when it also carries `error_detail` (Envoy keeps its last good version; nothing is resent until
 * the resources change), and stale when it carries an older nonce (ignored). A new or changed
 * name list is answered at once; an initial request whose `version_info` is already current (a
 * reconnecting Envoy) is counted as ACKed and not answered.
 */
import type { DiscoveryRequest, DiscoveryResponse } from "../../gen/envoy/service/discovery/v3/discovery.js";
import { XDS_TYPE_URLS, type XdsResource, type XdsTypeUrl } from "../emit/xds.js";
import { compositeKeyOf } from "../util/keys.js";
import { type NodeResources, TYPE_ORDER } from "./mesh-state.js";
import { AdsStreamBase, typeStatus } from "./stream.js";
import { type Desired, desiredListeners, type Subscription, subscribed, withRetained } from "./stream-state.js";

interface SotwType {
  readonly subscription: Subscription;
  /** The name list of the last request, to notice a change. */
  namesKey: string;
  sent?: { readonly nonce: string; readonly version: string; readonly namesKey: string; readonly byName: ReadonlyMap<string, XdsResource> };
  acked?: string;
}

export class SotwStream extends AdsStreamBase<DiscoveryResponse> {
  readonly #types = new Map<XdsTypeUrl, SotwType>();

  onRequest(request: DiscoveryRequest): void {
    const url = this.requestedType(request.type_url);
    if (!url) return;
    const nonce = request.response_nonce ?? "";
    let state = this.#types.get(url);
    if (state?.sent && nonce !== "" && nonce !== state.sent.nonce) return; // stale: a newer response is on its way
    const names = request.resource_names ?? [];
    // Envoy's list, of any length: never spread into a call.
    const namesKey = compositeKeyOf(names);
    if (!state) {
      state = { subscription: { wildcard: false, names: new Set() }, namesKey };
      this.#types.set(url, state);
    }
    state.namesKey = namesKey;
    state.subscription.wildcard = url !== XDS_TYPE_URLS.endpoints && (names.length === 0 || names.includes("*"));
    state.subscription.names.clear();
    for (const name of names) state.subscription.names.add(name);
    if (request.error_detail && state.sent) {
      this.host.emit({
        event: "nack",
        typeUrl: url,
        version: state.sent.version,
        kept: request.version_info ?? "",
        nonce,
        error: request.error_detail.message ?? "",
      });
      return;
    }
    if (state.sent && nonce === state.sent.nonce) {
      state.acked = state.sent.version;
      this.host.emit({ event: "ack", typeUrl: url, version: state.acked, nonce });
    } else if (nonce === "" && request.version_info) {
      this.#resume(url, state, request.version_info);
    }
    this.reconcile();
  }

  /** Sends, in CDS → EDS → LDS order, each subscribed type whose resources or names changed. */
  reconcile(): void {
    const current = this.host.current;
    for (const url of TYPE_ORDER) {
      const state = this.#types.get(url);
      if (!state) continue;
      const desired = this.#desired(url, state, current);
      if (state.sent && state.sent.version === desired.version && state.sent.namesKey === state.namesKey) continue;
      this.#respond(url, state, desired);
    }
  }

  status(url: XdsTypeUrl) {
    const state = this.#types.get(url);
    return typeStatus(state?.sent?.version, state?.acked, state && this.#desired(url, state, this.host.current).version);
  }

  #desired(url: XdsTypeUrl, state: SotwType, current: NodeResources): Desired {
    const desired = subscribed(current.resources[url], state.subscription);
    if (url === XDS_TYPE_URLS.listeners || !state.sent) return desired;
    return withRetained(desired, state.sent.byName, this.#listenersSettled(current));
  }

  #listenersSettled(current: NodeResources): boolean {
    const listeners = this.#types.get(XDS_TYPE_URLS.listeners);
    const desired = desiredListeners(current, listeners?.subscription);
    return !listeners || !desired || (listeners.sent?.version === desired.version && listeners.acked === desired.version);
  }

  /** A reconnecting Envoy already holding the current version: remember it as sent and ACKed. */
  #resume(url: XdsTypeUrl, state: SotwType, version: string): void {
    const desired = this.#desired(url, state, this.host.current);
    if (desired.version !== version) return;
    state.sent = { nonce: "", version, namesKey: state.namesKey, byName: byName(desired.resources) };
    state.acked = version;
    this.host.emit({ event: "ack", typeUrl: url, version, nonce: "" });
  }

  #respond(url: XdsTypeUrl, state: SotwType, desired: Desired): void {
    const nonce = this.nextNonce();
    state.sent = { nonce, version: desired.version, namesKey: state.namesKey, byName: byName(desired.resources) };
    this.send({ version_info: desired.version, resources: desired.resources.map((r) => r.resource), type_url: url, nonce });
    this.host.emit({ event: "push", typeUrl: url, version: desired.version, nonce, resources: desired.resources.length, removed: 0 });
  }
}

function byName(resources: readonly XdsResource[]): Map<string, XdsResource> {
  return new Map(resources.map((resource) => [resource.name, resource]));
}
