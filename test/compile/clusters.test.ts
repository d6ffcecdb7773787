import { describe, expect, test } from "vitest";
import { Cluster } from "../../gen/envoy/config/cluster/v3/cluster.js";
import { compileNode } from "../../src/compile/compile-node.js";
import { renderResource } from "../../src/emit/text.js";
import { socketName } from "../../src/naming.js";
import { indexSnapshot } from "../../src/plan/snapshot-index.js";
import { endpoint, localNode, mesh, node } from "../support/mesh-builder.js";

const snapshot = () =>
  mesh({
    nodes: [node({ cluster: "home", name: "h1", ip: "10.1.0.1" }), node({ cluster: "away", name: "a1", ip: "10.2.0.1" })],
    services: {
      "ns/svc": [
        endpoint({ cluster: "home", ip: "10.244.0.5", node: "h1", ports: [8080, 9000] }),
        endpoint({ cluster: "away", ip: "10.244.0.5", node: "a1", nodeIp: "10.2.0.1", ports: [8080, 9000] }),
      ],
    },
    protocols: { "ns/svc": { "9000": "tcp" } },
  });

const pods = [
  { name: "web-1", namespace: "ns", serviceAccount: "web", ip: "10.244.0.7", netns: "/run/netns/web-1" },
  { name: "web-2", namespace: "ns", serviceAccount: "web", ip: "10.244.0.8", netns: "/run/netns/web-2" },
  { name: "job-1", namespace: "batch", serviceAccount: "job", ip: "10.244.0.9", netns: "/run/netns/job-1" },
];

/** The cluster `name` as a node hosting `hosted` gets it; in `sockets` mode unless `options` say otherwise. */
function cluster(options: object, hosted = pods, name = "svc.ns.mesh.test:8080"): any {
  const result = compileNode(snapshot(), localNode("home", "h1", "10.1.0.1", hosted), { ...SOCKETS, ...options });
  return renderResource(
    "clusters",
    result.clusters.find((c) => c.name === name),
  );
}

const SOCKETS = { sourceIdentity: "sockets" } as const;
const NODE = "spiffe://td.test/ns/aether-system/sa/aether-node";
const WEB = "spiffe://td.test/ns/ns/sa/web";
const JOB = "spiffe://td.test/ns/batch/sa/job";
const action = (socket: string) => ({
  action: {
    name: "envoy.matching.action.transport_socket.name",
    typed_config: { "@type": "type.googleapis.com/envoy.extensions.matching.common_inputs.transport_socket.v3.TransportSocketNameAction", name: socket },
  },
});
const netnsInput = {
  name: "envoy.matching.inputs.transport_socket_filter_state",
  typed_config: {
    "@type": "type.googleapis.com/envoy.extensions.matching.common_inputs.transport_socket.v3.FilterStateInput",
    key: "aether.source_netns",
  },
};
const perSource = (variant: "local" | "waypoint") => ({
  matcher_tree: {
    input: netnsInput,
    exact_match_map: {
      map: {
        "/run/netns/job-1": action(socketName(variant, JOB)),
        "/run/netns/web-1": action(socketName(variant, WEB)),
        "/run/netns/web-2": action(socketName(variant, WEB)),
      },
    },
  },
  on_no_match: action(socketName(variant, NODE)),
});
const waypointLabel = {
  name: "envoy.matching.inputs.endpoint_metadata",
  typed_config: {
    "@type": "type.googleapis.com/envoy.extensions.matching.common_inputs.transport_socket.v3.EndpointMetadataInput",
    filter: "envoy.lb",
    path: [{ key: "waypoint" }],
  },
};

