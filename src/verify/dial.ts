/**
 * One dial of a replayed path: the source's connection to one endpoint of the chosen priority,
 * through the transport-socket matcher and the client TLS, a waypoint when the address is one, and
 * the destination pod's inbound chain and mTLS, to where it lands or the mistake that stops it.
 * What holds for every source is read once and kept: on the dial (its socket, the waypoint at its
 * address, the pods at its IP), on the socket's TLS context, on the pod's arrival.
 */
import type { Cluster } from "../../gen/envoy/config/cluster/v3/cluster.js";
import type { TransportSocket } from "../../gen/envoy/config/core/v3/base.js";
import type { LbEndpoint } from "../../gen/envoy/config/endpoint/v3/endpoint_components.js";
import type { TcpProxy } from "../../gen/envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy.js";
import type { Config as FilterStateOverrideConfig } from "../../gen/envoy/extensions/transport_sockets/tls/cert_mappers/filter_state_override/v3/config.js";
import type { Config as OnDemandSecretConfig } from "../../gen/envoy/extensions/transport_sockets/tls/cert_selectors/on_demand_secret/v3/config.js";
import type { CommonTlsContext, DownstreamTlsContext, UpstreamTlsContext } from "../../gen/envoy/extensions/transport_sockets/tls/v3/tls.js";
import type { SPIFFECertValidatorConfig } from "../../gen/envoy/extensions/transport_sockets/tls/v3/tls_spiffe_validator_config.js";
import type { Any } from "../../gen/google/protobuf/any.js";
import { hostPort } from "../envoy/core.js";
import { unpackAny } from "../envoy/schema.js";
import { EXTENSION, FILTER_STATE } from "../envoy/types.js";
import type { ServiceEndpoint } from "../model/registry.js";
import { bundleSecretName, parseInboundChainName, type ServiceKey, trustDomainOf } from "../naming.js";
import { orNone } from "../util/arrays.js";
import { getOrInsert, newMap, remember } from "../util/maps.js";
import type { CompiledNode, RegistryPod } from "./compiled-mesh.js";
import { filterConfig, type StampedValue } from "./entry.js";
import { chosenPriority, evaluateSocketMatcher, readsFilterState, selectFilterChain } from "./envoy-match.js";
import { PathError } from "./failures.js";
import type { Landing, PathFailure, PathSource, PathTarget, ReplayContext } from "./path.js";

/** Where an endpoint listens, read once per endpoint object (nodes share them). */
export interface Address {
  readonly address: string;
  readonly ip: string;
  readonly port: number;
}

export function addressOf(context: ReplayContext, endpoint: LbEndpoint): Address {
  return context.memo.forTarget("address", endpoint, readAddress);
}

function readAddress(endpoint: LbEndpoint): Address {
  const socket = endpoint.endpoint?.address?.socket_address;
  const address = hostPort(socket?.address ?? "", socket?.port_value ?? 0);
  return { address, ...splitAddress(address) };
}

function splitAddress(address: string): { ip: string; port: number } {
  const colon = address.lastIndexOf(":");
  return { ip: address.slice(0, colon).replace(/^\[|\]$/g, ""), port: Number(address.slice(colon + 1)) };
}

/**
 * A healthy endpoint of a chosen level, with its address and the hop that dials it, and what a
 * dial to it meets whatever the source, filled in when first needed (so a one-path replay looks
 * up no more than it dials).
 */
export class Dial implements Address {
  readonly address: string;
  readonly ip: string;
  readonly port: number;
  /** The socket the cluster uses for this endpoint, when its matcher does not read filter state. */
  socket: SocketChoice | undefined = undefined;
  /** Whether `waypoint` was looked up. */
  waypointKnown = false;
  /** The node whose waypoint listens on the address, if any. */
  waypoint: string | undefined = undefined;
  /** Registry pods at the IP, by cluster. */
  pods: ReadonlyMap<string, readonly RegistryPod[]> | undefined = undefined;
  /** The last pod arrived at directly, with the SNI and what it met there. */
  arrived: { readonly pod: RegistryPod; readonly sni: string; readonly arrival: Arrival } | undefined = undefined;

