import { describe, expect, test } from "vitest";
import { generateDocument, SMOKE_WORKLOADS } from "../../bench/workloads.js";
import type { Cluster } from "../../gen/envoy/config/cluster/v3/cluster.js";
import { ApiVersion } from "../../gen/envoy/config/core/v3/config_source.js";
import { HealthStatus } from "../../gen/envoy/config/core/v3/health_check.js";
import type { ClusterLoadAssignment } from "../../gen/envoy/config/endpoint/v3/endpoint.js";
import type { Listener } from "../../gen/envoy/config/listener/v3/listener.js";
import type { Filter } from "../../gen/envoy/config/listener/v3/listener_components.js";
import type { HttpConnectionManager } from "../../gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.js";
import type { Config as SetFilterStateConfig } from "../../gen/envoy/extensions/filters/network/set_filter_state/v3/set_filter_state.js";
import type { TransportSocketNameAction } from "../../gen/envoy/extensions/matching/common_inputs/transport_socket/v3/transport_socket_inputs.js";
import type { Config as OnDemandSecretConfig } from "../../gen/envoy/extensions/transport_sockets/tls/cert_selectors/on_demand_secret/v3/config.js";
import type { UpstreamTlsContext } from "../../gen/envoy/extensions/transport_sockets/tls/v3/tls.js";
import { type CompileResult, compileNodeSide } from "../../src/compile/compile-node.js";
import { pack } from "../../src/envoy/any.js";
import { stampFilterState } from "../../src/envoy/listener.js";
import { unpackAny } from "../../src/envoy/schema.js";
import {
  FILTER_STATE,
  HTTP_CONNECTION_MANAGER,
  ON_DEMAND_SECRET,
  SET_FILTER_STATE,
  TRANSPORT_SOCKET_NAME_ACTION,
  UPSTREAM_TLS_CONTEXT,
} from "../../src/envoy/types.js";
import { SOCKET_SELECTIONS, SOURCE_IDENTITIES, type SourceIdentity, WAYPOINT_MODES } from "../../src/model/options.js";
import { parseSnapshot } from "../../src/model/snapshot.js";
import { indexSnapshot } from "../../src/plan/snapshot-index.js";
import { FAILED_PATHS_KEPT, MATRIX_LIMITS, summarizeCompiledMesh, summarizeReport } from "../../src/verify/check-summary.js";
import { type CompiledMesh, compileMesh, resourceLookups } from "../../src/verify/compiled-mesh.js";
import { formatMeshReport, formatMeshSummary, SHARED_ADDRESSES_SHOWN } from "../../src/verify/format.js";
import {
  checkCompiledMesh,
  explainPath,
  formatPathReport,
  type MeshCheckReport,
  sourceName,
  verifyMesh,
  withSharedPoolFailures,
} from "../../src/verify/mesh-check.js";
import { PATH_FAILURES, type PathFailureCode, type PathReport } from "../../src/verify/path.js";
import { meshDocument } from "../support/fixtures.js";

/**
 * The example mesh; with `eastCheckoutDown`, east's checkout pods are unhealthy so east goes to
 * west; `protocols` replaces its declared protocols. With `routable`, its pod network is declared
 * routable (the off mode's flat network).
 */
function snapshot(eastCheckoutDown = false, protocols?: Record<string, Record<string, string>>, routable = false) {
  const doc = meshDocument();
  if (routable) doc.mesh.podNetwork = "routable";
  if (eastCheckoutDown) {
    for (const record of doc.services["team-a/checkout"].filter((r: any) => r.clusterName === "east")) record.health = "UNHEALTHY";
  }
  if (protocols) doc.protocols = protocols;
  return parseSnapshot(doc);
}

const crossCluster = { eastWestWaypoint: "cross-cluster" } as const;
const FRONTEND = "spiffe://aether.internal/ns/team-a/sa/frontend";

const EVERY_MODE = SOURCE_IDENTITIES.flatMap((sourceIdentity) =>
  WAYPOINT_MODES.flatMap((mode) => SOCKET_SELECTIONS.map((socketSelection) => [sourceIdentity, mode, socketSelection] as const)),
);

describe("verifyMesh on the example mesh", () => {
  test.each(EVERY_MODE)("%s / %s / %s: every source reaches every dependency", (sourceIdentity, mode, socketSelection) => {
    // The off mode dials remote pod IPs directly: it works only where they route (isolated: item 10's test).
    const report = verifyMesh(snapshot(false, undefined, mode === "off"), { eastWestWaypoint: mode, socketSelection, sourceIdentity });
    expect(report.paths.filter((p) => p.status === "failed")).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.paths.length).toBe(19);
    expect(report.unaddressedNodes).toEqual(["west/node-4"]);
    expect([...report.skippedNodes]).toEqual([]);
  });

  test("same-cluster traffic is direct: east's frontend lands on east's checkout pod without a waypoint", () => {
    const path = verifyMesh(snapshot(), crossCluster).paths.find((p) => p.source.pod?.name === "frontend-7d9f-abcde" && p.target.port === 8080)!;
    expect(path.landings.map((l) => [l.pod.cluster, l.pod.name, l.via ?? "direct", l.sni, l.socket])).toEqual([
      ["east", "checkout-5c6b-x1", "direct", "8080", "local"],
    ]);
  });

  test("when east's checkout is down, east's frontend lands on west's pods through west/node-2, with its own certificate", () => {
    const path = verifyMesh(snapshot(true), crossCluster).paths.find((p) => p.source.pod?.name === "frontend-7d9f-abcde" && p.target.port === 8080)!;
    expect(path.status).toBe("ok");
    expect(path.landings.map((l) => [l.pod.cluster, l.pod.name, l.via, l.address, l.sni, l.socket])).toEqual([
      ["west", "checkout-9a1e-y1", "west/node-2", "10.20.0.12:15009", "8080.checkout.team-a.mesh.aether", "waypoint"],
      ["west", "checkout-9a1e-y2", "west/node-2", "10.20.0.12:15009", "8080.checkout.team-a.mesh.aether", "waypoint"],
    ]);
  });

  test("a service with no healthy endpoint is unreachable, not a failure", () => {
    const doc = meshDocument();
    for (const record of doc.services["team-b/payments"]) record.health = "UNHEALTHY";
    const report = verifyMesh(parseSnapshot(doc), crossCluster);
    expect(report.ok).toBe(true);
    expect(new Set(report.paths.filter((p) => p.target.service === "team-b/payments").map((p) => p.status))).toEqual(new Set(["unreachable"]));
  });
});

