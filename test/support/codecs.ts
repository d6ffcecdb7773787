/** The generated codec of each resource kind, for tests that encode or decode compiled resources. */
import type { BinaryWriter } from "@bufbuild/protobuf/wire";
import { Cluster } from "../../gen/envoy/config/cluster/v3/cluster.js";
import { ClusterLoadAssignment } from "../../gen/envoy/config/endpoint/v3/endpoint.js";
import { Listener } from "../../gen/envoy/config/listener/v3/listener.js";
import type { ResourceKind } from "../../src/emit/text.js";

export interface ResourceCodec {
  encode(message: any): BinaryWriter;
  decode(bytes: Uint8Array): unknown;
}

export const RESOURCE_CODECS: Record<ResourceKind, ResourceCodec> = {
  clusters: Cluster,
  endpoints: ClusterLoadAssignment,
  listeners: Listener,
};