  constructor(
    readonly endpoint: LbEndpoint,
    { address, ip, port }: Address,
    readonly hop: string,
  ) {
    this.address = address;
    this.ip = ip;
    this.port = port;
  }
}

/** The endpoints of a chosen priority, dialed. */
export interface DialLevel {
  readonly cluster: Cluster;
  readonly priority: number;
  readonly dials: readonly Dial[];
}

/**
 * What dialing a level yields for one kind of source calling one target: its landings, and the
 * endpoints it fails on or cannot follow. Every path of that kind shares these lists (their hops
 * start at the dial, after the path's own).
 */
export interface Dialed {
  readonly landings: readonly Landing[];
  readonly failures: readonly PathFailure[];
  readonly unverified: readonly PathFailure[];
}

/**
 * What a dial reads of its path: the source, the target, and the values the entry shared with
 * upstream; `hops` are the current dial's, emptied before the next (whatever outlives the dial is
 * copied out of them).
 */
interface Trip {
  readonly source: PathSource;
  /** The trust domain of the source's identity. */
  readonly sourceDomain: string | undefined;
  readonly target: PathTarget;
  readonly filterState: ReadonlyMap<string, StampedValue>;
  readonly hops: string[];
}

/**
 * Each endpoint of the level dialed by one source calling one target: one trip for them all. Each
 * dial's hops start with the dial itself and `poolHop`, the upstream pool it uses. Its landings,
 * or the mistake that stops it, go straight into the lists the paths share (no list per dial).
 */
export function dialAll(
  context: ReplayContext,
  source: PathSource,
  target: PathTarget,
  filterState: ReadonlyMap<string, StampedValue>,
  level: DialLevel,
  poolHop: string,
): Dialed {
  const landings: Landing[] = [];
  const failures: PathFailure[] = [];
  const unverified: PathFailure[] = [];
  const sourceDomain = context.memo.get("trust domain", source.identity, trustDomainOf);
  const trip: Trip = { source, sourceDomain, target, filterState, hops: [] };
  for (const dial of level.dials) {
    trip.hops.length = 0;
    trip.hops.push(dial.hop, poolHop);
    const landed = landings.length;
    try {
      connect(context, trip, level, dial, landings);
    } catch (error) {
      if (!(error instanceof PathError)) throw error;
      // A dial through a waypoint that failed on one of its pods lands on none of them.
      landings.length = landed;
      (error.code === "POD_NODE_NOT_COMPILED" ? unverified : failures).push({ code: error.code, reason: error.message, hops: trip.hops.slice() });
    }
  }
  return { landings: orNone(landings), failures: orNone(failures), unverified: orNone(unverified) };
}

/** Dials one endpoint, adding where it lands to `landings`; throws the mistake that stops it. */
function connect(context: ReplayContext, trip: Trip, level: DialLevel, dial: Dial, landings: Landing[]): void {
  const choice = socketOf(context, level.cluster, dial, trip.filterState);
  if (choice.hop !== undefined) trip.hops.push(choice.hop);
  if (choice.error) throw choice.error;
  const { name, client } = choice;
  if (client.error) throw client.error;
  const identity = presentedCertificate(client.presents, trip.filterState);
  const hops = choice.hops;
  trip.hops.push(hops.get(identity) ?? remember(hops, identity, `socket ${name}: SNI "${client.sni}", client certificate ${identity}`));
  if (identity !== trip.source.identity) throw new PathError("WRONG_CLIENT_CERT", `${identity}, expected ${trip.source.identity}`);
  if (client.pins.length === 0) throw new PathError("NO_SAN_PIN", name);
  if (!dial.waypointKnown) {
    dial.waypoint = context.tunnels.get(dial.address);
    dial.waypointKnown = true;
  }
  const waypoint = dial.waypoint;
  if (!waypoint) {
    landings.push(landing(dial, level.priority, choice, landDirectly(context, trip, dial, client), trip.hops));
    return;
  }
  // Each pod a waypoint may forward to is its own branch of the trip.
  for (const { pod, hop } of throughWaypoint(context, trip, waypoint, client.sni)) {
    const branch = { ...trip, hops: [...trip.hops, hop] };
    landings.push(landing(dial, level.priority, choice, landOn(branch, pod, arrivalFor(context, pod, client.sni), client), branch.hops, waypoint));
  }
}

