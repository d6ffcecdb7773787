/**
 * Encoded outputs as views into shared slabs, as Node's Buffer pool does. A control plane keeps
 * thousands of small encodings (resources, packed `Any`s); an ArrayBuffer apiece
 * costs an allocation, a backing store and garbage-collector bookkeeping each, where a view into a
 * slab costs one small object. A slab lives while any view into it does, so a slab holds outputs
 * made together, which mostly die together (one node's, one view's); large outputs get an array
 * of their own.
 */
import { BinaryWriter } from "./wire.js";

export class Slabs {
  #slab: Uint8Array;
  #used = 0;

  /** `slabSize` bytes per slab; outputs over `slabSize / 8` get an array of their own. */
  constructor(private readonly slabSize: number) {
    this.#slab = new Uint8Array(slabSize);
  }

  /** `size` bytes of fresh, zeroed space: in the current slab, a new one, or (large) an array of its own. */
  space(size: number): Uint8Array {
    if (size > this.slabSize / 8) return new Uint8Array(size);
    if (this.#used + size > this.slabSize) {
      this.#slab = new Uint8Array(this.slabSize);
      this.#used = 0;
    }
    const space = this.#slab.subarray(this.#used, this.#used + size);
    this.#used += size;
    return space;
  }
}

/** Encoded resources and packed messages: most are 0.1–3 kB. */
const OUTPUT_SLABS = new Slabs(64 * 1024);

/**
 * Bytes that an enclosing resource's encoding will carry and then hold in their place (a
 * listener's filter configs, a cluster's TLS contexts; see `packInterim`): a slab here dies once
 * its bytes have moved.
 */
export const INTERIM_SLABS = new Slabs(64 * 1024);

/** `size` bytes of fresh output space in a slab (or an array of their own when large), for bytes written in place. */
export function slabSpace(size: number): Uint8Array {
  return OUTPUT_SLABS.space(size);
}

/** `slabSpace` in `INTERIM_SLABS`: for bytes written in place that one resource's encoding will carry. */
export function interimSpace(size: number): Uint8Array {
  return INTERIM_SLABS.space(size);
}

/**
 * What `finishInSlab` reads of @bufbuild/protobuf's BinaryWriter: its buffer and write position
 * (private in its types; `finish()` copies `buffer[0, pos)` into a new ArrayBuffer and resets).
 */
interface WriterState {
  buffer: Uint8Array;
  pos: number;
  stackPos: number[];
}

/** Whether this version of BinaryWriter keeps its state as `WriterState` says; else `finish()` is used. */
const WRITER_STATE_KNOWN = ((): boolean => {
  const probe = new BinaryWriter().uint32(300) as unknown as Partial<WriterState>;
  return probe.buffer instanceof Uint8Array && probe.pos === 2 && Array.isArray(probe.stackPos);
})();

/**
 * How many bytes `writer` holds: where the next one goes, and so where it will be in the bytes
 * `finishInSlab` gives (a later `join` moves only what follows its fork). Undefined when this
 * version of BinaryWriter keeps its state otherwise.
 */
export function writtenLength(writer: BinaryWriter): number | undefined {
  return WRITER_STATE_KNOWN ? (writer as unknown as WriterState).pos : undefined;
}

/**
 * `writer.finish()`, with the bytes copied into space in `slabs` instead of an ArrayBuffer of
 * their own: the writer is reset, the bytes are a view (mind `byteOffset` when reading `.buffer`).
 */
export function finishInSlab(writer: BinaryWriter, slabs: Slabs = OUTPUT_SLABS): Uint8Array {
  const state = writer as unknown as WriterState;
  if (!WRITER_STATE_KNOWN || state.stackPos.length > 0) return writer.finish();
  const bytes = slabs.space(state.pos);
  bytes.set(state.buffer.subarray(0, state.pos));
  state.pos = 0;
  return bytes;
}
