/**
 * Output lint rules for source identity: a pod's certificate must survive Envoy's connection
 * pooling. A pool keeps the socket options of the connection that opened it, and only hashable
 * filter-state objects enter the pool key, so every way the source could leak into another's pool
 * is refused here (fail closed) rather than emitted.
 */
import type { Cluster } from "../../gen/envoy/config/cluster/v3/cluster.js";
import type { Listener } from "../../gen/envoy/config/listener/v3/listener.js";
import { FilterStateValue_SharedWithUpstream } from "../../gen/envoy/extensions/filters/common/set_filter_state/v3/value.js";
import type { Config as SetFilterStateConfig } from "../../gen/envoy/extensions/filters/network/set_filter_state/v3/set_filter_state.js";
import type { Config as OnDemandSecretConfig } from "../../gen/envoy/extensions/transport_sockets/tls/cert_selectors/on_demand_secret/v3/config.js";
import type { UpstreamTlsContext } from "../../gen/envoy/extensions/transport_sockets/tls/v3/tls.js";
import type { Any } from "../../gen/google/protobuf/any.js";
import type { Matcher } from "../../gen/xds/type/matcher/v3/matcher.js";
import { packedMessage } from "../envoy/any.js";
import { unpackAny } from "../envoy/schema.js";
import { EXTENSION, FILTER_STATE } from "../envoy/types.js";

export const IDENTITY_LINT_RULES = [
  "pool-per-downstream-connection",
  "no-session-resumption",
  "tls-fallback-socket",
  "selector-own-sds",
  "hashable-identity-stamp",
] as const;

export type IdentityLintRule = (typeof IDENTITY_LINT_RULES)[number];

type Fail = (rule: IdentityLintRule, resource: string, detail: string) => never;

/**
 * A cluster whose socket depends on the source: per-source sockets (a matcher on filter state) need
 * a pool per downstream connection and a TLS fallback; any per-source certificate forbids session
 * resumption; a certificate selector has its own SDS stream (over ADS, Envoy 1.38–1.40 crash).
 */
export function lintClusterIdentity(cluster: Cluster, fail: Fail): void {
  const name = cluster.name ?? "";
  const tables = (cluster.transport_socket_matches ?? []).map((match) => tlsOf(match.transport_socket?.typed_config));
  const fallback = tlsOf(cluster.transport_socket?.typed_config);
  for (const tls of [...tables, fallback]) if (tls) lintSelector(name, tls, fail);
  if (!cluster.transport_socket_matcher || !readsFilterState(cluster.transport_socket_matcher)) return;
  if (!cluster.connection_pool_per_downstream_connection) {
    fail(
      "pool-per-downstream-connection",
      name,
      "sockets chosen by filter state need connection_pool_per_downstream_connection: the state is not in the pool key",
    );
  }
  if (tables.some((tls) => tls?.max_session_keys !== 0)) fail("no-session-resumption", name, "a per-source socket without max_session_keys: 0");
  if (cluster.transport_socket?.name !== EXTENSION.tlsTransportSocket) {
    fail("tls-fallback-socket", name, "no TLS transport_socket: a matcher naming a missing socket would fall back to plaintext");
  }
}

function lintSelector(resource: string, tls: UpstreamTlsContext, fail: Fail): void {
  const selector = tls.common_tls_context?.custom_tls_certificate_selector;
  if (!selector?.typed_config) return;
  if (tls.max_session_keys !== 0) fail("no-session-resumption", resource, "a per-connection certificate without max_session_keys: 0");
  const config = messageOf<OnDemandSecretConfig>(selector.typed_config);
  if (!config?.config_source?.api_config_source) {
    fail("selector-own-sds", resource, "the certificate selector must use its own api_config_source, never ADS");
  }
}

/** Every stamp of the certificate mapper's key is hashable and shared with the upstream connection. */
export function lintListenerStamps(listener: Listener, fail: Fail): void {
  for (const chain of listener.filter_chains ?? []) {
    for (const filter of chain.filters ?? []) {
      if (filter.name !== EXTENSION.setFilterState || !filter.typed_config) continue;
      const config = messageOf<SetFilterStateConfig>(filter.typed_config);
      for (const value of config?.on_new_connection ?? []) {
        if (value.object_key !== FILTER_STATE.certificateMapperKey) continue;
        if (
          value.factory_key !== FILTER_STATE.hashableString ||
          (value.shared_with_upstream ?? FilterStateValue_SharedWithUpstream.NONE) === FilterStateValue_SharedWithUpstream.NONE
        ) {
          fail(
            "hashable-identity-stamp",
            listener.name ?? "",
            `chain ${chain.name}: the identity must be a shared ${FILTER_STATE.hashableString}, or pools mix sources`,
          );
        }
      }
    }
  }
}

function readsFilterState(matcher: Matcher): boolean {
  if (matcher.matcher_tree?.input?.name === EXTENSION.filterStateInput) return true;
  const targets = [...Object.values(matcher.matcher_tree?.exact_match_map?.map ?? {}), matcher.on_no_match];
  return targets.some((target) => target?.matcher !== undefined && readsFilterState(target.matcher));
}

function tlsOf(any: Any | undefined): UpstreamTlsContext | undefined {
  return any ? messageOf<UpstreamTlsContext>(any) : undefined;
}

function messageOf<T>(any: Any): T | undefined {
  return (packedMessage(any) ?? unpackAny(any)?.message) as T | undefined;
}
