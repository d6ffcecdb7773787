import { describe, expect, test } from "vitest";
import type { Cluster } from "../../gen/envoy/config/cluster/v3/cluster.js";
import { TransportSocketNameAction } from "../../gen/envoy/extensions/matching/common_inputs/transport_socket/v3/transport_socket_inputs.js";
import type { UpstreamTlsContext } from "../../gen/envoy/extensions/transport_sockets/tls/v3/tls.js";
import { pack } from "../../src/envoy/any.js";
import { unpackAny } from "../../src/envoy/schema.js";
import { TRANSPORT_SOCKET_NAME_ACTION, UPSTREAM_TLS_CONTEXT } from "../../src/envoy/types.js";
import { parseSnapshot } from "../../src/model/snapshot.js";
import { type CompiledMesh, compileMesh } from "../../src/verify/compiled-mesh.js";
import { checkCompiledMesh, explainPath, verifyMesh } from "../../src/verify/mesh-check.js";
import type { PathFailureCode } from "../../src/verify/path.js";
import { meshDocument } from "../support/fixtures.js";

/** The example mesh; with `eastCheckoutDown`, east's checkout pods are unhealthy so east goes to west. */
function snapshot(eastCheckoutDown = false) {
  const doc = meshDocument();
  if (eastCheckoutDown) doc.services["team-a/checkout"].filter((r: any) => r.clusterName === "east").forEach((r: any) => (r.health = "UNHEALTHY"));
  return parseSnapshot(doc);
}

const crossCluster = { eastWestWaypoint: "cross-cluster" } as const;

describe("verifyMesh on the example mesh", () => {
  test.each([
    ["off", "matcher"],
    ["off", "aggregate"],
    ["cross-cluster", "matcher"],
    ["cross-cluster", "aggregate"],
    ["always", "matcher"],
    ["always", "aggregate"],
  ] as const)("%s / %s: every source reaches every dependency", (mode, socketSelection) => {
    const report = verifyMesh(snapshot(), { eastWestWaypoint: mode, socketSelection });
    expect(report.paths.filter((p) => p.status === "failed")).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.paths.length).toBe(19);
    expect([...report.skippedNodes.keys()]).toEqual(["west/node-4"]);
  });

  test("same-cluster traffic is direct: east's frontend lands on east's checkout pod without a waypoint", () => {
    const path = verifyMesh(snapshot(), crossCluster).paths.find((p) => p.source.pod?.name === "frontend-7d9f-abcde" && p.target.port === 8080)!;
    expect(path.landings.map((l) => [l.pod.cluster, l.pod.name, l.via ?? "direct", l.sni, l.socket])).toEqual([
      ["east", "checkout-5c6b-x1", "direct", "8080", "local|spiffe://aether.internal/ns/team-a/sa/frontend"],
    ]);
  });

  test("when east's checkout is down, east's frontend lands on west's pods through west/node-2, with its own certificate", () => {
    const path = verifyMesh(snapshot(true), crossCluster).paths.find((p) => p.source.pod?.name === "frontend-7d9f-abcde" && p.target.port === 8080)!;
    expect(path.status).toBe("ok");
    expect(path.landings.map((l) => [l.pod.cluster, l.pod.name, l.via, l.address, l.sni, l.socket])).toEqual([
      [
        "west",
        "checkout-9a1e-y1",
        "west/node-2",
        "10.20.0.12:15009",
        "8080.checkout.team-a.mesh.aether",
        "waypoint|spiffe://aether.internal/ns/team-a/sa/frontend",
      ],
      [
        "west",
        "checkout-9a1e-y2",
        "west/node-2",
        "10.20.0.12:15009",
        "8080.checkout.team-a.mesh.aether",
        "waypoint|spiffe://aether.internal/ns/team-a/sa/frontend",
      ],
    ]);
  });

  test("a service with no healthy endpoint is unreachable, not a failure", () => {
    const doc = meshDocument();
    doc.services["team-b/payments"].forEach((r: any) => (r.health = "UNHEALTHY"));
    const report = verifyMesh(parseSnapshot(doc), crossCluster);
    expect(report.ok).toBe(true);
    expect(new Set(report.paths.filter((p) => p.target.service === "team-b/payments").map((p) => p.status))).toEqual(new Set(["unreachable"]));
  });
});

