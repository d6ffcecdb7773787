/**
 * The production settings a traced path goes through (README, "Production settings"), read from
 * the compiled resources themselves: the source's outbound cluster (timeouts, breaker, failover,
 * keepalive), its egress route or capture chain (retries, idle timeout, access log), and each
 * landing pod's application cluster (the protocol spoken to the app) and inbound chain.
 */
import type { Cluster } from "../../gen/envoy/config/cluster/v3/cluster.js";
import type { Listener } from "../../gen/envoy/config/listener/v3/listener.js";
import type { HttpConnectionManager } from "../../gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.js";
import type { TcpProxy } from "../../gen/envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy.js";
import type { HttpProtocolOptions } from "../../gen/envoy/extensions/upstreams/http/v3/http_protocol_options.js";
import type { Duration } from "../../gen/google/protobuf/duration.js";
import { unpackAny } from "../envoy/schema.js";
import { EXTENSION } from "../envoy/types.js";
import { hostedPodName } from "../model/node.js";
import { appClusterName, inboundListenerName, subClusterName } from "../naming.js";
import { compareText } from "../util/order.js";
import type { CompiledNode, MeshView } from "./compiled-mesh.js";
import type { PathReport } from "./path.js";

const ENVOY_DEFAULT = "Envoy's default";

/** Lines describing the settings on the path; empty when the source was not compiled. */
export function pathSettingsLines(mesh: MeshView, report: PathReport): string[] {
  const node = mesh.node(report.source.node);
  if (!node) return [];
  const lines = ["settings on this path:"];
  const clusters = node.result.clusters;
  const outbound = clusters.find((c) => c.name === report.cluster);
  // An aggregate has no endpoints of its own: its local half carries the settings.
  const half = outbound?.cluster_type ? clusters.find((c) => c.name === subClusterName(report.cluster, "local")) : outbound;
  if (half) lines.push(`  ${report.cluster}: ${clusterLine(half)}`);
  if (report.source.netns) {
    for (const listener of node.result.listeners.filter((l) => l.address?.socket_address?.network_namespace_filepath === report.source.netns)) {
      const line = entryLine(listener, report.cluster);
      if (line) lines.push(`  ${listener.name}: ${line}`);
    }
  }
  for (const landing of report.landings) {
    const ref = { namespace: landing.pod.namespace, pod: landing.pod.name };
    const hosts = hostsOf(mesh, landing.pod);
    const app = findIn(mesh, hosts, (n) => n.result.clusters.find((c) => c.name === appClusterName(ref, report.target.port)));
    const inbound = findIn(mesh, hosts, (n) => n.result.listeners.find((l) => l.name === inboundListenerName(ref)));
    const name = `${landing.pod.cluster}/${landing.pod.namespace}/${landing.pod.name}`;
    if (app) lines.push(`  to the app on ${name}: ${appProtocol(app)}; ${clusterLine(app)}${inbound && logs(inbound) ? "; destination access log" : ""}`);
  }
  return lines;
}

function clusterLine(cluster: Cluster): string {
  const parts = [`connect timeout ${cluster.connect_timeout ? seconds(cluster.connect_timeout) : `${ENVOY_DEFAULT} (5s)`}`];
  const limits = cluster.circuit_breakers?.thresholds?.[0];
  parts.push(
    limits
      ? `circuit breaker ${[
          ["connections", limits.max_connections],
          ["pending", limits.max_pending_requests],
          ["requests", limits.max_requests],
          ["retries", limits.max_retries],
        ]
          .filter(([, value]) => value !== undefined)
          .map(([label, value]) => `${label} ${value}`)
          .join(", ")}`
      : `circuit breaker ${ENVOY_DEFAULT} (1024)`,
  );
  if (cluster.type !== undefined || cluster.eds_cluster_config) {
    const panic = cluster.common_lb_config?.healthy_panic_threshold;
    parts.push(`panic threshold ${panic ? `${panic.value ?? 0}%` : `${ENVOY_DEFAULT} (50%)`}`);
    const outlier = cluster.outlier_detection;
    parts.push(
      outlier
        ? `outlier detection (${outlier.consecutive_local_origin_failure ?? "default"} local-origin failures, ${outlier.consecutive_5xx ?? "default"} 5xx)`
        : "no outlier detection",
    );
  }
  const keepalive = httpOptions(cluster)?.explicit_http_config?.http2_protocol_options?.connection_keepalive;
  if (keepalive)
    parts.push(
      `HTTP/2 keepalive every ${keepalive.interval ? seconds(keepalive.interval) : "?"} (timeout ${keepalive.timeout ? seconds(keepalive.timeout) : "?"})`,
    );
  return parts.join("; ");
}

