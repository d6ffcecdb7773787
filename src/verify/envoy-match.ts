/**
 * Envoy's selection rules, replayed over compiled resources: filter-chain choice by server name
 * and transport protocol or by destination, virtual-host choice by authority, the xds matcher tree
 * of `transport_socket_matcher`, and priority choice in an assignment. These mirror Envoy's
 * behaviour as docs/envoy.md states it (choosing a transport socket, filter-chain matching,
 * endpoints) so tests and the mesh check can say where a connection lands without an Envoy binary.
 */

import { BlockList, isIP } from "node:net";
import type { CidrRange } from "../../gen/envoy/config/core/v3/address.js";
import { HealthStatus } from "../../gen/envoy/config/core/v3/health_check.js";
import type { ClusterLoadAssignment } from "../../gen/envoy/config/endpoint/v3/endpoint.js";
import type { LbEndpoint } from "../../gen/envoy/config/endpoint/v3/endpoint_components.js";
import type { FilterChain } from "../../gen/envoy/config/listener/v3/listener_components.js";
import type { VirtualHost } from "../../gen/envoy/config/route/v3/route_components.js";
import type { Any } from "../../gen/google/protobuf/any.js";
import type { TypedExtensionConfig } from "../../gen/xds/core/v3/extension.js";
import type { Matcher, Matcher_OnMatch } from "../../gen/xds/type/matcher/v3/matcher.js";
import { unpackAny } from "../envoy/schema.js";
import { EXTENSION } from "../envoy/types.js";

/** Whether a `server_names` entry matches an SNI: exact, or `*.suffix` matching any number of leading labels. */
export function serverNameMatches(pattern: string, sni: string): boolean {
  const name = sni.toLowerCase();
  if (!pattern.startsWith("*.")) return pattern === name;
  const suffix = pattern.slice(1); // ".example.com"
  return name.length > suffix.length && name.endsWith(suffix);
}

/**
 * The filter chain Envoy picks for a TLS connection with this SNI: among chains whose server names
 * match, exact beats wildcard and the longest wildcard suffix wins; chains without server names
 * are the fallback. Then transport protocol. No backtracking (docs/envoy.md, "Filter-chain
 * matching"). Undefined: refused.
 */
export function selectFilterChain(chains: readonly FilterChain[], sni: string, transportProtocol = "tls"): FilterChain | undefined {
  const withNames = chains.filter((chain) => (chain.filter_chain_match?.server_names ?? []).length > 0);
  const exact = withNames.filter((chain) => chain.filter_chain_match!.server_names!.some((n) => !n.startsWith("*.") && serverNameMatches(n, sni)));
  let candidates = exact;
  if (candidates.length === 0) {
    const wildcardLength = (chain: FilterChain) =>
      Math.max(-1, ...chain.filter_chain_match!.server_names!.filter((n) => n.startsWith("*.") && serverNameMatches(n, sni)).map((n) => n.length));
    const best = Math.max(-1, ...withNames.map(wildcardLength));
    candidates = best < 0 ? [] : withNames.filter((chain) => wildcardLength(chain) === best);
  }
  if (candidates.length === 0) candidates = chains.filter((chain) => (chain.filter_chain_match?.server_names ?? []).length === 0);
  const byProtocol = candidates.filter((chain) => chain.filter_chain_match?.transport_protocol === transportProtocol);
  const chosen = byProtocol.length > 0 ? byProtocol : candidates.filter((chain) => !chain.filter_chain_match?.transport_protocol);
  return chosen[0];
}

/** What the transport-socket matcher's inputs see for one connection to one endpoint. */
export interface MatchInputs {
  /** The chosen endpoint's metadata, by filter namespace. */
  readonly endpointMetadata: Readonly<Record<string, Record<string, unknown>>>;
  /** Filter-state objects shared from the downstream connection, as strings. */
  readonly filterState: Readonly<Record<string, string>>;
}

export type MatchOutcome =
  | { readonly kind: "socket"; readonly name: string; readonly trace: readonly string[] }
  | { readonly kind: "no-match"; readonly trace: readonly string[] }
  | { readonly kind: "invalid"; readonly reason: string; readonly trace: readonly string[] };