describe("sockets mode: the transport-socket matcher", () => {
  test("waypoint on, pods hosted: the waypoint label, then the source netns, each level with its own on_no_match", () => {
    expect(cluster({ eastWestWaypoint: "cross-cluster" }).transport_socket_matcher).toEqual({
      matcher_tree: { input: waypointLabel, exact_match_map: { map: { true: { matcher: perSource("waypoint") } } } },
      on_no_match: { matcher: perSource("local") },
    });
  });

  test("waypoint off: only the per-source level", () => {
    expect(cluster({ eastWestWaypoint: "off" }).transport_socket_matcher).toEqual(perSource("local"));
  });

  test("no hosted pods: only the waypoint label, straight to the node's sockets", () => {
    expect(cluster({ eastWestWaypoint: "always" }, []).transport_socket_matcher).toEqual({
      matcher_tree: { input: waypointLabel, exact_match_map: { map: { true: action(socketName("waypoint", NODE)) } } },
      on_no_match: action(socketName("local", NODE)),
    });
  });

  test("no hosted pods and the waypoint off: one plain node-identity socket, no matcher", () => {
    const plain = cluster({ eastWestWaypoint: "off" }, []);
    expect(plain.transport_socket_matcher).toBeUndefined();
    expect(plain.transport_socket_matches).toBeUndefined();
    expect(plain.transport_socket.typed_config.common_tls_context.tls_certificate_sds_secret_configs[0].name).toBe(NODE);
  });

  test("pods without a netns cannot be told apart: they fall to the node identity", () => {
    const result = compileNode(snapshot(), localNode("home", "h1", "10.1.0.1", [{ ...pods[0]!, netns: "" }]), { ...SOCKETS, eastWestWaypoint: "off" });
    expect(result.clusters[0]!.transport_socket_matcher).toBeUndefined();
    expect(result.diagnostics.map((d) => d.code)).toContain("POD_WITHOUT_NETNS");
  });

  test("a netns claimed by two pods is used for neither (fail closed): their traffic carries the node identity", () => {
    const forged = [...pods, { name: "impostor", namespace: "batch", serviceAccount: "admin", ip: "10.244.0.66", netns: "/run/netns/web-1" }].map((pod) => ({
      ...pod,
      ports: [80],
    }));
    const result = compileNode(snapshot(), localNode("home", "h1", "10.1.0.1", forged), { ...SOCKETS, eastWestWaypoint: "off" });
    const outbound = result.clusters.find((c) => c.name === "svc.ns.mesh.test:8080");
    const map = (renderResource("clusters", outbound) as any).transport_socket_matcher.matcher_tree.exact_match_map.map;
    expect(Object.keys(map)).toEqual(["/run/netns/job-1", "/run/netns/web-2"]);
    expect(result.listeners.map((l) => l.name)).toEqual(["inbound_job-1_batch", "inbound_web-2_ns", "outbound_job-1_batch", "outbound_web-2_ns"]);
    expect(result.diagnostics.filter((d) => d.code === "NETNS_CONFLICT").map((d) => d.message)).toEqual([
      "pods batch/impostor, ns/web-1 all claim network namespace /run/netns/web-1: none is told apart, so none gets inbound or outbound listeners",
    ]);
  });

  test("a configured filter-state key is used for the per-source level", () => {
    const input = cluster({ eastWestWaypoint: "off", netnsFilterStateKey: "io.aether.source_netns" }).transport_socket_matcher.matcher_tree.input;
    expect(input).toEqual({ ...netnsInput, typed_config: { ...netnsInput.typed_config, key: "io.aether.source_netns" } });
  });
});

