/** Packing messages into `google.protobuf.Any`. */
import type { BinaryWriter } from "@bufbuild/protobuf/wire";
import type { Any } from "../../gen/google/protobuf/any.js";

/** The encode half of a ts-proto message type, plus its fully-qualified name. */
export interface MessageType<T> {
  readonly typeName: string;
  encode(message: T, writer?: BinaryWriter): BinaryWriter;
}

export const TYPE_URL_PREFIX = "type.googleapis.com/";

export function typeUrl(typeName: string): string {
  return TYPE_URL_PREFIX + typeName;
}

/** The fully-qualified message name an Any's type URL names. */
export function typeNameOfUrl(url: string): string {
  return url.slice(url.lastIndexOf("/") + 1);
}

/**
 * The original message of every Any packed here, so renderers can show it without decoding the
 * bytes again. Weakly held: it never keeps a resource alive.
 */
const packedMessages = new WeakMap<Any, unknown>();

export function pack<T>(type: MessageType<T>, message: T): Any {
  const any: Any = { type_url: typeUrl(type.typeName), value: type.encode(message).finish() };
  packedMessages.set(any, message);
  return any;
}

/** The message an Any was packed from by `pack`, if it was. */
export function packedMessage(any: Any): unknown {
  return packedMessages.get(any);
}
