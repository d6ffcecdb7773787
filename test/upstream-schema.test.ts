import protobuf from "protobufjs";
import { describe, expect, test } from "vitest";
import { Cluster, Cluster_DiscoveryType } from "../gen/envoy/config/cluster/v3/cluster.js";
import { ApiVersion } from "../gen/envoy/config/core/v3/config_source.js";
import { TlsInspector } from "../gen/envoy/extensions/filters/listener/tls_inspector/v3/tls_inspector.js";
import { TcpProxy } from "../gen/envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy.js";
import { FilterStateInput, TransportSocketNameAction } from "../gen/envoy/extensions/matching/common_inputs/transport_socket/v3/transport_socket_inputs.js";
import { UpstreamTlsContext } from "../gen/envoy/extensions/transport_sockets/tls/v3/tls.js";
import { pack } from "../src/envoy/any.js";
import { compareWithUpstream, declaredTypes, subsetRoot } from "./support/proto-subset.js";
import { checkAgainstUpstream, decodeUpstream, NEWER_THAN_COPY, renderingMismatch, upstreamProblems, upstreamRoot } from "./support/upstream-schema.js";

const ENVOY_TYPES = () => declaredTypes(subsetRoot()).filter((type) => !type.fullName.startsWith(".aether."));

describe("our proto subset declares exactly what upstream Envoy declares", () => {
  test("every message, field, enum value, number, type, label and oneof matches the upstream copy", () => {
    const upstream = upstreamRoot();
    const mismatches = ENVOY_TYPES().flatMap((type) => compareWithUpstream(type, upstream.lookup(type.fullName)));
    expect(mismatches).toEqual([]);
  });

  test("the only fields the upstream copy lacks are the listed newer ones", () => {
    const newer = NEWER_THAN_COPY.fields.map((f) => `${f.message}.${f.name} = ${f.id}`);
    expect(newer).toEqual([
      "envoy.config.cluster.v3.Cluster.transport_socket_matcher = 59",
      "envoy.config.core.v3.SocketAddress.network_namespace_filepath = 7",
      "envoy.extensions.transport_sockets.tls.v3.CommonTlsContext.custom_tls_certificate_selector = 16",
      "envoy.extensions.transport_sockets.tls.v3.SPIFFECertValidatorConfig.trust_bundles = 2",
      "envoy.type.tracing.v3.CustomTag.value = 6",
    ]);
    const packages = NEWER_THAN_COPY.sources.map((source) => /package ([\w.]+);/.exec(source)?.[1]);
    expect(packages).toEqual([
      "envoy.extensions.matching.common_inputs.transport_socket.v3",
      "envoy.extensions.transport_sockets.tls.cert_selectors.on_demand_secret.v3",
      "envoy.extensions.transport_sockets.tls.cert_mappers.filter_state_override.v3",
    ]);
  });

  test("changing any field number in proto/ makes the check fail", () => {
    const upstream = upstreamRoot();
    const fields = ENVOY_TYPES().flatMap((type) => (type instanceof protobuf.Type ? type.fieldsArray : []));
    expect(fields.length).toBeGreaterThan(100);
    const undetected = fields.filter((field) => {
      const original = field.id;
      field.id = original + 1;
      const caught = compareWithUpstream(field.parent as protobuf.Type, upstream.lookup(field.parent!.fullName)).length > 0;
      field.id = original;
      return !caught;
    });
    expect(undetected.map((f) => f.fullName)).toEqual([]);
  });
});

const ads = { ads: {}, resource_api_version: ApiVersion.V3 };
const INPUT_TYPE = "envoy.extensions.matching.common_inputs.transport_socket.v3";

