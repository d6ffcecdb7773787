/**
 * The etcd registry layout (README, "Serving from etcd"), under a prefix (default `/aether/v1`):
 *
 *   <prefix>/mesh                                                           mesh settings, JSON
 *   <prefix>/regions/<region>/clusters/<cluster>/nodes/<node>               node status, JSON
 *   <prefix>/regions/<region>/clusters/<cluster>/ns/<ns>/services/<svc>/endpoints/<ip>
 *                                                                           binary aether.registry.v1.ServiceEndpoint
 *
 * The key names the endpoint's cluster, namespace, service and IP; the record must agree.
 */
import { decodeServiceEndpoint } from "../model/registry.js";
import type { ServiceKey } from "../naming.js";

/** The etcd key prefix of the registry when none is given. */
export const DEFAULT_ETCD_PREFIX = "/aether/v1";

export type RegistryKey =
  | { readonly kind: "mesh" }
  | { readonly kind: "node"; readonly region: string; readonly cluster: string; readonly node: string }
  | { readonly kind: "endpoint"; readonly region: string; readonly cluster: string; readonly service: ServiceKey; readonly ip: string };

/** What a key under the prefix holds, or undefined when it is not part of the layout. */
export function parseRegistryKey(prefix: string, key: string): RegistryKey | undefined {
  if (!key.startsWith(`${prefix}/`)) return undefined;
  const parts = key.slice(prefix.length + 1).split("/");
  if (parts.length === 1 && parts[0] === "mesh") return { kind: "mesh" };
  if (parts[0] !== "regions" || parts[2] !== "clusters" || parts.some((part) => part === "")) return undefined;
  const [, region, , cluster] = parts as [string, string, string, string];
  if (parts.length === 6 && parts[4] === "nodes") return { kind: "node", region, cluster, node: parts[5]! };
  if (parts.length === 10 && parts[4] === "ns" && parts[6] === "services" && parts[8] === "endpoints") {
    return { kind: "endpoint", region, cluster, service: `${parts[5]}/${parts[7]}` as ServiceKey, ip: parts[9]! };
  }
  return undefined;
}

/** The key of an endpoint record. */
export function endpointKey(prefix: string, where: { region: string; cluster: string; namespace: string; service: string; ip: string }): string {
  return `${prefix}/regions/${where.region}/clusters/${where.cluster}/ns/${where.namespace}/services/${where.service}/endpoints/${where.ip}`;
}

/** The key of a node's status. */
export function nodeStatusKey(prefix: string, where: { region: string; cluster: string; node: string }): string {
  return `${prefix}/regions/${where.region}/clusters/${where.cluster}/nodes/${where.node}`;
}

/** Where an endpoint record disagrees with its key ("" when it agrees). */
export function recordKeyMismatch(key: Extract<RegistryKey, { kind: "endpoint" }>, bytes: Uint8Array): string {
  let record: ReturnType<typeof decodeServiceEndpoint>;
  try {
    record = decodeServiceEndpoint(bytes);
  } catch (error) {
    return `not a binary ServiceEndpoint (${(error as Error).message})`;
  }
  const namespace = key.service.slice(0, key.service.indexOf("/"));
  const problems: string[] = [];
  if (record.clusterName !== key.cluster) problems.push(`clusterName "${record.clusterName}" is not the key's cluster "${key.cluster}"`);
  if (record.kubernetesMetadata?.namespace && record.kubernetesMetadata.namespace !== namespace) {
    problems.push(`kubernetesMetadata.namespace "${record.kubernetesMetadata.namespace}" is not the key's namespace "${namespace}"`);
  }
  if (record.ip !== key.ip) problems.push(`ip "${record.ip}" is not the key's "${key.ip}"`);
  if (record.locality?.region && record.locality.region !== key.region)
    problems.push(`locality.region "${record.locality.region}" is not the key's region "${key.region}"`);
  return problems.join("; ");
}
