/**
 * The Aggregated Discovery Service on @grpc/grpc-js: state of the world and delta, for CDS, EDS
 * and LDS, serving each Envoy its node's compiled resources. Each stream maps Envoy's node id to a
 * mesh node (`nodeId` rule), refuses a node the snapshot cannot compile, and from then on follows
 * the snapshot: `setSnapshot` recompiles the connected nodes a change reaches (`setSnapshotAsync`
 * a slice at a time, serving streams in between) and pushes to the streams whose resources
 * changed — nothing to the others.
 */
import * as grpc from "@grpc/grpc-js";
import { AggregatedDiscoveryServiceService } from "../../gen/envoy/service/discovery/v3/ads.js";
import type { DeltaDiscoveryRequest, DeltaDiscoveryResponse, DiscoveryRequest, DiscoveryResponse } from "../../gen/envoy/service/discovery/v3/discovery.js";
import type { XdsTypeUrl } from "../emit/xds.js";
import { InputError, isInputError } from "../errors.js";
import { DEFAULT_SELECTOR_SDS_CLUSTER, type Options, type OptionsInput, parseOptions } from "../model/options.js";
import type { Snapshot } from "../model/snapshot.js";
import { DeltaStream } from "./delta-stream.js";
import type { ServerEvent, StreamKind } from "./events.js";
import { MeshState, type NodeResources, type Recompiled } from "./mesh-state.js";
import { defaultNodeIdRule, type NodeIdRule } from "./node-id.js";
import { SotwStream } from "./sotw-stream.js";
import type { RegistrySource } from "./source.js";
import type { AdsStreamState, StreamEvent, StreamHost, TypeStatus } from "./stream.js";

/** What an `AdsServer` serves and how it names nodes. */
export interface AdsServerOptions {
  /**
   * The snapshot to serve until the next `setSnapshot`. Without one, streams are refused
   * (UNAVAILABLE, Envoy retries) until the first snapshot is set — e.g. by `follow(source)`.
   */
  readonly snapshot?: Snapshot;
  /**
   * Compile options for every node (as `compileNode` takes them). `sds` defaults to the
   * `sds_grpc` cluster (the SPIRE agent's SDS) and may not be `"ads"`: this server sends no secrets.
   */
  readonly compile?: Options | OptionsInput;
  /** Maps Envoy's node to a mesh node; default `<cluster>/<node>` in `node.id`. */
  readonly nodeId?: NodeIdRule;
  /**
   * How long `setSnapshotAsync` (and so `follow`) recompiles nodes before it lets the event loop
   * run (streams, ACKs, metrics); at least one node each time. Default 20 ms.
   */
  readonly recompileSliceMs?: number;
}

/** The Aggregated Discovery Service for `grpc.Server.addService(definition, implementation)`. */
export interface AdsService {
  readonly definition: grpc.ServiceDefinition;
  readonly implementation: grpc.UntypedServiceImplementation;
}

/** One connected stream, as `connections()` lists it. */
export interface Connection {
  readonly stream: number;
  readonly kind: StreamKind;
  /** Envoy's node id. */
  readonly node: string;
  /** `"<cluster>/<node>"`. */
  readonly meshNode: string;
}

/** What a `setSnapshot` did. */
export interface SnapshotUpdate {
  /** Connected mesh nodes whose resources changed. */
  readonly changedNodes: number;
  /** Streams closed because the new snapshot cannot compile their node. */
  readonly closedStreams: number;
}

interface Attached {
  readonly connection: Connection;
  readonly protocol: AdsStreamState;
  readonly host: MutableHost;
  readonly close: (code: grpc.status, message: string) => void;
}

interface MutableHost extends StreamHost {
  current: NodeResources;
}

interface AckWaiter {
  readonly node: string;
  readonly typeUrl: XdsTypeUrl;
  readonly version: string | undefined;
  readonly resolve: () => void;
}

/**
 * An ADS server: state of the world and delta, CDS/EDS/LDS, each Envoy its node's compiled
 * resources. Feed it with `setSnapshot` or `follow(source)`; watch it with `on`, `acked`, `status`.
 */
export class AdsServer {
  #state: MeshState | undefined;
  readonly #compile: Options;
  readonly #nodeId: NodeIdRule;
  readonly #sliceMs: number;
  readonly #streams = new Map<number, Attached>();
  readonly #listeners = new Set<(event: ServerEvent) => void>();
  readonly #waiters = new Set<AckWaiter>();
  #grpc: grpc.Server | undefined;
  #streamCount = 0;

