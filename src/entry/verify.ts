/**
 * `aether-xds/verify`: the mesh path check and the explain tools. They replay Envoy's selection
 * rules (priority, transport-socket matcher, filter-chain match) over compiled output to show
 * where each connection lands, with which certificates, or which mistake stops it.
 */
import type { LocalNode, LocalNodeInput } from "../model/node.js";
import type { Options, OptionsInput } from "../model/options.js";
import type { Snapshot } from "../model/snapshot.js";
import type { ServiceKey } from "../naming.js";
import { type MeshCheckSummary, summarizeMesh as summarizeFromIndex } from "../verify/check-summary.js";
import type { CompileProgress } from "../verify/compiled-mesh.js";
import { explainService as explainFromIndex, type ServiceExplanation } from "../verify/explain-service.js";
import { type CheckProgress, explainPath as explainPathFromIndex, type MeshCheckReport, verifyMesh as verifyFromIndex } from "../verify/mesh-check.js";
import type { PathReport } from "../verify/path.js";
import { type SnapshotIndex, snapshotOrIndex } from "./opaque-index.js";

export type { MatrixSize, MeshCheckSummary, PathStatus } from "../verify/check-summary.js";
export type { CompileProgress } from "../verify/compiled-mesh.js";
export type { ServiceExplanation } from "../verify/explain-service.js";
export { formatServiceExplanation } from "../verify/explain-service.js";
export { formatMeshReport, formatMeshSummary } from "../verify/format.js";
export { type CheckProgress, formatPathReport, type MeshCheckReport, type ReplayProgress } from "../verify/mesh-check.js";
export { PATH_FAILURES, type PathFailureCode, type PathReport } from "../verify/path.js";

/**
 * The mesh path check: compiles every node of the snapshot, then for every source (each hosted
 * pod, and each node itself) and every service port it depends on, replays Envoy over the output
 * and reports where the connection lands — a pod of that service, with end-to-end mTLS — or the
 * mistake that stops it. `ok` is false when any path fails or any node's compile failed closed.
 * `onProgress`: a function is called as nodes are compiled (done, total); a `CheckProgress`
 * also hears the replay (paths replayed, paths in all), which on a big mesh takes as long. In
 * `sockets` mode, where no two nodes share outbound clusters, each node is compiled and its paths
 * replayed in turn (one node's outbound clusters held at a time): `compiled` then hears each node
 * as its turn comes, and the replay is heard once, at its end.
 */
export function verifyMesh(
  snapshot: Snapshot | SnapshotIndex,
  options: Options | OptionsInput = {},
  onProgress?: CompileProgress | CheckProgress,
): MeshCheckReport {
  return verifyFromIndex(snapshotOrIndex(snapshot), options, onProgress);
}

/**
 * The mesh check as its text report shows it (`formatMeshSummary` prints the same text as
 * `formatMeshReport` would for `verifyMesh`'s report): the same `ok`, the count of paths in each
 * status, the first 100 failed paths in full and every failed path by failure code — and every
 * report only when the report's matrix shows them (at most 80 sources and 40 destinations). It holds none of the other reports, and so needs a
 * fraction of `verifyMesh`'s memory on a big mesh (`aether-xds check` runs it).
 */
export function summarizeMesh(
  snapshot: Snapshot | SnapshotIndex,
  options: Options | OptionsInput = {},
  onProgress?: CompileProgress | CheckProgress,
): MeshCheckSummary {
  return summarizeFromIndex(snapshotOrIndex(snapshot), options, onProgress);
}

/**
 * One connection, from a hosted pod `"<cluster>/<namespace>/<pod>"` to a service port
 * `"<namespace>/<service>:<port>"`, replayed hop by hop over the compiled mesh: the report and a
 * readable trace. An unknown pod or a malformed target is an `InputError`.
 */
export function explainPath(
  snapshot: Snapshot | SnapshotIndex,
  from: string,
  to: string,
  options: Options | OptionsInput = {},
): { report: PathReport; trace: string } {
  return explainPathFromIndex(snapshotOrIndex(snapshot), from, to, options);
}

/**
 * Where traffic for one service would go from this node, and why, from the same plan the compiler
 * uses: per port, the socket each source uses, every endpoint by priority with its route, and
 * every endpoint left out with its reason. An unknown service is an `InputError`.
 */
export function explainService(
  snapshot: Snapshot | SnapshotIndex,
  node: LocalNode | LocalNodeInput,
  options: Options | OptionsInput,
  service: ServiceKey,
): ServiceExplanation {
  return explainFromIndex(snapshotOrIndex(snapshot), node, options, service);
}
