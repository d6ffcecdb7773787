/** aether-xds: Envoy configuration for multi-cluster meshes with per-node waypoints. */

export type { Cluster } from "../gen/envoy/config/cluster/v3/cluster.js";
export type { ClusterLoadAssignment } from "../gen/envoy/config/endpoint/v3/endpoint.js";
export type { Listener } from "../gen/envoy/config/listener/v3/listener.js";
export { type CompileResult, compileNode } from "./compile/compile-node.js";
export { LINT_RULES, type LintRule, lintCompileResult } from "./compile/lint.js";
export {
  DIAGNOSTIC_CODES,
  type Diagnostic,
  type DiagnosticCode,
  type EndpointRef,
  LEFT_OUT_CODES,
  type Severity,
} from "./diagnostics.js";
export { type BootstrapOptions, renderBootstrap, toBootstrap } from "./emit/bootstrap.js";
export { RESOURCE_TYPES, type RenderedResult, type ResourceKind, renderJson, renderResource, renderResult, renderYaml } from "./emit/text.js";
export {
  diffResources,
  isEmptyDiff,
  type ResourceDiff,
  toXdsResources,
  versionInfo,
  XDS_TYPE_URLS,
  type XdsDiff,
  type XdsResource,
  type XdsResources,
  type XdsTypeUrl,
} from "./emit/xds.js";
export { CompileInvariantError, formatPath, InputError, type InputIssue, type InputKind, isCompileInvariantError, isInputError } from "./errors.js";
export { MAX_MESH_FILE_LENGTH, type MeshFileFormat, meshFileFormat, parseMeshFile } from "./model/mesh-file.js";
export { type HostedPod, type LocalNode, type LocalNodeInput, localNodeFrom, parseNode, trustDomainOfCluster } from "./model/node.js";
export {
  type ConfigSourceOption,
  type Options,
  type OptionsInput,
  parseOptions,
  SOCKET_SELECTIONS,
  type SocketSelection,
  WAYPOINT_MODES,
  type WaypointMode,
} from "./model/options.js";
export {
  DEFAULT_ENDPOINT_WEIGHT,
  decodeServiceEndpoint,
  encodeServiceEndpoint,
  HEALTH_STATUSES,
  type RegistryHealth,
  type ServiceEndpoint,
  type ServiceEndpointInput,
} from "./model/registry.js";
export {
  type MeshFileInput,
  type NodeStatus,
  type PortProtocol,
  parseSnapshot,
  SNAPSHOT_LIMITS,
  type Snapshot,
  type TrustConfig,
  withServiceRecords,
} from "./model/snapshot.js";
export * from "./naming.js";
export { ORIGIN_CLUSTER_KEY, ORIGIN_NODE_KEY, RESERVED_METADATA_KEYS, WAYPOINT_KEY } from "./plan/endpoints.js";
export { CACHED_CONTEXTS, indexSnapshot, type SnapshotIndex } from "./plan/snapshot-index.js";
export { type CompiledMesh, type CompiledNode, compileMesh } from "./verify/compiled-mesh.js";
export { chosenPriority, evaluateSocketMatcher, type MatchInputs, type MatchOutcome, selectFilterChain } from "./verify/envoy-match.js";
export {
  type EndpointExplanation,
  explainService,
  formatServiceExplanation,
  type PortExplanation,
  type ServiceExplanation,
} from "./verify/explain-service.js";
export { formatMeshReport } from "./verify/format.js";
export { checkCompiledMesh, explainPath, formatPathReport, type MeshCheckReport, verifyMesh } from "./verify/mesh-check.js";
export { type Landing, PATH_FAILURES, type PathFailureCode, type PathReport, type PathSource, type PathTarget } from "./verify/path.js";