/** A landing, its hops copied to an array of their size: the reports that share it hold it to the end of the check. */
function landing(dial: Dial, priority: number, { name, client }: ChosenSocket, pod: Landing["pod"], trip: readonly string[], via?: string): Landing {
  const hops = trip.slice();
  return via
    ? { address: dial.address, priority, socket: name, sni: client.sni, via, pod, hops }
    : { address: dial.address, priority, socket: name, sni: client.sni, pod, hops };
}

/** A client socket's TLS context as the replay reads it: SNI, pinned SANs, where its certificate comes from. */
interface ClientTls {
  /** No TLS context, or a certificate selector that cannot work. */
  readonly error?: PathError;
  readonly sni: string;
  readonly pins: readonly string[];
  readonly presents: Presented;
  /** The socket hop, by socket name and certificate presented. */
  readonly hops: Map<string, Map<string, string>>;
  /** The server trust domains this side accepts. */
  readonly accepts: ReadonlySet<string | undefined>;
}

/** The certificate a client TLS context presents: its own, or the mapper's choice (else `fallback`). */
type Presented = { readonly certificate: string } | { readonly fallback: string };

function clientTls(socket: TransportSocket, context: ReplayContext): ClientTls {
  try {
    const client = tlsOf<UpstreamTlsContext>(socket, "upstream");
    const presents = certificateSource(client);
    const accepts = acceptedDomains(context, client.common_tls_context ?? {});
    return { sni: client.sni ?? "", pins: pinnedSans(client.common_tls_context), presents, hops: new Map(), accepts };
  } catch (error) {
    if (!(error instanceof PathError)) throw error;
    return { error, sni: "", pins: [], presents: { certificate: "" }, hops: new Map(), accepts: NO_DOMAINS };
  }
}

/** The socket the cluster uses for one endpoint, its TLS context, and the matcher's hop; `error` when none is usable. */
type SocketChoice = { readonly hop?: string; readonly error: PathError } | ChosenSocket;

interface ChosenSocket {
  readonly hop?: string;
  readonly error?: undefined;
  readonly name: string;
  readonly client: ClientTls;
  /** The socket hop by certificate presented: the client's, for this socket name. */
  readonly hops: Map<string, string>;
}

/** Kept on the dial (and per cluster and endpoint object), unless the cluster's matcher reads filter state. */
function socketOf(context: ReplayContext, cluster: Cluster, dial: Dial, filterState: ReadonlyMap<string, StampedValue>): SocketChoice {
  if (dial.socket) return dial.socket;
  const matcher = cluster.transport_socket_matcher;
  if (matcher && context.memo.get("reads filter state", matcher, readsFilterState)) return chooseSocket(context, cluster, dial.endpoint, filterState);
  const byEndpoint = context.memo.forTarget("socket choice", cluster, newMap<LbEndpoint, SocketChoice>);
  dial.socket = byEndpoint.get(dial.endpoint) ?? remember(byEndpoint, dial.endpoint, chooseSocket(context, cluster, dial.endpoint, filterState));
  return dial.socket;
}

function chooseSocket(context: ReplayContext, cluster: Cluster, endpoint: LbEndpoint, filterState: ReadonlyMap<string, StampedValue>): SocketChoice {
  const hops: string[] = [];
  try {
    const { name, socket } = socketFor(hops, cluster, endpoint, filterState);
    const client = context.memo.forTarget("client TLS", socket, clientTls, context);
    const chosen = { name, client, hops: client.hops.get(name) ?? remember(client.hops, name, new Map<string, string>()) };
    return hops.length > 0 ? { ...chosen, hop: hops[0] } : chosen;
  } catch (error) {
    if (!(error instanceof PathError)) throw error;
    return { error, ...(hops.length > 0 ? { hop: hops[0] } : {}) };
  }
}