/** The egress or VIP capture route to the cluster (retries), or the capture chain proxying a TCP port to it (idle timeout). */
function entryLine(listener: Listener, cluster: string): string | undefined {
  const capture = listener.listener_filters?.some((filter) => filter.name === EXTENSION.originalDst) ?? false;
  for (const chain of listener.filter_chains ?? []) {
    for (const filter of chain.filters ?? []) {
      const config = filter.typed_config ? unpackAny(filter.typed_config)?.message : undefined;
      if (filter.name === EXTENSION.httpConnectionManager) {
        const hcm = config as HttpConnectionManager;
        const route = hcm.route_config?.virtual_hosts?.flatMap((host) => host.routes ?? []).find((r) => r.route?.cluster === cluster);
        if (!route) continue;
        const retry = route.route?.retry_policy;
        const retries = retry ? `retries ${retry.num_retries ?? 1} on ${retry.retry_on}` : "no retries";
        return `${capture ? "VIP capture route" : "egress route"}: ${retries}; ${hcm.access_log?.length ? "source access log" : "no access log"}`;
      }
      if (filter.name === EXTENSION.tcpProxy) {
        const proxy = config as TcpProxy;
        if (proxy.cluster !== cluster) continue;
        return `VIP capture: idle timeout ${proxy.idle_timeout ? seconds(proxy.idle_timeout) : `${ENVOY_DEFAULT} (1h)`}; ${proxy.access_log?.length ? "source access log" : "no access log"}`;
      }
    }
  }
  return undefined;
}

function appProtocol(cluster: Cluster): string {
  const options = httpOptions(cluster);
  if (!options) return "TCP (bytes)";
  if (options.use_downstream_protocol_config) return "HTTP in the downstream's version (undeclared port)";
  return options.explicit_http_config?.http_protocol_options ? "HTTP/1.1" : "HTTP/2 (h2c)";
}

function httpOptions(cluster: Cluster): HttpProtocolOptions | undefined {
  const any = cluster.typed_extension_protocol_options?.[EXTENSION.httpProtocolOptions];
  return any ? (unpackAny(any)?.message as HttpProtocolOptions) : undefined;
}

function logs(listener: Listener): boolean {
  return (listener.filter_chains ?? []).some((chain) =>
    (chain.filters ?? []).some((filter) => {
      const config = filter.typed_config ? (unpackAny(filter.typed_config)?.message as { access_log?: unknown[] }) : undefined;
      return (config?.access_log?.length ?? 0) > 0;
    }),
  );
}

/** The nodes of the landing pod's cluster hosting a pod of its name or IP, by key. */
function hostsOf(mesh: MeshView, pod: { readonly cluster: string; readonly name: string; readonly ip: string }): string[] {
  const prefix = `${pod.cluster}/`;
  const hosts: string[] = [];
  for (const [key, hosted] of mesh.index.hostedBy) {
    if (key.startsWith(prefix) && hosted.some(({ endpoint }) => endpoint.ip === pod.ip || hostedPodName(endpoint) === pod.name)) hosts.push(key);
  }
  return hosts.sort(compareText);
}

/** What `find` finds on the first of `hosts` whose receiving side has it. */
function findIn<T>(mesh: MeshView, hosts: readonly string[], find: (node: CompiledNode) => T | undefined): T | undefined {
  for (const key of hosts) {
    const node = mesh.receiving(key);
    const found = node && find(node);
    if (found) return found;
  }
  return undefined;
}

function seconds(duration: Duration): string {
  const total = (duration.seconds ?? 0) + (duration.nanos ?? 0) / 1e9;
  return `${total}s`;
}
