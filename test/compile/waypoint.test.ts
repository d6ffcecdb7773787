import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { type LbEndpoint, LocalityLbEndpoints } from "../../gen/envoy/config/endpoint/v3/endpoint_components.js";
import type { FilterChain } from "../../gen/envoy/config/listener/v3/listener_components.js";
import { type CompileResult, compileNode } from "../../src/compile/compile-node.js";
import { renderResource } from "../../src/emit/text.js";
import { isInputError } from "../../src/errors.js";
import { localNodeFrom, parseNode } from "../../src/model/node.js";
import { tunnelChainName, tunnelServerName, waypointSni } from "../../src/naming.js";
import { chosenPriority, evaluateSocketMatcher, selectFilterChain } from "../../src/verify/envoy-match.js";
import { formatPathReport, verifyMesh } from "../../src/verify/mesh-check.js";
import { loadCase } from "../support/cases.js";
import { exampleSnapshot } from "../support/fixtures.js";
import { endpoint, mesh, node } from "../support/mesh-builder.js";

const rendered = (result: CompileResult, kind: "clusters" | "listeners" | "endpoints", name: string): any => {
  const list: any[] = result[kind] as any[];
  const found = list.find((r) => (r.name ?? r.cluster_name) === name);
  return found && renderResource(kind, found);
};

/** The listeners a node serves (tunnel, pod inbound), not its pods' outbound ones. */
const servingListeners = (result: CompileResult) => result.listeners.map((l) => l.name!).filter((name) => !/^(outbound|capture)_/.test(name));

describe("the host tunnel listener", () => {
  const host = loadCase("waypoint-host");
  const result = compileNode(host.snapshot, host.node, host.options.get("selector")!);
  const tunnel = rendered(result, "listeners", "ew_tunnel");

  test("binds node_ip:tunnelPort in the host netns, inbound, with the TLS inspector", () => {
    expect(tunnel.address).toEqual({ socket_address: { address: "10.50.0.1", port_value: 15009 } });
    expect(tunnel.traffic_direction).toBe("INBOUND");
    expect(tunnel.listener_filters.map((f: any) => f.name)).toEqual(["envoy.filters.listener.tls_inspector"]);
  });

  test("one chain per hosted exported service, forwarding raw bytes; no TLS anywhere; no default chain", () => {
    expect(tunnel.filter_chains.map((c: any) => [c.name, c.filter_chain_match, c.filters[0].typed_config.cluster])).toEqual([
      ["ew_api_shop", { transport_protocol: "tls", server_names: ["*.api.shop.mesh.corp"] }, "ew_ingress_api_shop"],
      ["ew_web_shop", { transport_protocol: "tls", server_names: ["*.web.shop.mesh.corp"] }, "ew_ingress_web_shop"],
    ]);
    expect(tunnel.filter_chains.every((c: any) => c.transport_socket === undefined)).toBe(true);
    expect(tunnel.default_filter_chain).toBeUndefined();
  });

  test("the ingress clusters originate no TLS", () => {
    const ingress = rendered(result, "clusters", "ew_ingress_api_shop");
    expect(ingress).toMatchObject({
      "@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster",
      name: "ew_ingress_api_shop",
      type: "EDS",
      eds_cluster_config: { eds_config: { ads: {}, resource_api_version: "V3" }, service_name: "ew_ingress_api_shop" },
    });
    expect(Object.keys(ingress).filter((key) => key.startsWith("transport_socket"))).toEqual([]);
  });

  test("ingress: this node's pods first, the cluster's other healthy pods next; never draining, terminating or a waypoint", () => {
    const address = (lb: any) => `${lb.endpoint.address.socket_address.address}:${lb.endpoint.address.socket_address.port_value}`;
    const groups = (name: string) => rendered(result, "endpoints", name).endpoints.map((g: any) => [g.priority ?? 0, g.lb_endpoints.map(address)]);
    // api-n2-old is draining; south's api pod is in another cluster.
    expect(groups("ew_ingress_api_shop")).toEqual([
      [0, ["10.32.0.10:15008"]],
      [1, ["10.32.1.10:15008"]],
    ]);
    // web's pod on n1 is terminating: only n2's remains, at priority 0 (contiguous).
    expect(groups("ew_ingress_web_shop")).toEqual([[0, ["10.32.1.30:15008"]]]);
  });

  test("a service hosted twice is one chain", () => {
    const node = {
      ...host.node,
      pods: [...host.node.pods, { ...host.node.pods.find((p) => p.name === "api-n1")!, name: "api-n1-b", ip: "10.32.0.11", netns: "/var/run/netns/api-n1-b" }],
    };
    const chains = rendered(compileNode(host.snapshot, node, host.options.get("selector")!), "listeners", "ew_tunnel").filter_chains.map((c: any) => c.name);
    expect(chains).toEqual(["ew_api_shop", "ew_web_shop"]);
  });

  test("no tunnel listener when the waypoint is off, or when nothing exported is hosted", () => {
    expect(servingListeners(compileNode(host.snapshot, host.node, { eastWestWaypoint: "off" }))).toEqual(["inbound_api-n1_shop", "inbound_db-n1_shop"]);
    const onlyDb = { ...host.node, pods: host.node.pods.filter((p) => p.serviceAccount === "db") };
    expect(servingListeners(compileNode(host.snapshot, onlyDb, host.options.get("selector")!))).toEqual(["inbound_db-n1_shop"]);
  });
});