function socketFor(
  hops: string[],
  cluster: Cluster,
  endpoint: LbEndpoint,
  stamped: ReadonlyMap<string, StampedValue>,
): { name: string; socket: TransportSocket } {
  if (!cluster.transport_socket_matcher) {
    if (!cluster.transport_socket) throw new PathError("NO_TLS", `cluster ${cluster.name} has no transport socket`);
    return { name: "(the cluster's transport_socket)", socket: cluster.transport_socket };
  }
  const filterState = Object.fromEntries([...stamped].map(([key, { value }]) => [key, value]));
  const outcome = evaluateSocketMatcher(cluster.transport_socket_matcher, {
    endpointMetadata: (endpoint.metadata?.filter_metadata ?? {}) as Record<string, Record<string, unknown>>,
    filterState,
  });
  hops.push(`matcher: ${outcome.trace.join("; ")}`);
  if (outcome.kind === "invalid") throw new PathError("MATCHER_INVALID", outcome.reason);
  if (outcome.kind === "no-match") throw new PathError("MATCHER_NO_MATCH", `cluster ${cluster.name}`);
  const match = cluster.transport_socket_matches?.find((m) => m.name === outcome.name);
  if (!match?.transport_socket) throw new PathError("MISSING_SOCKET", `"${outcome.name}" in cluster ${cluster.name}`);
  return { name: outcome.name, socket: match.transport_socket };
}

function tlsOf<T extends UpstreamTlsContext | DownstreamTlsContext>(socket: TransportSocket | undefined, side: string): T {
  const unpacked = socket?.name === EXTENSION.tlsTransportSocket && socket.typed_config ? unpackAny(socket.typed_config) : undefined;
  if (!unpacked) throw new PathError("NO_TLS", `no ${side} TLS context`);
  return unpacked.message as T;
}

function certificateOf(context: CommonTlsContext | undefined): string {
  return context?.tls_certificate_sds_secret_configs?.[0]?.name ?? "(none)";
}

/**
 * Where the client certificate of a connection comes from: with a certificate selector, the SDS
 * secret its mapper names — the shared filter-state value under the mapper's key, else its
 * default — and otherwise the socket's own certificate.
 */
function certificateSource(tls: UpstreamTlsContext): Presented {
  const selector = tls.common_tls_context?.custom_tls_certificate_selector;
  if (!selector?.typed_config) return { certificate: certificateOf(tls.common_tls_context) };
  const config = unpackAny(selector.typed_config)?.message as OnDemandSecretConfig | undefined;
  if (!config?.config_source?.api_config_source) throw new PathError("SELECTOR_OVER_ADS", selector.name ?? "");
  const mapper = config.certificate_mapper;
  if (mapper?.name !== EXTENSION.filterStateOverrideMapper || !mapper.typed_config) return { certificate: "(no certificate mapper)" };
  return { fallback: (unpackAny(mapper.typed_config)?.message as FilterStateOverrideConfig | undefined)?.default_value ?? "(none)" };
}

/** The client certificate a connection presents, given what its source shares with upstream. */
function presentedCertificate(presents: Presented, filterState: ReadonlyMap<string, StampedValue>): string {
  if ("certificate" in presents) return presents.certificate;
  return filterState.get(FILTER_STATE.certificateMapperKey)?.value ?? presents.fallback;
}

function pinnedSans(context: CommonTlsContext | undefined): string[] {
  const validation = context?.combined_validation_context?.default_validation_context ?? context?.validation_context;
  return (validation?.match_typed_subject_alt_names ?? []).map((san) => san.matcher?.exact ?? "").filter(Boolean);
}

