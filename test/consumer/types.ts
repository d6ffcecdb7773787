/**
 * A consumer's TypeScript, checked against the installed tarball with `skipLibCheck: false` under
 * moduleResolution node16 and bundler (test/package.test.ts). It names the types a control plane
 * uses from every entry point, and fails to compile if one goes missing or stops being opaque.
 */

import {
  type CompileResult,
  compileNode,
  type Diagnostic,
  type DiagnosticCode,
  diffResources,
  InputError,
  indexSnapshot,
  isInputError,
  localNodeFrom,
  type Options,
  parseMeshFile,
  type Snapshot,
  type SnapshotIndex,
  toXdsResources,
  type XdsResources,
  type XdsTypeUrl,
} from "aether-xds";
import { renderBootstrap, toBootstrap } from "aether-xds/bootstrap";
import {
  type Any,
  type Bootstrap,
  type Cluster,
  Cluster_DiscoveryType,
  type ClusterLoadAssignment,
  type DownstreamTlsContext,
  type Listener,
  type Matcher,
  type TransportSocket,
  type UpstreamTlsContext,
} from "aether-xds/envoy";
import { outboundClusterName, parseOutboundClusterName, type ServiceKey, WAYPOINT_KEY } from "aether-xds/naming";
import { AdsServer, type RegistrySource, type ServerEvent, type SourceUpdate } from "aether-xds/server";
import { formatMeshReport, type MeshCheckReport, type PathFailureCode, verifyMesh } from "aether-xds/verify";

declare const meshText: string;

const snapshot: Snapshot = parseMeshFile(meshText, "yaml");
const index: SnapshotIndex = indexSnapshot(snapshot);
const result: CompileResult = compileNode(index, localNodeFrom(snapshot, "east", "node-1"), { eastWestWaypoint: "cross-cluster" });
const options: Options = result.options;
const clusters: readonly Cluster[] = result.clusters;
const endpoints: readonly ClusterLoadAssignment[] = result.endpoints;
const listeners: readonly Listener[] = result.listeners;
const matcher: Matcher | undefined = clusters[0]?.transport_socket_matcher;
const socket: TransportSocket | undefined = clusters[0]?.transport_socket_matches?.[0]?.transport_socket;
const packed: Any | undefined = socket?.typed_config;
const upstream: UpstreamTlsContext = { sni: outboundClusterName("mesh.aether", { namespace: "team-a", service: "checkout", port: 8080 }) };
const downstream: DownstreamTlsContext = { require_client_certificate: true };
const eds: boolean = clusters.some((cluster) => cluster.type === Cluster_DiscoveryType.EDS);
const codes: DiagnosticCode[] = result.diagnostics.map((d: Diagnostic) => d.code);

const resources: XdsResources = toXdsResources(result);
const diff = diffResources(undefined, resources);
const added: readonly string[] = diff["type.googleapis.com/envoy.config.cluster.v3.Cluster" satisfies XdsTypeUrl].added;

const report: MeshCheckReport = verifyMesh(index, options);
const failures: PathFailureCode[] = report.paths.flatMap((path) => path.failures.map((failure) => failure.code));
const bootstrap: Bootstrap = toBootstrap(result);
const service: ServiceKey | undefined = parseOutboundClusterName("checkout.team-a.mesh.aether:8080") && "team-a/checkout";

const server = new AdsServer({ snapshot, compile: { eastWestWaypoint: "cross-cluster" } });
const pushes: Promise<void> = server.acked("east/node-1", "type.googleapis.com/envoy.config.cluster.v3.Cluster");
server.on((event: ServerEvent) => (event.event === "nack" ? event.error : event.event));
/** A registry of one's own, as a source. */
export const oneShot: RegistrySource = {
  async *watch(): AsyncIterable<SourceUpdate> {
    yield { snapshot };
  },
  close: async () => {},
};

/** How many problems an error from `parseMeshFile` lists. */
export function issueCount(error: unknown): number {
  return isInputError(error) && error instanceof InputError ? error.issues.length : 0;
}

// @ts-expect-error the snapshot index is opaque: its fields are not part of the API
export const hidden = index.services;

/** Deep paths into dist/ are closed by the exports map. */
export async function deepImport(): Promise<unknown> {
  // @ts-expect-error deep imports are not exported
  return import("aether-xds/dist/src/plan/snapshot-index.js");
}

export const used = [
  endpoints,
  listeners,
  matcher,
  packed,
  upstream,
  downstream,
  eds,
  codes,
  added,
  failures,
  formatMeshReport(report),
  renderBootstrap(bootstrap),
  service,
  WAYPOINT_KEY,
  pushes,
];
