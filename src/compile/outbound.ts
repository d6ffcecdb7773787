/**
 * Mesh-originating listeners: where a hosted pod's outbound traffic enters the node's Envoy. Each
 * is bound inside the pod's netns, and every chain first stamps which pod the connection came
 * from — what picks the pod's certificate upstream (see `sourceStamp`).
 *
 * - `outbound_<pod>_<ns>`: an HTTP egress listener on `127.0.0.1:egressPort`; the authority
 *   `<svc>.<ns>.<meshDomain>:<port>` (or without the port, for a service with one HTTP port)
 *   routes to that service port's cluster, and any other authority gets a 404.
 * - `capture_<pod>_<ns>`: for services with a VIP, a transparent capture listener on the capture
 *   port (where the node's redirect rules send VIP traffic); `original_dst` restores the VIP:port
 *   the pod dialed, and a chain per VIP and port reaches the outbound cluster: HTTP routed as the
 *   egress listener routes it, a TCP port's bytes proxied.
 *
 * A pod's routes cover its own service's dependencies when the mesh has dependency data, else
 * every service the node has a cluster for. Nothing else is captured.
 */
import type { Address } from "../../gen/envoy/config/core/v3/address.js";
import { TrafficDirection } from "../../gen/envoy/config/core/v3/base.js";
import type { Listener } from "../../gen/envoy/config/listener/v3/listener.js";
import type { Filter, FilterChain } from "../../gen/envoy/config/listener/v3/listener_components.js";
import type { VirtualHost } from "../../gen/envoy/config/route/v3/route_components.js";
import { socketAddress } from "../envoy/core.js";
import { type AuthorityRoute, authorityHosts, egressTable, httpCapture, httpEgress, originalDst, stampFilterState, tcpProxy } from "../envoy/listener.js";
import { FILTER_STATE } from "../envoy/types.js";
import { protocolOf } from "../model/snapshot.js";
import { captureChainName, captureListenerName, outboundClusterName, outboundListenerName, type PodRef, type ServiceKey, serviceAuthority } from "../naming.js";
import { CacheSlot } from "../plan/cache-slots.js";
import { type HostedPodPlan, type NodePlan, type ReuseSlot, reuseIfUnchanged } from "../plan/node-plan.js";
import type { IndexedService } from "../plan/snapshot-index.js";
import { getOrInsert } from "../util/maps.js";
import { accessLogs } from "./access-log.js";
import { egressRetryPolicy, listenerSettings, tcpIdleTimeout } from "./settings.js";

/** A service port a pod may call, with what its outbound listeners need to reach it. */
interface Destination {
  readonly cluster: string;
  readonly port: number;
  readonly service: IndexedService;
  readonly http: boolean;
  readonly vip?: string;
}

/** Every hosted pod's egress and capture listeners, sorted by name; none for a pod without a netns of its own. */
export function outboundListeners(plan: NodePlan): Listener[] {
  const egressOf = egressByService(plan);
  return plan.hostedPods.flatMap((hosted) => {
    if (!hosted.netns) return [];
    const ref = { namespace: hosted.pod.namespace, pod: hosted.pod.name };
    const egress = egressOf(hosted.service);
    const stamp = [sourceStamp(plan, hosted)];
    return [...egressListener(plan, hosted, ref, egress, stamp), ...captureListener(plan, hosted, ref, egress.destinations, stamp)];
  });
}

/**
 * What tells the upstream side which pod a connection came from. `selector`: the pod's identity,
 * under the key the certificate mapper reads, made hashable so it partitions the connection pools.
 * `sockets`: the pod's netns under the key the socket matcher reads (Envoy's own netns object never
 * reaches the cluster's matcher); pools are per downstream connection there.
 */
