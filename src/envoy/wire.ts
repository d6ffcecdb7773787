/**
 * Protobuf wire helpers for the hand-written encoders (emit/cluster-encoding.ts,
 * emit/assignment-encoding.ts, and the socket splices in envoy/tls.ts).
 *
 * The invariant they all rely on: a hand-written encoder produces exactly the bytes of the
 * generated one (tests compare the two), and the generated encoder writes a message's fields in
 * the order the fields are declared in proto/, not in field-number order. So a hand-written
 * encoder writes the same fields in that same declaration order, and splicing pre-encoded parts is
 * byte-identical only when the parts come in that order. Where a `.proto` declares fields out of
 * number order for this reason, a comment beside the declaration says so; reordering them changes
 * the output bytes (and every golden's version).
 */
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";

export { BinaryWriter, WireType };

/** Bytes of a uint32 as a varint. */
export function varintSize(value: number): number {
  let size = 1;
  while (value >= 0x80) {
    value >>>= 7;
    size++;
  }
  return size;
}

/** Bytes of a field's tag. */
function tagSize(field: number, wireType: WireType): number {
  return varintSize(((field << 3) | wireType) >>> 0);
}

/** Bytes of a length-delimited field whose payload is `length` bytes (a set message field is written even when empty). */
export function delimitedFieldSize(field: number, length: number): number {
  return tagSize(field, WireType.LengthDelimited) + varintSize(length) + length;
}

/** Bytes of a string field; proto3 omits an empty string. */
export function stringFieldSize(field: number, value: string | undefined): number {
  return value ? delimitedFieldSize(field, Buffer.byteLength(value, "utf8")) : 0;
}

/** Bytes of a uint32 field; proto3 omits a zero. */
export function uint32FieldSize(field: number, value: number | undefined): number {
  return value ? tagSize(field, WireType.Varint) + varintSize(value) : 0;
}

/** Writes the tag and length prefix of a length-delimited field; its `length` bytes follow. */
export function writeDelimitedHeader(writer: BinaryWriter, field: number, length: number): BinaryWriter {
  return writer.tag(field, WireType.LengthDelimited).uint32(length);
}

/** Writes a varint into `bytes` at `at`; returns the offset after it. */
function putVarint(bytes: Uint8Array, at: number, value: number): number {
  while (value >= 0x80) {
    bytes[at++] = (value & 0x7f) | 0x80;
    value >>>= 7;
  }
  bytes[at++] = value;
  return at;
}

/** The tag and length prefix of a length-delimited field, written into `bytes` at `at`; returns the offset after them. */
export function putDelimitedHeader(bytes: Uint8Array, at: number, field: number, length: number): number {
  return putVarint(bytes, putVarint(bytes, at, ((field << 3) | WireType.LengthDelimited) >>> 0), length);
}

/** Writes a length-delimited field whose payload is already encoded. */
export function writeEncodedField(writer: BinaryWriter, field: number, bytes: Uint8Array): BinaryWriter {
  return writeDelimitedHeader(writer, field, bytes.length).raw(bytes);
}

/** Writes a string field; proto3 omits an empty string. */
export function writeStringField(writer: BinaryWriter, field: number, value: string | undefined): void {
  if (value) writer.tag(field, WireType.LengthDelimited).string(value);
}

/** Writes a uint32 field; proto3 omits a zero. */
export function writeUint32Field(writer: BinaryWriter, field: number, value: number | undefined): void {
  if (value) writer.tag(field, WireType.Varint).uint32(value);
}