/** Compiles the mesh, applies one mistake to the compiled output, and returns the failure codes. */
function failuresAfter(mistake: (mesh: CompiledMesh) => void, eastCheckoutDown = false, sourceIdentity: SourceIdentity = "selector"): PathFailureCode[] {
  const mesh = compileMesh(snapshot(eastCheckoutDown), { ...crossCluster, sourceIdentity });
  expect(checkCompiledMesh(mesh).ok).toBe(true);
  mistake(mesh);
  const report = checkCompiledMesh(mesh);
  expectSameSummary(mesh, report);
  return [...new Set(report.paths.flatMap((p) => p.failures.map((f) => f.code)))];
}

/**
 * The summary made as the paths are replayed (forced, whatever the mesh's size) says what the full
 * report says: outcome, counts, the failed paths in order — shared-pool failures included.
 */
function expectSameSummary(mesh: CompiledMesh, report: MeshCheckReport): void {
  const streamed = summarizeCompiledMesh(mesh, undefined, false);
  const full = summarizeReport(report);
  expect(streamed.failed).toEqual(full.failed);
  expect({ ...streamed, failed: [], matrix: undefined }).toEqual({ ...full, failed: [], matrix: undefined });
  const sources = new Set(report.paths.map((p) => sourceName(p.source))).size;
  const destinations = new Set(report.paths.map((p) => `${p.target.service}:${p.target.port}`)).size;
  expect(streamed.matrix).toEqual({ sources, destinations });
}

describe("the check's summary (what aether-xds check keeps)", () => {
  test.each(EVERY_MODE)("%s / %s / %s: the same as the full report's, made as the paths are replayed", (sourceIdentity, mode, socketSelection) => {
    const mesh = compileMesh(snapshot(false, undefined, mode === "off"), { eastWestWaypoint: mode, socketSelection, sourceIdentity });
    const report = checkCompiledMesh(mesh);
    expectSameSummary(mesh, report);
    // Small enough for the matrix: every report is kept, and the text is the full report's.
    const summary = summarizeCompiledMesh(mesh);
    expect(summary.matrix).toEqual({ paths: report.paths });
    expect(formatMeshSummary(summary)).toBe(formatMeshReport(report));
  });

  test("a check the matrix cannot show gives its size instead, and keeps only the failed paths", () => {
    const report = checkCompiledMesh(compileMesh(snapshot(), crossCluster));
    const wide = Array.from({ length: MATRIX_LIMITS.sources + 1 }, (_, i) => ({
      ...report.paths[0]!,
      source: { ...report.paths[0]!.source, node: `east/node-${i}`, pod: undefined },
    }));
    const summary = summarizeReport({ ...report, paths: wide });
    expect(summary.matrix).toEqual({ sources: MATRIX_LIMITS.sources + 1, destinations: 1 });
    expect(formatMeshReport({ ...report, paths: wide })).toContain(`\n(${MATRIX_LIMITS.sources + 1} sources × 1 destinations: matrix omitted)\n`);
  });
});

