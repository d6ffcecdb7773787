/** A short human summary of one compiled node: what each outbound cluster dials, and its listeners. */

import { HealthStatus } from "../../gen/envoy/config/core/v3/health_check.js";
import type { FilterChain } from "../../gen/envoy/config/listener/v3/listener_components.js";
import type { CompileResult } from "../compile/compile-node.js";
import { hostPort } from "../envoy/core.js";
import { parseOutboundClusterName } from "../naming.js";
import { ORIGIN_CLUSTER_KEY, ORIGIN_NODE_KEY } from "../plan/endpoints.js";

/** What a chain matches: its server names, the VIP:ports it captures, or else its name. */
function chainLabels(chain: FilterChain): string[] {
  const match = chain.filter_chain_match;
  if (match?.server_names?.length) return match.server_names;
  if (match?.prefix_ranges?.length) return match.prefix_ranges.map((range) => hostPort(range.address_prefix ?? "", match.destination_port ?? 0));
  return [chain.name ?? "(unnamed)"];
}

export function summarizeNode(result: CompileResult): string {
  const { node, options } = result;
  const lines = [
    `${node.cluster}/${node.name} (${node.ip}, waypoint ${options.eastWestWaypoint}): ${result.clusters.length} clusters, ${result.endpoints.length} assignments, ${result.listeners.length} listeners`,
  ];
  for (const assignment of result.endpoints) {
    if (!parseOutboundClusterName(assignment.cluster_name!.replace(/\|(local|waypoint)$/, ""))) continue;
    lines.push(`  ${assignment.cluster_name}`);
    if (!assignment.endpoints?.length) lines.push("    (no endpoints)");
    for (const group of assignment.endpoints ?? []) {
      for (const lb of group.lb_endpoints ?? []) {
        const socket = lb.endpoint!.address!.socket_address!;
        const lbMeta = lb.metadata?.filter_metadata?.["envoy.lb"] as Record<string, string> | undefined;
        const via = lbMeta?.[ORIGIN_NODE_KEY] ? `via ${lbMeta[ORIGIN_CLUSTER_KEY]}/${lbMeta[ORIGIN_NODE_KEY]}` : "direct";
        const health = HealthStatus[lb.health_status ?? 0] ?? "UNKNOWN";
        lines.push(
          `    priority ${group.priority ?? 0}: ${hostPort(socket.address!, socket.port_value!)} ${via}, ${health}, weight ${lb.load_balancing_weight ?? 1}`,
        );
      }
    }
  }
  for (const listener of result.listeners) {
    const names = (listener.filter_chains ?? []).flatMap(chainLabels);
    const chains = listener.filter_chains?.length ?? 0;
    lines.push(`  listener ${listener.name}: ${chains} chain${chains === 1 ? "" : "s"} (${names.join(", ")})`);
  }
  for (const d of result.diagnostics.filter((d) => d.severity !== "info")) lines.push(`  ${d.code}: ${d.message}`);
  return lines.join("\n");
}
