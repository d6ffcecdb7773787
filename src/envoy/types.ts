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
import { SPIFFECertValidatorConfig } from "../../gen/envoy/extensions/transport_sockets/tls/v3/tls_spiffe_validator_config.js";
import { DownstreamTlsContext, UpstreamTlsContext } from "../../gen/envoy/extensions/transport_sockets/tls/v3/tls.js";
import { HttpProtocolOptions } from "../../gen/envoy/extensions/upstreams/http/v3/http_protocol_options.js";
import type { MessageType } from "./any.js";

const TRANSPORT_SOCKET_INPUTS = "envoy.extensions.matching.common_inputs.transport_socket.v3";

export const UPSTREAM_TLS_CONTEXT: MessageType<UpstreamTlsContext> = {
  typeName: "envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext",
  encode: UpstreamTlsContext.encode,
};
export const DOWNSTREAM_TLS_CONTEXT: MessageType<DownstreamTlsContext> = {
  typeName: "envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext",
  encode: DownstreamTlsContext.encode,
};
export const SPIFFE_VALIDATOR_CONFIG: MessageType<SPIFFECertValidatorConfig> = {
  typeName: "envoy.extensions.transport_sockets.tls.v3.SPIFFECertValidatorConfig",
  encode: SPIFFECertValidatorConfig.encode,
};
export const ENDPOINT_METADATA_INPUT: MessageType<EndpointMetadataInput> = {
  typeName: `${TRANSPORT_SOCKET_INPUTS}.EndpointMetadataInput`,
  encode: EndpointMetadataInput.encode,
};
export const FILTER_STATE_INPUT: MessageType<FilterStateInput> = {
  typeName: `${TRANSPORT_SOCKET_INPUTS}.FilterStateInput`,
  encode: FilterStateInput.encode,
};
export const TRANSPORT_SOCKET_NAME_ACTION: MessageType<TransportSocketNameAction> = {
  typeName: `${TRANSPORT_SOCKET_INPUTS}.TransportSocketNameAction`,
  encode: TransportSocketNameAction.encode,
};
export const AGGREGATE_CLUSTER_CONFIG: MessageType<ClusterConfig> = {
  typeName: "envoy.extensions.clusters.aggregate.v3.ClusterConfig",
  encode: ClusterConfig.encode,
};
export const TCP_PROXY: MessageType<TcpProxy> = {
  typeName: "envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy",
  encode: TcpProxy.encode,
};
export const TLS_INSPECTOR: MessageType<TlsInspector> = {
  typeName: "envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector",
  encode: TlsInspector.encode,
};
export const HTTP_CONNECTION_MANAGER: MessageType<HttpConnectionManager> = {
  typeName: "envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
  encode: HttpConnectionManager.encode,
};
export const ROUTER: MessageType<Router> = {
  typeName: "envoy.extensions.filters.http.router.v3.Router",
  encode: Router.encode,
};
export const HTTP_PROTOCOL_OPTIONS: MessageType<HttpProtocolOptions> = {
  typeName: "envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
  encode: HttpProtocolOptions.encode,
};

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