describe("a check where most paths fail (a generated mesh compiled in the wrong mode)", () => {
  // Pod IPs do not route across its clusters: in `off` mode two in three paths fail.
  const mesh = compileMesh(parseSnapshot(generateDocument(SMOKE_WORKLOADS.W10K)), { eastWestWaypoint: "off" });
  const report = checkCompiledMesh(mesh);
  const failed = report.paths.filter((p) => p.status === "failed");

  test("the summary keeps the first failed paths in report order and counts every one by code", () => {
    expect(failed.length).toBeGreaterThan(2 * FAILED_PATHS_KEPT);
    const streamed = summarizeCompiledMesh(mesh, undefined, false);
    expect(streamed.failed).toEqual(failed.slice(0, FAILED_PATHS_KEPT));
    expect(streamed.counts.failed).toBe(failed.length);
    expect(streamed.failureCodes).toEqual({ POD_IP_NOT_ROUTABLE: failed.length });
    expect(streamed.ok).toBe(false);
    expectSameSummary(mesh, report);
  });

  test("the text prints those, then how many more failed and with which codes, however many there are", () => {
    // Over 120,000 failed paths, more than one call can take as arguments.
    const paths = Array.from({ length: 200_000 }, (_, i) => report.paths[i % report.paths.length]!);
    const count = paths.filter((p) => p.status === "failed").length;
    const lines = formatMeshReport({ ...report, paths }).split("\n");
    expect(lines.filter((line) => line.endsWith("): failed"))).toHaveLength(FAILED_PATHS_KEPT);
    expect(lines.slice(-4)).toEqual([
      `… and ${count - FAILED_PATHS_KEPT} more failed path(s), not shown (aether-xds explain traces one)`,
      `failed paths by code: POD_IP_NOT_ROUTABLE ${count}`,
      "",
      `FAILED: ${count} path(s), 0 node(s)`,
    ]);
  });

  test("the text warns of the first shared addresses, then says how many more there are", () => {
    const shared = (count: number) =>
      Array.from({ length: count }, (_, i) => ({ ip: `10.0.${i >> 8}.${i & 255}`, pods: [`east/team-a/a-${i}`, `west/team-b/b-${i}`] }));
    const warnings = (count: number) =>
      formatMeshReport({ ...report, sharedAddresses: shared(count) })
        .split("\n")
        .filter((line) => line.startsWith("  warning: address ") || line.startsWith("  … and "));
    expect(warnings(3)).toHaveLength(3);
    expect(warnings(SHARED_ADDRESSES_SHOWN)).toHaveLength(SHARED_ADDRESSES_SHOWN);
    const many = warnings(SHARED_ADDRESSES_SHOWN + 50);
    expect(many).toHaveLength(SHARED_ADDRESSES_SHOWN + 1);
    expect(many[0]).toMatch(
      /^ {2}warning: address 10\.0\.0\.0 names pods of different services in different clusters \(east\/team-a\/a-0, west\/team-b\/b-0\)/,
    );
    expect(many.at(-1)).toBe("  … and 50 more such address(es), not shown (aether-xds inspect lists every one)");
  });
});

describe("a compiled node's resources by name, as the replay looks them up", () => {
  /** What the lookups must give: every resource of the name in output order; the first assignment. */
  function expectLookupsMatch(result: CompileResult): void {
    const resources = resourceLookups()({ local: undefined as never, result });
    for (const name of [...result.clusters.map((c) => c.name!), "no-such-cluster"]) {
      expect(resources.clusters(name)).toEqual(result.clusters.filter((c) => c.name === name));
    }
    for (const name of [...result.endpoints.map((a) => a.cluster_name!), "no-such-cluster"]) {
      expect(resources.assignment(name)).toBe(result.endpoints.find((a) => a.cluster_name === name));
    }
  }

  test("in sorted output (a compile's), with a name given twice, and in output changed out of order", () => {
    const result = compileMesh(snapshot(), crossCluster).nodes.get("east/node-1")!.result;
    expectLookupsMatch(result);
    const [first, second] = result.clusters;
    const twice = { ...first!, connect_timeout: { seconds: 9 } };
    // Still sorted: the second of a name right after the first.
    expectLookupsMatch({ ...result, clusters: [first!, twice, ...result.clusters.slice(1)] });
    // Out of order: the first cluster moved to the end, a copy of the second before it.
    expectLookupsMatch({ ...result, clusters: [...result.clusters.slice(1), { ...second!, connect_timeout: { seconds: 9 } }, first!] });
    expectLookupsMatch({ ...result, endpoints: [...result.endpoints].reverse() });
  });
});

describe("verifyMesh's progress", () => {
  test("a CheckProgress hears every node compiled, then the paths replayed, from none up to every path of the report", () => {
    const compiled: [number, number][] = [];
    const replayed: [number, number][] = [];
    const report = verifyMesh(snapshot(), crossCluster, {
      compiled: (done, total) => compiled.push([done, total]),
      replayed: (done, total) => replayed.push([done, total]),
    });
    expect(compiled).toEqual([1, 2, 3, 4, 5, 6, 7].map((done) => [done, 7]));
    const paths = report.paths.length;
    expect(replayed.length).toBeGreaterThan(2);
    expect(replayed[0]).toEqual([0, paths]);
    expect(replayed.every(([, total]) => total === paths)).toBe(true);
    // Strictly rising, in steps of whole service ports, to every path.
    expect(replayed.every(([done], i) => i === 0 || done > replayed[i - 1]![0])).toBe(true);
    expect(replayed.at(-1)).toEqual([paths, paths]);
  });

  test("a function hears only the compile, as before", () => {
    const calls: [number, number][] = [];
    verifyMesh(snapshot(), crossCluster, (done, total) => calls.push([done, total]));
    expect(calls).toEqual([1, 2, 3, 4, 5, 6, 7].map((done) => [done, 7]));
  });
});

const node = (mesh: CompiledMesh, key: string) => mesh.nodes.get(key)!.result;
const checkout8080 = (mesh: CompiledMesh): Cluster => node(mesh, "east/node-1").clusters.find((c) => c.name === "checkout.team-a.mesh.aether:8080")!;

describe("compiling the whole mesh", () => {
  /** The snapshot's service map, counting every pass over its records. */
  class CountedServices<K, V> extends Map<K, V> {
    passes = 0;
    override [Symbol.iterator]() {
      this.passes++;
      return super[Symbol.iterator]();
    }
    override entries() {
      this.passes++;
      return super.entries();
    }
    override values() {
      this.passes++;
      return super.values();
    }
    override forEach(each: (value: V, key: K, map: Map<K, V>) => void) {
      this.passes++;
      super.forEach(each);
    }
  }

  test("finds each node's records in the index: the snapshot's records are not scanned once per node", () => {
    const index = indexSnapshot(snapshot());
    const services = new CountedServices(index.snapshot.services);
    const mesh = compileMesh({ ...index, snapshot: { ...index.snapshot, services } }, crossCluster);
    expect(mesh.nodes.size).toBeGreaterThanOrEqual(6);
    // One pass is allowed (what the compile derives from every service once per index).
    expect(services.passes).toBeLessThanOrEqual(1);
  });
});

