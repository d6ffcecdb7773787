/** The contract between the server and one ADS stream, whichever protocol it speaks. */
import type { XdsTypeUrl } from "../emit/xds.js";
import type { ServerEvent } from "./events.js";
import type { NodeResources } from "./mesh-state.js";
import { servedType } from "./stream-state.js";

/** A stream event before the server adds the stream's number, kind and node. */
export type StreamEvent = ServerEvent extends infer E ? (E extends { stream: number; node: string } ? Omit<E, "stream" | "kind" | "node"> : never) : never;

/** What a stream needs from the server. */
export interface StreamHost {
  /** The node's resources now; replaced (never mutated) on a change. */
  readonly current: NodeResources;
  emit(event: StreamEvent): void;
}

/** Where a stream stands on one type. */
export interface TypeStatus {
  /** The version last sent, if any. */
  readonly sent: string | undefined;
  readonly acked: string | undefined;
  /** Whether it holds the current version: subscribed, sent and ACKed. */
  readonly upToDate: boolean;
}

export function typeStatus(sent: string | undefined, acked: string | undefined, desired: string | undefined): TypeStatus {
  return { sent, acked, upToDate: desired !== undefined && sent === desired && acked === desired };
}

/** One ADS stream's protocol state. */
export interface AdsStreamState {
  /** Sends what changed since the last response, in CDS → EDS → LDS order. */
  reconcile(): void;
  status(url: XdsTypeUrl): TypeStatus;
}

/** What both protocols' streams share: the host, the sender, nonces, and one event per unserved type URL. */
export abstract class AdsStreamBase<Response> implements AdsStreamState {
  readonly #unsupported = new Set<string>();
  #nonce = 0;

  constructor(
    readonly host: StreamHost,
    readonly send: (response: Response) => void,
  ) {}

  abstract reconcile(): void;
  abstract status(url: XdsTypeUrl): TypeStatus;

  /** The type a request names, or undefined for one this server does not serve (announced once per URL). */
  protected requestedType(typeUrl: string | undefined): XdsTypeUrl | undefined {
    const url = servedType(typeUrl ?? "");
    if (!url && !this.#unsupported.has(typeUrl ?? "")) {
      this.#unsupported.add(typeUrl ?? "");
      this.host.emit({ event: "unsupported-type", typeUrl: typeUrl ?? "" });
    }
    return url;
  }

  protected nextNonce(): string {
    return String(++this.#nonce);
  }
}
