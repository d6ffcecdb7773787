/** Encoded sizes, for writers that compute a length prefix before writing what follows it. */

/** Bytes of a uint32 as a varint. */
export function varintSize(value: number): number {
  let size = 1;
  while (value >= 0x80) {
    value >>>= 7;
    size++;
  }
  return size;
}

/** Bytes of a length-delimited field with a one-byte tag (a set message field is written even when empty). */
export function messageField(length: number): number {
  return 1 + varintSize(length) + length;
}
