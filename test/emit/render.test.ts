import { describe, expect, test } from "vitest";
import { type Cluster, Cluster_LbPolicy } from "../../gen/envoy/config/cluster/v3/cluster.js";
import { HealthStatus } from "../../gen/envoy/config/core/v3/health_check.js";
import type { LbEndpoint } from "../../gen/envoy/config/endpoint/v3/endpoint_components.js";
import { TcpProxy } from "../../gen/envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy.js";
import type { Any } from "../../gen/google/protobuf/any.js";
import { compileNode } from "../../src/compile/compile-node.js";
import { RenderError, renderAny, renderMessage } from "../../src/emit/render.js";
import { renderResource } from "../../src/emit/text.js";
import { pack, typeUrl } from "../../src/envoy/any.js";
import { TCP_PROXY } from "../../src/envoy/types.js";
import { localNodeFrom } from "../../src/model/node.js";
import { parseSnapshot } from "../../src/model/snapshot.js";
import { RESOURCE_CODECS } from "../support/codecs.js";
import { meshDocument } from "../support/fixtures.js";

const CLUSTER = "envoy.config.cluster.v3.Cluster";
const LB_ENDPOINT = "envoy.config.endpoint.v3.LbEndpoint";

describe("renderMessage", () => {
  test("Durations render as seconds, and a zero Duration is kept (it is set, unlike a zero scalar)", () => {
    expect(renderMessage(CLUSTER, { connect_timeout: { seconds: 1, nanos: 500_000_000 } } satisfies Cluster)).toEqual({ connect_timeout: "1.5s" });
    expect(renderMessage(CLUSTER, { connect_timeout: { seconds: 0, nanos: 0 } } satisfies Cluster)).toEqual({ connect_timeout: "0s" });
  });

  // Integer arithmetic: a float count of nanoseconds would print "1e-9s" (which proto3 JSON parsers
  // reject) and lose the nanos of long durations.
  test("Durations keep every nanosecond in plain decimal notation", () => {
    expect(renderMessage(CLUSTER, { connect_timeout: { seconds: 0, nanos: 1 } } satisfies Cluster)).toEqual({ connect_timeout: "0.000000001s" });
    expect(renderMessage(CLUSTER, { connect_timeout: { seconds: 10_000_000, nanos: 1 } } satisfies Cluster)).toEqual({
      connect_timeout: "10000000.000000001s",
    });
    expect(renderMessage(CLUSTER, { connect_timeout: { seconds: 315_576_000_000, nanos: 999_999_999 } } satisfies Cluster)).toEqual({
      connect_timeout: "315576000000.999999999s",
    });
  });

  test("enums render by name; a value the descriptor does not know stays a number", () => {
    expect(renderMessage(LB_ENDPOINT, { health_status: HealthStatus.DRAINING } satisfies LbEndpoint)).toEqual({ health_status: "DRAINING" });
    expect(renderMessage(CLUSTER, { lb_policy: Cluster_LbPolicy.RING_HASH } satisfies Cluster)).toEqual({ lb_policy: "RING_HASH" });
    expect(renderMessage(LB_ENDPOINT, { health_status: 42 as HealthStatus })).toEqual({ health_status: 42 });
  });

  test("wrappers render as their bare value, and a wrapped default is kept (it is set)", () => {
    expect(renderMessage(LB_ENDPOINT, { load_balancing_weight: 7 } satisfies LbEndpoint)).toEqual({ load_balancing_weight: 7 });
    expect(renderMessage(LB_ENDPOINT, { load_balancing_weight: 0 } satisfies LbEndpoint)).toEqual({ load_balancing_weight: 0 });
    expect(renderMessage("envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext", { require_client_certificate: false })).toEqual({
      require_client_certificate: false,
    });
  });

  test("proto3 scalar defaults are omitted; an empty message is kept", () => {
    expect(renderMessage(CLUSTER, { name: "", lb_policy: Cluster_LbPolicy.ROUND_ROBIN, eds_cluster_config: {} } satisfies Cluster)).toEqual({
      eds_cluster_config: {},
    });
  });

  test("a map key such as __proto__ stays an ordinary key and leaves prototypes alone", () => {
    const metadata = { filter_metadata: JSON.parse('{"__proto__": {"polluted": "yes"}, "envoy.lb": {"zone": "a"}}') };
    const rendered = renderMessage("envoy.config.core.v3.Metadata", metadata).filter_metadata as Record<string, unknown>;
    expect(Object.keys(rendered)).toEqual(["__proto__", "envoy.lb"]);
    expect(Object.getPrototypeOf(rendered)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(rendered, "__proto__")?.value).toEqual({ polluted: "yes" });
    expect((rendered as { polluted?: unknown }).polluted).toBeUndefined();
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  });

  test("fields come out in field-number order, whatever the object's key order", () => {
    const cluster: Cluster = {
      transport_socket_matches: [{ name: "m" }],
      load_assignment: { cluster_name: "c" },
      transport_socket: { name: "t" },
      lb_policy: Cluster_LbPolicy.RING_HASH,
      connect_timeout: { seconds: 1, nanos: 0 },
      eds_cluster_config: { service_name: "s" },
      name: "c",
    };
    // name 1, eds_cluster_config 3, connect_timeout 4, lb_policy 6, transport_socket 24, load_assignment 33, transport_socket_matches 43
    expect(Object.keys(renderMessage(CLUSTER, cluster))).toEqual([
      "name",
      "eds_cluster_config",
      "connect_timeout",
      "lb_policy",
      "transport_socket",
      "load_assignment",
      "transport_socket_matches",
    ]);
  });
});