describe("pod inbound listeners", () => {
  const host = loadCase("waypoint-host");
  const on = compileNode(host.snapshot, host.node, host.options.get("selector")!);
  const inbound = rendered(on, "listeners", "inbound_api-n1_shop");

  test("bind 0.0.0.0:inboundPort inside the pod's netns, with the TLS inspector", () => {
    expect(inbound.address.socket_address).toEqual({ address: "0.0.0.0", port_value: 15008, network_namespace_filepath: "/var/run/netns/api-n1" });
    expect(inbound.listener_filters.map((f: any) => f.name)).toEqual(["envoy.filters.listener.tls_inspector"]);
  });

  test("one chain per served port, matching the bare port and the exact structured name", () => {
    expect(inbound.filter_chains.map((c: any) => [c.name, c.filter_chain_match.server_names])).toEqual([
      ["port_8080", ["8080", "8080.api.shop.mesh.corp"]],
      ["port_9090", ["9090", "9090.api.shop.mesh.corp"]],
    ]);
  });

  test("with the waypoint off, only the bare port", () => {
    const off = rendered(compileNode(host.snapshot, host.node, { eastWestWaypoint: "off" }), "listeners", "inbound_api-n1_shop");
    expect(off.filter_chains.map((c: any) => c.filter_chain_match.server_names)).toEqual([["8080"], ["9090"]]);
  });

  test("terminate mTLS with the pod's own SVID and require a client certificate", () => {
    for (const chain of inbound.filter_chains) {
      const tls = chain.transport_socket.typed_config;
      expect(tls["@type"]).toBe("type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext");
      expect(tls.require_client_certificate).toBe(true);
      expect(tls.common_tls_context.tls_certificate_sds_secret_configs[0].name).toBe("spiffe://corp.td/ns/shop/sa/api");
      expect(tls.common_tls_context.combined_validation_context.validation_context_sds_secret_config.name).toBe("spiffe://corp.td");
    }
  });

  test("HTTP ports pass the client identity in XFCC to the app; TCP ports are proxied", () => {
    const [http, tcp] = inbound.filter_chains.map((c: any) => c.filters[0].typed_config);
    expect(http).toMatchObject({ forward_client_cert_details: "SANITIZE_SET", set_current_client_cert_details: { uri: true } });
    expect(http.route_config.virtual_hosts[0].routes[0].route.cluster).toBe("app_api-n1_shop_8080");
    expect(tcp).toEqual({
      "@type": "type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy",
      stat_prefix: "inbound_api-n1_shop_9090",
      cluster: "app_api-n1_shop_9090",
      idle_timeout: "3600s",
    });
    expect(rendered(on, "clusters", "app_api-n1_shop_9090").load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address).toEqual({
      address: "10.32.0.10",
      port_value: 9090,
    });
  });

  test("terminating pods get no inbound listener (still an outbound one), pods without a netns no listener at all", () => {
    expect(on.listeners.map((l) => l.name)).toEqual(["ew_tunnel", "inbound_api-n1_shop", "inbound_db-n1_shop", "outbound_web-n1_shop"]);
    expect(on.diagnostics.filter((d) => d.code === "POD_TERMINATING" || d.code === "POD_WITHOUT_NETNS").map((d) => d.message)).toEqual([
      "pod shop/batch-n1 has no network namespace: it gets no inbound or outbound listeners (its traffic never enters the mesh)",
      "pod shop/web-n1 is terminating: no inbound listener",
    ]);
  });
});

