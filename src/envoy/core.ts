/** Small builders for envoy.config.core.v3 messages. */
import type { Address } from "../../gen/envoy/config/core/v3/address.js";
import type { Locality, Metadata } from "../../gen/envoy/config/core/v3/base.js";
import { ApiConfigSource_ApiType, ApiVersion, type ConfigSource } from "../../gen/envoy/config/core/v3/config_source.js";
import type { ClusterLoadAssignment } from "../../gen/envoy/config/endpoint/v3/endpoint.js";
import type { LocalityLbEndpoints } from "../../gen/envoy/config/endpoint/v3/endpoint_components.js";
import type { ConfigSourceOption } from "../model/options.js";

/**
 * Each shape made by one literal: a property added to an object after its literal goes to a
 * backing store of its own, one more object per address (kept with every listener and endpoint).
 */
export function socketAddress(ip: string, port: number, networkNamespace?: string): Address {
  const socket_address = networkNamespace ? { address: ip, port_value: port, network_namespace_filepath: networkNamespace } : { address: ip, port_value: port };
  return { socket_address };
}

/** An assignment of `groups`, or of none (one literal each, as `socketAddress`). */
export function loadAssignment(name: string, groups: LocalityLbEndpoints[]): ClusterLoadAssignment {
  return groups.length > 0 ? { cluster_name: name, endpoints: groups } : { cluster_name: name };
}

/**
 * `"10.0.0.1:15008"`, `"[fd00::1]:15008"`. Joined rather than concatenated: V8 makes a
 * concatenation of 13 characters or more a rope (two more objects per address, kept with every
 * planned endpoint), where `join` writes one flat string.
 */
export function hostPort(ip: string, port: number): string {
  return ip.includes(":") ? ["[", ip, "]:", port].join("") : [ip, port].join(":");
}

/** ADS, or a named gRPC cluster; always v3. */
export function configSource(option: ConfigSourceOption): ConfigSource {
  if (option === "ads") return { ads: {}, resource_api_version: ApiVersion.V3 };
  return {
    api_config_source: {
      api_type: ApiConfigSource_ApiType.GRPC,
      transport_api_version: ApiVersion.V3,
      grpc_services: [{ envoy_grpc: { cluster_name: option.grpcCluster } }],
    },
    resource_api_version: ApiVersion.V3,
  };
}

export function locality(region: string, zone: string): Locality | undefined {
  if (!region && !zone) return undefined;
  const result: Locality = {};
  if (region) result.region = region;
  if (zone) result.zone = zone;
  return result;
}

export const LB_METADATA_NAMESPACE = "envoy.lb";

/**
 * Metadata under `envoy.lb`. The namespace is written out as the literal's key (checked against
 * `LB_METADATA_NAMESPACE`): a computed key gave every such object a larger shape (56 bytes, not
 * 32), one per endpoint held with every view.
 */
export function lbMetadata(fields: Record<string, string>): Metadata {
  const filterMetadata = { "envoy.lb": fields } satisfies Record<typeof LB_METADATA_NAMESPACE, Record<string, string>>;
  return { filter_metadata: filterMetadata };
}
