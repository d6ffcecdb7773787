/**
 * `aether-xds/server`: an Aggregated Discovery Service (state of the world and delta) on
 * @grpc/grpc-js that serves each Envoy its node's compiled CDS, EDS and LDS, and the registry
 * sources that feed it — a watched mesh file, or etcd. The root entry stays free of gRPC.
 */
export { AdsServer, type AdsServerOptions, type AdsService, type Connection, type SnapshotUpdate } from "../server/ads-server.js";
export { DEFAULT_ETCD_PREFIX } from "../server/etcd-keys.js";
export { EtcdSource, type EtcdSourceOptions } from "../server/etcd-source.js";
export { jsonLogLine, type ServerEvent, type StreamKind } from "../server/events.js";
export { MeshFileSource } from "../server/mesh-file-source.js";
export { metricsHttpServer, type ServerMetrics, serverMetrics } from "../server/metrics.js";
export { defaultNodeIdRule, type EnvoyNode, type MeshNodeRef, type NodeIdRule } from "../server/node-id.js";
export type { RegistrySource, SourceUpdate } from "../server/source.js";
export type { TypeStatus } from "../server/stream.js";