describe("the seed's verification, on compiled output", () => {
  const snapshot = exampleSnapshot();
  const options = { eastWestWaypoint: "cross-cluster" } as const;
  const east = compileNode(snapshot, localNodeFrom(snapshot, "east", "node-1"), options);
  const west = compileNode(snapshot, localNodeFrom(snapshot, "west", "node-2"), options);

  test("an east source reaches a west pod through west/node-2's waypoint, mTLS end to end", () => {
    // 1. east/node-1 addresses west's checkout pods at west/node-2's IP and tunnel port.
    const assignment = east.endpoints.find((a) => a.cluster_name === "checkout.team-a.mesh.aether:8080")!;
    const remote = assignment.endpoints!.flatMap((g) => g.lb_endpoints!).find((lb) => lb.metadata?.filter_metadata?.["envoy.lb"]?.waypoint === "true")!;
    expect(remote.endpoint!.address!.socket_address).toMatchObject({ address: "10.20.0.12", port_value: 15009 });
    // 2. frontend's outbound listener, in its netns, stamps frontend's identity (hashable, shared
    //    with the upstream connection); the endpoint's waypoint label picks the waypoint socket:
    //    structured SNI, and a certificate selector that presents the stamped identity's SVID.
    const egress = renderResource(
      "listeners",
      east.listeners.find((l) => l.name === "outbound_frontend-7d9f-abcde_team-a"),
    ) as any;
    expect(egress.address.socket_address.network_namespace_filepath).toBe("/var/run/netns/cni-3f1a9c");
    expect(egress.filter_chains[0].filters[0].typed_config.on_new_connection).toEqual([
      {
        object_key: "envoy.tls.certificate_mappers.on_demand_secret",
        factory_key: "envoy.hashable_string",
        format_string: { text_format_source: { inline_string: "spiffe://aether.internal/ns/team-a/sa/frontend" } },
        read_only: true,
        shared_with_upstream: "ONCE",
      },
    ]);
    const cluster = east.clusters.find((c) => c.name === "checkout.team-a.mesh.aether:8080")!;
    const choice = evaluateSocketMatcher(cluster.transport_socket_matcher!, { endpointMetadata: remote.metadata!.filter_metadata as never, filterState: {} });
    expect(choice).toMatchObject({ kind: "socket", name: "waypoint" });
    const socket = renderResource("clusters", cluster) as any;
    const tls = socket.transport_socket_matches.find((m: any) => m.name === "waypoint").transport_socket.typed_config;
    expect(tls.sni).toBe("8080.checkout.team-a.mesh.aether");
    expect(tls.common_tls_context.custom_tls_certificate_selector.typed_config.certificate_mapper.name).toBe(
      "envoy.tls.upstream_certificate_mappers.filter_state_override",
    );
    expect(tls.common_tls_context.combined_validation_context.default_validation_context.match_typed_subject_alt_names[0].matcher.exact).toBe(
      "spiffe://aether.internal/ns/team-a/sa/checkout",
    );
    // 3. west/node-2's tunnel listener has a chain for that SNI that forwards, without TLS, to ew_ingress.
    const tunnel = west.listeners.find((l) => l.name === "ew_tunnel")!;
    expect(tunnel.address!.socket_address).toMatchObject({ address: "10.20.0.12", port_value: 15009 });
    const chain = selectFilterChain(tunnel.filter_chains!, tls.sni)!;
    expect(chain.name).toBe("ew_checkout_team-a");
    expect(chain.transport_socket).toBeUndefined();
    const forward = (renderResource("listeners", tunnel) as any).filter_chains.find((c: any) => c.name === chain.name).filters[0].typed_config;
    expect(forward.cluster).toBe("ew_ingress_checkout_team-a");
    const ingress = west.clusters.find((c) => c.name === forward.cluster)!;
    expect(ingress.transport_socket ?? ingress.transport_socket_matches ?? ingress.transport_socket_matcher).toBeUndefined();
    // 4. ...to a west pod's inbound port.
    const landed = chosenPriority(west.endpoints.find((a) => a.cluster_name === forward.cluster)!)!;
    expect(landed.endpoints.map((e) => e.endpoint!.address!.socket_address!.address)).toEqual(["10.244.1.7", "10.244.1.8"]);
    expect(landed.endpoints.every((e) => e.endpoint!.address!.socket_address!.port_value === 15008)).toBe(true);
    // 5. That pod's inbound listener has the exact structured name on its 8080 chain, and presents checkout's SVID.
    const inbound = west.listeners.find((l) => l.name === "inbound_checkout-9a1e-y1_team-a")!;
    const podChain = selectFilterChain(inbound.filter_chains!, tls.sni)!;
    expect(podChain.name).toBe("port_8080");
    expect(podChain.filter_chain_match!.server_names).toContain("8080.checkout.team-a.mesh.aether");
    const serverTls = (renderResource("listeners", inbound) as any).filter_chains.find((c: any) => c.name === "port_8080").transport_socket.typed_config;
    expect(serverTls.common_tls_context.tls_certificate_sds_secret_configs[0].name).toBe("spiffe://aether.internal/ns/team-a/sa/checkout");
  });

  test("intra-cluster resources are unchanged by the waypoint: the same-cluster part of every assignment is byte-identical", () => {
    const off = compileNode(snapshot, localNodeFrom(snapshot, "east", "node-1"), { eastWestWaypoint: "off" });
    const eastIps = new Set(
      [...snapshot.services.values()]
        .flat()
        .filter((e) => e.clusterName === "east")
        .map((e) => e.ip),
    );
    const isEastPod = (lb: LbEndpoint) =>
      lb.endpoint!.address!.socket_address!.port_value === 15008 && eastIps.has(lb.endpoint!.address!.socket_address!.address!);
    const sameClusterBytes = (result: CompileResult) =>
      result.endpoints
        .filter((a) => !a.cluster_name!.startsWith("ew_ingress_") && !a.cluster_name!.startsWith("inboundready_"))
        .map((a) => [
          a.cluster_name,
          (a.endpoints ?? []).filter((g) => g.lb_endpoints!.every(isEastPod)).map((g) => Buffer.from(LocalityLbEndpoints.encode(g).finish()).toString("hex")),
        ]);
    const withWaypoint = sameClusterBytes(east);
    expect(withWaypoint.flatMap(([, groups]) => groups as string[])).toHaveLength(6);
    expect(withWaypoint).toEqual(sameClusterBytes(off));
  });
});

