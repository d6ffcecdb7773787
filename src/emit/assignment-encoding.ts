/**
 * A faster `ClusterLoadAssignment.encode` producing exactly the same bytes. The compiler shares
 * LbEndpoint objects between every view and node that emits them, so each one is encoded once
 * and spliced; only the grouping (locality, priority) is written per assignment. Field order is
 * the generated encoder's: cluster_name, endpoints {locality, metadata, lb_endpoints,
 * load_balancing_weight, priority}, policy.
 */
import { BinaryWriter } from "@bufbuild/protobuf/wire";
import { Locality } from "../../gen/envoy/config/core/v3/base.js";
import { ClusterLoadAssignment_Policy, type ClusterLoadAssignment } from "../../gen/envoy/config/endpoint/v3/endpoint.js";
import { LbEndpoint, LocalityLbEndpoints } from "../../gen/envoy/config/endpoint/v3/endpoint_components.js";

const lbEndpointBytes = new WeakMap<LbEndpoint, Uint8Array>();
const writer = new BinaryWriter();
const groupWriter = new BinaryWriter();

export function encodeAssignment(assignment: ClusterLoadAssignment): Uint8Array {
  if (assignment.cluster_name) writer.uint32(10).string(assignment.cluster_name);
  for (const group of assignment.endpoints ?? []) {
    const bytes = groupBytes(group);
    writer.uint32(18).uint32(bytes.length).raw(bytes);
  }
  if (assignment.policy !== undefined) {
    const policy = ClusterLoadAssignment_Policy.encode(assignment.policy).finish();
    writer.uint32(34).uint32(policy.length).raw(policy);
  }
  return writer.finish();
}

/** One LocalityLbEndpoints; groups with metadata or a weight take the generated encoder. */
function groupBytes(group: LocalityLbEndpoints): Uint8Array {
  if (group.metadata !== undefined || group.load_balancing_weight !== undefined) return LocalityLbEndpoints.encode(group).finish();
  if (group.locality !== undefined) {
    const locality = Locality.encode(group.locality).finish();
    groupWriter.uint32(10).uint32(locality.length).raw(locality);
  }
  for (const lbEndpoint of group.lb_endpoints ?? []) {
    const bytes = encodedLbEndpoint(lbEndpoint);
    groupWriter.uint32(18).uint32(bytes.length).raw(bytes);
  }
  if (group.priority) groupWriter.uint32(40).uint32(group.priority);
  return groupWriter.finish();
}

function encodedLbEndpoint(lbEndpoint: LbEndpoint): Uint8Array {
  let bytes = lbEndpointBytes.get(lbEndpoint);
  if (!bytes) lbEndpointBytes.set(lbEndpoint, (bytes = LbEndpoint.encode(lbEndpoint).finish()));
  return bytes;
}
