/**
 * `Listener.encode` into a slab, taking over its filters' interim config bytes (`packInterim`) and
 * their access logs': each such Any becomes a view of its own copy inside the listener's bytes, so
 * what a node holds carries a pod's connection managers and access logs once rather than twice.
 */
import type { AccessLog } from "../../gen/envoy/config/accesslog/v3/accesslog.js";
import { Listener } from "../../gen/envoy/config/listener/v3/listener.js";
import type { Any } from "../../gen/google/protobuf/any.js";
import { moveIntoEncoding, packedMessage } from "../envoy/any.js";
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
      const config = filter.typed_config;
      if (!config) continue;
      from = moveIntoEncoding(config, encoding, from);
      moveAccessLogs(config);
    }
  }
  return encoding;
}

/** A proxy filter's access-log configs, into the bytes of the config that carries them (now in the listener's). */
function moveAccessLogs(config: Any): void {
  const logs = (packedMessage(config) as { access_log?: readonly AccessLog[] } | undefined)?.access_log;
  const carrier = config.value;
  if (!logs || !carrier) return;
  let from = 0;
  for (const log of logs) if (log.typed_config) from = moveIntoEncoding(log.typed_config, carrier, from);
}
