/**
 * What many replayed paths derive from the same compiled resource (an unpacked Any, a socket's TLS
 * context, a pod's inbound chain for an SNI), kept by that resource object for one replay. One per
 * replay: tests change compiled output between two checks of the same mesh.
 */
import type { Any } from "../../gen/google/protobuf/any.js";
import { unpackAny } from "../envoy/schema.js";

export class ReplayMemo {
  // A Map, not a WeakMap: the memo lives only as long as one replay, and weak keys cost the GC.
  readonly #byOwner = new Map<object, Map<string, unknown>>();

  /** The value derived from `owner` under `key`, built on first use. */
  get<T>(owner: object, key: string, build: () => T): T {
    let values = this.#byOwner.get(owner);
    if (!values) {
      values = new Map();
      this.#byOwner.set(owner, values);
    }
    if (values.has(key)) return values.get(key) as T;
    const value = build();
    values.set(key, value);
    return value;
  }

  /** The message inside an Any, decoded once. */
  unpack<T>(any: Any): T | undefined {
    return this.get(any, "unpack", () => unpackAny(any)?.message as T | undefined);
  }
}
