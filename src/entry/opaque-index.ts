/**
 * The snapshot index as users see it: a handle they keep and pass back, never look inside, so its
 * layout (services, views, caches) can change in any release. The compiler keeps the real
 * interface (plan/snapshot-index.ts); the entry points convert at the boundary, here and only here.
 */
import { InputError } from "../errors.js";
import type { Snapshot } from "../model/snapshot.js";
import { ensureSnapshot } from "../model/snapshot-guard.js";
import { type SnapshotIndex as IndexData, isBuiltIndex } from "../plan/snapshot-index.js";

declare const opaque: unique symbol;

/**
 * What every `compileNode` call for one snapshot shares, built once by `indexSnapshot`: the
 * snapshot's services sorted and resolved, and the work nodes reuse (each EDS view's assignments,
 * recently compiled contexts' clusters). Opaque: build it, keep it, pass it back; its contents are
 * not part of the API.
 */
export interface SnapshotIndex {
  readonly [opaque]: "SnapshotIndex";
}

/** The public handle of a compiler index. */
export function toPublicIndex(index: IndexData): SnapshotIndex {
  return index as unknown as SnapshotIndex;
}

/** The compiler index behind a public handle; anything `indexSnapshot` did not build is refused. */
export function fromPublicIndex(index: SnapshotIndex): IndexData {
  if (!isBuiltIndex(index)) throw new InputError("snapshot", [{ path: "", message: "not a SnapshotIndex: build one with indexSnapshot" }]);
  return index;
}

/**
 * What an entry point was given, checked: an index `indexSnapshot` built, or a snapshot — a
 * validated one as it is, any other snapshot-shaped object validated now (`ensureSnapshot`).
 */
export function snapshotOrIndex(source: Snapshot | SnapshotIndex): Snapshot | IndexData {
  return isBuiltIndex(source) ? source : ensureSnapshot(source);
}