function sourceStamp(plan: NodePlan, hosted: HostedPodPlan): Filter {
  if (plan.options.sourceIdentity === "selector") {
    return SOURCE_STAMPS.get(plan.context, [hosted.identity], () =>
      stampFilterState(FILTER_STATE.certificateMapperKey, FILTER_STATE.hashableString, hosted.identity),
    );
  }
  return SOURCE_STAMPS.get(plan.context, [hosted.netns], () => stampFilterState(plan.options.netnsFilterStateKey, FILTER_STATE.string, hosted.netns));
}

/** Per compile context: the stamp filter by the value stamped (the mode, and so which value it is, is the context's). */
const SOURCE_STAMPS = new CacheSlot<[value: string], Filter>("source stamps", (value) => value);

/** What a pod's outbound listeners route to, by its service: every pod of the service shares it. */
interface ServiceEgress {
  readonly destinations: readonly Destination[];
  /** The egress listener's routes; none when no destination speaks HTTP. */
  readonly virtualHosts: readonly VirtualHost[] | undefined;
}

/**
 * Per compile context (the mesh domain and settings are the context's), by the pod's service: its
 * egress, kept while the services it calls are the same objects and the VIPs the same map.
 */
const EGRESS = new CacheSlot<[service: ServiceKey], ReuseSlot<ServiceEgress>>("pod egress by service", (service) => service);

/** A pod's egress by its service: pods of one service share it (and its order). */
function egressByService(plan: NodePlan): (service: ServiceKey) => ServiceEgress {
  const known = new Map<ServiceKey, ServiceEgress>();
  const inScope = new Map(plan.dependencies.map((service) => [service.key, service]));
  return (key) =>
    getOrInsert(known, key, () => {
      const declared = plan.index.snapshot.dependencies?.get(key);
      const services = declared ? declared.flatMap((dependency) => inScope.get(dependency) ?? []) : plan.dependencies;
      const inputs = [plan.index.snapshot.vips, ...services];
      return reuseIfUnchanged(
        EGRESS.get(plan.context, [key], () => ({})),
        inputs,
        () => serviceEgress(plan, services),
      );
    });
}

function serviceEgress(plan: NodePlan, services: readonly IndexedService[]): ServiceEgress {
  const destinations: Destination[] = [];
  const hosts: VirtualHost[] = [];
  for (const service of services) {
    const target = targetOf(plan, service);
    for (const destination of target.destinations) destinations.push(destination);
    for (const host of target.hosts) hosts.push(host);
  }
  return { destinations, virtualHosts: hosts.length > 0 ? egressTable(hosts) : undefined };
}

/** A service as every pod calling it routes to it: its destinations and their virtual hosts. */
interface EgressTarget {
  readonly destinations: readonly Destination[];
  readonly hosts: readonly VirtualHost[];
}

/**
 * Per compile context (mesh domain, settings), by the service called: its egress target, kept
 * while the service is the same object and its VIP the same.
 */
const EGRESS_TARGETS = new CacheSlot<[service: ServiceKey], ReuseSlot<EgressTarget>>("egress targets", (service) => service);

function targetOf(plan: NodePlan, service: IndexedService): EgressTarget {
  const vip = plan.index.snapshot.vips?.get(service.key);
  return reuseIfUnchanged(
    EGRESS_TARGETS.get(plan.context, [service.key], () => ({})),
    [service, vip],
    () => {
      const destinations = destinationsOf(plan, service, vip);
      return { destinations, hosts: authorityHosts(authorityRoutes(plan, destinations), egressRetryPolicy(plan.options.settings)) };
    },
  );
}

function destinationsOf(plan: NodePlan, service: IndexedService, vip: string | undefined): Destination[] {
  return service.ports.map((port) => ({
    cluster: outboundClusterName(plan.node.meshDomain, { ...service.ref, port }),
    port,
    service,
    http: protocolOf(service.protocols, port) !== "tcp",
    ...(vip ? { vip } : {}),
  }));
}