/** A small outbound cluster of the shape the compiler emits: sockets plus a netns matcher. */
function sampleCluster(): any {
  const tls = pack(
    { typeName: "envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext", encode: UpstreamTlsContext.encode },
    {
      sni: "8080",
      common_tls_context: {
        alpn_protocols: ["h2"],
        tls_certificate_sds_secret_configs: [{ name: "spiffe://aether.internal/ns/team-a/sa/web", sds_config: ads }],
        combined_validation_context: {
          default_validation_context: {
            match_typed_subject_alt_names: [{ san_type: 3, matcher: { exact: "spiffe://aether.internal/ns/team-a/sa/pay" } }],
          },
          validation_context_sds_secret_config: { name: "spiffe://aether.internal", sds_config: ads },
        },
      },
    },
  );
  const action = pack({ typeName: `${INPUT_TYPE}.TransportSocketNameAction`, encode: TransportSocketNameAction.encode }, { name: "local|web" });
  return {
    name: "pay.team-a.mesh.aether:8080",
    type: Cluster_DiscoveryType.EDS,
    eds_cluster_config: { eds_config: ads, service_name: "pay.team-a.mesh.aether:8080" },
    transport_socket_matches: [{ name: "local|web", transport_socket: { name: "envoy.transport_sockets.tls", typed_config: tls } }],
    transport_socket_matcher: {
      matcher_tree: {
        input: {
          name: "envoy.matching.inputs.transport_socket_filter_state",
          typed_config: pack({ typeName: `${INPUT_TYPE}.FilterStateInput`, encode: FilterStateInput.encode }, { key: "envoy.network.network_namespace" }),
        },
        exact_match_map: { map: { "/var/run/netns/cni-1": { action: { name: "envoy.matching.action.transport_socket.name", typed_config: action } } } },
      },
      on_no_match: { action: { name: "envoy.matching.action.transport_socket.name", typed_config: action } },
    },
  };
}

function sampleListener(): any {
  return {
    name: "ew_tunnel",
    address: { socket_address: { address: "10.10.0.11", port_value: 15009, network_namespace_filepath: "/proc/1/ns/net" } },
    traffic_direction: 1,
    listener_filters: [
      {
        name: "envoy.filters.listener.tls_inspector",
        typed_config: pack({ typeName: "envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector", encode: TlsInspector.encode }, {}),
      },
    ],
    filter_chains: [
      {
        name: "ew_pay_team-a",
        filter_chain_match: { server_names: ["*.pay.team-a.mesh.aether"], transport_protocol: "tls" },
        filters: [
          {
            name: "envoy.filters.network.tcp_proxy",
            typed_config: pack(
              { typeName: "envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy", encode: TcpProxy.encode },
              { stat_prefix: "ew_pay_team-a", cluster: "ew_ingress_pay_team-a" },
            ),
          },
        ],
      },
    ],
  };
}

describe("valid resources pass", () => {
  test("an outbound cluster with a transport-socket matcher decodes identically upstream", () => {
    expect(upstreamProblems("envoy.config.cluster.v3.Cluster", sampleCluster())).toEqual([]);
  });

  test("a tunnel listener decodes identically upstream", () => {
    expect(upstreamProblems("envoy.config.listener.v3.Listener", sampleListener())).toEqual([]);
  });

  test("the upstream decoding is a real one: it sees the nested, Any-packed fields", () => {
    const check = checkAgainstUpstream("envoy.config.cluster.v3.Cluster", sampleCluster());
    expect(check.json).toMatchObject({
      transport_socket_matches: [
        { transport_socket: { typed_config: { "@type": "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext", sni: "8080" } } },
      ],
      transport_socket_matcher: { matcher_tree: { input: { typed_config: { key: "envoy.network.network_namespace" } } } },
    });
  });
});