/**
 * Evaluates a `transport_socket_matcher` as Envoy does: a tree looks its input up in the exact
 * map, else takes on_no_match; a nested matcher that yields nothing makes the WHOLE evaluation
 * "no match" (its parent's on_no_match is not consulted). A metadata key missing from a present
 * object reads as the string "null".
 */
export function evaluateSocketMatcher(matcher: Matcher, inputs: MatchInputs): MatchOutcome {
  const trace: string[] = [];
  const result = evaluate(matcher, inputs, trace);
  if (typeof result === "object") return { kind: "invalid", reason: result.invalid, trace };
  return result === undefined ? { kind: "no-match", trace } : { kind: "socket", name: result, trace };
}

/** Whether any tree of the matcher reads filter state: if none does, its outcome depends on the endpoint alone. */
export function readsFilterState(matcher: Matcher): boolean {
  const tree = matcher.matcher_tree;
  const targets = [...Object.values(tree?.exact_match_map?.map ?? {}), ...(matcher.on_no_match ? [matcher.on_no_match] : [])];
  return tree?.input?.name === EXTENSION.filterStateInput || targets.some((target) => target.matcher !== undefined && readsFilterState(target.matcher));
}

type Evaluation = string | undefined | { invalid: string };

function evaluate(matcher: Matcher, inputs: MatchInputs, trace: string[]): Evaluation {
  const tree = matcher.matcher_tree;
  if (matcher.matcher_list) return { invalid: "matcher_list is not used by aether-xds trees" };
  if (tree) {
    if (!tree.input) return { invalid: "a matcher tree without an input" };
    const value = readInput(tree.input, inputs);
    if (typeof value === "object") return value;
    const map = tree.exact_match_map?.map;
    if (!map || Object.keys(map).length === 0) return { invalid: "a matcher tree without a non-empty exact_match_map (Envoy rejects it)" };
    const hit = value === undefined ? undefined : Object.hasOwn(map, value) ? map[value] : undefined;
    trace.push(`${tree.input.name}=${value === undefined ? "(no value)" : JSON.stringify(value)} → ${hit ? "matched" : "on_no_match"}`);
    if (hit) return onMatch(hit, inputs, trace);
  }
  return matcher.on_no_match ? onMatch(matcher.on_no_match, inputs, trace) : undefined;
}

function onMatch(target: Matcher_OnMatch, inputs: MatchInputs, trace: string[]): Evaluation {
  if (target.matcher) return evaluate(target.matcher, inputs, trace);
  if (!target.action) return { invalid: "an OnMatch with neither matcher nor action" };
  if (target.action.name !== EXTENSION.socketNameAction) return { invalid: `unexpected action ${target.action.name}` };
  const action = unpack(target.action) as { name?: string } | undefined;
  return action?.name ?? { invalid: "a socket-name action without a name" };
}

/** An input's string value; undefined when it has none. */
function readInput(input: TypedExtensionConfig, inputs: MatchInputs): string | undefined | { invalid: string } {
  const config = unpack(input) as Record<string, unknown> | undefined;
  if (input.name === EXTENSION.endpointMetadataInput) {
    const { filter, path } = config as { filter?: string; path?: { key?: string }[] };
    let value: unknown = inputs.endpointMetadata[filter || "envoy.lb"];
    if (value === undefined) return undefined;
    for (const segment of path ?? []) {
      if (typeof value !== "object" || value === null) return undefined;
      const record = value as Record<string, unknown>;
      value = Object.hasOwn(record, segment.key ?? "") ? record[segment.key ?? ""] : "null";
    }
    return typeof value === "string" ? value : JSON.stringify(value);
  }
  if (input.name === EXTENSION.filterStateInput) {
    const key = (config as { key?: string }).key ?? "";
    return Object.hasOwn(inputs.filterState, key) ? inputs.filterState[key] : undefined;
  }
  return { invalid: `input ${input.name} is not a transport-socket input (it never matches here)` };
}

function unpack(config: { typed_config?: Any | undefined }): unknown {
  return config.typed_config ? unpackAny(config.typed_config)?.message : undefined;
}

/** Healthy for load balancing: HEALTHY, or UNKNOWN (no health reported). */
export function isHealthy(endpoint: LbEndpoint): boolean {
  const status = endpoint.health_status ?? HealthStatus.UNKNOWN;
  return status === HealthStatus.HEALTHY || status === HealthStatus.UNKNOWN;
}

