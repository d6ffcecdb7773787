/**
 * A faster `ClusterLoadAssignment.encode` producing exactly the same bytes. The compiler shares
 * each LbEndpoint between every view and node that emits it, with a cell for its encoding
 * (see plan/encoding-cells.ts), so each is encoded once and spliced; only the grouping (locality,
 * priority) is written per assignment, straight into the output with precomputed lengths. Field
 * order is the generated encoder's: cluster_name, endpoints {locality, metadata, lb_endpoints,
 * load_balancing_weight, priority}, policy.
 */
import { Locality } from "../../gen/envoy/config/core/v3/base.js";
import { type ClusterLoadAssignment, ClusterLoadAssignment_Policy } from "../../gen/envoy/config/endpoint/v3/endpoint.js";
import type { LbEndpoint } from "../../gen/envoy/config/endpoint/v3/endpoint_components.js";
import { LocalityLbEndpoints } from "../../gen/envoy/config/endpoint/v3/endpoint_components.js";
import { finishInSlab } from "../envoy/slabs.js";
import {
  BinaryWriter,
  delimitedFieldSize,
  uint32FieldSize,
  writeDelimitedHeader,
  writeEncodedField,
  writeStringField,
  writeUint32Field,
} from "../envoy/wire.js";
import { type AssignmentCells, type EncodingCell, encodingCellsOf } from "../plan/encoding-cells.js";
import { encodeLbEndpoint } from "./lb-endpoint-encoding.js";

/** Field numbers (proto/envoy/config/endpoint/v3/endpoint.proto, endpoint_components.proto). */
const ASSIGNMENT = { clusterName: 1, endpoints: 2, policy: 4 } as const;
const LOCALITY_GROUP = { locality: 1, lbEndpoints: 2, priority: 5 } as const;

/** Reused: `finishInSlab` (and `finish()`) copy out what was written and keep the grown buffer. */
const writer = new BinaryWriter();
const partWriter = new BinaryWriter();

export function encodeAssignment(assignment: ClusterLoadAssignment): Uint8Array {
  const cells = encodingCellsOf(assignment);
  let next = 0;
  writeStringField(writer, ASSIGNMENT.clusterName, assignment.cluster_name);
  for (const group of assignment.endpoints ?? []) {
    writeGroup(group, cells, next);
    next += group.lb_endpoints?.length ?? 0;
  }
  if (assignment.policy !== undefined) {
    writeEncodedField(writer, ASSIGNMENT.policy, ClusterLoadAssignment_Policy.encode(assignment.policy, partWriter).finish());
  }
  return finishInSlab(writer);
}

/** One LocalityLbEndpoints (field 2); groups with metadata or a weight take the generated encoder. */
function writeGroup(group: LocalityLbEndpoints, cells: AssignmentCells | undefined, first: number): void {
  if (group.metadata !== undefined || group.load_balancing_weight !== undefined) {
    writeEncodedField(writer, ASSIGNMENT.endpoints, LocalityLbEndpoints.encode(group, partWriter).finish());
    return;
  }
  const locality = group.locality === undefined ? undefined : Locality.encode(group.locality, partWriter).finish();
  const lbEndpoints = (group.lb_endpoints ?? []).map((lbEndpoint, i) => encodedLbEndpoint(lbEndpoint, cells?.[first + i]));
  let length = locality === undefined ? 0 : delimitedFieldSize(LOCALITY_GROUP.locality, locality.length);
  for (const bytes of lbEndpoints) length += delimitedFieldSize(LOCALITY_GROUP.lbEndpoints, bytes.length);
  length += uint32FieldSize(LOCALITY_GROUP.priority, group.priority);
  writeDelimitedHeader(writer, ASSIGNMENT.endpoints, length);
  if (locality !== undefined) writeEncodedField(writer, LOCALITY_GROUP.locality, locality);
  for (const bytes of lbEndpoints) writeEncodedField(writer, LOCALITY_GROUP.lbEndpoints, bytes);
  writeUint32Field(writer, LOCALITY_GROUP.priority, group.priority);
}

function encodedLbEndpoint(lbEndpoint: LbEndpoint, cell: EncodingCell | undefined): Uint8Array {
  if (!cell) return encodeLbEndpoint(lbEndpoint);
  cell.bytes ??= encodeLbEndpoint(lbEndpoint);
  return cell.bytes;
}
