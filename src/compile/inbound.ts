/**
 * Pod inbound listeners: one per hosted pod, `0.0.0.0:inboundPort` inside the pod's netns. Each
 * served port is a filter chain matched by SNI — the bare `<port>` a direct dial sends and, with
 * the waypoint on, the exact `<port>.<svc>.<ns>.<meshDomain>` a waypoint forwards unchanged — that
 * terminates mTLS with the pod's own SVID, requires a client certificate, and hands the traffic to
 * the application at `pod_ip:<port>`.
 */
import type { Cluster } from "../../gen/envoy/config/cluster/v3/cluster.js";
import { TrafficDirection } from "../../gen/envoy/config/core/v3/base.js";
import type { Listener } from "../../gen/envoy/config/listener/v3/listener.js";
import type { FilterChain } from "../../gen/envoy/config/listener/v3/listener_components.js";
import { type Diagnostic, diagnostic } from "../diagnostics.js";
import { socketAddress } from "../envoy/core.js";
import { httpToCluster, staticCluster, tcpProxy, tlsInspector } from "../envoy/listener.js";
import { downstreamTlsSocket } from "../envoy/tls.js";
import { protocolOf } from "../model/snapshot.js";
import { appClusterName, directSni, inboundChainName, inboundListenerName, type PodRef, waypointSni } from "../naming.js";
import type { HostedPodPlan, NodePlan } from "../plan/node-plan.js";

export interface InboundSide {
  readonly listeners: Listener[];
  /** The application clusters the chains forward to. */
  readonly clusters: Cluster[];
  readonly diagnostics: Diagnostic[];
}

export function inboundSide(plan: NodePlan): InboundSide {
  const side: InboundSide = { listeners: [], clusters: [], diagnostics: [] };
  for (const hosted of plan.hostedPods) {
    const reason = whyNoListener(hosted);
    if (reason) side.diagnostics.push(reason);
    // Without a netns of its own a pod has nowhere to bind (the node plan reports why).
    if (reason || !hosted.netns) continue;
    const ref = { namespace: hosted.pod.namespace, pod: hosted.pod.name };
    side.listeners.push(inboundListener(plan, hosted, ref));
    side.clusters.push(
      ...hosted.ports.map((port) => staticCluster(appClusterName(ref, port), hosted.pod.ip, port, protocolOf(hosted.protocols, port) === "http2")),
    );
  }
  return side;
}

/** Terminating pods take no new connections; a pod needs a port to serve. */
function whyNoListener(hosted: HostedPodPlan): Diagnostic | undefined {
  const name = `${hosted.pod.namespace}/${hosted.pod.name}`;
  const fields = { resource: inboundListenerName({ namespace: hosted.pod.namespace, pod: hosted.pod.name }), service: hosted.service };
  if (hosted.pod.terminating) return diagnostic("POD_TERMINATING", `pod ${name} is terminating: no inbound listener`, fields);
  if (hosted.ports.length === 0)
    return diagnostic("POD_WITHOUT_PORTS", `pod ${name} serves no known port (no ports given, no registry record): no inbound listener`, fields);
  return undefined;
}

function inboundListener(plan: NodePlan, hosted: HostedPodPlan, ref: PodRef): Listener {
  return {
    name: inboundListenerName(ref),
    address: socketAddress("0.0.0.0", plan.options.inboundPort, hosted.netns),
    // Every pod's inbound listener binds the same address (in its own netns): without a prefix of
    // its own, all of them would share one stats scope.
    stat_prefix: inboundListenerName(ref),
    filter_chains: hosted.ports.map((port) => inboundChain(plan, hosted, ref, port)),
    listener_filters: [tlsInspector()],
    traffic_direction: TrafficDirection.INBOUND,
  };
}

function inboundChain(plan: NodePlan, hosted: HostedPodPlan, ref: PodRef, port: number): FilterChain {
  const serverNames = [directSni(port)];
  if (plan.waypointOn) serverNames.push(waypointSni(plan.node.meshDomain, { ...hosted.ref, port }));
  const http2 = protocolOf(hosted.protocols, port) === "http2";
  const app = appClusterName(ref, port);
  const statPrefix = `${inboundListenerName(ref)}_${port}`;
  return {
    filter_chain_match: { server_names: serverNames, transport_protocol: "tls" },
    filters: [http2 ? httpToCluster(statPrefix, app) : tcpProxy(statPrefix, app)],
    transport_socket: downstreamTlsSocket({
      alpn: http2 ? ["h2"] : [],
      server: { spiffeId: hosted.identity, sds: plan.sds },
      validation: plan.validation,
      clientSanPrefixes: plan.workloadSanPrefixes,
    }),
    name: inboundChainName(port),
  };
}
