/**
 * What a text writer remembers of the message objects it wrote in one render, to copy the text of
 * one met again. The compiler shares message objects between resources (a cluster's TLS selector
 * and socket matcher, its outlier and circuit-breaker settings, localities): one written again at
 * the same place prints the same text.
 */
import { type FieldPlan, Kind } from "./message-plan.js";
import type { TextBytes } from "./text-bytes.js";

/**
 * A field whose first this many values were none of them met again (an endpoint's address, its
 * metadata: most of a node's objects) is no longer looked up: what is never shared costs a look at
 * its field's counts, not a search by object and a note of where it was written.
 */
const PROBES = 64;

/** An object's text in the output, written at `place` (an indentation, a slot) as `typeName` (an Any's: ""). */
interface Span {
  readonly start: number;
  readonly end: number;
  readonly place: number;
  readonly typeName: string;
}

interface FieldSharing {
  looked: number;
  found: number;
}

export class WrittenObjects {
  readonly #spans = new Map<object, Span>();
  readonly #sharing = new Map<FieldPlan, FieldSharing>();

  /**
   * A message or Any value of `field` at `place`, written by `write` — or, when it was written
   * there before as the same type (a message prints by the field's type, an Any by its own), its
   * text copied. `write` is best a function made once per writer: this runs for every message.
   */
  write(out: TextBytes, field: FieldPlan, value: object, place: number, write: (field: FieldPlan, value: object, place: number) => void): void {
    const sharing = this.#sharingOf(field);
    if (sharing.looked >= PROBES && sharing.found === 0) {
      write(field, value, place);
      return;
    }
    sharing.looked++;
    const typeName = field.kind === Kind.Any ? "" : field.typeName;
    const span = this.#spans.get(value);
    if (span !== undefined && span.place === place && span.typeName === typeName) {
      sharing.found++;
      out.again(span.start, span.end);
      return;
    }
    const start = out.length;
    write(field, value, place);
    if (span === undefined) this.#spans.set(value, { start, end: out.length, place, typeName });
  }

  #sharingOf(field: FieldPlan): FieldSharing {
    let sharing = this.#sharing.get(field);
    if (sharing === undefined) {
      sharing = { looked: 0, found: 0 };
      this.#sharing.set(field, sharing);
    }
    return sharing;
  }
}