describe("sockets mode: the socket table", () => {
  test("one socket per distinct source identity and variant, sorted; every action names one of them", () => {
    const rendered = cluster({ eastWestWaypoint: "cross-cluster" });
    const names: string[] = rendered.transport_socket_matches.map((m: any) => m.name);
    const expected = (variant: "local" | "waypoint") => [NODE, JOB, WEB].map((id) => socketName(variant, id)).sort();
    expect(names).toEqual([...expected("local"), ...expected("waypoint")]);
    expect(names.every((name) => /^(local|waypoint)_[0-9a-f]{16}$/.test(name))).toBe(true);
    const actions = JSON.stringify(rendered.transport_socket_matcher).match(/"name":"(local|waypoint)_[^"]+"/g)!;
    expect(actions.map((a) => a.slice(8, -1)).every((socket) => names.includes(socket))).toBe(true);
  });

  test("local and waypoint sockets differ only in SNI: same client cert, SAN pins and ALPN", () => {
    const matches = cluster({ eastWestWaypoint: "cross-cluster" }).transport_socket_matches;
    const tls = (name: string) => matches.find((m: any) => m.name === name).transport_socket.typed_config;
    const [local, waypoint] = [tls(socketName("local", WEB)), tls(socketName("waypoint", WEB))];
    expect(local.sni).toBe("8080");
    expect(waypoint.sni).toBe("8080.svc.ns.mesh.test");
    expect({ ...local, sni: undefined }).toEqual({ ...waypoint, sni: undefined });
    expect(local.common_tls_context.tls_certificate_sds_secret_configs[0].name).toBe(WEB);
    expect(local.common_tls_context.alpn_protocols).toEqual(["h2"]);
    expect(local.common_tls_context.combined_validation_context).toEqual({
      default_validation_context: { match_typed_subject_alt_names: [{ san_type: "URI", matcher: { exact: "spiffe://td.test/ns/ns/sa/svc" } }] },
      validation_context_sds_secret_config: { name: "spiffe://td.test", sds_config: { ads: {}, resource_api_version: "V3" } },
    });
  });

  test("a TCP port has no ALPN and no HTTP/2 protocol options", () => {
    const tcp = cluster({ eastWestWaypoint: "cross-cluster" }, pods, "svc.ns.mesh.test:9000");
    expect(tcp.transport_socket_matches[0].transport_socket.typed_config.common_tls_context.alpn_protocols).toBeUndefined();
    expect(tcp.typed_extension_protocol_options).toBeUndefined();
    expect(cluster({ eastWestWaypoint: "cross-cluster" }).typed_extension_protocol_options).toEqual({
      "envoy.extensions.upstreams.http.v3.HttpProtocolOptions": {
        "@type": "type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
        explicit_http_config: { http2_protocol_options: { connection_keepalive: { interval: "10s", timeout: "5s", interval_jitter: { value: 15 } } } },
      },
    });
  });

  test("EDS comes from ADS by default, or from a named gRPC cluster", () => {
    expect(cluster({}).eds_cluster_config).toEqual({ eds_config: { ads: {}, resource_api_version: "V3" }, service_name: "svc.ns.mesh.test:8080" });
    expect(cluster({ eds: { grpcCluster: "xds" } }).eds_cluster_config.eds_config).toEqual({
      api_config_source: { api_type: "GRPC", grpc_services: [{ envoy_grpc: { cluster_name: "xds" } }], transport_api_version: "V3" },
      resource_api_version: "V3",
    });
  });
});

describe("sockets mode: aggregate socket selection", () => {
  test("an aggregate over |local and |waypoint halves, each with one variant and the per-source level", () => {
    const result = compileNode(snapshot(), localNode("home", "h1", "10.1.0.1", pods), {
      ...SOCKETS,
      eastWestWaypoint: "cross-cluster",
      socketSelection: "aggregate",
    });
    const byName = new Map(result.clusters.map((c) => [c.name, renderResource("clusters", c) as any]));
    expect(byName.get("svc.ns.mesh.test:8080")).toEqual({
      "@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster",
      name: "svc.ns.mesh.test:8080",
      alt_stat_name: "outbound_svc_ns_8080",
      lb_policy: "CLUSTER_PROVIDED",
      cluster_type: {
        name: "envoy.clusters.aggregate",
        typed_config: {
          "@type": "type.googleapis.com/envoy.extensions.clusters.aggregate.v3.ClusterConfig",
          clusters: ["svc.ns.mesh.test:8080|local", "svc.ns.mesh.test:8080|waypoint"],
        },
      },
    });
    const waypointHalf = byName.get("svc.ns.mesh.test:8080|waypoint");
    expect(waypointHalf.transport_socket_matcher).toEqual(perSource("waypoint"));
    expect(waypointHalf.transport_socket_matches.map((m: any) => m.transport_socket.typed_config.sni)).toEqual(Array(3).fill("8080.svc.ns.mesh.test"));
    const assignments = new Map(result.endpoints.map((a) => [a.cluster_name, a]));
    expect(assignments.get("svc.ns.mesh.test:8080|local")!.endpoints![0]!.lb_endpoints!).toHaveLength(1);
    expect(assignments.get("svc.ns.mesh.test:8080|waypoint")!.endpoints![0]!.lb_endpoints![0]!.endpoint!.address!.socket_address!.address).toBe("10.2.0.1");
  });

  test("with the waypoint off the aggregate has only its local half", () => {
    const result = compileNode(snapshot(), localNode("home", "h1", "10.1.0.1", pods), { ...SOCKETS, socketSelection: "aggregate" });
    expect(result.clusters.map((c) => c.name)).toEqual([
      "svc.ns.mesh.test:8080",
      "svc.ns.mesh.test:8080|local",
      "svc.ns.mesh.test:9000",
      "svc.ns.mesh.test:9000|local",
    ]);
  });
});

