import { describe, expect, test } from "vitest";
import type { Bootstrap } from "../../gen/envoy/config/bootstrap/v3/bootstrap.js";
import { ApiConfigSource_ApiType, ApiVersion } from "../../gen/envoy/config/core/v3/config_source.js";
import { type CompileResult, compileNode } from "../../src/compile/compile-node.js";
import { renderBootstrap, toBootstrap } from "../../src/emit/bootstrap.js";
import { renderMessage } from "../../src/emit/render.js";
import type { OptionsInput } from "../../src/model/options.js";
import { caseModes, compileCase, loadCase } from "../support/cases.js";
import { upstreamProblems } from "../support/upstream-schema.js";

const BOOTSTRAP = "envoy.config.bootstrap.v3.Bootstrap";
const goldenCase = loadCase("flannel-cross-cluster");

function compileWith(options: OptionsInput): CompileResult {
  return compileNode(goldenCase.snapshot, goldenCase.node, { eastWestWaypoint: "cross-cluster", ...options });
}

const clusterNames = (bootstrap: Bootstrap) => bootstrap.static_resources!.clusters!.map((c) => c.name!);
const stub = (bootstrap: Bootstrap, name: string) => bootstrap.static_resources!.clusters!.find((c) => c.name === name);

/** What Envoy needs to open ADS to `cluster`: gRPC, v3, through that static cluster. */
const adsTo = (cluster: string) => ({
  ads_config: {
    api_type: ApiConfigSource_ApiType.GRPC,
    transport_api_version: ApiVersion.V3,
    grpc_services: [{ envoy_grpc: { cluster_name: cluster } }],
  },
});

