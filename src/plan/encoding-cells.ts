/**
 * Where the encoded bytes of shared messages are kept. A planned LbEndpoint is shared by every
 * view and node that emits it, so its encoding is computed once, by the first assignment encoder
 * that needs it, and kept in a cell beside it. The compiler records, per assignment, which cell
 * belongs to each of its LbEndpoints; the encoder (in emit/) reads them back.
 */
import type { ClusterLoadAssignment } from "../../gen/envoy/config/endpoint/v3/endpoint.js";

/**
 * A slot for the encoded bytes of a shared message: a range of the encoded resource that first
 * carried it. Those bytes are kept anyway (its `XdsResource`), so a filled cell costs its three
 * fields and no copy of its own. A planned endpoint extends it: it is its own cell.
 */
export class EncodingCell {
  /** The encoded resource holding the bytes; undefined until an encoder fills the cell. */
  source: Uint8Array | undefined = undefined;
  start = 0;
  end = 0;

  /** The kept bytes, if filled. */
  bytes(): Uint8Array | undefined {
    return this.source?.subarray(this.start, this.end);
  }
}

/** A cell per LbEndpoint, in order; none where the endpoint's bytes are not shared (a scaled weight). */
export type AssignmentCells = readonly (EncodingCell | undefined)[];

/**
 * Keyed by assignment, not by LbEndpoint: a few thousand weak entries per view instead of one per
 * endpoint, which kept the garbage collector busy out of proportion.
 */
const cellsByAssignment = new WeakMap<ClusterLoadAssignment, AssignmentCells>();

/** Records where the encoding of each of the assignment's LbEndpoints (in order) may be kept. */
export function withEncodingCells(assignment: ClusterLoadAssignment, cells: AssignmentCells): void {
  cellsByAssignment.set(assignment, cells);
}

/** The cells recorded for an assignment, if any. */
export function encodingCellsOf(assignment: ClusterLoadAssignment): AssignmentCells | undefined {
  return cellsByAssignment.get(assignment);
}
