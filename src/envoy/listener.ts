/** Listener pieces: the TLS inspector, TCP proxying, and an HTTP connection manager that sets XFCC. */
import type { Cluster } from "../../gen/envoy/config/cluster/v3/cluster.js";
import type { Filter, ListenerFilter } from "../../gen/envoy/config/listener/v3/listener_components.js";
import type { VirtualHost } from "../../gen/envoy/config/route/v3/route_components.js";
import { FilterStateValue_SharedWithUpstream } from "../../gen/envoy/extensions/filters/common/set_filter_state/v3/value.js";
import {
  HttpConnectionManager_CodecType,
  HttpConnectionManager_ForwardClientCertDetails,
} from "../../gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.js";
import { pack } from "./any.js";
import { socketAddress } from "./core.js";
import { EXTENSION, HTTP_CONNECTION_MANAGER, HTTP_PROTOCOL_OPTIONS, ORIGINAL_DST, ROUTER, SET_FILTER_STATE, TCP_PROXY, TLS_INSPECTOR } from "./types.js";

/** Reads the ClientHello's SNI and ALPN and sets transport protocol "tls"; decrypts nothing. */
export function tlsInspector(): ListenerFilter {
  return { name: EXTENSION.tlsInspector, typed_config: pack(TLS_INSPECTOR, {}) };
}

/** Restores the destination a capture rule (iptables REDIRECT) rewrote, so chains match the VIP:port dialed. */
export function originalDst(): ListenerFilter {
  return { name: EXTENSION.originalDst, typed_config: pack(ORIGINAL_DST, {}) };
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

export function tcpProxy(statPrefix: string, cluster: string): Filter {
  return { name: EXTENSION.tcpProxy, typed_config: pack(TCP_PROXY, { stat_prefix: statPrefix, cluster }) };
}

/**
 * HTTP to one cluster, with the verified client identity passed on: XFCC is sanitized (a header
 * sent by the client is dropped) and set to the client certificate's URI SAN.
 */
export function httpToCluster(statPrefix: string, cluster: string): Filter {
  return {
    name: EXTENSION.httpConnectionManager,
    typed_config: pack(HTTP_CONNECTION_MANAGER, {
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
      http_filters: [{ name: EXTENSION.router, typed_config: pack(ROUTER, {}) }],
      forward_client_cert_details: HttpConnectionManager_ForwardClientCertDetails.SANITIZE_SET,
      set_current_client_cert_details: { uri: true },
    }),
  };
}

/** An HTTP/1.1 or HTTP/2 service reached by its authority. */
export interface AuthorityRoute {
  /** The virtual host's name. */
  readonly name: string;
  /** Exact authorities, with or without a port. */
  readonly domains: readonly string[];
  readonly cluster: string;
}

/**
 * A pod's HTTP egress: each authority to its cluster, anything else a 404 — never passed
 * through, so a pod cannot use the proxy to reach what the mesh does not route.
 */
export function httpEgress(statPrefix: string, routes: readonly AuthorityRoute[]): Filter {
  const virtualHosts: VirtualHost[] = routes.map((route) => ({
    name: route.name,
    domains: [...route.domains],
    routes: [{ match: { prefix: "/" }, route: { cluster: route.cluster, timeout: NO_TIMEOUT } }],
  }));
  virtualHosts.push({ name: "unknown_authority", domains: ["*"], routes: [{ match: { prefix: "/" }, direct_response: { status: 404 } }] });
  return {
    name: EXTENSION.httpConnectionManager,
    typed_config: pack(HTTP_CONNECTION_MANAGER, {
      codec_type: HttpConnectionManager_CodecType.AUTO,
      stat_prefix: statPrefix,
      route_config: { name: statPrefix, virtual_hosts: virtualHosts },
      http_filters: [{ name: EXTENSION.router, typed_config: pack(ROUTER, {}) }],
    }),
  };
}

/** `timeout: 0s`: the application owns its deadlines; Envoy's default 15 s would cut long-lived gRPC streams. */
const NO_TIMEOUT = { seconds: 0, nanos: 0 };

/**
 * A cluster with one fixed endpoint; `http2` makes Envoy speak HTTP/2 (h2c) to it. Its type is
 * STATIC, the default: `type` is left unset (STATIC is value 0 of a oneof, so setting it would put
 * an explicit default on the wire).
 */
export function staticCluster(name: string, ip: string, port: number, http2: boolean): Cluster {
  const cluster: Cluster = {
    name,
    load_assignment: { cluster_name: name, endpoints: [{ lb_endpoints: [{ endpoint: { address: socketAddress(ip, port) } }] }] },
  };
  if (http2) cluster.typed_extension_protocol_options = http2ProtocolOptions();
  return cluster;
}

export function http2ProtocolOptions(): Cluster["typed_extension_protocol_options"] {
  return { [EXTENSION.httpProtocolOptions]: pack(HTTP_PROTOCOL_OPTIONS, { explicit_http_config: { http2_protocol_options: {} } }) };
}