function egressListener(plan: NodePlan, hosted: HostedPodPlan, ref: PodRef, egress: ServiceEgress, stamp: readonly Filter[]): Listener[] {
  if (!egress.virtualHosts) return [];
  const name = outboundListenerName(ref);
  return [
    {
      name,
      address: socketAddress("127.0.0.1", plan.options.egressPort, hosted.netns),
      stat_prefix: name,
      filter_chains: [
        {
          filters: [...stamp, httpEgress(name, egress.virtualHosts, { accessLog: sourceLogs(plan, hosted, name, true) })],
          name: "http",
        },
      ],
      traffic_direction: TrafficDirection.OUTBOUND,
      ...listenerSettings(plan.options.settings, false),
    },
  ];
}

/** One route per HTTP port of one service's destinations; the bare authority too when the service has one HTTP port. */
function authorityRoutes(plan: NodePlan, destinations: readonly Destination[]): AuthorityRoute[] {
  const http = destinations.filter((destination) => destination.http);
  return http.map(({ cluster, port, service }) => {
    const domains = [serviceAuthority(plan.node.meshDomain, service.ref, port)];
    if (http.length === 1) domains.push(serviceAuthority(plan.node.meshDomain, service.ref));
    return { name: cluster, domains, cluster };
  });
}

/**
 * Bound to loopback: a redirect rule for locally generated traffic rewrites the destination to
 * 127.0.0.1 (::1 for IPv6), so the port is never exposed on the pod's own address.
 */
function captureListener(plan: NodePlan, hosted: HostedPodPlan, ref: PodRef, destinations: readonly Destination[], stamp: readonly Filter[]): Listener[] {
  const captured = destinations.filter((destination) => destination.vip !== undefined);
  if (captured.length === 0) return [];
  const name = captureListenerName(ref);
  const listener: Listener = {
    name,
    address: socketAddress("127.0.0.1", plan.options.capturePort, hosted.netns),
    stat_prefix: name,
    filter_chains: captured.map((destination) => captureChain(plan, hosted, name, destination, stamp)),
    listener_filters: [originalDst()],
    traffic_direction: TrafficDirection.OUTBOUND,
    // The listener handles what it accepts; it never hands a connection to another listener.
    use_original_dst: false,
    ...listenerSettings(plan.options.settings, true),
  };
  if (captured.some((destination) => destination.vip!.includes(":"))) {
    listener.additional_addresses = [{ address: socketAddress("::1", plan.options.capturePort, hosted.netns) as Address }];
  }
  return [listener];
}

/**
 * The chain for one VIP and port: `tcp_proxy` for a TCP port; an HTTP port's requests are
 * terminated and routed like the egress listener's, since the mesh hop is HTTP/2 whatever the
 * app speaks (passed-through HTTP/1.1 bytes would reach an HTTP/2 peer).
 */
function captureChain(plan: NodePlan, hosted: HostedPodPlan, statPrefix: string, destination: Destination, stamp: readonly Filter[]): FilterChain {
  const vip = destination.vip!;
  const name = captureChainName({ ...destination.service.ref, port: destination.port });
  const { settings } = plan.options;
  const accessLog = sourceLogs(plan, hosted, statPrefix, destination.http);
  return {
    filter_chain_match: { destination_port: destination.port, prefix_ranges: [{ address_prefix: vip, prefix_len: vip.includes(":") ? 128 : 32 }] },
    filters: [
      ...stamp,
      destination.http
        ? httpCapture(statPrefix, { name, cluster: destination.cluster }, egressRetryPolicy(settings), { accessLog })
        : tcpProxy(statPrefix, destination.cluster, { idleTimeout: tcpIdleTimeout(settings), accessLog, oneListener: true }),
    ],
    name,
  };
}

function sourceLogs(plan: NodePlan, hosted: HostedPodPlan, listener: string, http: boolean) {
  return accessLogs(plan, { reporter: "source", listener, http, sourceIdentity: hosted.identity, oneListener: true });
}