/** Compiles the mesh, applies one mistake to the compiled output, and returns the failure codes. */
function failuresAfter(mistake: (mesh: CompiledMesh) => void, eastCheckoutDown = false): PathFailureCode[] {
  const mesh = compileMesh(snapshot(eastCheckoutDown), crossCluster);
  expect(checkCompiledMesh(mesh).ok).toBe(true);
  mistake(mesh);
  const report = checkCompiledMesh(mesh);
  return [...new Set(report.paths.flatMap((p) => p.failures.map((f) => f.code)))];
}

const node = (mesh: CompiledMesh, key: string) => mesh.nodes.get(key)!.result;
const checkout8080 = (mesh: CompiledMesh): Cluster => node(mesh, "east/node-1").clusters.find((c) => c.name === "checkout.team-a.mesh.aether:8080")!;

describe("the check catches real mistakes", () => {
  test("a tunnel chain with the wrong SNI suffix", () => {
    const codes = failuresAfter((mesh) => {
      const tunnel = node(mesh, "west/node-2").listeners.find((l) => l.name === "ew_tunnel")!;
      tunnel.filter_chains!.find((c) => c.name === "ew_checkout_team-a")!.filter_chain_match!.server_names = ["*.checkout.team-a.mesh.other"];
    }, true);
    expect(codes).toEqual(["TUNNEL_NO_CHAIN"]);
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
    const codes = failuresAfter((mesh) => {
      delete checkout8080(mesh).transport_socket_matcher!.on_no_match!.matcher!.on_no_match;
    });
    expect(codes).toEqual(["MATCHER_NO_MATCH"]); // the node itself has no netns entry
  });

  test("a matcher action naming a socket that does not exist", () => {
    const codes = failuresAfter((mesh) => {
      const local = checkout8080(mesh).transport_socket_matcher!.on_no_match!.matcher!;
      local.matcher_tree!.exact_match_map!.map!["/var/run/netns/cni-3f1a9c"] = {
        action: {
          name: "envoy.matching.action.transport_socket.name",
          typed_config: pack(TRANSPORT_SOCKET_NAME_ACTION, { name: "local|spiffe://aether.internal/ns/team-a/sa/ghost" } satisfies TransportSocketNameAction),
        },
      };
    });
    expect(codes).toEqual(["MISSING_SOCKET"]);
  });

  test("the listener-side filter_state input instead of the transport-socket one", () => {
    const codes = failuresAfter((mesh) => {
      checkout8080(mesh).transport_socket_matcher!.on_no_match!.matcher!.matcher_tree!.input!.name = "envoy.matching.inputs.filter_state";
    });
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

describe("explainPath", () => {
  test("traces one connection hop by hop", () => {
    const { report, trace } = explainPath(snapshot(true), "east/team-a/frontend-7d9f-abcde", "team-a/checkout:8080", crossCluster);
    expect(report.status).toBe("ok");
    const hops = [
      // East's two checkout pods are unhealthy (priorities 0 and 1): the first healthy level is west's.
      "    checkout.team-a.mesh.aether:8080 priority 2: dial 10.20.0.12:15009",
      '    matcher: envoy.matching.inputs.endpoint_metadata="true" → matched; envoy.matching.inputs.transport_socket_filter_state="/var/run/netns/cni-3f1a9c" → matched',
      '    socket waypoint|spiffe://aether.internal/ns/team-a/sa/frontend: SNI "8080.checkout.team-a.mesh.aether", client certificate spiffe://aether.internal/ns/team-a/sa/frontend',
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
      ].join("\n"),
    );
  });

  test("an unknown pod or a malformed target is an input error", () => {
    expect(() => explainPath(snapshot(), "east/team-a/nope", "team-a/checkout:8080")).toThrow(/no hosted pod east\/team-a\/nope/);
    expect(() => explainPath(snapshot(), "east/team-a/frontend-7d9f-abcde", "checkout:8080")).toThrow(/is not <namespace>\/<service>:<port>/);
  });
});