describe("the check catches real mistakes", () => {
  test("a tunnel chain with the wrong SNI suffix", () => {
    const codes = failuresAfter((mesh) => {
      const tunnel = node(mesh, "west/node-2").listeners.find((l) => l.name === "ew_tunnel")!;
      tunnel.filter_chains!.find((c) => c.name === "ew_checkout_team-a")!.filter_chain_match!.server_names = ["*.checkout.team-a.mesh.other"];
    }, true);
    expect(codes).toEqual(["TUNNEL_NO_CHAIN"]);
  });

  test("a waypoint forwarding to a pod with no inbound listener: the dial through it fails and lands on none of its pods", () => {
    const mesh = compileMesh(snapshot(true), crossCluster);
    const west = node(mesh, "west/node-2") as unknown as { listeners: Listener[] };
    west.listeners = west.listeners.filter((l) => l.name !== "inbound_checkout-9a1e-y2_team-a");
    const path = checkCompiledMesh(mesh).paths.find((p) => p.source.pod?.name === "frontend-7d9f-abcde" && p.target.port === 8080)!;
    expect(path.status).toBe("failed");
    // y1 alone would answer, but Envoy's ingress cluster spreads the waypoint's connections over both.
    expect(path.landings).toEqual([]);
    expect(path.failures.map((f) => [f.code, f.hops.some((hop) => hop.startsWith("waypoint west/node-2"))])).toEqual([["NO_INBOUND_LISTENER", true]]);
  });

  test("an inbound chain without the structured server name", () => {
    const codes = failuresAfter((mesh) => {
      for (const listener of node(mesh, "west/node-2").listeners.filter((l) => l.name!.startsWith("inbound_checkout"))) {
        for (const chain of listener.filter_chains!)
          chain.filter_chain_match!.server_names = chain.filter_chain_match!.server_names!.filter((n) => !n.includes("."));
      }
    }, true);
    expect(codes).toEqual(["NO_INBOUND_CHAIN"]);
  });

  test("a nested matcher without its own on_no_match", () => {
    const codes = failuresAfter(
      (mesh) => {
        delete checkout8080(mesh).transport_socket_matcher!.on_no_match!.matcher!.on_no_match;
      },
      false,
      "sockets",
    );
    expect(codes).toEqual(["MATCHER_NO_MATCH"]); // the node itself stamps no netns
  });

  test("a matcher action naming a socket that does not exist", () => {
    const codes = failuresAfter(
      (mesh) => {
        const local = checkout8080(mesh).transport_socket_matcher!.on_no_match!.matcher!;
        local.matcher_tree!.exact_match_map!.map!["/var/run/netns/cni-3f1a9c"] = {
          action: {
            name: "envoy.matching.action.transport_socket.name",
            typed_config: pack(TRANSPORT_SOCKET_NAME_ACTION, { name: "local|spiffe://aether.internal/ns/team-a/sa/ghost" } satisfies TransportSocketNameAction),
          },
        };
      },
      false,
      "sockets",
    );
    expect(codes).toEqual(["MISSING_SOCKET"]);
  });

  test("the listener-side filter_state input instead of the transport-socket one", () => {
    const codes = failuresAfter(
      (mesh) => {
        checkout8080(mesh).transport_socket_matcher!.on_no_match!.matcher!.matcher_tree!.input!.name = "envoy.matching.inputs.filter_state";
      },
      false,
      "sockets",
    );
    expect(codes).toEqual(["MATCHER_INVALID"]);
  });

  test("a same-cluster endpoint rewritten to a waypoint", () => {
    const codes = failuresAfter((mesh) => {
      const assignment = node(mesh, "east/node-1").endpoints.find((a) => a.cluster_name === "checkout.team-a.mesh.aether:8080")!;
      const east = assignment.endpoints![0]!.lb_endpoints![0]!;
      east.endpoint = { address: { socket_address: { address: "10.10.0.12", port_value: 15009 } } };
      east.metadata = { filter_metadata: { "envoy.lb": { waypoint: "true", origin_cluster: "east", origin_node: "node-2" } } };
    });
    expect(codes).toEqual(["SAME_CLUSTER_VIA_WAYPOINT"]);
  });

  test("an ingress cluster with a TLS socket", () => {
    const codes = failuresAfter((mesh) => {
      const ingress = node(mesh, "west/node-2").clusters.find((c) => c.name === "ew_ingress_checkout_team-a")!;
      ingress.transport_socket = checkout8080(mesh).transport_socket_matches![0]!.transport_socket;
    }, true);
    expect(codes).toEqual(["TLS_ORIGINATED_AT_NODE"]);
  });

  test("a tunnel chain that terminates TLS", () => {
    const codes = failuresAfter((mesh) => {
      const tunnel = node(mesh, "west/node-2").listeners.find((l) => l.name === "ew_tunnel")!;
      tunnel.filter_chains!.find((c) => c.name === "ew_checkout_team-a")!.transport_socket = checkout8080(mesh).transport_socket_matches![0]!.transport_socket;
    }, true);
    expect(codes).toEqual(["TLS_TERMINATED_AT_NODE"]);
  });

  test("a source socket pinning the wrong identity", () => {
    const codes = failuresAfter((mesh) => {
      for (const match of checkout8080(mesh).transport_socket_matches!) {
        const tls = unpackAny(match.transport_socket!.typed_config!)!.message as UpstreamTlsContext;
        const pins = tls.common_tls_context!.combined_validation_context!.default_validation_context!.match_typed_subject_alt_names!;
        pins[0] = { ...pins[0], matcher: { exact: "spiffe://aether.internal/ns/team-b/sa/payments" } };
        match.transport_socket!.typed_config = pack(UPSTREAM_TLS_CONTEXT, tls);
      }
    });
    expect(codes).toEqual(["SAN_MISMATCH"]);
  });
});