describe("selector mode (the default): clusters do not depend on the node's pods", () => {
  const SELECTOR = { sourceIdentity: "selector" } as const;
  const selectorCluster = (options: object, hosted = pods) => cluster({ ...SELECTOR, ...options }, hosted);
  const selector = (socket: any) => socket.typed_config.common_tls_context.custom_tls_certificate_selector;

  test("two sockets, local and waypoint, chosen by the endpoint's waypoint label alone", () => {
    const rendered = selectorCluster({ eastWestWaypoint: "cross-cluster" });
    expect(rendered.transport_socket_matches.map((m: any) => [m.name, m.transport_socket.typed_config.sni])).toEqual([
      ["local", "8080"],
      ["waypoint", "8080.svc.ns.mesh.test"],
    ]);
    expect(rendered.transport_socket_matcher).toEqual({
      matcher_tree: { input: waypointLabel, exact_match_map: { map: { true: action("waypoint") } } },
      on_no_match: action("local"),
    });
    expect(rendered.transport_socket).toBeUndefined();
    expect(rendered.connection_pool_per_downstream_connection).toBeUndefined();
    const [local, waypoint] = rendered.transport_socket_matches.map((m: any) => m.transport_socket.typed_config);
    expect({ ...local, sni: undefined }).toEqual({ ...waypoint, sni: undefined });
  });

  test("each socket picks the source's certificate per connection: the stamped identity, else the node's (prefetched); no session resumption", () => {
    const tls = selectorCluster({ eastWestWaypoint: "cross-cluster" }).transport_socket_matches[0].transport_socket.typed_config;
    expect(tls.max_session_keys).toBe(0);
    expect(tls.common_tls_context.tls_certificate_sds_secret_configs).toBeUndefined();
    expect(tls.common_tls_context.custom_tls_certificate_selector).toEqual({
      name: "envoy.tls.certificate_selectors.on_demand_secret",
      typed_config: {
        "@type": "type.googleapis.com/envoy.extensions.transport_sockets.tls.cert_selectors.on_demand_secret.v3.Config",
        config_source: {
          api_config_source: { api_type: "GRPC", grpc_services: [{ envoy_grpc: { cluster_name: "sds_grpc" } }], transport_api_version: "V3" },
          resource_api_version: "V3",
        },
        certificate_mapper: {
          name: "envoy.tls.upstream_certificate_mappers.filter_state_override",
          typed_config: {
            "@type": "type.googleapis.com/envoy.extensions.transport_sockets.tls.cert_mappers.filter_state_override.v3.Config",
            default_value: NODE,
          },
        },
        prefetch_secret_names: [NODE],
      },
    });
  });

  test("the selector's SDS stream is its own gRPC cluster: selectorSds, else a gRPC sds cluster — never ADS", () => {
    const clusterOf = (options: object) =>
      selector(selectorCluster(options).transport_socket).typed_config.config_source.api_config_source.grpc_services[0].envoy_grpc.cluster_name;
    expect(clusterOf({ selectorSds: "spire_agent" })).toBe("spire_agent");
    expect(clusterOf({ sds: { grpcCluster: "spire" } })).toBe("spire");
    expect(clusterOf({ sds: "ads" })).toBe("sds_grpc");
  });

  test("waypoint off: one plain socket and no matcher, whatever the pods", () => {
    const plain = selectorCluster({ eastWestWaypoint: "off" });
    expect(plain.transport_socket_matcher).toBeUndefined();
    expect(plain.transport_socket_matches).toBeUndefined();
    expect(plain.transport_socket.typed_config.sni).toBe("8080");
  });

  test("no workload identity and no netns in any cluster, and nodes with the same dependencies share the same bytes and objects", () => {
    const index = indexSnapshot(snapshot());
    const compile = (hosted: typeof pods) =>
      compileNode(index, localNode("home", "h1", "10.1.0.1", hosted), { ...SELECTOR, eastWestWaypoint: "cross-cluster" });
    const [busy, other, empty] = [compile(pods), compile([pods[2]!]), compile([])];
    const outbound = (result: typeof busy) => result.clusters.filter((c) => c.name!.startsWith("svc."));
    const text = JSON.stringify(outbound(busy).map((c) => renderResource("clusters", c)));
    for (const forbidden of [WEB, JOB, "/run/netns/"]) expect(text).not.toContain(forbidden);
    for (const result of [other, empty]) {
      expect(outbound(result).map((c) => Cluster.encode(c).finish())).toEqual(outbound(busy).map((c) => Cluster.encode(c).finish()));
      for (const [i, c] of outbound(result).entries()) expect(c).toBe(outbound(busy)[i]);
    }
  });

  test("aggregate: each half is one plain socket with its variant's SNI", () => {
    const result = compileNode(snapshot(), localNode("home", "h1", "10.1.0.1", pods), {
      ...SELECTOR,
      eastWestWaypoint: "cross-cluster",
      socketSelection: "aggregate",
    });
    const half = (name: string) =>
      renderResource(
        "clusters",
        result.clusters.find((c) => c.name === name),
      ) as any;
    for (const [name, sni] of [
      ["svc.ns.mesh.test:8080|local", "8080"],
      ["svc.ns.mesh.test:8080|waypoint", "8080.svc.ns.mesh.test"],
    ]) {
      expect(half(name!).transport_socket_matcher).toBeUndefined();
      expect(half(name!).transport_socket.typed_config.sni).toBe(sni);
      expect(selector(half(name!).transport_socket).typed_config.certificate_mapper.typed_config.default_value).toBe(NODE);
    }
  });
});

