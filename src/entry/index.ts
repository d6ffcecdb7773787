/**
 * `aether-xds`: the pipeline, in the order a control plane calls it — parse the mesh, index it
 * once, compile each node, turn the result into versioned xDS resources and diffs, or render it
 * as Envoy's JSON/YAML — plus the typed errors and the diagnostics it reports. Names, the mesh
 * path check, the validate bootstrap and the Envoy message types are the subpaths
 * `aether-xds/naming`, `aether-xds/verify`, `aether-xds/bootstrap` and `aether-xds/envoy`.
 *
 * Nested shapes are reachable through the types exported here, e.g. `Snapshot["mesh"]["trust"]`,
 * `LocalNode["pods"][number]`, `XdsDiff[XdsTypeUrl]`.
 */
import { type CompileResult, compileNode as compileFromIndex } from "../compile/compile-node.js";
import { type LocalNode, type LocalNodeInput, localNodeFrom as nodeFromSnapshot } from "../model/node.js";
import type { Options, OptionsInput } from "../model/options.js";
import type { Snapshot } from "../model/snapshot.js";
import { ensureSnapshot } from "../model/snapshot-guard.js";
import { indexSnapshot as buildIndex, isBuiltIndex, localNodeIn } from "../plan/snapshot-index.js";
import { fromPublicIndex, type SnapshotIndex, snapshotOrIndex, toPublicIndex } from "./opaque-index.js";

export type { CompileResult } from "../compile/compile-node.js";
export { DIAGNOSTIC_CODES, type Diagnostic, type DiagnosticCode, LEFT_OUT_CODES } from "../diagnostics.js";
export type { JsonValue } from "../emit/render.js";
export { type RenderedResult, renderJson, renderResult, renderYaml } from "../emit/text.js";
export {
  diffResources,
  isEmptyDiff,
  toXdsResources,
  versionInfo,
  XDS_TYPE_URLS,
  type XdsDiff,
  type XdsResource,
  type XdsResources,
  type XdsTypeUrl,
} from "../emit/xds.js";
export { CompileInvariantError, InputError, type InputIssue, isCompileInvariantError, isInputError } from "../errors.js";
export { parseMeshFile } from "../model/mesh-file.js";
export { type LocalNode, type LocalNodeInput, parseNode } from "../model/node.js";
export { type Options, type OptionsInput, parseOptions } from "../model/options.js";
export { decodeServiceEndpoint, encodeServiceEndpoint, type ServiceEndpoint, type ServiceEndpointInput } from "../model/registry.js";
export { PRODUCTION_SETTINGS, type Settings } from "../model/settings.js";
export { type MeshFileInput, parseSnapshot, type Snapshot, withNodes, withServiceRecords, withValidServiceRecords } from "../model/snapshot.js";
export type { SnapshotIndex } from "./opaque-index.js";

/**
 * The index of a snapshot, built on first use and reused for the same snapshot object; every
 * `compileNode` call for the snapshot shares it. With `previous`, the index of an earlier snapshot
 * with the same `mesh` object (as `withServiceRecords` and `withNodes` keep it) and export data in
 * both or neither, only the services whose records array, declared protocols or being exported
 * changed, or with a pod on a node whose status object changed, are indexed again, and unchanged
 * services keep the work cached on them.
 */
export function indexSnapshot(snapshot: Snapshot, previous?: SnapshotIndex): SnapshotIndex {
  return toPublicIndex(buildIndex(ensureSnapshot(snapshot), previous && fromPublicIndex(previous)));
}

/**
 * Compiles one node's Envoy resources: its outbound clusters, their split-horizon EDS, its
 * listeners, and a diagnostic for every endpoint it could see. Pure: the same snapshot, node and
 * options give byte-identical resources whatever the order of the input. Pass an index
 * (`indexSnapshot`) to share work across nodes; a snapshot is indexed once and the index reused.
 * The node and options are validated (`InputError`) and the output is checked before it is
 * returned (`CompileInvariantError`): it never returns what Envoy would reject or misroute.
 */
export function compileNode(snapshot: Snapshot | SnapshotIndex, node: LocalNode | LocalNodeInput, options: Options | OptionsInput = {}): CompileResult {
  return compileFromIndex(snapshotOrIndex(snapshot), node, options);
}

/**
 * Derives the local node from a snapshot: its address and locality from the node list (or, for an
 * unlisted node, from its pods' records), its hosted pods and their netns from the registry
 * records that name it, and its dependency set as the union of its pods' services' dependencies.
 * Given an index, the node's records are read from it; given a snapshot, every record is scanned
 * for them: pass the index when deriving many nodes.
 */
export function localNodeFrom(snapshot: Snapshot | SnapshotIndex, cluster: string, nodeName: string): LocalNode {
  const source = snapshotOrIndex(snapshot);
  return isBuiltIndex(source) ? localNodeIn(source, cluster, nodeName) : nodeFromSnapshot(source, cluster, nodeName);
}