/** Pod IPs route within their own cluster; across clusters only in the flat-network mode (off) on a routable pod network. */
function dialPod(context: ReplayContext, trip: Trip, dial: Dial): RegistryPod {
  const { address, ip, port } = dial;
  const inboundPort = context.mesh.options.inboundPort;
  if (port !== inboundPort) throw new PathError("UNKNOWN_ADDRESS", address);
  dial.pods ??= context.pods(ip);
  const byCluster = dial.pods;
  const local = byCluster.get(trip.source.cluster);
  if (local) return preferService(local, trip.target.service);
  const elsewhere = [...byCluster.values()];
  const routable = context.mesh.options.eastWestWaypoint === "off" && context.mesh.index.snapshot.mesh.podNetwork === "routable";
  if (!routable || elsewhere.length !== 1) {
    throw new PathError("POD_IP_NOT_ROUTABLE", `${ip} from cluster ${trip.source.cluster}`);
  }
  return preferService(elsewhere[0]!, trip.target.service);
}

function preferService(pods: readonly RegistryPod[], service: ServiceKey): RegistryPod {
  for (const pod of pods) if (pod.service === service) return pod;
  return pods[0]!;
}

/** The waypoint reads the SNI and forwards raw bytes to a local pod (or one in its cluster). */
function throughWaypoint(context: ReplayContext, trip: Trip, nodeKey: string, sni: string): readonly { pod: RegistryPod; hop: string }[] {
  const mode = context.mesh.options.eastWestWaypoint;
  const waypoint = context.mesh.receiving(nodeKey)!;
  if (mode === "off") throw new PathError("WAYPOINT_IN_OFF_MODE", nodeKey);
  if (mode === "cross-cluster" && waypoint.local.clusterName === trip.source.cluster) throw new PathError("SAME_CLUSTER_VIA_WAYPOINT", nodeKey);
  const resources = context.resources(waypoint);
  const bySni = context.memo.forTarget("forwarded", resources, () => new Map<string, Map<ServiceKey, Forwarded>>());
  const byService = getOrInsert(bySni, sni, () => new Map<ServiceKey, Forwarded>());
  const forwarded = getOrInsert(byService, trip.target.service, () => forwardedBy(context, waypoint, nodeKey, sni, trip.target.service));
  trip.hops.push(...forwarded.hops);
  if (forwarded.error) throw forwarded.error;
  return forwarded.pods;
}

/** Where a waypoint forwards one SNI, the same for every source: `hops` were recorded before `error` stopped it. */
interface Forwarded {
  readonly hops: readonly string[];
  readonly error?: PathError;
  readonly pods: readonly { pod: RegistryPod; hop: string }[];
}

function forwardedBy(context: ReplayContext, waypoint: CompiledNode, nodeKey: string, sni: string, service: ServiceKey): Forwarded {
  const hops: string[] = [];
  try {
    return { hops, pods: forwardTo(context, waypoint, nodeKey, sni, service, hops) };
  } catch (error) {
    if (!(error instanceof PathError)) throw error;
    return { hops, error, pods: [] };
  }
}

