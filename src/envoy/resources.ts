/** The three kinds of xDS resources a node gets, as one value: what compile produces and emit consumes. */
import type { Cluster } from "../../gen/envoy/config/cluster/v3/cluster.js";
import type { ClusterLoadAssignment } from "../../gen/envoy/config/endpoint/v3/endpoint.js";
import type { Listener } from "../../gen/envoy/config/listener/v3/listener.js";

export interface ResourceSet {
  /** Sorted by name. */
  readonly clusters: readonly Cluster[];
  /** Sorted by cluster name. */
  readonly endpoints: readonly ClusterLoadAssignment[];
  /** Sorted by name. */
  readonly listeners: readonly Listener[];
}
