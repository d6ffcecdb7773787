/** aether-xds: Envoy configuration for multi-cluster meshes with per-node waypoints. */
export { InputError, isInputError, formatPath, type InputIssue, type InputKind } from "./errors.js";
export * from "./naming.js";
export {
  parseSnapshot,
  withServiceRecords,
  type Snapshot,
  type NodeStatus,
  type TrustConfig,
  type PortProtocol,
  type MeshFileInput,
} from "./model/snapshot.js";
export { parseNode, localNodeFrom, trustDomainOfCluster, type LocalNode, type LocalNodeInput, type HostedPod } from "./model/node.js";
export {
  parseOptions,
  WAYPOINT_MODES,
  SOCKET_SELECTIONS,
  type Options,
  type OptionsInput,
  type WaypointMode,
  type SocketSelection,
  type ConfigSourceOption,
} from "./model/options.js";
export {
  decodeServiceEndpoint,
  encodeServiceEndpoint,
  DEFAULT_ENDPOINT_WEIGHT,
  HEALTH_STATUSES,
  type ServiceEndpoint,
  type ServiceEndpointInput,
  type RegistryHealth,
} from "./model/registry.js";
export { parseMeshFile, meshFileFormat, type MeshFileFormat } from "./model/mesh-file.js";
export { compileNode, type CompileResult } from "./compile/compile-node.js";
export { indexSnapshot, CACHED_CONTEXTS, type SnapshotIndex } from "./plan/snapshot-index.js";
export { WAYPOINT_KEY, ORIGIN_CLUSTER_KEY, ORIGIN_NODE_KEY, RESERVED_METADATA_KEYS } from "./plan/endpoints.js";
export {
  DIAGNOSTIC_CODES,
  LEFT_OUT_CODES,
  type Diagnostic,
  type DiagnosticCode,
  type EndpointRef,
  type Severity,
} from "./diagnostics.js";
export {
  explainService,
  formatServiceExplanation,
  type ServiceExplanation,
  type PortExplanation,
  type EndpointExplanation,
} from "./explain.js";
export { renderJson, renderYaml, renderResult, renderResource, RESOURCE_TYPES, type ResourceKind, type RenderedResult } from "./emit/text.js";
export type { Cluster } from "../gen/envoy/config/cluster/v3/cluster.js";
export type { ClusterLoadAssignment } from "../gen/envoy/config/endpoint/v3/endpoint.js";
export type { Listener } from "../gen/envoy/config/listener/v3/listener.js";
export {
  toXdsResources,
  diffResources,
  isEmptyDiff,
  versionInfo,
  XDS_TYPE_URLS,
  type XdsResource,
  type XdsResources,
  type XdsTypeUrl,
  type ResourceDiff,
  type XdsDiff,
} from "./emit/xds.js";
export { toBootstrap, renderBootstrap, type BootstrapOptions } from "./emit/bootstrap.js";
export { verifyMesh, checkCompiledMesh, explainPath, formatPathReport, type MeshCheckReport } from "./verify/mesh-check.js";
export { compileMesh, type CompiledMesh, type CompiledNode } from "./verify/compiled-mesh.js";
export { formatMeshReport } from "./verify/format.js";
export { PATH_FAILURES, type PathFailureCode, type PathReport, type PathSource, type PathTarget, type Landing } from "./verify/path.js";
export { selectFilterChain, evaluateSocketMatcher, chosenPriority, type MatchInputs, type MatchOutcome } from "./verify/envoy-match.js";
export { CompileInvariantError, isCompileInvariantError } from "./errors.js";
export { lintCompileResult, LINT_RULES, type LintRule } from "./compile/lint.js";
export { SNAPSHOT_LIMITS } from "./model/snapshot.js";
export { MAX_MESH_FILE_LENGTH } from "./model/mesh-file.js";