describe("the check has teeth", () => {
  test("an empty name breaks a min_len rule", () => {
    expect(upstreamProblems("envoy.config.cluster.v3.Cluster", { ...sampleCluster(), name: "" })).toContain(
      'envoy.config.cluster.v3.Cluster.name: "" shorter than 1 characters',
    );
  });

  test("a port of 70000 breaks the port range", () => {
    const listener = sampleListener();
    listener.address.socket_address.port_value = 70000;
    expect(upstreamProblems("envoy.config.listener.v3.Listener", listener)).toContain(
      "envoy.config.listener.v3.Listener.address.socket_address.port_value: 70000 must be ≤ 65535",
    );
  });

  test("a wrong field number is caught by the decoding", () => {
    // Encode with our own schema, but with SocketAddress.port_value moved from 3 to 4 (named_port).
    const ours = subsetRoot();
    ours.lookupType("envoy.config.core.v3.SocketAddress").fields.port_value!.id = 4;
    const Listener = ours.lookupType("envoy.config.listener.v3.Listener");
    const bytes = Listener.encode(Listener.fromObject({ name: "x", address: { socket_address: { address: "10.0.0.1", port_value: 15009 } } })).finish();
    const report = decodeUpstream("envoy.config.listener.v3.Listener", bytes);
    expect(report.json).toEqual({ name: "x", address: { socket_address: { address: "10.0.0.1" } } });
    expect(report.unknown).toEqual(["envoy.config.listener.v3.Listener.address.socket_address.named_port: wire type 0 does not fit upstream's string field 4"]);
    expect(report.violations).toEqual(["envoy.config.listener.v3.Listener.address.socket_address: one of port_value, named_port is required"]);
  });

  test("a field number upstream does not know is reported as unknown", () => {
    const ours = subsetRoot();
    ours.lookupType("envoy.config.listener.v3.Listener").fields.stat_prefix!.id = 999;
    const Listener = ours.lookupType("envoy.config.listener.v3.Listener");
    const bytes = Listener.encode(
      Listener.fromObject({ name: "x", stat_prefix: "y", address: { socket_address: { address: "10.0.0.1", port_value: 1 } } }),
    ).finish();
    expect(decodeUpstream("envoy.config.listener.v3.Listener", bytes).unknown).toEqual([
      "envoy.config.listener.v3.Listener: field 999 is unknown to upstream envoy.config.listener.v3.Listener",
    ]);
  });

  test("an empty exact_match_map and a missing required oneof are violations", () => {
    const cluster = sampleCluster();
    cluster.transport_socket_matcher.matcher_tree.exact_match_map.map = {};
    cluster.transport_socket_matcher.on_no_match = {};
    const problems = upstreamProblems("envoy.config.cluster.v3.Cluster", cluster);
    expect(problems).toContain("envoy.config.cluster.v3.Cluster.transport_socket_matcher.matcher_tree.exact_match_map.map: needs at least 1 pairs");
    expect(problems).toContain("envoy.config.cluster.v3.Cluster.transport_socket_matcher.on_no_match: one of matcher, action is required");
  });

  test("an Any of a type upstream does not know is reported", () => {
    const cluster = sampleCluster();
    cluster.transport_socket_matches[0].transport_socket.typed_config = { type_url: "type.googleapis.com/example.Unknown", value: new Uint8Array() };
    expect(decodeUpstream("envoy.config.cluster.v3.Cluster", subsetCodec(cluster)).unknown).toEqual([
      "envoy.config.cluster.v3.Cluster.transport_socket_matches[0].transport_socket.typed_config: Any type type.googleapis.com/example.Unknown is unknown to upstream",
    ]);
  });

  test("a SAN matcher without a SAN type breaks upstream's not_in rule", () => {
    const cluster = sampleCluster();
    const tls = UpstreamTlsContext.decode(cluster.transport_socket_matches[0].transport_socket.typed_config.value);
    tls.common_tls_context!.combined_validation_context!.default_validation_context!.match_typed_subject_alt_names![0]!.san_type = 0;
    cluster.transport_socket_matches[0].transport_socket.typed_config = pack(
      { typeName: "envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext", encode: UpstreamTlsContext.encode },
      tls,
    );
    expect(upstreamProblems("envoy.config.cluster.v3.Cluster", cluster).join("\n")).toMatch(
      /match_typed_subject_alt_names\[0\]\.san_type: SAN_TYPE_UNSPECIFIED is not allowed/,
    );
  });

  test("a field moved onto another upstream field of the same wire type is a rendering mismatch", () => {
    // SocketAddress.address (2) encoded as field 5, which upstream calls resolver_name.
    const ours = subsetRoot();
    ours.lookupType("envoy.config.core.v3.SocketAddress").fields.address!.id = 5;
    const Address = ours.lookupType("envoy.config.core.v3.Address");
    const message = { socket_address: { address: "10.0.0.1", port_value: 15008 } };
    const upstream = decodeUpstream("envoy.config.core.v3.Address", Address.encode(Address.fromObject(message)).finish());
    expect(upstream.unknown).toEqual([]);
    expect(renderingMismatch("envoy.config.core.v3.Address", message, upstream.json)).toMatch(
      /upstream decodes\n {2}\{"socket_address":\{"port_value":15008,"resolver_name":"10\.0\.0\.1"\}\}\nbut we rendered/,
    );
  });
});

function subsetCodec(cluster: unknown): Uint8Array {
  return Cluster.encode(cluster as Cluster).finish();
}
