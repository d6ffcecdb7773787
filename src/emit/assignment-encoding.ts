/**
 * A faster `ClusterLoadAssignment.encode` producing exactly the same bytes. The compiler shares
 * each LbEndpoint between every view and node that emits it, with a cell for its encoding
 * (see plan/encoding-cells.ts), so each is encoded once and spliced; only the grouping (locality,
 * priority) is written per assignment, straight into the output with precomputed lengths. A cell
 * is filled with the range of the first output that carried its LbEndpoint, so the kept encoding
 * is no copy. Field order is the generated encoder's: cluster_name, endpoints {locality, metadata,
 * lb_endpoints, load_balancing_weight, priority}, policy.
 */
import { Locality } from "../../gen/envoy/config/core/v3/base.js";
import { type ClusterLoadAssignment, ClusterLoadAssignment_Policy } from "../../gen/envoy/config/endpoint/v3/endpoint.js";
import type { LbEndpoint } from "../../gen/envoy/config/endpoint/v3/endpoint_components.js";
import { LocalityLbEndpoints } from "../../gen/envoy/config/endpoint/v3/endpoint_components.js";
import { finishInSlab } from "../envoy/slabs.js";
import {
  BinaryWriter,
  delimitedFieldSize,
  stringFieldSize,
  uint32FieldSize,
  writeDelimitedHeader,
  writeEncodedField,
  writeStringField,
  writeUint32Field,
} from "../envoy/wire.js";
import { type AssignmentCells, type EncodingCell, encodingCellsOf } from "../plan/encoding-cells.js";
import { encodeLbEndpointIn } from "./lb-endpoint-encoding.js";

/** Field numbers (proto/envoy/config/endpoint/v3/endpoint.proto, endpoint_components.proto). */
const ASSIGNMENT = { clusterName: 1, endpoints: 2, policy: 4 } as const;
const LOCALITY_GROUP = { locality: 1, lbEndpoints: 2, priority: 5 } as const;

/** Reused: `finishInSlab` (and `finish()`) copy out what was written and keep the grown buffer. */
const writer = new BinaryWriter();
const partWriter = new BinaryWriter();

/** The cells the output being written fills, each with where its LbEndpoint's bytes start and end there. */
const filling: { cell: EncodingCell; start: number; end: number }[] = [];

export function encodeAssignment(assignment: ClusterLoadAssignment): Uint8Array {
  const cells = encodingCellsOf(assignment);
  filling.length = 0;
  let next = 0;
  writeStringField(writer, ASSIGNMENT.clusterName, assignment.cluster_name);
  let at = stringFieldSize(ASSIGNMENT.clusterName, assignment.cluster_name);
  for (const group of assignment.endpoints ?? []) {
    at = writeGroup(group, cells, next, at);
    next += group.lb_endpoints?.length ?? 0;
  }
  if (assignment.policy !== undefined) {
    const policy = ClusterLoadAssignment_Policy.encode(assignment.policy, partWriter).finish();
    writeEncodedField(writer, ASSIGNMENT.policy, policy);
    at += delimitedFieldSize(ASSIGNMENT.policy, policy.length);
  }
  const bytes = finishInSlab(writer);
  if (at !== bytes.length) throw new Error(`internal: assignment written in ${bytes.length} bytes, counted ${at}`);
  for (const { cell, start, end } of filling) {
    cell.source = bytes;
    cell.start = start;
    cell.end = end;
  }
  filling.length = 0;
  return bytes;
}

/**
 * One LocalityLbEndpoints (field 2), written from offset `at` of the output; returns the offset
 * after it. Groups with metadata or a weight take the generated encoder.
 */
function writeGroup(group: LocalityLbEndpoints, cells: AssignmentCells | undefined, first: number, at: number): number {
  if (group.metadata !== undefined || group.load_balancing_weight !== undefined) {
    const bytes = LocalityLbEndpoints.encode(group, partWriter).finish();
    writeEncodedField(writer, ASSIGNMENT.endpoints, bytes);
    return at + delimitedFieldSize(ASSIGNMENT.endpoints, bytes.length);
  }
  scratchUsed = 0;
  const locality = group.locality === undefined ? undefined : Locality.encode(group.locality, partWriter).finish();
  const lbEndpoints = (group.lb_endpoints ?? []).map((lbEndpoint, i) => encodedLbEndpoint(lbEndpoint, cells?.[first + i]));
  let length = locality === undefined ? 0 : delimitedFieldSize(LOCALITY_GROUP.locality, locality.length);
  for (const bytes of lbEndpoints) length += delimitedFieldSize(LOCALITY_GROUP.lbEndpoints, bytes.length);
  length += uint32FieldSize(LOCALITY_GROUP.priority, group.priority);
  writeDelimitedHeader(writer, ASSIGNMENT.endpoints, length);
  at += delimitedFieldSize(ASSIGNMENT.endpoints, length) - length;
  if (locality !== undefined) {
    writeEncodedField(writer, LOCALITY_GROUP.locality, locality);
    at += delimitedFieldSize(LOCALITY_GROUP.locality, locality.length);
  }
  for (const [i, bytes] of lbEndpoints.entries()) {
    writeEncodedField(writer, LOCALITY_GROUP.lbEndpoints, bytes);
    const end = at + delimitedFieldSize(LOCALITY_GROUP.lbEndpoints, bytes.length);
    const cell = cells?.[first + i];
    if (cell && cell.source === undefined) filling.push({ cell, start: end - bytes.length, end });
    at = end;
  }
  writeUint32Field(writer, LOCALITY_GROUP.priority, group.priority);
  return at + uint32FieldSize(LOCALITY_GROUP.priority, group.priority);
}

/** A filled cell's bytes, or the LbEndpoint encoded into scratch space (copied into the output next). */
function encodedLbEndpoint(lbEndpoint: LbEndpoint, cell: EncodingCell | undefined): Uint8Array {
  return cell?.bytes() ?? encodeLbEndpointIn(lbEndpoint, scratchSpace);
}

/** Space for one group's fresh LbEndpoints, reused by the next group once they are copied out. */
let scratch = new Uint8Array(16_384);
let scratchUsed = 0;

function scratchSpace(size: number): Uint8Array {
  if (scratchUsed + size > scratch.length) {
    // Views already handed out keep the old array until the group is written.
    scratch = new Uint8Array(Math.max(2 * scratch.length, size));
    scratchUsed = 0;
  }
  const space = scratch.subarray(scratchUsed, scratchUsed + size);
  scratchUsed += size;
  return space;
}
