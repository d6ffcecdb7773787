/**
 * `Listener.encode` into a slab, taking over its filters' interim config bytes (`packInterim`):
 * each such Any becomes a view of its own copy inside the listener's bytes, so what a node holds
 * carries a pod's connection managers once rather than twice.
 */
import { Listener } from "../../gen/envoy/config/listener/v3/listener.js";
import { moveIntoEncoding } from "../envoy/any.js";
import { finishInSlab } from "../envoy/slabs.js";
import { BinaryWriter } from "../envoy/wire.js";

/** Reused across listeners: `finishInSlab` copies the bytes out and keeps the grown buffer. */
const writer = new BinaryWriter();

export function encodeListener(listener: Listener): Uint8Array {
  const encoding = finishInSlab(Listener.encode(listener, writer));
  // Chains and their filters are written in list order, so each search starts after the last find.
  let from = 0;
  for (const chain of listener.filter_chains ?? []) {
    for (const filter of chain.filters ?? []) {
      if (filter.typed_config) from = moveIntoEncoding(filter.typed_config, encoding, from);
    }
  }
  return encoding;
}
