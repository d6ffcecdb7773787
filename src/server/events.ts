/**
 * What the server reports: one event per connect, refusal, push, ACK, NACK and disconnect. The
 * structured log (`jsonLogLine`) and the Prometheus metrics are both built on these.
 */
import type { XdsTypeUrl } from "../emit/xds.js";

/** `sotw`: StreamAggregatedResources; `delta`: DeltaAggregatedResources. */
export type StreamKind = "sotw" | "delta";

interface StreamEventBase {
  /** The stream's number, unique in this server. */
  readonly stream: number;
  readonly kind: StreamKind;
  /** Envoy's `node.id`. */
  readonly node: string;
}

/** What the server reports, one event per connect, refusal, push, ACK, NACK, disconnect, snapshot and source error. */
export type ServerEvent =
  | (StreamEventBase & { readonly event: "connect"; readonly meshNode: string })
  | (StreamEventBase & { readonly event: "disconnect" })
  | { readonly event: "refused"; readonly stream: number; readonly kind: StreamKind; readonly node: string; readonly code: string; readonly reason: string }
  | (StreamEventBase & {
      readonly event: "push";
      readonly typeUrl: XdsTypeUrl;
      /** The version of everything of this type the stream holds once the push is applied. */
      readonly version: string;
      readonly nonce: string;
      /** Resources carried (for state of the world: all of the type); names removed (delta). */
      readonly resources: number;
      readonly removed: number;
    })
  | (StreamEventBase & { readonly event: "ack"; readonly typeUrl: XdsTypeUrl; readonly version: string; readonly nonce: string })
  | (StreamEventBase & {
      readonly event: "nack";
      readonly typeUrl: XdsTypeUrl;
      /** The version Envoy refused. */
      readonly version: string;
      /** The last version it accepted and keeps ("" if none). */
      readonly kept: string;
      readonly nonce: string;
      /** Envoy's error detail. */
      readonly error: string;
    })
  | (StreamEventBase & { readonly event: "unsupported-type"; readonly typeUrl: string })
  | {
      readonly event: "snapshot";
      /** Mesh nodes with a connected stream, and how many of them got new resources. */
      readonly nodes: number;
      readonly changed: number;
      /** From receiving the snapshot to every affected stream pushed. */
      readonly durationMs: number;
    }
  | { readonly event: "source-error"; readonly error: string };

/** An event as one JSON log line, with a timestamp first. */
export function jsonLogLine(event: ServerEvent, now: Date = new Date()): string {
  return JSON.stringify({ time: now.toISOString(), ...event });
}