describe("toBootstrap", () => {
  const result = compileCase(goldenCase, "selector");
  const bootstrap = toBootstrap(result);

  test("the node is <cluster>/<name> in its cluster and locality, as the control plane sees it", () => {
    expect(bootstrap.node).toEqual({ id: "east/node-1", cluster: "east", locality: { region: "eu-west-1", zone: "eu-west-1a" } });
  });

  test("a node without locality gets none (not an empty one)", () => {
    const placeless = toBootstrap({ ...result, node: { ...result.node, locality: { region: "", zone: "" } } });
    expect(placeless.node).toEqual({ id: "east/node-1", cluster: "east" });
  });

  test("static resources are every listener and cluster of the result, plus the ADS and certificate-selector SDS stubs, sorted by name", () => {
    expect(bootstrap.static_resources!.listeners).toEqual(result.listeners);
    const names = clusterNames(bootstrap);
    expect(names).toEqual([...result.clusters.map((c) => c.name!), "sds_grpc", "xds_cluster"].sort());
    expect(names).toEqual([...names].sort());
    for (const cluster of result.clusters) expect(stub(bootstrap, cluster.name!)).toBe(cluster);
  });

  test("ADS (the default EDS and SDS source) goes to a static HTTP/2 cluster at 127.0.0.1:18000", () => {
    expect(bootstrap.dynamic_resources).toEqual(adsTo("xds_cluster"));
    const xds = renderMessage("envoy.config.cluster.v3.Cluster", stub(bootstrap, "xds_cluster"));
    expect(xds).toMatchObject({
      load_assignment: { endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: "127.0.0.1", port_value: 18000 } } } }] }] },
      typed_extension_protocol_options: { "envoy.extensions.upstreams.http.v3.HttpProtocolOptions": { explicit_http_config: { http2_protocol_options: {} } } },
    });
    expect(xds).not.toHaveProperty("type"); // STATIC is the default
  });

  test("xdsCluster options name and place the ADS stub", () => {
    const custom = toBootstrap(result, { xdsCluster: { name: "control_plane", address: "10.0.0.5", port: 9901 } });
    expect(custom.dynamic_resources).toEqual(adsTo("control_plane"));
    expect(clusterNames(custom)).not.toContain("xds_cluster");
    expect(stub(custom, "control_plane")!.load_assignment!.endpoints![0]!.lb_endpoints![0]!.endpoint!.address).toEqual({
      socket_address: { address: "10.0.0.5", port_value: 9901 },
    });
  });

  test("SDS from a gRPC cluster gets its own stub, while EDS still uses ADS", () => {
    const withSpire = toBootstrap(compileWith({ sds: { grpcCluster: "spire_agent" } }));
    expect(clusterNames(withSpire)).toContain("spire_agent");
    expect(clusterNames(withSpire)).toContain("xds_cluster");
    expect(withSpire.dynamic_resources).toEqual(adsTo("xds_cluster"));
  });

  test("without ADS there is no ADS config and no ADS stub; a gRPC cluster named twice gets one stub", () => {
    const noAdsResult = compileWith({ sds: { grpcCluster: "spire_agent" }, eds: { grpcCluster: "eds_server" } });
    const noAds = toBootstrap(noAdsResult);
    expect(noAds.dynamic_resources).toBeUndefined();
    // The certificate selector shares the gRPC SDS cluster.
    expect(clusterNames(noAds)).toEqual([...noAdsResult.clusters.map((c) => c.name!), "eds_server", "spire_agent"].sort());
    const shared = toBootstrap(compileWith({ sds: { grpcCluster: "sidecar" }, eds: { grpcCluster: "sidecar" } }));
    expect(clusterNames(shared).filter((name) => name === "sidecar")).toHaveLength(1);
  });

  test("the certificate selector's SDS cluster gets a stub in selector mode only", () => {
    expect(clusterNames(toBootstrap(compileWith({ selectorSds: "spire_selector" })))).toContain("spire_selector");
    expect(clusterNames(toBootstrap(compileWith({ sourceIdentity: "sockets", selectorSds: "spire_selector" })))).not.toContain("spire_selector");
  });

  test("resources: ads — nothing inline: CDS and LDS from ADS, only the ADS and SDS clusters static, SDS at the SPIRE agent", () => {
    const served = toBootstrap(compileWith({ sds: { grpcCluster: "spire_agent" } }), {
      resources: "ads",
      xdsCluster: { address: "10.0.0.5", port: 18000 },
      sdsCluster: { address: "127.0.0.1", port: 8081 },
    });
    expect(served.static_resources!.listeners).toBeUndefined();
    expect(clusterNames(served)).toEqual(["spire_agent", "xds_cluster"]);
    expect(served.dynamic_resources).toEqual({
      ...adsTo("xds_cluster"),
      cds_config: { ads: {}, resource_api_version: ApiVersion.V3 },
      lds_config: { ads: {}, resource_api_version: ApiVersion.V3 },
    });
    const address = (name: string) => stub(served, name)!.load_assignment!.endpoints![0]!.lb_endpoints![0]!.endpoint!.address;
    expect(address("xds_cluster")).toEqual({ socket_address: { address: "10.0.0.5", port_value: 18000 } });
    expect(address("spire_agent")).toEqual({ socket_address: { address: "127.0.0.1", port_value: 8081 } });
    expect(upstreamProblems(BOOTSTRAP, served)).toEqual([]);
  });

  test("with SDS from a gRPC cluster, the bootstrap passes the upstream schema check", () => {
    expect(upstreamProblems(BOOTSTRAP, toBootstrap(compileWith({ sds: { grpcCluster: "spire_agent" } })))).toEqual([]);
  });

  test.each(caseModes())("the bootstrap of golden case %s (%s) passes the upstream schema check", (name, mode) => {
    expect(upstreamProblems(BOOTSTRAP, toBootstrap(compileCase(loadCase(name), mode)))).toEqual([]);
  });
});

describe("renderBootstrap", () => {
  test("renders canonical JSON: enums by name, Anys unpacked, the node's resources as rendered alone", () => {
    const result = compileCase(goldenCase, "selector");
    const rendered = renderBootstrap(toBootstrap(result)) as any;
    expect(rendered.dynamic_resources.ads_config).toEqual({
      api_type: "GRPC",
      transport_api_version: "V3",
      grpc_services: [{ envoy_grpc: { cluster_name: "xds_cluster" } }],
    });
    expect(rendered.static_resources.listeners).toEqual(result.listeners.map((l) => renderMessage("envoy.config.listener.v3.Listener", l)));
    expect(JSON.stringify(rendered)).toContain('"@type":"type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions"');
  });
});
