/**
 * Where a source's connection enters its node's Envoy, replayed: a pod's HTTP request through its
 * egress listener (the route for the service's authority), a pod's connection to a service VIP
 * through its capture listener (the chain for VIP:port), or the node proxy's own connection
 * straight to the cluster. What the entry chain stamps on the connection and shares with the
 * upstream side is what picks the source's certificate — and, if hashable, its connection pool.
 */
import type { Listener } from "../../gen/envoy/config/listener/v3/listener.js";
import type { Filter, FilterChain } from "../../gen/envoy/config/listener/v3/listener_components.js";
import type { VirtualHost } from "../../gen/envoy/config/route/v3/route_components.js";
import { FilterStateValue_SharedWithUpstream } from "../../gen/envoy/extensions/filters/common/set_filter_state/v3/value.js";
import type { HttpConnectionManager } from "../../gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.js";
import type { Config as SetFilterStateConfig } from "../../gen/envoy/extensions/filters/network/set_filter_state/v3/set_filter_state.js";
import type { TcpProxy } from "../../gen/envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy.js";
import { hostPort } from "../envoy/core.js";
import { unpackAny } from "../envoy/schema.js";
import { EXTENSION, FILTER_STATE } from "../envoy/types.js";
import { protocolOf } from "../model/snapshot.js";
import { outboundClusterName, parseServiceKey, serviceAuthority } from "../naming.js";
import { newMap, remember } from "../util/maps.js";
import type { NodeResources } from "./compiled-mesh.js";
import { selectChainByDestination, virtualHostIndex } from "./envoy-match.js";
import type { PathFailureCode } from "./failures.js";
import type { PathSource, PathTarget, ReplayContext } from "./path.js";

/** A filter-state value the entry chain shares with the upstream connection. */
export interface StampedValue {
  readonly value: string;
  /** Made by a hashable factory: it enters the upstream connection-pool key. */
  readonly hashable: boolean;
}

/** What an entry chain shares with upstream, and what the replay derives from that, read once per chain. */
export interface Stamped {
  readonly filterState: ReadonlyMap<string, StampedValue>;
  /** Every shared value, `key=value`: sources alike in it choose sockets and certificates alike. */
  readonly signature: string;
  /** The hashable values, `key=value` sorted and joined: the upstream pool key. */
  readonly poolKey: string;
  /** The hop that says which upstream pools the source's connections use, unless each downstream connection has its own. */
  readonly poolHop: string;
  /** The hop that says what is shared. */
  readonly hop: string;
}

export type Entry =
  | {
      readonly kind: "entered";
      readonly cluster: string;
      readonly stamped: Stamped;
      readonly hops: readonly string[];
    }
  | { readonly kind: "not-captured"; readonly reason: string }
  | { readonly kind: "failed"; readonly code: PathFailureCode; readonly detail: string; readonly hops: readonly string[] };

const NOTHING_STAMPED: Stamped = stampedFrom(new Map());

/** What a path's entry reads of its target: the same for every source calling that service port. */
export interface TargetNames {
  /** The outbound cluster of the service port, `<svc>.<ns>.<mesh domain>:<port>`. */
  readonly cluster: string;
  readonly authority: string;
  readonly protocol: ReturnType<typeof protocolOf>;
  readonly vip: string | undefined;
  /** A small number per service port, the same for equal targets (the replay keeps dial outcomes by it). */
  readonly id: number;
}

export function targetNames(context: ReplayContext, target: PathTarget): TargetNames {
  return context.memo.get("target names", target, namesOf, context);
}

function namesOf(target: PathTarget, context: ReplayContext): TargetNames {
  const { meshDomain } = context.mesh.index.snapshot.mesh;
  const ref = parseServiceKey(target.service)!;
  return {
    cluster: outboundClusterName(meshDomain, { ...ref, port: target.port }),
    authority: serviceAuthority(meshDomain, ref, target.port),
    protocol: protocolOf(context.mesh.index.services.get(target.service)?.protocols, target.port),
    vip: context.mesh.index.snapshot.vips?.get(target.service),
    id: targetId(context, target),
  };
}

function targetId(context: ReplayContext, target: PathTarget): number {
  const ids = context.memo.get("target ids", "", newMap<string, number>);
  const key = `${target.service}\u0000${target.port}`;
  return ids.get(key) ?? remember(ids, key, ids.size);
}

/** What the entries of one source's paths read alike: its node's resources, and its egress listener once looked up. */
export interface SourceEntry {
  readonly resources: NodeResources;
  /** Filled in by the source's first path through its egress listener. */
  egress?: Egress;
}