describe("renderAny", () => {
  const tcpProxy = { stat_prefix: "ew", cluster: "ew_ingress_checkout_team-a" };
  const expected = { "@type": typeUrl(TCP_PROXY.typeName), stat_prefix: "ew", cluster: "ew_ingress_checkout_team-a" };

  test("an Any packed by pack renders with its @type", () => {
    expect(renderAny(pack(TCP_PROXY, tcpProxy))).toEqual(expected);
  });

  test("an Any built by hand (e.g. decoded off the wire) is unpacked by decoding its bytes", () => {
    const any: Any = { type_url: typeUrl(TCP_PROXY.typeName), value: TcpProxy.encode(tcpProxy).finish() };
    expect(renderAny(any)).toEqual(expected);
  });

  test("an Any of an unknown type is an error, also inside a resource", () => {
    const unknown: Any = { type_url: "type.googleapis.com/example.v1.Unknown", value: new Uint8Array([8, 1]) };
    expect(() => renderAny(unknown)).toThrow(RenderError);
    expect(() => renderAny(unknown)).toThrow(/example\.v1\.Unknown/);
    expect(() => renderMessage(CLUSTER, { typed_extension_protocol_options: { x: unknown } } satisfies Cluster)).toThrow(RenderError);
  });
});

describe("a resource decoded off the wire", () => {
  const snapshot = parseSnapshot(meshDocument());
  // Every packed type the compiler emits: both identity modes, both kinds of access log.
  const cases = (["selector", "sockets"] as const).flatMap((sourceIdentity) =>
    (["stdout", { grpcCluster: "access-log-service" }] as const).map((accessLog) => ({ sourceIdentity, accessLog })),
  );

  test.each(cases)("renders as the compiled one does ($sourceIdentity, access logs $accessLog)", ({ sourceIdentity, accessLog }) => {
    const options = { eastWestWaypoint: "cross-cluster", sourceIdentity, settings: { accessLog } } as const;
    const result = compileNode(snapshot, localNodeFrom(snapshot, "east", "node-1"), options);
    for (const kind of ["clusters", "endpoints", "listeners"] as const) {
      const codec = RESOURCE_CODECS[kind];
      for (const resource of result[kind]) {
        const decoded = codec.decode(codec.encode(resource).finish());
        expect(renderResource(kind, decoded)).toEqual(renderResource(kind, resource));
      }
    }
  });
});
