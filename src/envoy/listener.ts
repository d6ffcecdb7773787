/** Listener pieces: the TLS inspector, TCP proxying, and an HTTP connection manager that sets XFCC. */
import type { Cluster } from "../../gen/envoy/config/cluster/v3/cluster.js";
import type { Filter, ListenerFilter } from "../../gen/envoy/config/listener/v3/listener_components.js";
import {
  HttpConnectionManager_CodecType,
  HttpConnectionManager_ForwardClientCertDetails,
} from "../../gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.js";
import { pack } from "./any.js";
import { socketAddress } from "./core.js";
import { EXTENSION, HTTP_CONNECTION_MANAGER, HTTP_PROTOCOL_OPTIONS, ROUTER, TCP_PROXY, TLS_INSPECTOR } from "./types.js";

/** Reads the ClientHello's SNI and ALPN and sets transport protocol "tls"; decrypts nothing. */
export function tlsInspector(): ListenerFilter {
  return { name: EXTENSION.tlsInspector, typed_config: pack(TLS_INSPECTOR, {}) };
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
            // timeout 0s: the application owns its deadlines; Envoy's default 15 s route timeout
            // would cut long-lived gRPC streams.
            routes: [{ match: { prefix: "/" }, route: { cluster, timeout: { seconds: 0, nanos: 0 } } }],
          },
        ],
      },
      http_filters: [{ name: EXTENSION.router, typed_config: pack(ROUTER, {}) }],
      forward_client_cert_details: HttpConnectionManager_ForwardClientCertDetails.SANITIZE_SET,
      set_current_client_cert_details: { uri: true },
    }),
  };
}

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
