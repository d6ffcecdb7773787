/** Packing messages into `google.protobuf.Any`. */

import type { Any } from "../../gen/google/protobuf/any.js";
import { remember } from "../util/maps.js";
import { finishInSlab, INTERIM_SLABS } from "./slabs.js";
import { BinaryWriter } from "./wire.js";

/** The encode half of a ts-proto message type, plus its fully-qualified name. */
export interface MessageType<T> {
  readonly typeName: string;
  encode(message: T, writer?: BinaryWriter): BinaryWriter;
}

export const TYPE_URL_PREFIX = "type.googleapis.com/";

/**
 * The type URL of a message type: one string per type for the process (a few dozen types), so
 * the millions of Anys a `sockets`-mode compile packs share it instead of each joining its own.
 */
export function typeUrl(typeName: string): string {
  return TYPE_URLS.get(typeName) ?? remember(TYPE_URLS, typeName, TYPE_URL_PREFIX + typeName);
}

const TYPE_URLS = new Map<string, string>();

/** The fully-qualified message name an Any's type URL names. */
export function typeNameOfUrl(url: string): string {
  return url.slice(url.lastIndexOf("/") + 1);
}

/**
 * The original message of an Any packed here, so renderers and the mesh check can read it without
 * decoding the bytes again: a non-enumerable symbol slot on the Any itself, which keys, spreads,
 * JSON and equality never see. (A process-wide WeakMap held millions of entries in `sockets` mode,
 * one per packed TLS context: every lookup missed the cache and every GC walked the whole table.)
 */
const PACKED = Symbol("packed message");

/**
 * One writer reused for every pack: its buffer keeps its size between messages, so packing
 * thousands of small messages does not regrow a fresh buffer each time (`finishInSlab` copies
 * the bytes out and resets it).
 */
const scratch = new BinaryWriter();

export function pack<T>(type: MessageType<T>, message: T): Any {
  return packEncoded(type.typeName, finishInSlab(type.encode(message, scratch)), message);
}

/** An Any from bytes encoded elsewhere; `message` must be what they decode to. */
export function packEncoded(typeName: string, value: Uint8Array, message: unknown): Any {
  const any: Any = { type_url: typeUrl(typeName), value };
  Object.defineProperty(any, PACKED, { value: message });
  return any;
}

/** The message an Any was packed from by `pack`, if it was. */
export function packedMessage(any: Any): unknown {
  return (any as { [PACKED]?: unknown })[PACKED];
}

/**
 * Set on an Any whose bytes an enclosing encoding will carry — a listener's own filter configs, a
 * cluster's TLS contexts — while it still holds interim bytes of its own. When the resource is
 * encoded, `moveIntoEncoding` points it at its copy inside the resource's bytes and clears this,
 * so a node's held output carries them once, not twice (a pod's egress connection managers are
 * more than half of a node's listener bytes; TLS contexts, about half of a selector-mode
 * cluster's). A slot on the Any, as `PACKED`, not a process-wide WeakSet: a compile that is never
 * encoded (a mesh check, a rendering) would leave each of its Anys in a table every GC walks.
 */
const INTERIM = Symbol("interim bytes");

type MaybeInterim = Any & { [INTERIM]?: boolean };

/**
 * `pack` for a config that only one resource carries (a listener's filters, a cluster's sockets).
 * Never for one shared across resources (cached): it would keep whichever resource's bytes it
 * moved into alive with it.
 */
export function packInterim<T>(type: MessageType<T>, message: T): Any {
  return packEncodedInterim(type.typeName, finishInSlab(type.encode(message, scratch), INTERIM_SLABS), message);
}

/** `packInterim` when one listener alone carries the config (`interim`), else `pack`. */
export function packOwned<T>(type: MessageType<T>, message: T, interim: boolean): Any {
  return interim ? packInterim(type, message) : pack(type, message);
}

/** `packEncoded` for a config that only one resource carries; `value` in `INTERIM_SLABS`. */
export function packEncodedInterim(typeName: string, value: Uint8Array, message: unknown): Any {
  const any = packEncoded(typeName, value, message);
  Object.defineProperty(any, INTERIM, { value: true, writable: true });
  return any;
}

/**
 * Points an interim Any's `value` at the same bytes within `encoding` (of the resource that carries
 * it), searching from `from`; returns where the next search may start. Any occurrence has the same
 * bytes, so the first is right; an Any that is not interim, empty, or not found keeps its own.
 */
export function moveIntoEncoding(any: Any, encoding: Uint8Array, from: number): number {
  const value = any.value;
  if (!value?.length || !(any as MaybeInterim)[INTERIM]) return from;
  const at = Buffer.from(encoding.buffer, encoding.byteOffset, encoding.length).indexOf(value, from);
  return at < 0 ? from : moveIntoEncodingAt(any, encoding, at);
}

/**
 * `moveIntoEncoding` where the encoder knows that the Any's bytes start at `at`, without a search:
 * each search sets its pattern up first, and a search per TLS context made encoding a
 * `sockets`-mode cluster table (84 contexts on W1's node) about 1.5 × slower.
 */
export function moveIntoEncodingAt(any: Any, encoding: Uint8Array, at: number): number {
  const length = any.value?.length ?? 0;
  if (length === 0 || !(any as MaybeInterim)[INTERIM]) return at;
  any.value = encoding.subarray(at, at + length);
  (any as MaybeInterim)[INTERIM] = false;
  return at + length;
}
