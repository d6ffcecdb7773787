/**
 * `aether-xds/envoy`: the generated Envoy types of everything aether-xds returns — `Cluster`,
 * `ClusterLoadAssignment`, `Listener`, `Bootstrap`, `Any` — and of every message and enum reachable
 * from them by field, including the messages packed into their `typed_config` Anys (TLS contexts,
 * filters, matcher inputs). Messages are types (fields in snake_case, as in Envoy's YAML); enums
 * are values too. `google.protobuf` wrappers and `Struct` appear as plain JS values. Names are
 * the generated ones (`Cluster_TransportSocketMatch` is `Cluster.TransportSocketMatch`); the two
 * `xds.*` types whose names Envoy reuses are `XdsTypedExtensionConfig` and `XdsStringMatcher`.
 * Reference: https://www.envoyproxy.io/docs/envoy/latest/api-v3/api (the fields here are the
 * subset aether-xds emits).
 */
export type {
  /** `envoy.config.accesslog.v3.AccessLog`: an access logger of a proxy filter (`settings.accessLog`). */
  AccessLog,
} from "../../gen/envoy/config/accesslog/v3/accesslog.js";
export type {
  /** `envoy.config.bootstrap.v3.Bootstrap`: what `toBootstrap` (aether-xds/bootstrap) returns. */
  Bootstrap,
  /** `envoy.config.bootstrap.v3.Bootstrap.DynamicResources`. */
  Bootstrap_DynamicResources,
  /** `envoy.config.bootstrap.v3.Bootstrap.StaticResources`. */
  Bootstrap_StaticResources,
} from "../../gen/envoy/config/bootstrap/v3/bootstrap.js";
export type {
  /** `envoy.config.cluster.v3.CircuitBreakers`: a cluster's thresholds (`settings.circuitBreakers`). */
  CircuitBreakers,
  /** `envoy.config.cluster.v3.CircuitBreakers.Thresholds`. */
  CircuitBreakers_Thresholds,
} from "../../gen/envoy/config/cluster/v3/circuit_breaker.js";
export {
  /** `envoy.config.cluster.v3.Cluster`: an upstream cluster (CDS): `CompileResult.clusters`. */
  type Cluster,
  /** `envoy.config.cluster.v3.Cluster.CommonLbConfig`: the panic threshold (`settings.healthyPanicThresholdPercent`). */
  type Cluster_CommonLbConfig,
  /** `envoy.config.cluster.v3.Cluster.CustomClusterType`. */
  type Cluster_CustomClusterType,
  /** `envoy.config.cluster.v3.Cluster.DiscoveryType`. */
  Cluster_DiscoveryType,
  /** `envoy.config.cluster.v3.Cluster.EdsClusterConfig`. */
  type Cluster_EdsClusterConfig,
  /** `envoy.config.cluster.v3.Cluster.LbPolicy`. */
  Cluster_LbPolicy,
  /** `envoy.config.cluster.v3.Cluster.TransportSocketMatch`: a named socket of `transport_socket_matches`, chosen by `transport_socket_matcher`. */
  type Cluster_TransportSocketMatch,
} from "../../gen/envoy/config/cluster/v3/cluster.js";
export type {
  /** `envoy.config.cluster.v3.OutlierDetection` (`settings.outlierDetection`). */
  OutlierDetection,
} from "../../gen/envoy/config/cluster/v3/outlier_detection.js";
export {
  /** `envoy.config.core.v3.Address`. */
  type Address,
  /** `envoy.config.core.v3.CidrRange`: an address prefix (a capture chain's VIP). */
  type CidrRange,
  /** `envoy.config.core.v3.SocketAddress`. */
  type SocketAddress,
  /** `envoy.config.core.v3.SocketAddress.Protocol`. */
  SocketAddress_Protocol,
} from "../../gen/envoy/config/core/v3/address.js";
export {
  /** `envoy.config.core.v3.DataSource`. */
  type DataSource,
  /** `envoy.config.core.v3.Locality`. */
  type Locality,
  /** `envoy.config.core.v3.Metadata`: filter metadata; endpoints carry aether-xds keys under `envoy.lb`. */
  type Metadata,
  /** `envoy.config.core.v3.Node`. */
  type Node,
  /** `envoy.config.core.v3.TrafficDirection`. */
  TrafficDirection,
  /** `envoy.config.core.v3.TransportSocket`: a transport socket; its `typed_config` holds an `UpstreamTlsContext` or `DownstreamTlsContext`. */
  type TransportSocket,
} from "../../gen/envoy/config/core/v3/base.js";
export {
  /** `envoy.config.core.v3.AggregatedConfigSource`. */
  type AggregatedConfigSource,
  /** `envoy.config.core.v3.ApiConfigSource`. */
  type ApiConfigSource,
  /** `envoy.config.core.v3.ApiConfigSource.ApiType`. */
  ApiConfigSource_ApiType,
  /** `envoy.config.core.v3.ApiVersion`. */
  ApiVersion,
  /** `envoy.config.core.v3.ConfigSource`. */
  type ConfigSource,
} from "../../gen/envoy/config/core/v3/config_source.js";
export type {
  /** `envoy.config.core.v3.TypedExtensionConfig`. */
  TypedExtensionConfig,
} from "../../gen/envoy/config/core/v3/extension.js";
export type {
  /** `envoy.config.core.v3.GrpcService`. */
  GrpcService,
  /** `envoy.config.core.v3.GrpcService.EnvoyGrpc`. */
  GrpcService_EnvoyGrpc,
} from "../../gen/envoy/config/core/v3/grpc_service.js";
export {
  /** `envoy.config.core.v3.HealthCheck`: a readiness probe's connect-only check (`settings.readinessProbes`). */
  type HealthCheck,
  /** `envoy.config.core.v3.HealthCheck.TcpHealthCheck`. */
  type HealthCheck_TcpHealthCheck,
  /** `envoy.config.core.v3.HealthStatus`. */
  HealthStatus,
} from "../../gen/envoy/config/core/v3/health_check.js";
export type {
  /** `envoy.config.core.v3.Http1ProtocolOptions`. */
  Http1ProtocolOptions,
  /** `envoy.config.core.v3.Http2ProtocolOptions`. */
  Http2ProtocolOptions,
  /** `envoy.config.core.v3.KeepaliveSettings`: HTTP/2 PING keepalive (`settings.http2Keepalive`). */
  KeepaliveSettings,
} from "../../gen/envoy/config/core/v3/protocol.js";
export type {
  /** `envoy.config.core.v3.SubstitutionFormatString`: the value a `set_filter_state` entry stamps. */
  SubstitutionFormatString,
} from "../../gen/envoy/config/core/v3/substitution_format_string.js";
export type {
  /** `envoy.config.endpoint.v3.ClusterLoadAssignment`: a cluster's endpoints (EDS): `CompileResult.endpoints`. */
  ClusterLoadAssignment,
  /** `envoy.config.endpoint.v3.ClusterLoadAssignment.Policy`. */
  ClusterLoadAssignment_Policy,
} from "../../gen/envoy/config/endpoint/v3/endpoint.js";
export type {
  /** `envoy.config.endpoint.v3.Endpoint`. */
  Endpoint,
  /** `envoy.config.endpoint.v3.LbEndpoint`: one endpoint with its health, weight and `envoy.lb` metadata. */
  LbEndpoint,
  /** `envoy.config.endpoint.v3.LocalityLbEndpoints`: the endpoints of one locality at one priority. */
  LocalityLbEndpoints,
} from "../../gen/envoy/config/endpoint/v3/endpoint_components.js";
export type {
  /** `envoy.config.listener.v3.AdditionalAddress`: another address a listener binds (a capture listener's `::1`). */
  AdditionalAddress,
  /** `envoy.config.listener.v3.Listener`: a listener (LDS): `CompileResult.listeners`. */
  Listener,
} from "../../gen/envoy/config/listener/v3/listener.js";
export type {
  /** `envoy.config.listener.v3.Filter`. */
  Filter,
  /** `envoy.config.listener.v3.FilterChain`: a filter chain, selected by its `filter_chain_match`. */
  FilterChain,
  /** `envoy.config.listener.v3.FilterChainMatch`. */
  FilterChainMatch,
  /** `envoy.config.listener.v3.ListenerFilter`. */
  ListenerFilter,
} from "../../gen/envoy/config/listener/v3/listener_components.js";
export type {
  /** `envoy.config.route.v3.RouteConfiguration`. */
  RouteConfiguration,
} from "../../gen/envoy/config/route/v3/route.js";
export type {
  /** `envoy.config.route.v3.DirectResponseAction`: the 404 of an egress listener's unknown authorities. */
  DirectResponseAction,
  /** `envoy.config.route.v3.RetryPolicy`: an egress route's retries (`settings.retries`). */
  RetryPolicy,
  /** `envoy.config.route.v3.Route`. */
  Route,
  /** `envoy.config.route.v3.RouteAction`. */
  RouteAction,
  /** `envoy.config.route.v3.RouteMatch`. */
  RouteMatch,
  /** `envoy.config.route.v3.VirtualHost`. */
  VirtualHost,
} from "../../gen/envoy/config/route/v3/route_components.js";
export type {
  /** `envoy.extensions.access_loggers.grpc.v3.CommonGrpcAccessLogConfig`. */
  CommonGrpcAccessLogConfig,
  /** `envoy.extensions.access_loggers.grpc.v3.HttpGrpcAccessLogConfig`: per-request entries to a gRPC access-log service. */
  HttpGrpcAccessLogConfig,
  /** `envoy.extensions.access_loggers.grpc.v3.TcpGrpcAccessLogConfig`: per-connection entries to a gRPC access-log service. */
  TcpGrpcAccessLogConfig,
} from "../../gen/envoy/extensions/access_loggers/grpc/v3/als.js";
export type {
  /** `envoy.extensions.access_loggers.stream.v3.StdoutAccessLog`: one text line per request or connection. */
  StdoutAccessLog,
} from "../../gen/envoy/extensions/access_loggers/stream/v3/stream.js";
export type {
  /** `envoy.extensions.clusters.aggregate.v3.ClusterConfig`: the sub-clusters of an aggregate cluster (`socketSelection: aggregate`). */
  ClusterConfig,
} from "../../gen/envoy/extensions/clusters/aggregate/v3/cluster.js";
export {
  /** `envoy.extensions.filters.common.set_filter_state.v3.FilterStateValue`: one stamped filter-state object. */
  type FilterStateValue,
  /** `envoy.extensions.filters.common.set_filter_state.v3.FilterStateValue.SharedWithUpstream`. */
  FilterStateValue_SharedWithUpstream,
} from "../../gen/envoy/extensions/filters/common/set_filter_state/v3/value.js";
export type {
  /** `envoy.extensions.filters.http.router.v3.Router`. */
  Router,
} from "../../gen/envoy/extensions/filters/http/router/v3/router.js";
export type {
  /** `envoy.extensions.filters.listener.original_dst.v3.OriginalDst`: restores a captured connection's destination. */
  OriginalDst,
} from "../../gen/envoy/extensions/filters/listener/original_dst/v3/original_dst.js";
export type {
  /** `envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector`. */
  TlsInspector,
} from "../../gen/envoy/extensions/filters/listener/tls_inspector/v3/tls_inspector.js";
export {
  /** `envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager`: the HTTP connection manager of HTTP/2 inbound chains. */
  type HttpConnectionManager,
  /** `envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager.CodecType`. */
  HttpConnectionManager_CodecType,
  /** `envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager.ForwardClientCertDetails`. */
  HttpConnectionManager_ForwardClientCertDetails,
  /** `envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager.SetCurrentClientCertDetails`. */
  type HttpConnectionManager_SetCurrentClientCertDetails,
  /** `envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter`. */
  type HttpFilter,
} from "../../gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.js";
export type {
  /** `envoy.extensions.filters.network.set_filter_state.v3.Config`: the source stamp of a pod's outbound chains. */
  Config as SetFilterStateConfig,
} from "../../gen/envoy/extensions/filters/network/set_filter_state/v3/set_filter_state.js";
export type {
  /** `envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy`: the TCP proxy of tunnel chains and TCP ports. */
  TcpProxy,
} from "../../gen/envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy.js";
export type {
  /** `envoy.extensions.matching.common_inputs.transport_socket.v3.EndpointMetadataInput`. */
  EndpointMetadataInput,
  /** `envoy.extensions.matching.common_inputs.transport_socket.v3.EndpointMetadataInput.PathSegment`. */
  EndpointMetadataInput_PathSegment,
  /** `envoy.extensions.matching.common_inputs.transport_socket.v3.FilterStateInput`. */
  FilterStateInput,
  /** `envoy.extensions.matching.common_inputs.transport_socket.v3.TransportSocketNameAction`. */
  TransportSocketNameAction,
} from "../../gen/envoy/extensions/matching/common_inputs/transport_socket/v3/transport_socket_inputs.js";
export type {
  /** `envoy.extensions.transport_sockets.tls.cert_mappers.filter_state_override.v3.Config`: the selector's filter-state mapper. */
  Config as FilterStateOverrideConfig,
} from "../../gen/envoy/extensions/transport_sockets/tls/cert_mappers/filter_state_override/v3/config.js";
export type {
  /** `envoy.extensions.transport_sockets.tls.cert_selectors.on_demand_secret.v3.Config`: the per-connection certificate selector. */
  Config as OnDemandSecretConfig,
} from "../../gen/envoy/extensions/transport_sockets/tls/cert_selectors/on_demand_secret/v3/config.js";
export {
  /** `envoy.extensions.transport_sockets.tls.v3.CertificateValidationContext`. */
  type CertificateValidationContext,
  /** `envoy.extensions.transport_sockets.tls.v3.SubjectAltNameMatcher`. */
  type SubjectAltNameMatcher,
  /** `envoy.extensions.transport_sockets.tls.v3.SubjectAltNameMatcher.SanType`. */
  SubjectAltNameMatcher_SanType,
} from "../../gen/envoy/extensions/transport_sockets/tls/v3/common.js";
export type {
  /** `envoy.extensions.transport_sockets.tls.v3.SdsSecretConfig`. */
  SdsSecretConfig,
} from "../../gen/envoy/extensions/transport_sockets/tls/v3/secret.js";
export type {
  /** `envoy.extensions.transport_sockets.tls.v3.CommonTlsContext`. */
  CommonTlsContext,
  /** `envoy.extensions.transport_sockets.tls.v3.CommonTlsContext.CombinedCertificateValidationContext`. */
  CommonTlsContext_CombinedCertificateValidationContext,
  /** `envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext`: the server side of mTLS, packed in a pod inbound chain. */
  DownstreamTlsContext,
  /** `envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext`: the client side of mTLS, packed in an outbound socket. */
  UpstreamTlsContext,
} from "../../gen/envoy/extensions/transport_sockets/tls/v3/tls.js";
export type {
  /** `envoy.extensions.transport_sockets.tls.v3.SPIFFECertValidatorConfig`: the SPIFFE certificate validator of federated trust. */
  SPIFFECertValidatorConfig,
  /** `envoy.extensions.transport_sockets.tls.v3.SPIFFECertValidatorConfig.TrustDomain`. */
  SPIFFECertValidatorConfig_TrustDomain,
} from "../../gen/envoy/extensions/transport_sockets/tls/v3/tls_spiffe_validator_config.js";
export type {
  /** `envoy.extensions.upstreams.http.v3.HttpProtocolOptions`: an HTTP/2 cluster's protocol options. */
  HttpProtocolOptions,
  /** `envoy.extensions.upstreams.http.v3.HttpProtocolOptions.ExplicitHttpConfig`. */
  HttpProtocolOptions_ExplicitHttpConfig,
  /** `envoy.extensions.upstreams.http.v3.HttpProtocolOptions.UseDownstreamHttpConfig`: HTTP in the downstream's version (an undeclared port). */
  HttpProtocolOptions_UseDownstreamHttpConfig,
} from "../../gen/envoy/extensions/upstreams/http/v3/http_protocol_options.js";
export type {
  /** `envoy.type.matcher.v3.StringMatcher`. */
  StringMatcher,
} from "../../gen/envoy/type/matcher/v3/string.js";
export type {
  /** `envoy.type.tracing.v3.CustomTag`: a field of a gRPC access-log entry (`value` is a substitution format). */
  CustomTag,
} from "../../gen/envoy/type/tracing/v3/custom_tag.js";
export type {
  /** `envoy.type.v3.Percent`. */
  Percent,
} from "../../gen/envoy/type/v3/percent.js";
export type {
  /** `google.protobuf.Any`: a packed message: `type_url` and the encoded `value` (as in `XdsResource.resource` and every `typed_config`). */
  Any,
} from "../../gen/google/protobuf/any.js";
export type {
  /** `google.protobuf.Duration`: a duration in seconds and nanoseconds. */
  Duration,
} from "../../gen/google/protobuf/duration.js";
export type {
  /** `xds.core.v3.TypedExtensionConfig`. */
  TypedExtensionConfig as XdsTypedExtensionConfig,
} from "../../gen/xds/core/v3/extension.js";
export type {
  /** `xds.type.matcher.v3.Matcher`: the matcher tree of `Cluster.transport_socket_matcher`. */
  Matcher,
  /** `xds.type.matcher.v3.Matcher.MatcherList`. */
  Matcher_MatcherList,
  /** `xds.type.matcher.v3.Matcher.MatcherList.FieldMatcher`. */
  Matcher_MatcherList_FieldMatcher,
  /** `xds.type.matcher.v3.Matcher.MatcherList.Predicate`. */
  Matcher_MatcherList_Predicate,
  /** `xds.type.matcher.v3.Matcher.MatcherList.Predicate.PredicateList`. */
  Matcher_MatcherList_Predicate_PredicateList,
  /** `xds.type.matcher.v3.Matcher.MatcherList.Predicate.SinglePredicate`. */
  Matcher_MatcherList_Predicate_SinglePredicate,
  /** `xds.type.matcher.v3.Matcher.MatcherTree`. */
  Matcher_MatcherTree,
  /** `xds.type.matcher.v3.Matcher.MatcherTree.MatchMap`. */
  Matcher_MatcherTree_MatchMap,
  /** `xds.type.matcher.v3.Matcher.OnMatch`. */
  Matcher_OnMatch,
} from "../../gen/xds/type/matcher/v3/matcher.js";
export type {
  /** `xds.type.matcher.v3.StringMatcher`. */
  StringMatcher as XdsStringMatcher,
} from "../../gen/xds/type/matcher/v3/string.js";
