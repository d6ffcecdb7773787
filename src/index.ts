/** aether-xds: Envoy configuration for multi-cluster meshes with per-node waypoints. */
export { InputError, isInputError, formatPath, type InputIssue, type InputKind } from "./errors.js";
export * from "./naming.js";
export {
  parseSnapshot,
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