/** Replaces east's frontend's outbound chains' first filter (the identity stamp) with `filter`, or removes it. */
function restamp(mesh: CompiledMesh, filter?: Filter): void {
  for (const listener of node(mesh, "east/node-1").listeners.filter((l) => /^(outbound|capture)_frontend/.test(l.name!))) {
    for (const chain of listener.filter_chains!) chain.filters = [...(filter ? [filter] : []), ...chain.filters!.slice(1)];
  }
}

describe("the check models Envoy's connection pools: no source's requests may go out with another's certificate", () => {
  test("sockets mode without a pool per downstream connection: the frontend and the node share checkout's pools", () => {
    const codes = failuresAfter((mesh) => delete checkout8080(mesh).connection_pool_per_downstream_connection, false, "sockets");
    expect(codes).toEqual(["POOL_SHARED_ACROSS_SOURCES"]);
  });

  test("an identity stamped with the non-hashable envoy.string factory: it never enters the pool key", () => {
    const codes = failuresAfter((mesh) => restamp(mesh, stampFilterState(FILTER_STATE.certificateMapperKey, FILTER_STATE.string, FRONTEND)));
    expect(codes).toEqual(["POOL_SHARED_ACROSS_SOURCES"]);
  });

  test("an identity stamped but not shared with the upstream connection: the node's certificate goes out", () => {
    const codes = failuresAfter((mesh) => {
      const notShared = stampFilterState(FILTER_STATE.certificateMapperKey, FILTER_STATE.hashableString, FRONTEND);
      const config = unpackAny(notShared.typed_config!)!.message as SetFilterStateConfig;
      restamp(mesh, {
        ...notShared,
        typed_config: pack(SET_FILTER_STATE, { on_new_connection: [{ ...config.on_new_connection![0]!, shared_with_upstream: 0 }] }),
      });
    });
    expect(codes).toEqual(["WRONG_CLIENT_CERT"]);
  });

  test("a chain that does not stamp: the frontend presents the node's certificate", () => {
    expect(failuresAfter((mesh) => restamp(mesh))).toEqual(["WRONG_CLIENT_CERT"]);
  });

  test("in sockets mode, a chain that does not stamp its netns: the node's socket is chosen", () => {
    expect(failuresAfter((mesh) => restamp(mesh), false, "sockets")).toEqual(["WRONG_CLIENT_CERT"]);
  });

  test("a pool key two certificates use fails exactly the paths of the clusters both call, on that node", () => {
    // Sources a and b of node n share the key "k" but present different certificates; c on node m uses it too.
    const path = (node: string, cluster: string, certificate: string): PathReport => ({
      source: { node, cluster: node.split("/")[0]!, identity: certificate },
      target: { service: "ns/svc" as PathReport["target"]["service"], port: 80 },
      cluster,
      status: "ok",
      hops: [],
      landings: [],
      failures: [],
      unverified: [],
      pool: { node, cluster, key: "k", certificate },
    });
    const paths = [path("e/n", "shared", "a"), path("e/n", "shared", "b"), path("e/n", "only-a", "a"), path("e/n", "only-b", "b"), path("e/m", "shared", "c")];
    const reports = withSharedPoolFailures([...paths]);
    expect(reports.map((report) => report.status)).toEqual(["failed", "failed", "ok", "ok", "ok"]);
    expect(reports[0]!.failures.map((failure) => failure.reason)).toEqual([
      `${PATH_FAILURES.POOL_SHARED_ACROSS_SOURCES}: shared on e/n, pool key "k", shared with b`,
    ]);
    // One certificate per key on every node: nothing fails.
    expect(withSharedPoolFailures(paths.filter((_, i) => i !== 1)).every((report) => report.status === "ok")).toBe(true);
  });

  test("a certificate selector over ADS", () => {
    const codes = failuresAfter((mesh) => {
      for (const match of checkout8080(mesh).transport_socket_matches!) {
        const tls = unpackAny(match.transport_socket!.typed_config!)!.message as UpstreamTlsContext;
        const selector = tls.common_tls_context!.custom_tls_certificate_selector!;
        const config = unpackAny(selector.typed_config!)!.message as OnDemandSecretConfig;
        selector.typed_config = pack(ON_DEMAND_SECRET, { ...config, config_source: { ads: {}, resource_api_version: ApiVersion.V3 } });
        match.transport_socket!.typed_config = pack(UPSTREAM_TLS_CONTEXT, tls);
      }
    });
    expect(codes).toEqual(["SELECTOR_OVER_ADS"]);
  });
});

