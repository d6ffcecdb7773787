/**
 * The snapshot index as users see it: a handle they keep and pass back, never look inside, so its
 * layout (services, views, caches) can change in any release. The compiler keeps the real
 * interface (plan/snapshot-index.ts); the entry points convert at the boundary, here and only here.
 */
import type { Snapshot } from "../model/snapshot.js";
import type { SnapshotIndex as IndexData } from "../plan/snapshot-index.js";

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

/** The compiler index behind a public handle. */
export function fromPublicIndex(index: SnapshotIndex): IndexData {
  return index as unknown as IndexData;
}

/** A snapshot as it is, or the compiler index behind a public handle. */
export function snapshotOrIndex(source: Snapshot | SnapshotIndex): Snapshot | IndexData {
  return source as unknown as Snapshot | IndexData;
}
