/**
 * A faster `LbEndpoint.encode` producing exactly the same bytes, for the shape the compiler plans:
 * a socket address, a health status, string-valued filter metadata and a weight. Sizes are worked
 * out first and the message is written once into an array of exactly that size, where the
 * generated encoder forks a writer per nested message and copies every string through a
 * TextEncoder. Any other shape (a non-TCP protocol, a metadata value that is not a string, a
 * `__proto__` key, which the generated encoder's `Struct.wrap` loses) takes the generated encoder,
 * so the bytes are always its bytes. Field order is the generated encoder's (see envoy/wire.ts).
 */
import type { Address, SocketAddress } from "../../gen/envoy/config/core/v3/address.js";
import type { Metadata } from "../../gen/envoy/config/core/v3/base.js";
import { type Endpoint, LbEndpoint } from "../../gen/envoy/config/endpoint/v3/endpoint_components.js";
import { varintSize } from "../envoy/wire.js";

/** Field numbers and wire types as tag bytes (proto/envoy/config/endpoint/v3/endpoint_components.proto, core/v3/address.proto, base.proto, google/protobuf/struct.proto). */
const TAG = {
  lbEndpoint: { endpoint: 0x0a, healthStatus: 0x10, metadata: 0x1a, weight: 0x22 },
  endpoint: { address: 0x0a, hostname: 0x1a },
  address: { socketAddress: 0x0a },
  socketAddress: { address: 0x12, portValue: 0x18, networkNamespace: 0x3a },
  /** Metadata.filter_metadata entries, and their key and value. */
  metadata: { entry: 0x0a, key: 0x0a, value: 0x12 },
  /** Struct.fields entries, and their key and value. */
  struct: { entry: 0x0a, key: 0x0a, value: 0x12 },
  value: { string: 0x1a },
  uint32Value: { value: 0x08 },
} as const;

const encoder = new TextEncoder();

/** The encoding, in an array of its own. */
export function encodeLbEndpoint(lbEndpoint: LbEndpoint): Uint8Array {
  return encodeLbEndpointIn(lbEndpoint, (size) => new Uint8Array(size));
}

/**
 * The encoding, written into `spaceFor(size)` (exactly `size` bytes, which the caller may reuse
 * once it has copied them out); a shape this writer does not cover gets an array of its own.
 */
export function encodeLbEndpointIn(lbEndpoint: LbEndpoint, spaceFor: (size: number) => Uint8Array): Uint8Array {
  if (!isPlannedShape(lbEndpoint)) return LbEndpoint.encode(lbEndpoint).finish();
  const { size, metadata } = lbEndpointSize(lbEndpoint);
  const out = Output.into(spaceFor(size));
  writeLbEndpoint(out, lbEndpoint, metadata);
  return out.finish();
}

/** What the writer below covers; everything else goes to the generated encoder. */
function isPlannedShape(lbEndpoint: LbEndpoint): boolean {
  const protocol = lbEndpoint.endpoint?.address?.socket_address?.protocol;
  if (protocol !== undefined && protocol !== 0) return false;
  // A negative enum would be a ten-byte varint.
  if ((lbEndpoint.health_status ?? 0) < 0) return false;
  const filterMetadata = lbEndpoint.metadata?.filter_metadata;
  if (filterMetadata === undefined) return true;
  for (const namespace of Object.keys(filterMetadata)) {
    if (namespace === "__proto__") return false;
    const fields = filterMetadata[namespace];
    if (fields === undefined) continue;
    for (const key of Object.keys(fields)) if (key === "__proto__" || typeof fields[key] !== "string") return false;
  }
  return true;
}

// ---- sizes (each: the payload of the message, without its own tag and length) ------------------

/** The LbEndpoint's size and its metadata's (which leaves its parts' sizes in `partSizes`). */
function lbEndpointSize(lbEndpoint: LbEndpoint): { size: number; metadata: number } {
  let size = 0;
  if (lbEndpoint.endpoint !== undefined) size += delimited(endpointSize(lbEndpoint.endpoint));
  if (lbEndpoint.health_status) size += 1 + varintSize(lbEndpoint.health_status);
  const metadata = lbEndpoint.metadata === undefined ? 0 : metadataSize(lbEndpoint.metadata);
  if (lbEndpoint.metadata !== undefined) size += delimited(metadata);
  if (lbEndpoint.load_balancing_weight !== undefined) size += delimited(uint32ValueSize(lbEndpoint.load_balancing_weight));
  return { size, metadata };
}

function endpointSize(endpoint: Endpoint): number {
  let size = 0;
  if (endpoint.address !== undefined) size += delimited(addressSize(endpoint.address));
  if (endpoint.hostname) size += delimited(utf8Length(endpoint.hostname));
  return size;
}

function addressSize(address: Address): number {
  return address.socket_address === undefined ? 0 : delimited(socketAddressSize(address.socket_address));
}

function socketAddressSize(socket: SocketAddress): number {
  let size = 0;
  if (socket.address) size += delimited(utf8Length(socket.address));
  if (socket.port_value !== undefined) size += 1 + varintSize(socket.port_value);
  if (socket.network_namespace_filepath) size += delimited(utf8Length(socket.network_namespace_filepath));
  return size;
}

/**
 * The sizing pass's part sizes, in writing order, for the writing pass: each filter_metadata
 * entry's Struct, then each of its fields' Value. Metadata is sized once, not at every level.
 */
const partSizes: number[] = [];