describe("paths start at the source's outbound listener", () => {
  test("a pod without its egress listener cannot reach an HTTP port", () => {
    const codes = failuresAfter((mesh) => {
      const result = node(mesh, "east/node-1") as unknown as { listeners: Listener[] };
      result.listeners = result.listeners.filter((l) => !l.name!.startsWith("outbound_"));
    });
    expect(codes).toEqual(["NO_OUTBOUND_LISTENER"]);
  });

  test("an egress listener without a route for the service's authority answers 404", () => {
    const codes = failuresAfter((mesh) => {
      const egress = node(mesh, "east/node-1").listeners.find((l) => l.name!.startsWith("outbound_frontend"))!;
      const filters = egress.filter_chains![0]!.filters!;
      const manager = unpackAny(filters[1]!.typed_config!)!.message as HttpConnectionManager;
      manager.route_config!.virtual_hosts = manager.route_config!.virtual_hosts!.filter((vhost) => !vhost.name!.startsWith("checkout."));
      filters[1] = { ...filters[1]!, typed_config: pack(HTTP_CONNECTION_MANAGER, manager) };
    });
    expect(codes).toEqual(["NO_ROUTE"]);
  });

  test("a capture listener without the chain for a VIP and TCP port", () => {
    const codes = failuresAfter((mesh) => {
      const capture = node(mesh, "east/node-1").listeners.find((l) => l.name!.startsWith("capture_frontend"))!;
      capture.filter_chains = capture.filter_chains!.filter((chain) => chain.filter_chain_match!.destination_port !== 9090);
    });
    expect(codes).toEqual(["NO_CAPTURE_CHAIN"]);
  });

  test("a TCP port of a service without a VIP is not captured: reported, not a failure", () => {
    const doc = meshDocument();
    delete doc.vips;
    const report = verifyMesh(parseSnapshot(doc), crossCluster);
    const tcp = report.paths.filter((p) => p.target.port === 9090 && p.source.pod);
    expect(report.ok).toBe(true);
    expect(tcp.map((p) => [p.status, p.note])).toEqual([
      ["not-captured", "no VIP for team-a/checkout: a TCP port is reached only through a captured VIP"],
      ["not-captured", "no VIP for team-a/checkout: a TCP port is reached only through a captured VIP"],
    ]);
  });
});

describe("formatPathReport", () => {
  test("each landing and each failure is traced from the path's own hops on", () => {
    const report: PathReport = {
      source: {
        node: "east/node-1",
        cluster: "east",
        pod: { namespace: "team-a", name: "frontend-1", service: "team-a/frontend" as PathReport["target"]["service"] },
        identity: FRONTEND,
      },
      target: { service: "team-a/checkout" as PathReport["target"]["service"], port: 8080 },
      cluster: "checkout.team-a.mesh.aether:8080",
      status: "failed",
      hops: ["entry", "route"],
      landings: [
        {
          address: "10.0.0.1:15008",
          priority: 0,
          socket: "local",
          sni: "8080",
          pod: { cluster: "east", namespace: "team-a", name: "checkout-1", ip: "10.0.0.1" },
          hops: ["dial 10.0.0.1", "mTLS"],
        },
      ],
      failures: [{ code: "NO_INBOUND_CHAIN", reason: "no chain", hops: ["dial 10.0.0.2"] }],
      unverified: [],
    };
    expect(formatPathReport(report).split("\n")).toEqual([
      "east/team-a/frontend-1 → team-a/checkout:8080 (checkout.team-a.mesh.aether:8080): failed",
      "  lands on east/team-a/checkout-1 directly",
      "    entry",
      "    route",
      "    dial 10.0.0.1",
      "    mTLS",
      "  FAILED [NO_INBOUND_CHAIN] no chain",
      "    entry",
      "    route",
      "    dial 10.0.0.2",
    ]);
  });
});