describe("structured SNI safety", () => {
  test("a hosted pod whose SNI would be too long is rejected when the node is parsed", () => {
    const node = {
      ...loadCase("waypoint-host").node,
      meshDomain: ["a", "b", "c"].map((c) => c.repeat(60)).join("."),
    };
    node.pods = [{ ...node.pods[0]!, namespace: "n".repeat(40), serviceAccount: "s".repeat(40) }];
    try {
      parseNode(node);
      throw new Error("expected an InputError");
    } catch (error) {
      expect(isInputError(error) && error.issues[0]).toEqual({ path: "pods[0].serviceAccount", message: expect.stringMatching(/over the 255-byte limit/) });
    }
  });

  // Labels drawn from a tiny alphabet so that names are often prefixes or suffixes of each other.
  const label = fc.stringMatching(/^[ab](-?[ab]){0,3}$/);
  const services = fc.uniqueArray(fc.record({ namespace: label, service: label }), {
    minLength: 2,
    maxLength: 12,
    selector: (s) => `${s.namespace}/${s.service}`,
  });

  test("no service's SNI is captured by another service's tunnel chain (Envoy's wildcard-suffix rule)", () => {
    fc.assert(
      fc.property(services, fc.integer({ min: 1, max: 65535 }), (refs, port) => {
        const chains: FilterChain[] = refs.map((ref) => ({
          name: tunnelChainName(ref),
          filter_chain_match: { server_names: [tunnelServerName("mesh.a", ref)], transport_protocol: "tls" },
        }));
        for (const ref of refs) {
          expect(selectFilterChain(chains, waypointSni("mesh.a", { ...ref, port }))?.name).toBe(tunnelChainName(ref));
        }
        // The bare port a direct dial sends never matches a tunnel chain.
        expect(selectFilterChain(chains, String(port))).toBeUndefined();
      }),
      { seed: 4242, numRuns: 300 },
    );
  });
});