describe("sockets mode: connection pools never cross sources", () => {
  test("a source-dependent cluster has a pool per downstream connection, no session resumption and a node-identity TLS fallback", () => {
    const rendered = cluster({ eastWestWaypoint: "cross-cluster" });
    expect(rendered.connection_pool_per_downstream_connection).toBe(true);
    expect(rendered.transport_socket_matches.every((m: any) => m.transport_socket.typed_config.max_session_keys === 0)).toBe(true);
    const fallback = rendered.transport_socket.typed_config;
    expect([fallback.sni, fallback.common_tls_context.tls_certificate_sds_secret_configs[0].name]).toEqual(["8080", NODE]);
  });

  test("without hosted pods the socket does not depend on the source: shared pools and resumption stay", () => {
    const rendered = cluster({ eastWestWaypoint: "cross-cluster" }, []);
    expect(rendered.connection_pool_per_downstream_connection).toBeUndefined();
    expect(rendered.transport_socket_matches.map((m: any) => m.transport_socket.typed_config.max_session_keys)).toEqual([undefined, undefined]);
  });
});

describe("federated trust", () => {
  test("the SPIFFE validator with the watched bundle map, every trust domain listed, and pins in each destination's own trust domain", () => {
    const federated = mesh({
      mesh: {
        meshDomain: "mesh.test",
        trust: {
          mode: "federated",
          trustDomains: [
            { name: "home.td", clusters: ["home"] },
            { name: "away.td", clusters: ["away"] },
          ],
          bundles: { filename: "/run/spire/bundles.spiffe" },
        },
      },
      services: {
        "ns/svc": [
          endpoint({ cluster: "home", ip: "10.244.0.5", node: "h1" }),
          endpoint({ cluster: "away", ip: "10.244.0.5", node: "a1", nodeIp: "10.2.0.1" }),
        ],
      },
    });
    const result = compileNode(
      federated,
      { ...localNode("home", "h1", "10.1.0.1"), trustDomain: "home.td", spiffeId: "spiffe://home.td/ns/aether-system/sa/aether-node" },
      {},
    );
    const tls = (renderResource("clusters", result.clusters[0]) as any).transport_socket.typed_config;
    expect(tls.common_tls_context.validation_context).toEqual({
      custom_validator_config: {
        name: "envoy.tls.cert_validator.spiffe",
        typed_config: {
          "@type": "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.SPIFFECertValidatorConfig",
          trust_domains: [{ name: "away.td" }, { name: "home.td" }],
          trust_bundles: { filename: "/run/spire/bundles.spiffe" },
        },
      },
      match_typed_subject_alt_names: [
        { san_type: "URI", matcher: { exact: "spiffe://away.td/ns/ns/sa/svc" } },
        { san_type: "URI", matcher: { exact: "spiffe://home.td/ns/ns/sa/svc" } },
      ],
    });
  });

  test("a node whose trust domain is not its cluster's is refused", () => {
    expect(() => compileNode(snapshot(), { ...localNode("home", "h1", "10.1.0.1"), trustDomain: "other.td" }, {})).toThrow(
      /trustDomain: other.td is not cluster home's trust domain td.test/,
    );
  });
});
