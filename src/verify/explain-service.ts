/**
 * "Where would traffic for service S from this node go, and why?" — the compile's own plan for
 * one service, per port: which socket each source uses, every endpoint by priority with its route,
 * and every endpoint left out with its reason.
 */
import { HealthStatus } from "../../gen/envoy/config/core/v3/health_check.js";
import { compactPriorities, portAssignments } from "../compile/endpoints.js";
import { type DiagnosticCode, LEFT_OUT_CODES } from "../diagnostics.js";
import { InputError } from "../errors.js";
import { type LocalNode, type LocalNodeInput, parseNode } from "../model/node.js";
import { type Options, type OptionsInput, parseOptions } from "../model/options.js";
import type { Snapshot } from "../model/snapshot.js";
import { type ServiceKey, type SocketVariant, socketName } from "../naming.js";
import { planNode } from "../plan/node-plan.js";
import { asIndex, type SnapshotIndex } from "../plan/snapshot-index.js";

export interface EndpointExplanation {
  readonly priority: number;
  readonly address: string;
  readonly route: "direct" | "waypoint";
  /** The node whose waypoint forwards, `"<cluster>/<node>"`. */
  readonly via?: string;
  readonly health: string;
  readonly weight: number;
  /** The registry pods behind the endpoint, `"<cluster>/<pod or ip>"`. */
  readonly pods: readonly string[];
}

export interface PortExplanation {
  readonly port: number;
  readonly cluster: string;
  /** Per source netns (or "(any other)" for the node itself): the certificate it presents and the sockets it would use. */
  readonly sources: readonly { readonly source: string; readonly certificate: string; readonly direct: string; readonly waypoint?: string }[];
  readonly endpoints: readonly EndpointExplanation[];
  readonly leftOut: readonly { readonly pod: string; readonly code: DiagnosticCode; readonly message: string }[];
}

/** Where one node's traffic for one service goes, per port: sockets, endpoints by priority, endpoints left out. */
export interface ServiceExplanation {
  readonly service: ServiceKey;
  readonly node: string;
  readonly ports: readonly PortExplanation[];
}

export function explainService(
  snapshot: Snapshot | SnapshotIndex,
  node: LocalNode | LocalNodeInput,
  options: Options | OptionsInput,
  service: ServiceKey,
): ServiceExplanation {
  const index = asIndex(snapshot);
  const plan = planNode(index, parseNode(node), parseOptions(options));
  const indexed = index.services.get(service);
  if (!indexed) throw new InputError("options", [{ path: "service", message: `no service ${service} in the snapshot` }]);
  const sources = [
    ...[...plan.identityByNetns].map(([netns, identity]) => ({ source: netns, identity })),
    { source: "(any other)", identity: plan.nodeIdentity },
  ].map(({ source, identity }) => {
    // selector: one socket per variant, the certificate chosen per connection; sockets: one per source.
    const socket = (variant: SocketVariant) => (plan.options.sourceIdentity === "selector" ? variant : socketName(variant, identity));
    return { source, certificate: identity, direct: socket("local"), ...(plan.waypointOn ? { waypoint: socket("waypoint") } : {}) };
  });
  const ports = indexed.ports.map((port): PortExplanation => {
    const { plan: portPlan, diagnostics } = portAssignments(index, plan.view, indexed, port);
    const priorities = compactPriorities(portPlan.tiers);
    return {
      port,
      cluster: portPlan.clusterName,
      sources,
      endpoints: portPlan.endpoints.map((e, i) => ({
        priority: priorities[i]!,
        address: e.address,
        route: e.route,
        ...(e.route === "waypoint" ? { via: `${e.originCluster}/${e.originNode}` } : {}),
        health: HealthStatus[e.health] ?? String(e.health),
        weight: e.weight,
        pods: e.pods.map((pod) => `${pod.cluster}/${pod.pod ?? pod.ip}`),
      })),
      leftOut: diagnostics
        .filter((d) => LEFT_OUT_CODES.has(d.code) && d.endpoint)
        .map((d) => ({ pod: `${d.endpoint!.cluster}/${d.endpoint!.pod ?? d.endpoint!.ip}`, code: d.code, message: d.message })),
    };
  });
  return { service, node: `${plan.node.clusterName}/${plan.node.nodeName}`, ports };
}

/** The explanation as a few readable lines. */
export function formatServiceExplanation(explanation: ServiceExplanation): string {
  const lines = [`${explanation.service} as seen from ${explanation.node}:`];
  for (const port of explanation.ports) {
    lines.push(`  port ${port.port} → cluster ${port.cluster}`);
    for (const source of port.sources) {
      const waypoint = source.waypoint ? `, waypoint socket ${source.waypoint}` : "";
      lines.push(`    from ${source.source}: certificate ${source.certificate}, direct socket ${source.direct}${waypoint}`);
    }
    if (port.endpoints.length === 0) lines.push("    no endpoints");
    for (const e of port.endpoints) {
      const route = e.route === "direct" ? "direct" : `via waypoint ${e.via}`;
      lines.push(`    priority ${e.priority}: ${e.address} ${route}, ${e.health}, weight ${e.weight} (${e.pods.join(", ")})`);
    }
    for (const left of port.leftOut) lines.push(`    [${left.code}] ${left.message}`);
  }
  return lines.join("\n");
}
