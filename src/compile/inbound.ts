/**
 * Pod inbound listeners: one per hosted pod, `0.0.0.0:inboundPort` inside the pod's netns. Each
 * served port is a filter chain matched by SNI — the bare `<port>` a direct dial sends and, with
 * the waypoint on, the exact `<port>.<svc>.<ns>.<meshDomain>` a waypoint forwards unchanged — that
 * terminates mTLS with the pod's own SVID, requires a client certificate, and hands the traffic to
 * the application at `pod_ip:<port>`.
 */
import { type Cluster, Cluster_DiscoveryType } from "../../gen/envoy/config/cluster/v3/cluster.js";
import { TrafficDirection, type TransportSocket } from "../../gen/envoy/config/core/v3/base.js";
import type { ClusterLoadAssignment } from "../../gen/envoy/config/endpoint/v3/endpoint.js";
import type { Listener } from "../../gen/envoy/config/listener/v3/listener.js";
import type { FilterChain } from "../../gen/envoy/config/listener/v3/listener_components.js";
import { type Diagnostic, diagnostic } from "../diagnostics.js";
import { socketAddress } from "../envoy/core.js";
import { httpToCluster, staticCluster, tcpProxy, tlsInspector } from "../envoy/listener.js";
import { downstreamTlsSocket, upstreamTlsSocket } from "../envoy/tls.js";
import { protocolOf } from "../model/snapshot.js";
import { appClusterName, directSni, inboundChainName, inboundListenerName, type PodRef, readinessClusterName, waypointSni } from "../naming.js";
import { CacheSlot } from "../plan/cache-slots.js";
import type { HostedPodPlan, NodePlan } from "../plan/node-plan.js";
import { accessLogs } from "./access-log.js";
import { protocolOptions } from "./clusters.js";
import { clusterSettings, listenerSettings, tcpIdleTimeout } from "./settings.js";

/**
 * Per compile context: a pod's inbound TLS socket by its identity and whether the port is HTTP.
 * The rest (SDS, trust validation, client SAN prefixes) is the context's, so pods of one service
 * on every node of the context share the socket and its encoding.
 */
const INBOUND_SOCKETS = new CacheSlot<[identity: string, http: boolean], TransportSocket>("inbound TLS sockets", (identity, http) =>
  JSON.stringify([identity, http]),
);
/** Per compile context: the readiness probe's socket by the SNI port and the pod's identity (the node's identity is the context's). */
const PROBE_SOCKETS = new CacheSlot<[port: number, identity: string], TransportSocket>("probe TLS sockets", (port, identity) =>
  JSON.stringify([port, identity]),
);

export interface InboundSide {
  readonly listeners: Listener[];
  /** The application clusters the chains forward to, and the readiness probes. */
  readonly clusters: Cluster[];
  /** The readiness probes' assignments. */
  readonly endpoints: ClusterLoadAssignment[];
  readonly diagnostics: Diagnostic[];
}

export function inboundSide(plan: NodePlan): InboundSide {
  const side: InboundSide = { listeners: [], clusters: [], endpoints: [], diagnostics: [] };
  for (const hosted of plan.hostedPods) {
    const reason = whyNoListener(hosted);
    if (reason) side.diagnostics.push(reason);
    // Without a netns of its own a pod has nowhere to bind (the node plan reports why).
    if (reason || !hosted.netns) continue;
    const ref = { namespace: hosted.pod.namespace, pod: hosted.pod.name };
    side.listeners.push(inboundListener(plan, hosted, ref));
    side.clusters.push(...hosted.ports.map((port) => appCluster(plan, hosted, ref, port)));
    const probe = readinessProbe(plan, hosted, ref);
    if (probe) {
      side.clusters.push(probe.cluster);
      side.endpoints.push(probe.assignment);
    }
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
    ...listenerSettings(plan.options.settings, true),
  };
}