  constructor(options: AdsServerOptions) {
    this.#compile = servedOptions(options.compile ?? {});
    if (options.snapshot) this.#state = new MeshState(options.snapshot, this.#compile);
    this.#nodeId = options.nodeId ?? defaultNodeIdRule;
    this.#sliceMs = sliceMs(options.recompileSliceMs);
  }

  /**
   * The snapshot being served (undefined before the first): the one last set, or, when that one
   * was read afresh (another mesh object, as a mesh file read again) but differed from the
   * snapshot before in nothing but records, node statuses, dependencies, VIPs, protocols and
   * exports, the same content derived from the one before.
   */
  get snapshot(): Snapshot | undefined {
    return this.#state?.snapshot;
  }

  /** The gRPC handlers, to add the service to a `grpc.Server` of your own (`listen` does it for you). */
  get service(): AdsService {
    return {
      definition: AggregatedDiscoveryServiceService,
      implementation: {
        streamAggregatedResources: (call: grpc.ServerDuplexStream<DiscoveryRequest, DiscoveryResponse>) => this.#serveCall("sotw", call),
        deltaAggregatedResources: (call: grpc.ServerDuplexStream<DeltaDiscoveryRequest, DeltaDiscoveryResponse>) => this.#serveCall("delta", call),
      },
    };
  }

  /**
   * Listens on `address`: `host:port` (port 0 picks a free one) or `unix:/path`. Resolves with
   * the bound address (`127.0.0.1:40123`, or the `unix:` address as given). Plaintext: run it on
   * loopback, a Unix socket or a network you trust.
   */
  async listen(address: string): Promise<string> {
    if (this.#grpc) throw new Error("the server is already listening");
    const server = new grpc.Server();
    const { definition, implementation } = this.service;
    server.addService(definition, implementation);
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
    );
    this.#grpc = server;
    return address.startsWith("unix:") ? address : `${address.slice(0, address.lastIndexOf(":"))}:${port}`;
  }