function metadataSize(metadata: Metadata): number {
  partSizes.length = 0;
  let size = 0;
  const filterMetadata = metadata.filter_metadata ?? {};
  for (const namespace of Object.keys(filterMetadata)) {
    const fields = filterMetadata[namespace];
    if (fields !== undefined) size += delimited(entrySize(namespace, delimited(structSize(fields))));
  }
  return size;
}

/** The Struct's size, recorded before its fields' Value sizes. */
function structSize(fields: Readonly<Record<string, string>>): number {
  const at = partSizes.push(0) - 1;
  let size = 0;
  for (const key of Object.keys(fields)) {
    const value = 1 + lengthPrefixed(utf8Length(fields[key]!));
    partSizes.push(value);
    size += delimited(entrySize(key, delimited(value)));
  }
  partSizes[at] = size;
  return size;
}

/** A map entry: its key (omitted when empty) and its already-sized, always-present value field. */
function entrySize(key: string, valueField: number): number {
  return (key ? delimited(utf8Length(key)) : 0) + valueField;
}

function uint32ValueSize(value: number): number {
  return value ? 1 + varintSize(value) : 0;
}

/** A length-delimited field of `length` bytes with its one-byte tag. */
function delimited(length: number): number {
  return 1 + lengthPrefixed(length);
}

function lengthPrefixed(length: number): number {
  return varintSize(length) + length;
}

function utf8Length(text: string): number {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return Buffer.byteLength(text, "utf8");
  return text.length;
}

// ---- writing, in the generated encoder's field order ------------------------------------------

function writeLbEndpoint(out: Output, lbEndpoint: LbEndpoint, metadataLength: number): void {
  if (lbEndpoint.endpoint !== undefined) {
    out.header(TAG.lbEndpoint.endpoint, endpointSize(lbEndpoint.endpoint));
    writeEndpoint(out, lbEndpoint.endpoint);
  }
  if (lbEndpoint.health_status) out.varintField(TAG.lbEndpoint.healthStatus, lbEndpoint.health_status);
  if (lbEndpoint.metadata !== undefined) {
    out.header(TAG.lbEndpoint.metadata, metadataLength);
    writeMetadata(out, lbEndpoint.metadata);
  }
  const weight = lbEndpoint.load_balancing_weight;
  if (weight !== undefined) {
    out.header(TAG.lbEndpoint.weight, uint32ValueSize(weight));
    if (weight) out.varintField(TAG.uint32Value.value, weight);
  }
}

function writeEndpoint(out: Output, endpoint: Endpoint): void {
  if (endpoint.address !== undefined) {
    out.header(TAG.endpoint.address, addressSize(endpoint.address));
    const socket = endpoint.address.socket_address;
    if (socket !== undefined) {
      out.header(TAG.address.socketAddress, socketAddressSize(socket));
      if (socket.address) out.stringField(TAG.socketAddress.address, socket.address);
      if (socket.port_value !== undefined) out.varintField(TAG.socketAddress.portValue, socket.port_value);
      if (socket.network_namespace_filepath) out.stringField(TAG.socketAddress.networkNamespace, socket.network_namespace_filepath);
    }
  }
  if (endpoint.hostname) out.stringField(TAG.endpoint.hostname, endpoint.hostname);
}

/** Writes the metadata sized last (`partSizes`). */
function writeMetadata(out: Output, metadata: Metadata): void {
  let part = 0;
  const filterMetadata = metadata.filter_metadata ?? {};
  for (const namespace of Object.keys(filterMetadata)) {
    const fields = filterMetadata[namespace];
    if (fields === undefined) continue;
    const struct = partSizes[part++]!;
    out.header(TAG.metadata.entry, entrySize(namespace, delimited(struct)));
    if (namespace) out.stringField(TAG.metadata.key, namespace);
    out.header(TAG.metadata.value, struct);
    for (const key of Object.keys(fields)) {
      const value = partSizes[part++]!;
      out.header(TAG.struct.entry, entrySize(key, delimited(value)));
      if (key) out.stringField(TAG.struct.key, key);
      out.header(TAG.struct.value, value);
      out.stringField(TAG.value.string, fields[key]!);
    }
  }
}

/** An exact-size array and a cursor; every tag above fits in one byte. */
class Output {
  static readonly #reused = new Output();
  bytes: Uint8Array = new Uint8Array(0);
  #at = 0;

  /** The one writer, set to fill `bytes` from the start. */
  static into(bytes: Uint8Array): Output {
    const out = Output.#reused;
    out.bytes = bytes;
    out.#at = 0;
    return out;
  }

  /** The bytes, which the sizes above must have filled exactly. */
  finish(): Uint8Array {
    if (this.#at !== this.bytes.length) throw new Error(`internal: LbEndpoint written in ${this.#at} bytes, sized ${this.bytes.length}`);
    return this.bytes;
  }

  header(tag: number, length: number): void {
    this.bytes[this.#at++] = tag;
    this.varint(length);
  }

  varintField(tag: number, value: number): void {
    this.bytes[this.#at++] = tag;
    this.varint(value);
  }

  stringField(tag: number, text: string): void {
    const length = utf8Length(text);
    this.header(tag, length);
    if (length === text.length) {
      for (let i = 0; i < length; i++) this.bytes[this.#at++] = text.charCodeAt(i);
    } else {
      this.#at += encoder.encodeInto(text, this.bytes.subarray(this.#at)).written;
    }
  }

  varint(value: number): void {
    while (value > 0x7f) {
      this.bytes[this.#at++] = (value & 0x7f) | 0x80;
      value >>>= 7;
    }
    this.bytes[this.#at++] = value;
  }
}
