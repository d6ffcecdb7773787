/**
 * A bootstrap for `envoy --mode validate`: the node's real listeners and clusters as static
 * resources, so Envoy itself checks what aether-xds compiled. The EDS and SDS sources those
 * resources name (ADS, or `{grpcCluster}` in the options) must exist as static clusters for Envoy
 * to accept them, so the bootstrap adds a stub for each; the user points the stubs at their control
 * plane and SPIRE agent (`xdsCluster` options, or by editing the stub's address).
 */
import type { Bootstrap } from "../../gen/envoy/config/bootstrap/v3/bootstrap.js";
import type { Cluster } from "../../gen/envoy/config/cluster/v3/cluster.js";
import type { Node } from "../../gen/envoy/config/core/v3/base.js";
import { type ApiConfigSource, ApiConfigSource_ApiType, ApiVersion } from "../../gen/envoy/config/core/v3/config_source.js";
import { locality } from "../envoy/core.js";
import { httpProtocolOptions, staticCluster } from "../envoy/listener.js";
import type { ResourceSet } from "../envoy/resources.js";
import type { ConfigSourceOption, Options } from "../model/options.js";
import { compareText } from "../util/order.js";
import { type JsonValue, renderMessage } from "./render.js";

/** Where the bootstrap's stub clusters point: the control plane's ADS address (default `127.0.0.1:18000`). */
export interface BootstrapOptions {
  /** The ADS server; also the address of every `{grpcCluster}` stub unless `sdsCluster` is given. */
  readonly xdsCluster?: { readonly name?: string; readonly address?: string; readonly port?: number };
  /**
   * Where the SDS clusters (the `sds` option's `grpcCluster` and the certificate selector's
   * `selectorSds`) point: the SPIRE agent, never the ADS server, which serves no secrets. Default:
   * the `xdsCluster` address.
   */
  readonly sdsCluster?: { readonly address: string; readonly port: number };
  /**
   * `static` (default): the node's listeners and clusters inline, for `envoy --mode validate`.
   * `ads`: none inline — CDS and LDS come over ADS (`aether-xds serve`, or `aether-xds/server`),
   * and only the ADS and SDS clusters are static: the bootstrap an Envoy runs with.
   */
  readonly resources?: "static" | "ads";
}

/** A node's resources, with what the bootstrap needs to know about the node and how it was compiled. */
export interface BootstrapInput extends ResourceSet {
  readonly node: { readonly cluster: string; readonly name: string; readonly locality: { readonly region: string; readonly zone: string } };
  readonly options: Pick<Options, "sds" | "eds" | "sourceIdentity" | "selectorSds"> & { readonly settings?: Pick<Options["settings"], "accessLog"> };
}

interface StubTarget {
  readonly name: string;
  readonly address: string;
  readonly port: number;
}

/**
 * A node's compile result as an Envoy bootstrap: its listeners and clusters as static resources,
 * ADS as the dynamic source, and a stub static cluster for ADS and for every gRPC source the
 * options name, so `envoy --mode validate` accepts it as it is.
 */
export function toBootstrap(result: BootstrapInput, options: BootstrapOptions = {}): Bootstrap {
  const xds: StubTarget = {
    name: options.xdsCluster?.name ?? "xds_cluster",
    address: options.xdsCluster?.address ?? "127.0.0.1",
    port: options.xdsCluster?.port ?? 18000,
  };
  const sds = options.sdsCluster ?? xds;
  if (options.resources === "ads") {
    return {
      node: bootstrapNode(result.node),
      static_resources: { clusters: stubClusters(result.options, true, xds, sds).sort((a, b) => compareText(a.name!, b.name!)) },
      dynamic_resources: { ads_config: adsConfig(xds.name), cds_config: FROM_ADS, lds_config: FROM_ADS },
    };
  }
  const ads = usesAds(result.options);
  const clusters = [...result.clusters, ...stubClusters(result.options, ads, xds, sds)];
  const bootstrap: Bootstrap = {
    node: bootstrapNode(result.node),
    static_resources: { listeners: [...result.listeners], clusters: clusters.sort((a, b) => compareText(a.name!, b.name!)) },
  };
  if (ads) bootstrap.dynamic_resources = { ads_config: adsConfig(xds.name) };
  return bootstrap;
}

/** A bootstrap as Envoy's canonical JSON, every Any unpacked: write it as JSON or YAML for `envoy -c`. */
export function renderBootstrap(bootstrap: Bootstrap): { [key: string]: JsonValue } {
  return renderMessage("envoy.config.bootstrap.v3.Bootstrap", bootstrap);
}

function usesAds(options: BootstrapInput["options"]): boolean {
  return options.sds === "ads" || options.eds === "ads";
}

/** The node identity the control plane sees: `<cluster>/<name>`. */
function bootstrapNode(node: BootstrapInput["node"]): Node {
  const result: Node = { id: `${node.cluster}/${node.name}`, cluster: node.cluster };
  const where = locality(node.locality.region, node.locality.zone);
  if (where) result.locality = where;
  return result;
}

const FROM_ADS = { ads: {}, resource_api_version: ApiVersion.V3 };

/**
 * HTTP/2 (gRPC) static clusters: the ADS server, a gRPC EDS source and the access-log service at
 * the xDS address, the SDS sources (the certificate selector's own stream among them, never the
 * ADS one) at `sds`. Sorted later.
 */
function stubClusters(options: BootstrapInput["options"], ads: boolean, xds: StubTarget, sds: Omit<StubTarget, "name">): Cluster[] {
  const targets = new Map<string, Omit<StubTarget, "name">>();
  if (ads) targets.set(xds.name, xds);
  const eds = grpcClusterOf(options.eds);
  if (eds) targets.set(eds, xds);
  const accessLog = options.settings?.accessLog;
  if (typeof accessLog === "object") targets.set(accessLog.grpcCluster, xds);
  const sdsCluster = grpcClusterOf(options.sds);
  if (sdsCluster) targets.set(sdsCluster, sds);
  if (options.sourceIdentity === "selector") targets.set(options.selectorSds, sds);
  return [...targets].map(([name, target]) => ({
    ...staticCluster(name, target.address, target.port),
    typed_extension_protocol_options: httpProtocolOptions("http2"),
  }));
}

function grpcClusterOf(source: ConfigSourceOption): string | undefined {
  return source === "ads" ? undefined : source.grpcCluster;
}

function adsConfig(clusterName: string): ApiConfigSource {
  return {
    api_type: ApiConfigSource_ApiType.GRPC,
    transport_api_version: ApiVersion.V3,
    grpc_services: [{ envoy_grpc: { cluster_name: clusterName } }],
  };
}