function forwardTo(context: ReplayContext, waypoint: CompiledNode, nodeKey: string, sni: string, service: ServiceKey, hops: string[]) {
  const resources = context.resources(waypoint);
  const tunnel = resources.tunnel!;
  const chain = selectFilterChain(tunnel.filter_chains ?? [], sni);
  if (!chain) throw new PathError("TUNNEL_NO_CHAIN", `SNI "${sni}" at ${nodeKey}`);
  if (chain.transport_socket) throw new PathError("TLS_TERMINATED_AT_NODE", `${nodeKey} chain ${chain.name}`);
  // The same reading as `receivingPart`'s, which keeps of a waypoint the clusters its chains name.
  const ingressName = filterConfig<TcpProxy>(chain, EXTENSION.tcpProxy)?.cluster;
  hops.push(`waypoint ${nodeKey}: ew_tunnel chain ${chain.name} → tcp_proxy ${ingressName ?? "(none)"}`);
  const ingress = ingressName === undefined ? undefined : resources.cluster(ingressName);
  if (!ingress) throw new PathError("INGRESS_CLUSTER_MISSING", `${ingressName} at ${nodeKey}`);
  if (ingress.transport_socket || ingress.transport_socket_matches?.length || ingress.transport_socket_matcher) {
    throw new PathError("TLS_ORIGINATED_AT_NODE", `${ingress.name} at ${nodeKey}`);
  }
  const assignment = resources.assignment(ingress.eds_cluster_config?.service_name || ingress.name || "");
  const level = assignment && chosenPriority(assignment);
  if (!level) throw new PathError("INGRESS_EMPTY", `${ingress.name} at ${nodeKey}`);
  return level.endpoints.map((endpoint) => {
    const { address, ip, port } = addressOf(context, endpoint);
    if (context.tunnels.has(address)) throw new PathError("WAYPOINT_TO_WAYPOINT", `${ingress.name} at ${nodeKey} lists ${address}`);
    const pods = context.pods(ip).get(waypoint.local.clusterName);
    if (!pods || port !== context.mesh.options.inboundPort) throw new PathError("UNKNOWN_ADDRESS", `${address} from ${nodeKey}`);
    return { pod: preferService(pods, service), hop: `${ingress.name} priority ${level.priority}: ${address}` };
  });
}

/**
 * What a connection with one SNI meets at one pod, whatever its source: its inbound chain and the
 * server side of its TLS. `error` stops it before the chain hop, `serverError` after the chain's
 * port and service are checked.
 */
interface Arrival {
  readonly pod: Landing["pod"];
  readonly where: string;
  readonly error?: PathError;
  readonly hop: string;
  readonly chain: string;
  readonly port: number | undefined;
  readonly serverError?: PathError;
  readonly identity: string;
  /** The trust domain of `identity`. */
  readonly domain: string | undefined;
  /** The source trust domains the pod accepts. */
  readonly accepts: ReadonlySet<string | undefined>;
  /** The mTLS hop by source identity (shared by every pod with this identity). */
  readonly mtlsHops: Map<string, string>;
}

function arrivalAt(context: ReplayContext, endpoint: ServiceEndpoint, sni: string): Arrival {
  const pod = {
    cluster: endpoint.clusterName,
    namespace: endpoint.kubernetesMetadata.namespace,
    name: endpoint.kubernetesMetadata.podName || endpoint.ip,
    ip: endpoint.ip,
  };
  const where = `${pod.cluster}/${pod.namespace}/${pod.name}`;
  const arrival = {
    pod,
    where,
    hop: "",
    chain: "",
    port: undefined,
    identity: "",
    domain: undefined,
    accepts: NO_DOMAINS,
    mtlsHops: new Map<string, string>(),
  };
  const node = context.mesh.receiving(`${endpoint.clusterName}/${endpoint.kubernetesMetadata.nodeName}`);
  if (!node) return { ...arrival, error: new PathError("POD_NODE_NOT_COMPILED", where) };
  const listener = context.resources(node).listenerIn(endpoint.containerMetadata.networkNamespace, context.mesh.options.inboundPort);
  if (!listener || !endpoint.containerMetadata.networkNamespace) return { ...arrival, error: new PathError("NO_INBOUND_LISTENER", where) };
  const chain = selectFilterChain(listener.filter_chains ?? [], sni);
  if (!chain) return { ...arrival, error: new PathError("NO_INBOUND_CHAIN", `SNI "${sni}" at ${listener.name}`) };
  const reached = {
    ...arrival,
    hop: `pod ${where}: ${listener.name} chain ${chain.name}`,
    chain: chain.name ?? "",
    port: parseInboundChainName(chain.name ?? ""),
  };
  try {
    const server = tlsOf<DownstreamTlsContext>(chain.transport_socket, "downstream");
    if (server.require_client_certificate !== true) throw new PathError("CLIENT_CERT_NOT_REQUIRED", listener.name ?? "");
    const identity = certificateOf(server.common_tls_context);
    return {
      ...reached,
      identity,
      domain: context.memo.get("trust domain", identity, trustDomainOf),
      accepts: acceptedDomains(context, server.common_tls_context ?? {}),
      mtlsHops: context.memo.forTarget("mTLS hops", identity, newMap<string, string>),
    };
  } catch (error) {
    if (!(error instanceof PathError)) throw error;
    return { ...reached, serverError: error };
  }
}

