/** Every message type aether-xds packs into an Any, with its fully-qualified name. */
import { HttpGrpcAccessLogConfig, TcpGrpcAccessLogConfig } from "../../gen/envoy/extensions/access_loggers/grpc/v3/als.js";
import { StdoutAccessLog } from "../../gen/envoy/extensions/access_loggers/stream/v3/stream.js";
import { ClusterConfig } from "../../gen/envoy/extensions/clusters/aggregate/v3/cluster.js";
import { Router } from "../../gen/envoy/extensions/filters/http/router/v3/router.js";
import { OriginalDst } from "../../gen/envoy/extensions/filters/listener/original_dst/v3/original_dst.js";
import { TlsInspector } from "../../gen/envoy/extensions/filters/listener/tls_inspector/v3/tls_inspector.js";
import { HttpConnectionManager } from "../../gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.js";
import { Config as SetFilterStateConfig } from "../../gen/envoy/extensions/filters/network/set_filter_state/v3/set_filter_state.js";
import { TcpProxy } from "../../gen/envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy.js";
import {
  EndpointMetadataInput,
  FilterStateInput,
  TransportSocketNameAction,
} from "../../gen/envoy/extensions/matching/common_inputs/transport_socket/v3/transport_socket_inputs.js";
import { Config as FilterStateOverrideConfig } from "../../gen/envoy/extensions/transport_sockets/tls/cert_mappers/filter_state_override/v3/config.js";
import { Config as OnDemandSecretConfig } from "../../gen/envoy/extensions/transport_sockets/tls/cert_selectors/on_demand_secret/v3/config.js";
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
export const ORIGINAL_DST = messageType("envoy.extensions.filters.listener.original_dst.v3.OriginalDst", OriginalDst);
export const SET_FILTER_STATE = messageType("envoy.extensions.filters.network.set_filter_state.v3.Config", SetFilterStateConfig);
export const ON_DEMAND_SECRET = messageType("envoy.extensions.transport_sockets.tls.cert_selectors.on_demand_secret.v3.Config", OnDemandSecretConfig);
export const FILTER_STATE_OVERRIDE = messageType(
  "envoy.extensions.transport_sockets.tls.cert_mappers.filter_state_override.v3.Config",
  FilterStateOverrideConfig,
);
export const HTTP_PROTOCOL_OPTIONS = messageType("envoy.extensions.upstreams.http.v3.HttpProtocolOptions", HttpProtocolOptions);
export const STDOUT_ACCESS_LOG = messageType("envoy.extensions.access_loggers.stream.v3.StdoutAccessLog", StdoutAccessLog);
export const HTTP_GRPC_ACCESS_LOG = messageType("envoy.extensions.access_loggers.grpc.v3.HttpGrpcAccessLogConfig", HttpGrpcAccessLogConfig);
export const TCP_GRPC_ACCESS_LOG = messageType("envoy.extensions.access_loggers.grpc.v3.TcpGrpcAccessLogConfig", TcpGrpcAccessLogConfig);

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
  originalDst: "envoy.filters.listener.original_dst",
  setFilterState: "envoy.filters.network.set_filter_state",
  onDemandSecretSelector: "envoy.tls.certificate_selectors.on_demand_secret",
  filterStateOverrideMapper: "envoy.tls.upstream_certificate_mappers.filter_state_override",
  httpConnectionManager: "envoy.filters.network.http_connection_manager",
  router: "envoy.filters.http.router",
  httpProtocolOptions: "envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
  stdoutAccessLog: "envoy.access_loggers.stdout",
  httpGrpcAccessLog: "envoy.access_loggers.http_grpc",
  tcpGrpcAccessLog: "envoy.access_loggers.tcp_grpc",
} as const;

/**
 * Filter-state names Envoy defines. The mapper reads the source identity under a fixed key; the
 * hashable string factory is what puts a value into the upstream connection-pool key (a plain
 * `envoy.string` is not hashed, so pools would be shared across sources).
 */
export const FILTER_STATE = {
  certificateMapperKey: "envoy.tls.certificate_mappers.on_demand_secret",
  hashableString: "envoy.hashable_string",
  string: "envoy.string",
} as const;