/** `source`: what its paths share (`SourceEntry`); `names`: the target's (`targetNames`). */
export function enterAtSource(context: ReplayContext, facts: SourceEntry, source: PathSource, target: PathTarget, names: TargetNames): Entry {
  const cluster = names.cluster;
  if (!source.pod) return context.memo.forTarget("node proxy entry", cluster, nodeProxyEntry);
  if (!source.netns) return { kind: "not-captured", reason: "the pod has no network namespace of its own, so no outbound listeners" };
  if (names.protocol !== "tcp") return throughEgress(context, facts, source.netns, names.authority);
  const vip = names.vip;
  if (!vip) return { kind: "not-captured", reason: `no VIP for ${target.service}: a TCP port is reached only through a captured VIP` };
  return throughCapture(context, facts.resources, source.netns, vip, target.port);
}

/** A node proxy dials the cluster itself, stamping nothing: one entry per cluster name, for every node. */
function nodeProxyEntry(cluster: string): Entry {
  return { kind: "entered", cluster, stamped: NOTHING_STAMPED, hops: [`node proxy: its own connection to ${cluster}`] };
}

/** A pod's egress listener and what every path through it shares, read once per source. */
interface Egress {
  readonly listener: Listener | undefined;
  readonly chain: FilterChain | undefined;
  /** What the chain shares with upstream: read by the first path that finds a route. */
  stamped?: Stamped;
  /** The entry hop up to the authority. */
  readonly hop: string;
  readonly virtualHost: (authority: string) => VirtualHost | undefined;
}

function egressOf(context: ReplayContext, resources: NodeResources, netns: string): Egress {
  const egressPort = context.mesh.options.egressPort;
  const listener = resources.listenerIn(netns, egressPort);
  const chain = listener?.filter_chains?.[0];
  const hop = `entry ${listener?.name} (${hostPort("127.0.0.1", egressPort)} in ${netns}): authority `;
  return { listener, chain, hop, virtualHost: context.memo.get("virtual hosts", virtualHostsIn(chain), virtualHostIndex) };
}

/** The egress listener in the pod's netns, its route for the authority, and the cluster it names. */
function throughEgress(context: ReplayContext, facts: SourceEntry, netns: string, authority: string): Entry {
  facts.egress ??= egressOf(context, facts.resources, netns);
  const { listener, hop, virtualHost } = facts.egress;
  if (!listener) return failed("NO_OUTBOUND_LISTENER", `egress port ${context.mesh.options.egressPort} in ${netns}`, []);
  const vhost = virtualHost(authority);
  const route = vhost && context.memo.forTarget("catch-all route", vhost, catchAllRoute);
  if (!route?.hop) return failed("NO_ROUTE", `${authority} at ${listener.name}${route?.answered ?? ""}`, [hop + authority]);
  const stamped = facts.egress.stamped ?? stampedOf(context, facts.egress);
  return { kind: "entered", cluster: route.cluster, stamped, hops: [hop + authority, route.hop, stamped.hop] };
}

function stampedOf(context: ReplayContext, egress: Egress): Stamped {
  egress.stamped = stampedByChain(context, egress.chain!);
  return egress.stamped;
}

/** A virtual host's `/` route: the cluster it names and its hop, or (`hop` empty) what the NO_ROUTE detail adds. */
interface CatchAllRoute {
  readonly cluster: string;
  readonly hop: string;
  /** `" (answered <status>)"` for a direct response, else empty. */
  readonly answered: string;
}

function catchAllRoute(vhost: VirtualHost): CatchAllRoute {
  const route = vhost.routes?.find((candidate) => candidate.match?.prefix === "/");
  const cluster = route?.route?.cluster;
  if (cluster) return { cluster, hop: `route ${vhost.name} → ${cluster}`, answered: "" };
  return { cluster: "", hop: "", answered: route?.direct_response ? ` (answered ${route.direct_response.status})` : "" };
}

/** The egress chain's virtual hosts: pods of one service share the list, so its index (`virtualHostIndex`) is built once per list. */
function virtualHostsIn(chain: FilterChain | undefined): readonly VirtualHost[] {
  return filterConfig<HttpConnectionManager>(chain, EXTENSION.httpConnectionManager)?.route_config?.virtual_hosts ?? NO_VIRTUAL_HOSTS;
}

const NO_VIRTUAL_HOSTS: readonly VirtualHost[] = [];

