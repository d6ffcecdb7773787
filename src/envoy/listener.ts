/** Listener pieces: the TLS inspector, TCP proxying, and an HTTP connection manager that sets XFCC. */

import type { AccessLog } from "../../gen/envoy/config/accesslog/v3/accesslog.js";
import type { Cluster } from "../../gen/envoy/config/cluster/v3/cluster.js";
import type { KeepaliveSettings } from "../../gen/envoy/config/core/v3/protocol.js";
import type { Filter, ListenerFilter } from "../../gen/envoy/config/listener/v3/listener_components.js";
import type { RetryPolicy, Route, VirtualHost } from "../../gen/envoy/config/route/v3/route_components.js";
import { FilterStateValue_SharedWithUpstream } from "../../gen/envoy/extensions/filters/common/set_filter_state/v3/value.js";
import {
  type HttpConnectionManager,
  HttpConnectionManager_CodecType,
  HttpConnectionManager_ForwardClientCertDetails,
  type HttpFilter,
} from "../../gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.js";
import type { TcpProxy } from "../../gen/envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy.js";
import type { HttpProtocolOptions } from "../../gen/envoy/extensions/upstreams/http/v3/http_protocol_options.js";
import type { Duration } from "../../gen/google/protobuf/duration.js";
import { pack, packEncodedInterim, packOwned } from "./any.js";
import { encodeConnectionManager } from "./connection-manager-encoding.js";
import { socketAddress } from "./core.js";
import { EXTENSION, HTTP_CONNECTION_MANAGER, HTTP_PROTOCOL_OPTIONS, ORIGINAL_DST, ROUTER, SET_FILTER_STATE, TCP_PROXY, TLS_INSPECTOR } from "./types.js";

// Filters without settings: one object each, shared by every listener (compiled output is never mutated).
const TLS_INSPECTOR_FILTER: ListenerFilter = { name: EXTENSION.tlsInspector, typed_config: pack(TLS_INSPECTOR, {}) };
const ORIGINAL_DST_FILTER: ListenerFilter = { name: EXTENSION.originalDst, typed_config: pack(ORIGINAL_DST, {}) };
const ROUTER_FILTER: HttpFilter = { name: EXTENSION.router, typed_config: pack(ROUTER, {}) };

/** Reads the ClientHello's SNI and ALPN and sets transport protocol "tls"; decrypts nothing. */
export function tlsInspector(): ListenerFilter {
  return TLS_INSPECTOR_FILTER;
}

/** Restores the destination a capture rule (iptables REDIRECT) rewrote, so chains match the VIP:port dialed. */
export function originalDst(): ListenerFilter {
  return ORIGINAL_DST_FILTER;
}

/**
 * Stamps a value on every new connection, shared with the upstream connection (`ONCE`: not passed
 * further). Only a value made by a hashable factory enters the upstream connection-pool key.
 */
export function stampFilterState(key: string, factory: string, value: string): Filter {
  return {
    name: EXTENSION.setFilterState,
    typed_config: pack(SET_FILTER_STATE, {
      on_new_connection: [
        {
          object_key: key,
          factory_key: factory,
          format_string: { text_format_source: { inline_string: value } },
          read_only: true,
          shared_with_upstream: FilterStateValue_SharedWithUpstream.ONCE,
        },
      ],
    }),
  };
}

/** What a proxy filter adds besides its route: an idle timeout (TCP), access logs. */
export interface ProxyExtras {
  readonly idleTimeout?: Duration | undefined;
  readonly accessLog?: readonly AccessLog[];
  /**
   * Whether one listener alone carries the filter (a pod's own chain, not one cached and shared
   * across nodes): its config's bytes then move into that listener's encoding (`packInterim`).
   * Its access logs should say the same (`LogSite.oneListener`).
   */
  readonly oneListener?: boolean;
}

export function tcpProxy(statPrefix: string, cluster: string, extras: ProxyExtras = {}): Filter {
  const config: TcpProxy = { stat_prefix: statPrefix, cluster };
  if (extras.idleTimeout) config.idle_timeout = extras.idleTimeout;
  if (extras.accessLog?.length) config.access_log = [...extras.accessLog];
  return { name: EXTENSION.tcpProxy, typed_config: packOwned(TCP_PROXY, config, extras.oneListener === true) };
}

/**
 * HTTP to one cluster, with the verified client identity passed on: XFCC is sanitized (a header
 * sent by the client is dropped) and set to the client certificate's URI SAN.
 */
export function httpToCluster(statPrefix: string, cluster: string, extras: ProxyExtras = {}): Filter {
  const config: HttpConnectionManager = {
    codec_type: HttpConnectionManager_CodecType.AUTO,
    stat_prefix: statPrefix,
    route_config: {
      name: statPrefix,
      virtual_hosts: [
        {
          name: statPrefix,
          domains: ["*"],
          routes: [{ match: { prefix: "/" }, route: { cluster, timeout: NO_TIMEOUT } }],
        },
      ],
    },
    http_filters: [ROUTER_FILTER],
    forward_client_cert_details: HttpConnectionManager_ForwardClientCertDetails.SANITIZE_SET,
    set_current_client_cert_details: { uri: true },
    // Logged requests keep the source's request id, so source and destination lines join on it.
    ...(extras.accessLog?.length ? { access_log: [...extras.accessLog], preserve_external_request_id: true } : {}),
  };
  return { name: EXTENSION.httpConnectionManager, typed_config: packOwned(HTTP_CONNECTION_MANAGER, config, extras.oneListener === true) };
}