/** The endpoints of the highest priority (lowest number) that has a healthy one, healthy only. */
export function chosenPriority(assignment: ClusterLoadAssignment): { priority: number; endpoints: LbEndpoint[] } | undefined {
  const groups = assignment.endpoints ?? [];
  let chosen: number | undefined;
  for (const group of groups) {
    const priority = group.priority ?? 0;
    if ((chosen === undefined || priority < chosen) && (group.lb_endpoints ?? []).some(isHealthy)) chosen = priority;
  }
  if (chosen === undefined) return undefined;
  const endpoints: LbEndpoint[] = [];
  for (const group of groups) {
    if ((group.priority ?? 0) !== chosen) continue;
    for (const lbEndpoint of group.lb_endpoints ?? []) if (isHealthy(lbEndpoint)) endpoints.push(lbEndpoint);
  }
  return { priority: chosen, endpoints };
}

/**
 * The virtual host Envoy picks for an authority: an exact domain (with or without the port, as
 * written), then the catch-all `*`. aether-xds emits no other wildcard forms. Indexed once per
 * list of virtual hosts (the mesh check asks once per path): the first host listing a domain wins.
 */
export function virtualHostIndex(virtualHosts: readonly VirtualHost[]): (authority: string) => VirtualHost | undefined {
  const byDomain = new Map<string, VirtualHost>();
  for (const vhost of virtualHosts) {
    for (const domain of vhost.domains ?? []) if (!byDomain.has(domain)) byDomain.set(domain, vhost);
  }
  const catchAll = byDomain.get("*");
  return (authority) => byDomain.get(authority.toLowerCase()) ?? catchAll;
}

/**
 * The filter chain Envoy picks for a connection by its (original) destination: chains for the
 * destination port beat chains without one; then the longest prefix range containing the address
 * beats chains without ranges (the first chain among equals). No backtracking (docs/envoy.md,
 * "Filter-chain matching"). Undefined: the connection is closed.
 */
export function selectChainByDestination(chains: readonly FilterChain[], ip: string, port: number): FilterChain | undefined {
  const forPort = chains.filter((chain) => chain.filter_chain_match?.destination_port === port);
  const byPort = forPort.length > 0 ? forPort : chains.filter((chain) => chain.filter_chain_match?.destination_port === undefined);
  let best = -1;
  let chosen: FilterChain | undefined;
  for (const chain of byPort) {
    const length = longestRangeContaining(chain, ip);
    if (length > best) {
      best = length;
      chosen = chain;
    }
  }
  return best >= 0 ? chosen : byPort.find((chain) => (chain.filter_chain_match?.prefix_ranges ?? []).length === 0);
}

/** The longest prefix length among the chain's ranges that contain the address; -1 when none does. */
function longestRangeContaining(chain: FilterChain, ip: string): number {
  let longest = -1;
  for (const range of chain.filter_chain_match?.prefix_ranges ?? []) {
    if (cidrContains(range, ip)) longest = Math.max(longest, range.prefix_len ?? 0);
  }
  return longest;
}

/** A prefix range as a `BlockList`, with the prefix and length it was built from. */
interface RangeList {
  readonly prefix: string;
  readonly length: number;
  readonly list: BlockList;
}

/**
 * Each range's `BlockList`, built on its first check (the mesh check asks for every path through
 * a capture chain); built again if the range object was edited since. Weak: it never keeps
 * compiled output alive.
 */
const rangeLists = new WeakMap<CidrRange, RangeList>();

function cidrContains(range: CidrRange, ip: string): boolean {
  const family = isIP(ip);
  const prefix = range.address_prefix ?? "";
  if (family === 0 || isIP(prefix) !== family) return false;
  const type = family === 6 ? "ipv6" : "ipv4";
  const length = range.prefix_len ?? (family === 6 ? 128 : 32);
  let known = rangeLists.get(range);
  if (known?.prefix !== prefix || known.length !== length) {
    const list = new BlockList();
    list.addSubnet(prefix, length, type);
    known = { prefix, length, list };
    rangeLists.set(range, known);
  }
  return known.list.check(ip, type);
}
