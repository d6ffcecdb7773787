/**
 * A real ADS client for the server tests: @grpc/grpc-js with Envoy's own discovery protos as
 * shipped in `@grpc/grpc-js-xds` (not our proto subset), one bidirectional stream, its responses
 * queued so a test can await them in order.
 */
import * as grpc from "@grpc/grpc-js";
import { envoyRoot, loadGrpcPackage, unpackAny } from "../envoy/support/xds-protos.js";

export const CDS = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
export const EDS = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";
export const LDS = "type.googleapis.com/envoy.config.listener.v3.Listener";

export interface AnyJson {
  readonly type_url: string;
  readonly value: Buffer;
}

export interface SotwResponse {
  readonly version_info: string;
  readonly resources: readonly AnyJson[];
  readonly type_url: string;
  readonly nonce: string;
}

export interface DeltaResponse {
  readonly system_version_info: string;
  readonly resources: readonly { name: string; version: string; resource: AnyJson }[];
  readonly removed_resources: readonly string[];
  readonly type_url: string;
  readonly nonce: string;
}

const pkg = () => loadGrpcPackage(["envoy/service/discovery/v3/ads.proto"]) as any;

const resourceRoot = () =>
  envoyRoot(["envoy/config/cluster/v3/cluster.proto", "envoy/config/endpoint/v3/endpoint.proto", "envoy/config/listener/v3/listener.proto"]);

/** Decodes a resource with upstream's protos: its name, or throws if it does not decode. */
export function upstreamName(any: AnyJson): string {
  const message = unpackAny(resourceRoot(), any);
  return String(message.name ?? message.cluster_name);
}

export class AdsClient<Res> {
  readonly #queue: Res[] = [];
  readonly #waiting: ((response: Res) => void)[] = [];
  readonly status: Promise<grpc.StatusObject>;
  readonly #call: grpc.ClientDuplexStream<any, Res>;
  readonly #client: grpc.Client;

  constructor(target: string, method: "StreamAggregatedResources" | "DeltaAggregatedResources") {
    const Service = pkg().envoy.service.discovery.v3.AggregatedDiscoveryService;
    this.#client = new Service(target, grpc.credentials.createInsecure());
    this.#call = (this.#client as any)[method]();
    this.#call.on("data", (response: Res) => {
      const waiter = this.#waiting.shift();
      if (waiter) waiter(response);
      else this.#queue.push(response);
    });
    this.status = new Promise((resolve) => this.#call.on("status", resolve));
    this.#call.on("error", () => {});
  }

  send(request: object): void {
    this.#call.write(request);
  }

  /** The next response (already received or future); rejects after `timeoutMs`. */
  next(timeoutMs = 10_000): Promise<Res> {
    const queued = this.#queue.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no response")), timeoutMs);
      this.#waiting.push((response) => {
        clearTimeout(timer);
        resolve(response);
      });
    });
  }

  /** Nothing arrives within `ms`. */
  async quiet(ms = 300): Promise<boolean> {
    if (this.#queue.length > 0) return false;
    await new Promise((resolve) => setTimeout(resolve, ms));
    return this.#queue.length === 0;
  }

  close(): void {
    this.#call.cancel();
    this.#client.close();
  }
}
