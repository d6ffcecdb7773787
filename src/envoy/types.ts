/** Every message type aether-xds packs into an Any, with its fully-qualified name. */
import { ClusterConfig } from "../../gen/envoy/extensions/clusters/aggregate/v3/cluster.js";
import { Router } from "../../gen/envoy/extensions/filters/http/router/v3/router.js";
import { TlsInspector } from "../../gen/envoy/extensions/filters/listener/tls_inspector/v3/tls_inspector.js";
import { HttpConnectionManager } from "../../gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.js";
import { TcpProxy } from "../../gen/envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy.js";
import {
  EndpointMetadataInput,
  FilterStateInput,
  TransportSocketNameAction,
} from "../../gen/envoy/extensions/matching/common_inputs/transport_socket/v3/transport_socket_inputs.js";
import { DownstreamTlsContext, UpstreamTlsContext } from "../../gen/envoy/extensions/transport_sockets/tls/v3/tls.js";
import { SPIFFECertValidatorConfig } from "../../gen/envoy/extensions/transport_sockets/tls/v3/tls_spiffe_validator_config.js";
import { HttpProtocolOptions } from "../../gen/envoy/extensions/upstreams/http/v3/http_protocol_options.js";
import type { MessageType } from "./any.js";

const TRANSPORT_SOCKET_INPUTS = "envoy.extensions.matching.common_inputs.transport_socket.v3";

function messageType<T>(typeName: string, codec: Pick<MessageType<T>, "encode">): MessageType<T> {
  return { typeName, encode: codec.encode };
}

export const UPSTREAM_TLS_CONTEXT = messageType("envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext", UpstreamTlsContext);
export const DOWNSTREAM_TLS_CONTEXT = messageType("envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext", DownstreamTlsContext);
export const SPIFFE_VALIDATOR_CONFIG = messageType("envoy.extensions.transport_sockets.tls.v3.SPIFFECertValidatorConfig", SPIFFECertValidatorConfig);
export const ENDPOINT_METADATA_INPUT = messageType(`${TRANSPORT_SOCKET_INPUTS}.EndpointMetadataInput`, EndpointMetadataInput);
export const FILTER_STATE_INPUT = messageType(`${TRANSPORT_SOCKET_INPUTS}.FilterStateInput`, FilterStateInput);
export const TRANSPORT_SOCKET_NAME_ACTION = messageType(`${TRANSPORT_SOCKET_INPUTS}.TransportSocketNameAction`, TransportSocketNameAction);
export const AGGREGATE_CLUSTER_CONFIG = messageType("envoy.extensions.clusters.aggregate.v3.ClusterConfig", ClusterConfig);
export const TCP_PROXY = messageType("envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy", TcpProxy);
export const TLS_INSPECTOR = messageType("envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector", TlsInspector);
export const HTTP_CONNECTION_MANAGER = messageType("envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager", HttpConnectionManager);
export const ROUTER = messageType("envoy.extensions.filters.http.router.v3.Router", Router);
export const HTTP_PROTOCOL_OPTIONS = messageType("envoy.extensions.upstreams.http.v3.HttpProtocolOptions", HttpProtocolOptions);

/** Extension names Envoy registers the above under. */
export const EXTENSION = {
  tlsTransportSocket: "envoy.transport_sockets.tls",
  spiffeValidator: "envoy.tls.cert_validator.spiffe",
  endpointMetadataInput: "envoy.matching.inputs.endpoint_metadata",
  filterStateInput: "envoy.matching.inputs.transport_socket_filter_state",
  socketNameAction: "envoy.matching.action.transport_socket.name",
  aggregateCluster: "envoy.clusters.aggregate",
  tcpProxy: "envoy.filters.network.tcp_proxy",
  tlsInspector: "envoy.filters.listener.tls_inspector",
  httpConnectionManager: "envoy.filters.network.http_connection_manager",
  router: "envoy.filters.http.router",
  httpProtocolOptions: "envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
} as const;