/** The application at `pod_ip:<port>`. */
function appCluster(plan: NodePlan, hosted: HostedPodPlan, ref: PodRef, port: number): Cluster {
  // Assigned into the fresh static cluster: two spreads in one literal cost V8 microseconds here.
  const cluster: Cluster = Object.assign(staticCluster(appClusterName(ref, port), hosted.pod.ip, port), clusterSettings(plan.options.settings, "app"));
  const protocol = protocolOf(hosted.protocols, port);
  if (protocol !== "tcp") cluster.typed_extension_protocol_options = protocolOptions(plan, APP_HTTP[protocol], false);
  return cluster;
}

/**
 * The node's probe of the pod's inbound listener: a connect-only health check that passes once a
 * TLS handshake with the node's own identity completes and the pod presents its own SAN — that
 * is, once the listener is up in the pod's netns with its certificate. A registry or readiness
 * gate reads the cluster's host health (README, "Readiness of the mesh port"). The node's
 * certificate is a plain SDS reference (the certificate selector's stream is never involved),
 * and the SNI is a port the pod serves, so the handshake reaches one of its chains. An EDS
 * cluster, like every cluster with an SDS certificate (a static one would start before ADS).
 */
function readinessProbe(plan: NodePlan, hosted: HostedPodPlan, ref: PodRef): { cluster: Cluster; assignment: ClusterLoadAssignment } | undefined {
  const probe = plan.options.settings.readinessProbes;
  if (!probe?.intervalMs || !probe.timeoutMs) return undefined;
  const name = readinessClusterName(ref);
  const cluster: Cluster = {
    name,
    type: Cluster_DiscoveryType.EDS,
    eds_cluster_config: { eds_config: plan.eds, service_name: name },
    // With the health check the settings give it (`clusterSettings`).
    ...clusterSettings(plan.options.settings, "probe"),
    transport_socket: PROBE_SOCKETS.get(plan.context, [hosted.ports[0]!, hosted.identity], () =>
      upstreamTlsSocket({
        sni: directSni(hosted.ports[0]!),
        alpn: [],
        source: { spiffeId: plan.nodeIdentity, sds: plan.sds },
        pinnedSans: [hosted.identity],
        validation: plan.validation,
      }),
    ),
  };
  const assignment = { cluster_name: name, endpoints: [{ lb_endpoints: [{ endpoint: { address: socketAddress(hosted.pod.ip, plan.options.inboundPort) } }] }] };
  return { cluster, assignment };
}

/**
 * How the inbound listener speaks to the application: as declared, else in the version the
 * request arrived in (the mesh hop is HTTP/2, so an HTTP/1.1-only application declares `http`).
 */
const APP_HTTP = { http2: "http2", http: "http1", undeclared: "downstream" } as const;

function inboundChain(plan: NodePlan, hosted: HostedPodPlan, ref: PodRef, port: number): FilterChain {
  const serverNames = [directSni(port)];
  if (plan.waypointOn) serverNames.push(waypointSni(plan.node.meshDomain, { ...hosted.ref, port }));
  // Every HTTP port is HTTP/2 over mTLS on the mesh hop, whatever the application speaks.
  const http = protocolOf(hosted.protocols, port) !== "tcp";
  const app = appClusterName(ref, port);
  const statPrefix = `${inboundListenerName(ref)}_${port}`;
  return {
    filter_chain_match: { server_names: serverNames, transport_protocol: "tls" },
    filters: [
      http
        ? httpToCluster(statPrefix, app, {
            accessLog: accessLogs(plan, { reporter: "destination", listener: inboundListenerName(ref), http, oneListener: true }),
            oneListener: true,
          })
        : tcpProxy(statPrefix, app, {
            idleTimeout: tcpIdleTimeout(plan.options.settings),
            accessLog: accessLogs(plan, { reporter: "destination", listener: inboundListenerName(ref), http, oneListener: true }),
            oneListener: true,
          }),
    ],
    transport_socket: INBOUND_SOCKETS.get(plan.context, [hosted.identity, http], () =>
      downstreamTlsSocket({
        alpn: http ? ["h2"] : [],
        server: { spiffeId: hosted.identity, sds: plan.sds },
        validation: plan.validation,
        clientSanPrefixes: plan.workloadSanPrefixes,
      }),
    ),
    name: inboundChainName(port),
  };
}