describe("explainPath", () => {
  test("traces one connection hop by hop", () => {
    const { report, trace } = explainPath(snapshot(true), "east/team-a/frontend-7d9f-abcde", "team-a/checkout:8080", crossCluster);
    expect(report.status).toBe("ok");
    const hops = [
      "    entry outbound_frontend-7d9f-abcde_team-a (127.0.0.1:15001 in /var/run/netns/cni-3f1a9c): authority checkout.team-a.mesh.aether:8080",
      "    route checkout.team-a.mesh.aether:8080 → checkout.team-a.mesh.aether:8080",
      `    shares with upstream: envoy.tls.certificate_mappers.on_demand_secret=${FRONTEND} (hashable)`,
      // East's two checkout pods are unhealthy (priorities 0 and 1): the first healthy level is west's.
      "    checkout.team-a.mesh.aether:8080 priority 2: dial 10.20.0.12:15009",
      `    connection pool: per host and envoy.tls.certificate_mappers.on_demand_secret=${FRONTEND}`,
      '    matcher: envoy.matching.inputs.endpoint_metadata="true" → matched',
      `    socket waypoint: SNI "8080.checkout.team-a.mesh.aether", client certificate ${FRONTEND}`,
      "    waypoint west/node-2: ew_tunnel chain ew_checkout_team-a → tcp_proxy ew_ingress_checkout_team-a",
    ];
    expect(trace).toBe(
      [
        "east/team-a/frontend-7d9f-abcde → team-a/checkout:8080 (checkout.team-a.mesh.aether:8080): ok",
        "  lands on west/team-a/checkout-9a1e-y1 via west/node-2",
        ...hops,
        "    ew_ingress_checkout_team-a priority 0: 10.244.1.7:15008",
        "    pod west/team-a/checkout-9a1e-y1: inbound_checkout-9a1e-y1_team-a chain port_8080",
        "    mTLS spiffe://aether.internal/ns/team-a/sa/frontend ↔ spiffe://aether.internal/ns/team-a/sa/checkout",
        "  lands on west/team-a/checkout-9a1e-y2 via west/node-2",
        ...hops,
        "    ew_ingress_checkout_team-a priority 0: 10.244.1.8:15008",
        "    pod west/team-a/checkout-9a1e-y2: inbound_checkout-9a1e-y2_team-a chain port_8080",
        "    mTLS spiffe://aether.internal/ns/team-a/sa/frontend ↔ spiffe://aether.internal/ns/team-a/sa/checkout",
        "settings on this path:",
        "  checkout.team-a.mesh.aether:8080: connect timeout 2s; circuit breaker connections 65536, pending 65536, requests 65536, retries 65536; panic threshold 0%; outlier detection (5 local-origin failures, 5 5xx); HTTP/2 keepalive every 10s (timeout 5s)",
        "  capture_frontend-7d9f-abcde_team-a: VIP capture route: retries 2 on connect-failure,refused-stream,reset-before-request; no access log",
        "  outbound_frontend-7d9f-abcde_team-a: egress route: retries 2 on connect-failure,refused-stream,reset-before-request; no access log",
        ...["y1", "y2"].map(
          (pod) =>
            `  to the app on west/team-a/checkout-9a1e-${pod}: HTTP in the downstream's version (undeclared port); connect timeout 2s; circuit breaker connections 65536, pending 65536, requests 65536, retries 65536`,
        ),
      ].join("\n"),
    );
  });

  test("an unknown pod, a malformed target or an unknown service port is an input error, found before any node is compiled", () => {
    const compiled: number[] = [];
    const explain = (from: string, to: string) => () => explainPath(snapshot(), from, to, {}, (done) => compiled.push(done));
    expect(explain("east/team-a/nope", "team-a/checkout:8080")).toThrow(/no hosted pod east\/team-a\/nope/);
    expect(explain("east/team-a/frontend-7d9f-abcde", "checkout:8080")).toThrow(/is not <namespace>\/<service>:<port>/);
    expect(explain("east/team-a/frontend-7d9f-abcde", "team-a/nope:8080")).toThrow(/no service team-a\/nope in the snapshot/);
    expect(explain("east/team-a/frontend-7d9f-abcde", "team-a/checkout:8081")).toThrow(/service team-a\/checkout has no port 8081 \(ports: 8080, 9090\)/);
    expect(compiled).toEqual([]);
  });

  test("compiles only the nodes the path visits: the source's, the waypoint's, the destination pods'", () => {
    const progress: [number, number][] = [];
    explainPath(snapshot(true), "east/team-a/frontend-7d9f-abcde", "team-a/checkout:8080", crossCluster, (done, total) => progress.push([done, total]));
    // east/node-1 (the source), west/node-2 (the waypoint, also hosting both destination pods), of 7 nodes.
    expect(progress).toEqual([
      [1, 7],
      [2, 7],
    ]);
  });

  test.each(EVERY_MODE)(
    "%s / %s / %s: a node's receiving side is its full compile's listeners, and its clusters and assignments of those names",
    (sourceIdentity, mode, socketSelection) => {
      const options = { eastWestWaypoint: mode, socketSelection, sourceIdentity };
      const mesh = compileMesh(snapshot(), options);
      for (const { local, result } of mesh.nodes.values()) {
        const side = compileNodeSide(mesh.index, local, options);
        expect(side.listeners).toEqual(result.listeners);
        expect(side.clusters).toEqual(result.clusters.filter((c) => side.clusters.some((s) => s.name === c.name)));
        expect(side.endpoints).toEqual(result.endpoints.filter((a) => side.endpoints.some((s) => s.cluster_name === a.cluster_name)));
        // Ingress clusters (and inbound application clusters) but no outbound ones.
        expect(side.clusters.some((c) => c.transport_socket_matches?.length || c.transport_socket_matcher)).toBe(false);
      }
    },
  );

  test.each(EVERY_MODE)("%s / %s / %s: every path explained alone is the mesh check's report of it", (sourceIdentity, mode, socketSelection) => {
    const options = { eastWestWaypoint: mode, socketSelection, sourceIdentity };
    for (const path of verifyMesh(snapshot(true), options).paths.filter((p) => p.source.pod)) {
      const { cluster, pod } = path.source;
      expect(explainPath(snapshot(true), `${cluster}/${pod!.namespace}/${pod!.name}`, `${path.target.service}:${path.target.port}`, options).report).toEqual(
        path,
      );
    }
  });

  test("shows Envoy's defaults under envoy-defaults, and the declared protocol to the app", () => {
    const declared = snapshot(true, { "team-a/checkout": { "8080": "http", "9090": "tcp" } });
    const { trace } = explainPath(declared, "east/team-a/frontend-7d9f-abcde", "team-a/checkout:8080", {
      ...crossCluster,
      settings: { preset: "envoy-defaults", accessLog: "stdout" },
    });
    const settings = trace.slice(trace.indexOf("settings on this path:")).split("\n");
    expect(settings).toEqual([
      "settings on this path:",
      "  checkout.team-a.mesh.aether:8080: connect timeout Envoy's default (5s); circuit breaker Envoy's default (1024); panic threshold Envoy's default (50%); no outlier detection",
      "  capture_frontend-7d9f-abcde_team-a: VIP capture route: no retries; source access log",
      "  outbound_frontend-7d9f-abcde_team-a: egress route: no retries; source access log",
      ...["y1", "y2"].map(
        (pod) =>
          `  to the app on west/team-a/checkout-9a1e-${pod}: HTTP/1.1; connect timeout Envoy's default (5s); circuit breaker Envoy's default (1024); destination access log`,
      ),
    ]);
  });

  test("a TCP port's VIP capture chain proxies bytes: its idle timeout, not retries", () => {
    const declared = snapshot(true, { "team-a/checkout": { "8080": "http", "9090": "tcp" } });
    const { trace } = explainPath(declared, "east/team-a/frontend-7d9f-abcde", "team-a/checkout:9090", crossCluster);
    expect(trace.split("\n")).toContain("  capture_frontend-7d9f-abcde_team-a: VIP capture: idle timeout 3600s; no access log");
  });
});