/** The capture listener in the pod's netns, its chain for VIP:port, and that chain's cluster. */
function throughCapture(context: ReplayContext, resources: NodeResources, netns: string, vip: string, port: number): Entry {
  const listener = resources.listenerIn(netns, context.mesh.options.capturePort);
  const dialed = hostPort(vip, port);
  if (!listener) return failed("NO_CAPTURE_CHAIN", `no capture listener in ${netns} for ${dialed}`, []);
  const chain = selectChainByDestination(listener.filter_chains ?? [], vip, port);
  const hops = [`entry ${listener.name} (capture port ${context.mesh.options.capturePort} in ${netns}): original destination ${dialed}`];
  const cluster = filterConfig<TcpProxy>(chain, EXTENSION.tcpProxy)?.cluster;
  if (!chain || !cluster) return failed("NO_CAPTURE_CHAIN", `${dialed} at ${listener.name}`, hops);
  hops.push(`chain ${chain.name} → tcp_proxy ${cluster}`);
  return entered(context, chain, cluster, hops);
}

/** What the entry chain shares with upstream, read once per chain: every path through it shares the same `Stamped`. */
function entered(context: ReplayContext, chain: FilterChain, cluster: string, hops: string[]): Entry {
  const stamped = stampedByChain(context, chain);
  hops.push(stamped.hop);
  return { kind: "entered", cluster, stamped, hops };
}

/**
 * What a chain stamps, read once per set of stamping filters: every pod has chains of its own, but
 * the compiler gives the pods of one identity the same stamping filter, so they share one `Stamped`.
 */
function stampedByChain(context: ReplayContext, chain: FilterChain): Stamped {
  // Found without building a list: a capture chain is entered once per path.
  let stamping: Filter | undefined;
  for (const filter of chain.filters ?? []) {
    if (filter.name !== EXTENSION.setFilterState) continue;
    if (stamping) return context.memo.get("stamped", chain, stampedByFilters);
    stamping = filter;
  }
  return stamping ? context.memo.get("stamped", stamping, stampedBy) : NOTHING_STAMPED;
}

function stampedBy(filter: Filter): Stamped {
  return stampedFrom(stampedValues([filter]));
}

function stampedByFilters(chain: FilterChain): Stamped {
  return stampedFrom(stampedValues(chain.filters ?? []));
}

function stampedFrom(filterState: ReadonlyMap<string, StampedValue>): Stamped {
  const entries = [...filterState];
  const stamps = entries.map(([key, { value, hashable }]) => `${key}=${value}${hashable ? " (hashable)" : " (not hashable)"}`);
  const poolKey = entries
    .filter(([, stamped]) => stamped.hashable)
    .map(([key, { value }]) => `${key}=${value}`)
    .sort()
    .join(",");
  return {
    filterState,
    signature: entries.map(([key, { value }]) => `${key}=${value}`).join("\u0000"),
    poolKey,
    poolHop: poolKey ? `connection pool: per host and ${poolKey}` : "connection pool: per host, shared with every source that stamps nothing hashable",
    hop: stamps.length > 0 ? `shares with upstream: ${stamps.join(", ")}` : "shares nothing with upstream",
  };
}

/** What a chain's set_filter_state filters stamp and share with the upstream connection. */
function stampedValues(filters: readonly Filter[]): Map<string, StampedValue> {
  const values = new Map<string, StampedValue>();
  for (const filter of filters) {
    if (filter.name !== EXTENSION.setFilterState) continue;
    for (const entry of configOf<SetFilterStateConfig>(filter)?.on_new_connection ?? []) {
      const shared = (entry.shared_with_upstream ?? FilterStateValue_SharedWithUpstream.NONE) !== FilterStateValue_SharedWithUpstream.NONE;
      const value = entry.format_string?.text_format_source?.inline_string;
      if (shared && entry.object_key && value !== undefined) {
        values.set(entry.object_key, { value, hashable: entry.factory_key === FILTER_STATE.hashableString });
      }
    }
  }
  return values;
}

/** The config of the chain's first filter of that name. */
export function filterConfig<T>(chain: FilterChain | undefined, name: string): T | undefined {
  const filter = chain?.filters?.find((candidate) => candidate.name === name);
  return filter ? configOf<T>(filter) : undefined;
}

function configOf<T>(filter: Filter): T | undefined {
  return filter.typed_config ? (unpackAny(filter.typed_config)?.message as T) : undefined;
}

function failed(code: PathFailureCode, detail: string, hops: readonly string[]): Entry {
  return { kind: "failed", code, detail, hops };
}