/** What a connection with this SNI meets at the pod, kept per pod and SNI. */
function arrivalFor(context: ReplayContext, target: RegistryPod, sni: string): Arrival {
  const bySni = context.memo.forTarget("arrivals", target.endpoint, newMap<string, Arrival>);
  return bySni.get(sni) ?? remember(bySni, sni, arrivalAt(context, target.endpoint, sni));
}

/** A direct dial: the pod at the address, and what the connection meets there (the last pod's kept on the dial). */
function landDirectly(context: ReplayContext, trip: Trip, dial: Dial, client: ClientTls): Landing["pod"] {
  const pod = dialPod(context, trip, dial);
  let arrived = dial.arrived;
  if (arrived?.pod !== pod || arrived.sni !== client.sni) {
    arrived = { pod, sni: client.sni, arrival: arrivalFor(context, pod, client.sni) };
    dial.arrived = arrived;
  }
  return landOn(trip, pod, arrived.arrival, client);
}

/** At the pod: the inbound chain the SNI selects, its port, and mTLS identities on both ends. */
function landOn(trip: Trip, target: RegistryPod, arrival: Arrival, client: ClientTls): Landing["pod"] {
  if (arrival.error) throw arrival.error;
  trip.hops.push(arrival.hop);
  if (arrival.port !== trip.target.port) throw new PathError("WRONG_PORT", `${arrival.chain} for port ${trip.target.port}`);
  if (target.service !== trip.target.service) throw new PathError("WRONG_SERVICE", `${arrival.where} serves ${target.service}`);
  if (arrival.serverError) throw arrival.serverError;
  const serverIdentity = arrival.identity;
  if (!client.pins.includes(serverIdentity)) throw new PathError("SAN_MISMATCH", `${serverIdentity} is not among ${client.pins.join(", ")}`);
  if (!client.accepts.has(arrival.domain)) throw new PathError("PEER_NOT_TRUSTED", serverIdentity);
  const source = trip.source.identity;
  if (!arrival.accepts.has(trip.sourceDomain)) throw new PathError("PEER_NOT_TRUSTED", source);
  trip.hops.push(arrival.mtlsHops.get(source) ?? remember(arrival.mtlsHops, source, `mTLS ${source} ↔ ${serverIdentity}`));
  return arrival.pod;
}

/** The trust domains a SPIFFE validator accepts. */
function trustedDomains(any: Any): ReadonlySet<string | undefined> {
  const config = unpackAny(any)?.message as SPIFFECertValidatorConfig;
  return new Set((config.trust_domains ?? []).map((d) => d.name));
}

const NO_DOMAINS: ReadonlySet<string | undefined> = new Set();

/** The peer trust domains a TLS context's validation accepts: its SPIFFE validator's, or the shared trust domain's bundle. */
function acceptedDomains(context: ReplayContext, tls: CommonTlsContext): ReadonlySet<string | undefined> {
  const validator = tls.validation_context?.custom_validator_config;
  if (validator?.name === EXTENSION.spiffeValidator && validator.typed_config)
    return context.memo.get("trusted domains", validator.typed_config, trustedDomains);
  const trust = context.mesh.index.snapshot.mesh.trust;
  const bundle = tls.combined_validation_context?.validation_context_sds_secret_config?.name;
  if (trust.mode !== "shared" || bundle !== (trust.bundleSdsName ?? bundleSecretName(trust.trustDomain))) return NO_DOMAINS;
  return context.memo.get("shared trust domain", trust.trustDomain, oneDomain);
}

function oneDomain(domain: string): ReadonlySet<string> {
  return new Set([domain]);
}