  /**
   * Serves `snapshot` from now on: the connected nodes the change can reach are recompiled
   * (reusing the index and per-node work of the last snapshot, see `indexSnapshot`; a snapshot
   * read afresh in which anything but the mesh settings changed counts as an update of the last
   * one), and only streams whose resources changed get a push. A stream whose node the new
   * snapshot cannot compile is closed (NOT_FOUND). Every recompile happens before it returns, and
   * nothing else runs meanwhile: with thousands of nodes connected that can take seconds (see
   * `setSnapshotAsync`).
   */
  setSnapshot(snapshot: Snapshot): SnapshotUpdate {
    const started = performance.now();
    if (!this.#state) return this.#first(snapshot, started);
    this.#state.accept(snapshot);
    return this.#served(started, this.#pushed(this.#state.recompileStale()));
  }

  /**
   * As `setSnapshot`, letting the event loop run every `recompileSliceMs` of recompiling: streams
   * keep being served (a stream of a node not recompiled yet gets its last resources, then the
   * push), and each node is pushed as soon as it is recompiled. Resolves when every node the
   * change reaches is pushed. A snapshot set meanwhile takes over the nodes still waiting.
   */
  async setSnapshotAsync(snapshot: Snapshot): Promise<SnapshotUpdate> {
    const started = performance.now();
    if (!this.#state) return this.#first(snapshot, started);
    const state = this.#state;
    state.accept(snapshot);
    let total: SnapshotUpdate = { changedNodes: 0, closedStreams: 0 };
    for (;;) {
      const until = performance.now() + this.#sliceMs;
      const slice = this.#pushed(state.recompileStale(() => performance.now() < until));
      total = { changedNodes: total.changedNodes + slice.changedNodes, closedStreams: total.closedStreams + slice.closedStreams };
      if (state.staleNodes === 0) return this.#served(started, total);
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  #first(snapshot: Snapshot, started: number): SnapshotUpdate {
    this.#state = new MeshState(snapshot, this.#compile);
    this.#emit({ event: "snapshot", nodes: 0, changed: 0, durationMs: performance.now() - started });
    return { changedNodes: 0, closedStreams: 0 };
  }

  /** Pushes recompiled nodes to their streams; closes the streams of nodes that no longer compile. */
  #pushed({ changed, failed }: Recompiled): SnapshotUpdate {
    const byNode = new Map(changed.map((resources) => [resources.key, resources]));
    let closedStreams = 0;
    const failedNodes = new Map(failed.map(({ key, error }) => [key, error]));
    for (const attached of [...this.#streams.values()]) {
      const error = failedNodes.get(attached.connection.meshNode);
      if (error !== undefined) {
        closedStreams++;
        attached.close(grpc.status.NOT_FOUND, describe(error));
        continue;
      }
      const next = byNode.get(attached.connection.meshNode);
      if (!next) continue;
      attached.host.current = next;
      attached.protocol.reconcile();
    }
    return { changedNodes: changed.length, closedStreams };
  }

  #served(started: number, update: SnapshotUpdate): SnapshotUpdate {
    const nodes = new Set([...this.#streams.values()].map((s) => s.connection.meshNode)).size;
    this.#emit({ event: "snapshot", nodes, changed: update.changedNodes, durationMs: performance.now() - started });
    return update;
  }

  /**
   * Serves what `source` yields until it ends, with `setSnapshotAsync`. The source is read while a
   * snapshot is being served, and of the snapshots that arrived meanwhile only the last is served
   * next: each is the whole registry, so the ones before it would be recompiled and pushed only to
   * be replaced. An error it yields is reported as a `source-error` event and the last good
   * snapshot stays.
   */
  async follow(source: RegistrySource): Promise<void> {
    let latest: Snapshot | undefined;
    let ended = false;
    let wake: (() => void) | undefined;
    const reading = (async () => {
      try {
        for await (const update of source.watch()) {
          if ("error" in update) this.#emit({ event: "source-error", error: update.error });
          else latest = update.snapshot;
          wake?.();
        }
      } finally {
        ended = true;
        wake?.();
      }
    })();
    // Handled from now on: a source may fail while a snapshot is being served (left unhandled
    // until `await reading`, that would end the process); `await reading` still throws it.
    reading.catch(() => undefined);
    for (;;) {
      if (latest) {
        const next = latest;
        latest = undefined;
        await this.setSnapshotAsync(next);
      } else if (ended) break;
      else await new Promise<void>((resolve) => (wake = resolve));
    }
    await reading;
  }

  /** Calls `listener` with every event (connect, push, ACK, NACK, ...); returns a function that stops it. */
  on(listener: (event: ServerEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The streams connected now. */
  connections(): Connection[] {
    return [...this.#streams.values()].map((attached) => attached.connection);
  }

  /**
   * Resolves once a stream of Envoy node `node` has ACKed `typeUrl` at `version` — or, without a
   * version, holds the current version of that type (subscribed, sent and ACKed). Rejects after
   * `timeoutMs`.
   */
  acked(node: string, typeUrl: XdsTypeUrl, version?: string, timeoutMs = 30_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const waiter: AckWaiter = { node, typeUrl, version, resolve: () => done(resolve) };
      const timer = setTimeout(
        () => done(() => reject(new Error(`${node} did not ACK ${typeUrl}${version ? ` version ${version}` : ""} within ${timeoutMs} ms`))),
        timeoutMs,
      );
      const done = (settle: () => void) => {
        clearTimeout(timer);
        this.#waiters.delete(waiter);
        settle();
      };
      this.#waiters.add(waiter);
      this.#checkWaiters();
    });
  }

  /** Where each stream of Envoy node `node` stands on `typeUrl`. */
  status(node: string, typeUrl: XdsTypeUrl): TypeStatus[] {
    return [...this.#streams.values()].filter((s) => s.connection.node === node).map((s) => s.protocol.status(typeUrl));
  }

  /** Ends every stream (UNAVAILABLE, so Envoys reconnect elsewhere) and stops listening. */
  async close(): Promise<void> {
    for (const attached of [...this.#streams.values()]) attached.close(grpc.status.UNAVAILABLE, "server shutting down");
    const server = this.#grpc;
    this.#grpc = undefined;
    if (server) await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
  }

  #serveCall<Req extends DiscoveryRequest | DeltaDiscoveryRequest, Res extends DiscoveryResponse | DeltaDiscoveryResponse>(
    kind: StreamKind,
    call: grpc.ServerDuplexStream<Req, Res>,
  ): void {
    const id = ++this.#streamCount;
    let protocol: SotwStream | DeltaStream | undefined;
    let ended = false;
    const close = (code: grpc.status, message: string) => {
      if (ended) return;
      ended = true;
      call.emit("error", { code, details: message });
    };
    call.on("data", (request: Req) => {
      if (ended) return;
      if (!protocol) {
        protocol = this.#open(id, kind, request, (response) => call.write(response as Res), close);
        if (!protocol) return;
      }
      protocol.onRequest(request as never);
      this.#checkWaiters();
    });
    const detach = () => {
      ended = true;
      const attached = this.#streams.get(id);
      if (!attached) return;
      this.#streams.delete(id);
      this.#emit({ event: "disconnect", stream: id, kind, node: attached.connection.node });
      const { meshNode } = attached.connection;
      if (![...this.#streams.values()].some((s) => s.connection.meshNode === meshNode)) {
        const [cluster, name] = splitKey(meshNode);
        this.#state?.forget(cluster, name);
      }
    };
    call.on("end", () => {
      detach();
      call.end();
    });
    call.on("cancelled", detach);
    call.on("error", detach);
    call.on("close", detach);
  }

  /** Resolves the stream's node from its first request and attaches it, or refuses the stream. */
  #open(
    id: number,
    kind: StreamKind,
    request: DiscoveryRequest | DeltaDiscoveryRequest,
    send: (response: DiscoveryResponse | DeltaDiscoveryResponse) => void,
    close: (code: grpc.status, message: string) => void,
  ): SotwStream | DeltaStream | undefined {
    const node = request.node?.id ?? "";
    const refuse = (code: grpc.status, reason: string) => {
      this.#emit({ event: "refused", stream: id, kind, node, code: grpc.status[code], reason });
      close(code, reason);
      return undefined;
    };
    if (!request.node) return refuse(grpc.status.INVALID_ARGUMENT, "the first request carries no node");
    const ref = this.#nodeId({ id: node, cluster: request.node.cluster ?? "" });
    if (!ref) return refuse(grpc.status.INVALID_ARGUMENT, `node id "${node}" does not name a mesh node (expected <cluster>/<node>)`);
    if (!this.#state) return refuse(grpc.status.UNAVAILABLE, "no snapshot yet");
    let current: NodeResources;
    try {
      current = this.#state.resources(ref.cluster, ref.node);
    } catch (error) {
      // Not in the mesh, or no known IP: the snapshot cannot compile it. Anything else is ours.
      const code = isInputError(error) ? grpc.status.NOT_FOUND : grpc.status.INTERNAL;
      return refuse(code, `node ${ref.cluster}/${ref.node}: ${describe(error)}`);
    }
    const connection: Connection = { stream: id, kind, node, meshNode: current.key };
    const host: MutableHost = { current, emit: (event: StreamEvent) => this.#emit({ ...event, stream: id, kind, node } as ServerEvent) };
    const protocol = kind === "sotw" ? new SotwStream(host, send) : new DeltaStream(host, send);
    this.#streams.set(id, { connection, protocol, host, close });
    this.#emit({ event: "connect", stream: id, kind, node, meshNode: current.key });
    return protocol;
  }

  #emit(event: ServerEvent): void {
    for (const listener of this.#listeners) listener(event);
  }

  #checkWaiters(): void {
    for (const waiter of this.#waiters) {
      for (const attached of this.#streams.values()) {
        if (attached.connection.node !== waiter.node) continue;
        const status = attached.protocol.status(waiter.typeUrl);
        if (waiter.version === undefined ? status.upToDate : status.acked === waiter.version) {
          waiter.resolve();
          break;
        }
      }
    }
  }
}

/**
 * The compile options a server serves: SDS from the `sds_grpc` cluster unless the caller names
 * another. SDS over ADS is refused — this server sends no secrets, so an Envoy would wait for them
 * on the ADS stream and never warm its listeners.
 */
function servedOptions(compile: Options | OptionsInput): Options {
  const options = parseOptions(compile.sds === undefined ? { ...compile, sds: { grpcCluster: DEFAULT_SELECTOR_SDS_CLUSTER } } : compile);
  if (options.sds === "ads") {
    const message = 'the ADS server serves no secrets: set sds to the SPIRE agent\'s gRPC cluster ({ grpcCluster: "..." }), not "ads"';
    throw new InputError("options", [{ path: "sds", message }]);
  }
  return options;
}

function sliceMs(given: number | undefined): number {
  if (given === undefined) return DEFAULT_SLICE_MS;
  if (Number.isFinite(given) && given >= 0) return given;
  throw new InputError("options", [{ path: "recompileSliceMs", message: `expected a number of milliseconds ≥ 0, got ${given}` }]);
}

const DEFAULT_SLICE_MS = 20;

function splitKey(key: string): [string, string] {
  const slash = key.indexOf("/");
  return [key.slice(0, slash), key.slice(slash + 1)];
}

function describe(error: unknown): string {
  if (isInputError(error)) return error.issues.map((issue) => (issue.path ? `${issue.path}: ${issue.message}` : issue.message)).join("; ");
  return error instanceof Error ? error.message : String(error);
}
