/**
 * A faster `ClusterLoadAssignment.encode` producing exactly the same bytes. The compiler shares
 * LbEndpoint objects between every view and node that emits them, so each one is encoded once
 * and spliced; only the grouping (locality, priority) is written per assignment, straight into
 * the output with precomputed lengths. Field order is the generated encoder's: cluster_name,
 * endpoints {locality, metadata, lb_endpoints, load_balancing_weight, priority}, policy.
 */
import { BinaryWriter } from "@bufbuild/protobuf/wire";
import { Locality } from "../../gen/envoy/config/core/v3/base.js";
import { ClusterLoadAssignment_Policy, type ClusterLoadAssignment } from "../../gen/envoy/config/endpoint/v3/endpoint.js";
import { LbEndpoint, LocalityLbEndpoints } from "../../gen/envoy/config/endpoint/v3/endpoint_components.js";

const lbEndpointBytes = new WeakMap<LbEndpoint, Uint8Array>();
/** Reused: `finish()` copies out what was written and keeps the grown buffer. */
const writer = new BinaryWriter();
const partWriter = new BinaryWriter();

export function encodeAssignment(assignment: ClusterLoadAssignment): Uint8Array {
  if (assignment.cluster_name) writer.uint32(10).string(assignment.cluster_name);
  for (const group of assignment.endpoints ?? []) writeGroup(group);
  if (assignment.policy !== undefined) {
    const policy = ClusterLoadAssignment_Policy.encode(assignment.policy, partWriter).finish();
    writer.uint32(34).uint32(policy.length).raw(policy);
  }
  return writer.finish();
}

/** One LocalityLbEndpoints (field 2); groups with metadata or a weight take the generated encoder. */
function writeGroup(group: LocalityLbEndpoints): void {
  if (group.metadata !== undefined || group.load_balancing_weight !== undefined) {
    const bytes = LocalityLbEndpoints.encode(group, partWriter).finish();
    writer.uint32(18).uint32(bytes.length).raw(bytes);
    return;
  }
  const locality = group.locality === undefined ? undefined : Locality.encode(group.locality, partWriter).finish();
  const lbEndpoints = (group.lb_endpoints ?? []).map(encodedLbEndpoint);
  let length = locality === undefined ? 0 : 1 + varintSize(locality.length) + locality.length;
  for (const bytes of lbEndpoints) length += 1 + varintSize(bytes.length) + bytes.length;
  if (group.priority) length += 1 + varintSize(group.priority);
  writer.uint32(18).uint32(length);
  if (locality !== undefined) writer.uint32(10).uint32(locality.length).raw(locality);
  for (const bytes of lbEndpoints) writer.uint32(18).uint32(bytes.length).raw(bytes);
  if (group.priority) writer.uint32(40).uint32(group.priority);
}

function encodedLbEndpoint(lbEndpoint: LbEndpoint): Uint8Array {
  let bytes = lbEndpointBytes.get(lbEndpoint);
  if (!bytes) lbEndpointBytes.set(lbEndpoint, (bytes = LbEndpoint.encode(lbEndpoint, partWriter).finish()));
  return bytes;
}

/** Bytes of a uint32 as a varint. */
function varintSize(value: number): number {
  return value < 0x80 ? 1 : value < 0x4000 ? 2 : value < 0x200000 ? 3 : value < 0x10000000 ? 4 : 5;
}