/** An HTTP/1.1 or HTTP/2 service reached by its authority. */
export interface AuthorityRoute {
  /** The virtual host's name. */
  readonly name: string;
  /** Exact authorities, with or without a port. */
  readonly domains: readonly string[];
  readonly cluster: string;
}

/** One virtual host per authority route, to its cluster. */
export function authorityHosts(routes: readonly AuthorityRoute[], retryPolicy?: RetryPolicy): VirtualHost[] {
  return routes.map((route) => ({ name: route.name, domains: [...route.domains], routes: [egressRoute(route.cluster, retryPolicy)] }));
}

/**
 * A pod's HTTP egress table: `hosts`, and anything else a 404 — never passed through, so a pod
 * cannot use the proxy to reach what the mesh does not route.
 */
export function egressTable(hosts: readonly VirtualHost[]): VirtualHost[] {
  return [...hosts, UNKNOWN_AUTHORITY];
}

const UNKNOWN_AUTHORITY: VirtualHost = { name: "unknown_authority", domains: ["*"], routes: [{ match: { prefix: "/" }, direct_response: { status: 404 } }] };

/** A pod's HTTP egress over an `egressTable`, which pods calling the same services share (never mutated). */
export function httpEgress(statPrefix: string, virtualHosts: readonly VirtualHost[], extras: ProxyExtras = {}): Filter {
  return appConnectionManager(statPrefix, virtualHosts, extras);
}

/**
 * A pod's HTTP to a captured VIP and port: the chain already chose the service port, so every
 * authority (the app may send the VIP, a name of its own, none) goes to `route`'s cluster, as
 * an egress route would.
 */
export function httpCapture(statPrefix: string, route: Omit<AuthorityRoute, "domains">, retryPolicy?: RetryPolicy, extras: ProxyExtras = {}): Filter {
  return appConnectionManager(statPrefix, [{ name: route.name, domains: ["*"], routes: [egressRoute(route.cluster, retryPolicy)] }], extras);
}

/**
 * Terminates a pod app's cleartext HTTP: AUTO tells HTTP/1.1 from h2c by the first bytes; what
 * goes upstream is the cluster's protocol options' choice, not the app's.
 */
function appConnectionManager(statPrefix: string, virtualHosts: readonly VirtualHost[], extras: ProxyExtras): Filter {
  const manager: HttpConnectionManager = {
    codec_type: HttpConnectionManager_CodecType.AUTO,
    stat_prefix: statPrefix,
    // Shared, not copied: the encoder splices the list's bytes, encoded once (connection-manager-encoding.ts).
    route_config: { name: statPrefix, virtual_hosts: virtualHosts as VirtualHost[] },
    http_filters: [ROUTER_FILTER],
    ...(extras.accessLog?.length ? { access_log: [...extras.accessLog] } : {}),
  };
  // Only the pod's own listener carries it: its bytes move into that listener's encoding.
  return {
    name: EXTENSION.httpConnectionManager,
    typed_config: packEncodedInterim(HTTP_CONNECTION_MANAGER.typeName, encodeConnectionManager(manager), manager),
  };
}

function egressRoute(cluster: string, retryPolicy: RetryPolicy | undefined): Route {
  return { match: { prefix: "/" }, route: { cluster, timeout: NO_TIMEOUT, ...(retryPolicy ? { retry_policy: retryPolicy } : {}) } };
}

/** `timeout: 0s`: the application owns its deadlines; Envoy's default 15 s would cut long-lived gRPC streams. */
const NO_TIMEOUT = { seconds: 0, nanos: 0 };

/**
 * A cluster with one fixed endpoint. Its type is STATIC, the default: `type` is left unset
 * (STATIC is value 0 of a oneof, so setting it would put an explicit default on the wire).
 */
export function staticCluster(name: string, ip: string, port: number): Cluster {
  return {
    name,
    load_assignment: { cluster_name: name, endpoints: [{ lb_endpoints: [{ endpoint: { address: socketAddress(ip, port) } }] }] },
  };
}

/** How Envoy speaks HTTP to a cluster: HTTP/2, HTTP/1.1, or whichever the downstream used. */
export type UpstreamHttp = "http2" | "http1" | "downstream";

export function httpProtocolOptions(http: UpstreamHttp, keepalive?: KeepaliveSettings): NonNullable<Cluster["typed_extension_protocol_options"]> {
  const http2 = keepalive ? { connection_keepalive: keepalive } : {};
  const options: HttpProtocolOptions =
    http === "http2"
      ? { explicit_http_config: { http2_protocol_options: http2 } }
      : http === "http1"
        ? { explicit_http_config: { http_protocol_options: {} } }
        : { use_downstream_protocol_config: { http_protocol_options: {}, http2_protocol_options: http2 } };
  return { [EXTENSION.httpProtocolOptions]: pack(HTTP_PROTOCOL_OPTIONS, options) };
}
