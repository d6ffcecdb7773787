/**
 * Figure 12's harness: push fan-out. Thousands of simulated Envoys, each a delta ADS stream on
 * the real server (`AdsServer`'s own gRPC handler, driven in-process: no sockets, so what is timed
 * is the server's work), one per mesh node, warmed up and ACKed; then one registry change.
 * Responses are serialized as gRPC would (`responseSerialize`), so encoding is part of the cost.
 */
import { EventEmitter } from "node:events";
import { AggregatedDiscoveryServiceService } from "../gen/envoy/service/discovery/v3/ads.js";
import type { DeltaDiscoveryRequest, DeltaDiscoveryResponse } from "../gen/envoy/service/discovery/v3/discovery.js";
import { XDS_TYPE_URLS } from "../src/emit/xds.js";
import type { OptionsInput } from "../src/model/options.js";
import type { Snapshot } from "../src/model/snapshot.js";
import { AdsServer } from "../src/server/ads-server.js";

const serialize = AggregatedDiscoveryServiceService.deltaAggregatedResources.responseSerialize;

/** An Envoy's delta stream as the server's handler sees a gRPC call: requests in, responses out, synchronously. */
class SimulatedEnvoy extends EventEmitter {
  readonly #unacked: DeltaDiscoveryResponse[] = [];
  responses = 0;
  bytes = 0;

  constructor(readonly node: string) {
    super();
  }

  /** The server's response: serialized as gRPC would, and ACKed later (`ackAll`). */
  write(response: DeltaDiscoveryResponse): boolean {
    this.bytes += serialize(response).length;
    this.responses++;
    this.#unacked.push(response);
    return true;
  }

  end(): void {}

  send(request: DeltaDiscoveryRequest): void {
    this.emit("data", request);
  }

  /** Subscribes to everything (EDS too: Envoy would name its clusters' assignments; the cost is the same). */
  subscribe(): void {
    for (const type_url of Object.values(XDS_TYPE_URLS)) this.send({ node: { id: this.node, cluster: "" }, type_url, resource_names_subscribe: ["*"] });
  }

  /** ACKs every response received since the last call; returns how many. */
  ackAll(): number {
    const responses = this.#unacked.splice(0);
    for (const response of responses) this.send({ type_url: response.type_url, response_nonce: response.nonce });
    return responses.length;
  }
}

export interface FanOut {
  readonly server: AdsServer;
  readonly envoys: readonly SimulatedEnvoy[];
  readonly warmupMs: number;
}

/** A server on `snapshot` with one simulated, warmed-up, fully ACKed Envoy per node of `nodes`. */
export function connectEnvoys(snapshot: Snapshot, nodes: readonly string[], compile: OptionsInput): FanOut {
  const start = performance.now();
  const server = new AdsServer({ snapshot, compile });
  const handler = server.service.implementation.deltaAggregatedResources as (call: unknown) => void;
  const envoys = nodes.map((node) => {
    const envoy = new SimulatedEnvoy(node);
    handler(envoy);
    envoy.subscribe();
    return envoy;
  });
  ackUntilQuiet(envoys);
  return { server, envoys, warmupMs: performance.now() - start };
}

/** ACKs until nothing more is sent (a CDS ACK can release retained clusters, and so on). */
export function ackUntilQuiet(envoys: readonly SimulatedEnvoy[]): void {
  while (envoys.reduce((sum, envoy) => sum + envoy.ackAll(), 0) > 0);
}

/** How many responses the Envoys have received so far. */
export function responsesSoFar(envoys: readonly SimulatedEnvoy[]): number {
  return envoys.reduce((sum, envoy) => sum + envoy.responses, 0);
}

/** How long serving one change took, when its first push went out, and the longest the event loop waited meanwhile. */
export interface EventLoopCost {
  readonly totalMs: number;
  readonly firstPushMs: number;
  readonly longestStallMs: number;
}

/**
 * Times `serve` (a `setSnapshot` or an awaited `setSnapshotAsync` on `server`) while a 1 ms timer
 * watches the event loop: the longest gap between two of its ticks, counted from the call, is the
 * longest stretch nothing else could run (all of a synchronous `serve`).
 */
export async function eventLoopCost(server: AdsServer, serve: () => unknown): Promise<EventLoopCost> {
  let watching = true;
  let longest = 0;
  let last = performance.now();
  const tick = () => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
    if (watching) setTimeout(tick, 1);
  };
  setTimeout(tick, 1);
  let firstPush = Number.NaN;
  const stop = server.on((event) => {
    if (event.event === "push" && Number.isNaN(firstPush)) firstPush = performance.now();
  });
  const start = performance.now();
  await serve();
  const totalMs = performance.now() - start;
  stop();
  watching = false;
  await new Promise((resolve) => setTimeout(resolve, 2));
  return { totalMs, firstPushMs: firstPush - start, longestStallMs: longest };
}