describe("ports that only some pods serve", () => {
  const snapshot = () =>
    mesh({
      nodes: [node({ cluster: "east", name: "e1", ip: "10.10.0.1" }), node({ cluster: "west", name: "w1", ip: "10.20.0.1" })],
      services: {
        "team-a/api": [
          endpoint({ cluster: "east", ip: "10.244.0.1", node: "e1", ports: [80, 9090], netns: "/run/netns/api-0", pod: "api-0" }),
          endpoint({ cluster: "east", ip: "10.244.0.2", node: "e1", ports: [9090], netns: "/run/netns/api-1", pod: "api-1" }),
        ],
      },
    });

  test("get their own exact chain and ingress, listing only the pods that serve them", () => {
    const east = compileNode(snapshot(), localNodeFrom(snapshot(), "east", "e1"), { eastWestWaypoint: "cross-cluster" });
    const chains = rendered(east, "listeners", "ew_tunnel").filter_chains.map((c: any) => [
      c.name,
      c.filter_chain_match.server_names[0],
      c.filters[0].typed_config.cluster,
    ]);
    expect(chains).toEqual([
      ["ew_api_team-a", "*.api.team-a.mesh.test", "ew_ingress_api_team-a"],
      ["ew_api_team-a_80", "80.api.team-a.mesh.test", "ew_ingress_api_team-a_80"],
    ]);
    const pods = (name: string) => rendered(east, "endpoints", name).endpoints[0].lb_endpoints.map((lb: any) => lb.endpoint.address.socket_address.address);
    expect(pods("ew_ingress_api_team-a_80")).toEqual(["10.244.0.1"]);
    expect(pods("ew_ingress_api_team-a")).toEqual(["10.244.0.1", "10.244.0.2"]);
  });

  test("so every path through the waypoint lands on a pod serving its port", () => {
    const report = verifyMesh(snapshot(), { eastWestWaypoint: "cross-cluster" });
    expect(report.paths.filter((p) => p.status === "failed").map(formatPathReport)).toEqual([]);
    const toPort80 = report.paths.filter((p) => p.source.cluster === "west" && p.target.port === 80);
    expect(toPort80.flatMap((p) => p.landings.map((l) => l.pod.name))).toEqual(["api-0"]);
  });
});

describe("ingress weights", () => {
  test("are scaled to fit uint32, like every assignment", () => {
    const snapshot = mesh({
      nodes: [node({ cluster: "east", name: "e1", ip: "10.10.0.1" })],
      services: {
        "team-a/api": [
          endpoint({ cluster: "east", ip: "10.244.0.1", node: "e1", weight: 4294966295, netns: "/run/netns/a" }),
          endpoint({ cluster: "east", ip: "10.244.0.2", node: "e1", netns: "/run/netns/b" }),
        ],
      },
    });
    const result = compileNode(snapshot, localNodeFrom(snapshot, "east", "e1"), { eastWestWaypoint: "cross-cluster" });
    const weights = rendered(result, "endpoints", "ew_ingress_api_team-a").endpoints[0].lb_endpoints.map((lb: any) => lb.load_balancing_weight);
    expect(weights[0] + weights[1]).toBeLessThanOrEqual(0xffffffff);
    expect(result.diagnostics.find((d) => d.resource === "ew_ingress_api_team-a")?.code).toBe("WEIGHTS_SCALED");
  });
});

describe("ingress pods", () => {
  test("are listed by address, numerically (10.244.0.9 before 10.244.0.10), whatever the registry's order", () => {
    const ips = ["10.244.0.10", "10.244.1.2", "10.244.0.9", "10.10.0.200"];
    const snapshot = mesh({
      nodes: [node({ cluster: "east", name: "e1", ip: "10.10.0.1" })],
      services: { "team-a/api": ips.map((ip) => endpoint({ cluster: "east", ip, node: "e1" })) },
    });
    const result = compileNode(snapshot, localNodeFrom(snapshot, "east", "e1"), { eastWestWaypoint: "cross-cluster" });
    const listed = rendered(result, "endpoints", "ew_ingress_api_team-a").endpoints[0].lb_endpoints.map(
      (lb: any) => lb.endpoint.address.socket_address.address,
    );
    expect(listed).toEqual(["10.10.0.200", "10.244.0.9", "10.244.0.10", "10.244.1.2"]);
  });
});
