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

/** How a list was made from another (`notePatched`). */
export interface Patch {
  readonly base: readonly object[];
  readonly replaced: readonly object[];
}

const patches = new WeakMap<readonly object[], Patch>();

/**
 * Records that `list` is `base` with `replaced` put in the places of the resources of the same
 * names (a recompile after an endpoint's health changed): whatever was derived from `base` —
 * its lint, its encodings — holds for `list` but at those places.
 */
export function notePatched<T extends object>(list: readonly T[], base: readonly T[], replaced: readonly T[]): void {
  patches.set(list, { base, replaced });
}

/** What `notePatched` recorded of `list`. */
export function patchOf(list: readonly object[]): Patch | undefined {
  return patches.get(list);
}
