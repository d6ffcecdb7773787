/**
 * A faster `ClusterLoadAssignment.encode` producing exactly the same bytes. The compiler shares
 * each LbEndpoint between every view and node that emits it, with a cell for its encoding
 * (see plan/encoding-cells.ts), so each is encoded once and spliced; only the grouping (locality,
 * priority) is written per assignment, straight into the output with precomputed lengths. Field
 * order is the generated encoder's: cluster_name, endpoints {locality, metadata, lb_endpoints,
 * load_balancing_weight, priority}, policy.
 */
import { BinaryWriter } from "@bufbuild/protobuf/wire";
import { Locality } from "../../gen/envoy/config/core/v3/base.js";
import { type ClusterLoadAssignment, ClusterLoadAssignment_Policy } from "../../gen/envoy/config/endpoint/v3/endpoint.js";
import { LbEndpoint, LocalityLbEndpoints } from "../../gen/envoy/config/endpoint/v3/endpoint_components.js";
import { type AssignmentCells, type EncodingCell, encodingCellsOf } from "../plan/encoding-cells.js";
import { messageField, varintSize } from "./wire-size.js";

/** Reused: `finish()` copies out what was written and keeps the grown buffer. */
const writer = new BinaryWriter();
const partWriter = new BinaryWriter();

export function encodeAssignment(assignment: ClusterLoadAssignment): Uint8Array {
  const cells = encodingCellsOf(assignment);
  let next = 0;
  if (assignment.cluster_name) writer.uint32(10).string(assignment.cluster_name);
  for (const group of assignment.endpoints ?? []) {
    writeGroup(group, cells, next);
    next += group.lb_endpoints?.length ?? 0;
  }
  if (assignment.policy !== undefined) {
    const policy = ClusterLoadAssignment_Policy.encode(assignment.policy, partWriter).finish();
    writer.uint32(34).uint32(policy.length).raw(policy);
  }
  return writer.finish();
}

/** One LocalityLbEndpoints (field 2); groups with metadata or a weight take the generated encoder. */
function writeGroup(group: LocalityLbEndpoints, cells: AssignmentCells | undefined, first: number): void {
  if (group.metadata !== undefined || group.load_balancing_weight !== undefined) {
    const bytes = LocalityLbEndpoints.encode(group, partWriter).finish();
    writer.uint32(18).uint32(bytes.length).raw(bytes);
    return;
  }
  const locality = group.locality === undefined ? undefined : Locality.encode(group.locality, partWriter).finish();
  const lbEndpoints = (group.lb_endpoints ?? []).map((lbEndpoint, i) => encodedLbEndpoint(lbEndpoint, cells?.[first + i]));
  let length = locality === undefined ? 0 : messageField(locality.length);
  for (const bytes of lbEndpoints) length += messageField(bytes.length);
  if (group.priority) length += 1 + varintSize(group.priority);
  writer.uint32(18).uint32(length);
  if (locality !== undefined) writer.uint32(10).uint32(locality.length).raw(locality);
  for (const bytes of lbEndpoints) writer.uint32(18).uint32(bytes.length).raw(bytes);
  if (group.priority) writer.uint32(40).uint32(group.priority);
}

function encodedLbEndpoint(lbEndpoint: LbEndpoint, cell: EncodingCell | undefined): Uint8Array {
  if (!cell) return LbEndpoint.encode(lbEndpoint, partWriter).finish();
  return (cell.bytes ??= LbEndpoint.encode(lbEndpoint, partWriter).finish());
}