describe("the replay reads each compiled object once, and only for the nodes whose output holds it", () => {
  test("nodes of two clusters sharing a cluster and its assignment share the level, not where its dials go", () => {
    const mesh = compileMesh(snapshot(), crossCluster);
    const name = "checkout.team-a.mesh.aether:8080";
    // west/node-1 gets east/node-1's very assignment. Pod CIDRs overlap: from west, a direct dial to an
    // east pod's IP reaches the west pod at that IP.
    const east = (node(mesh, "east/node-1").endpoints as ClusterLoadAssignment[]).find((a) => a.cluster_name === name)!;
    const endpoints = node(mesh, "west/node-1").endpoints as ClusterLoadAssignment[];
    endpoints[endpoints.findIndex((a) => a.cluster_name === name)] = east;
    const report = checkCompiledMesh(mesh);
    const landedIn = (key: string) =>
      new Set(report.paths.filter((p) => p.source.node === key && p.cluster === name).flatMap((p) => p.landings.map((l) => l.pod.cluster)));
    expect(landedIn("east/node-1")).toEqual(new Set(["east"]));
    expect(landedIn("west/node-1")).toEqual(new Set(["west"]));
  });

  test("nodes sharing an outbound cluster object but not its assignment each get their own priority level", () => {
    const mesh = compileMesh(snapshot(), crossCluster);
    const name = "checkout.team-a.mesh.aether:8080";
    const shared = node(mesh, "east/node-1").clusters.find((c) => c.name === name);
    expect(node(mesh, "west/node-1").clusters.find((c) => c.name === name)).toBe(shared);
    // west/node-1 (replayed after east/node-1) loses every healthy endpoint of that cluster, in its own copy.
    const endpoints = node(mesh, "west/node-1").endpoints as ClusterLoadAssignment[];
    const at = endpoints.findIndex((a) => a.cluster_name === name);
    endpoints[at] = allUnhealthy(endpoints[at]!);
    const report = checkCompiledMesh(mesh);
    expect(statusesFrom(report, "east/node-1", name)).toEqual(new Set(["ok"]));
    expect(statusesFrom(report, "west/node-1", name)).toEqual(new Set(["unreachable"]));
  });

  test("nodes sharing an aggregate's halves and its first half's assignment, but not the second's, each get their own level", () => {
    // East's checkout pods are down: east/node-1 reaches checkout through its waypoint half only.
    const mesh = compileMesh(snapshot(true), { ...crossCluster, socketSelection: "aggregate" });
    const name = "checkout.team-a.mesh.aether:8080";
    const [local, waypoint] = [`${name}|local`, `${name}|waypoint`];
    const clusterOf = (key: string, subCluster: string) => node(mesh, key).clusters.find((c) => c.name === subCluster);
    for (const subCluster of [local, waypoint]) expect(clusterOf("west/node-1", subCluster)).toBe(clusterOf("east/node-1", subCluster));
    // west/node-1 (replayed after east/node-1) gets east/node-1's very local half, and a copy of its
    // waypoint half with every endpoint unhealthy.
    const eastAssignment = (half: string) => (node(mesh, "east/node-1").endpoints as ClusterLoadAssignment[]).find((a) => a.cluster_name === half)!;
    const endpoints = node(mesh, "west/node-1").endpoints as ClusterLoadAssignment[];
    endpoints[endpoints.findIndex((a) => a.cluster_name === local)] = eastAssignment(local);
    endpoints[endpoints.findIndex((a) => a.cluster_name === waypoint)] = allUnhealthy(eastAssignment(waypoint));
    const report = checkCompiledMesh(mesh);
    expect(statusesFrom(report, "east/node-1", name)).toEqual(new Set(["ok"]));
    expect(statusesFrom(report, "west/node-1", name)).toEqual(new Set(["unreachable"]));
  });
});

/** A copy of the assignment with every endpoint unhealthy. */
function allUnhealthy(assignment: ClusterLoadAssignment): ClusterLoadAssignment {
  return {
    ...assignment,
    endpoints: assignment.endpoints!.map((group) => ({
      ...group,
      lb_endpoints: group.lb_endpoints!.map((endpoint) => ({ ...endpoint, health_status: HealthStatus.UNHEALTHY })),
    })),
  };
}

/** The statuses of the report's paths from a node through a cluster. */
function statusesFrom(report: MeshCheckReport, from: string, cluster: string): Set<PathReport["status"]> {
  return new Set(report.paths.filter((p) => p.source.node === from && p.cluster === cluster).map((p) => p.status));
}
